/**
 * DuckDB values → JSON values, table-driven by type id (duckdb-node-neo style).
 *
 * - TIMESTAMP (any precision, with or without time zone) → ISO 8601 string in UTC with `Z`
 *   (millisecond precision, `Date#toISOString`); ±infinity and out-of-range → null.
 * - DATE → `YYYY-MM-DD`.
 * - integers (BIGINT, HUGEINT, …) → number; beyond ±2^53 → decimal string (never a lossy number).
 * - FLOAT/DOUBLE → number; NaN and ±Infinity → null (JSON has no such numbers).
 * - DECIMAL → number. VARCHAR/ENUM/UUID → string. BOOLEAN → boolean.
 * - LIST/ARRAY → array; STRUCT → object; MAP → [{key, value}].
 * - anything else (BLOB, BIT, INTERVAL, …) → its DuckDB text form.
 */
import {
  DuckDBTypeId,
  arrayFromArrayValue,
  arrayFromListValue,
  booleanFromValue,
  createDuckDBValueConverter,
  doubleFromDecimalValue,
  objectArrayFromMapValue,
  objectFromStructValue,
  objectFromUnionValue,
  stringFromValue,
  type DuckDBResultReader,
  type DuckDBType,
  type DuckDBValue,
  type DuckDBValueConverter,
} from '@duckdb/node-api';

export type JsonValue = string | number | boolean | null | JsonValue[] | { [k: string]: JsonValue };
export type JsonRow = Record<string, JsonValue>;

const MAX_SAFE = BigInt(Number.MAX_SAFE_INTEGER);

function finiteNumber(value: DuckDBValue): JsonValue {
  const n = Number(value);
  return Number.isFinite(n) ? n : null;
}

function integer(value: DuckDBValue): JsonValue {
  if (typeof value === 'bigint') {
    return value <= MAX_SAFE && value >= -MAX_SAFE ? Number(value) : value.toString();
  }
  if (typeof value === 'number') return value;
  // BIGNUM and other wrappers: their decimal text.
  const s = String(value);
  const n = Number(s);
  return Number.isSafeInteger(n) ? n : s;
}

/** Epoch microseconds (any timestamp wrapper) → ISO string, or null when not representable. */
function isoFromMicros(micros: bigint): JsonValue {
  const ms = Number(micros / 1000n) + (micros % 1000n < 0n ? -1 : 0);
  const d = new Date(ms);
  return Number.isNaN(d.getTime()) ? null : d.toISOString();
}

function timestamp(): (value: DuckDBValue) => JsonValue {
  return (value) => {
    const v = value as unknown as { micros?: bigint; millis?: bigint; seconds?: bigint; nanos?: bigint; isFinite?: boolean };
    if (v.isFinite === false) return null;
    let micros: bigint | undefined;
    if (typeof v.micros === 'bigint') micros = v.micros;
    else if (typeof v.millis === 'bigint') micros = v.millis * 1000n;
    else if (typeof v.seconds === 'bigint') micros = v.seconds * 1_000_000n;
    else if (typeof v.nanos === 'bigint') micros = v.nanos / 1000n;
    if (micros === undefined) return null;
    return isoFromMicros(micros);
  };
}

function date(value: DuckDBValue): JsonValue {
  const days = (value as unknown as { days?: number }).days;
  if (typeof days !== 'number' || !Number.isFinite(days)) return null;
  const d = new Date(days * 86_400_000);
  return Number.isNaN(d.getTime()) ? null : d.toISOString().slice(0, 10);
}

function text(value: DuckDBValue): JsonValue {
  return String(value);
}

type Conv = DuckDBValueConverter<JsonValue>;
const plain = (f: (v: DuckDBValue) => JsonValue): Conv => (v) => f(v);
const nested = <T>(f: (v: DuckDBValue, t: DuckDBType, c: DuckDBValueConverter<JsonValue>) => T): Conv =>
  (v, t, c) => f(v, t, c) as unknown as JsonValue;

const BY_TYPE_ID: Record<DuckDBTypeId, Conv | undefined> = {
  [DuckDBTypeId.INVALID]: undefined,
  [DuckDBTypeId.BOOLEAN]: plain(booleanFromValue),
  [DuckDBTypeId.TINYINT]: plain(integer),
  [DuckDBTypeId.SMALLINT]: plain(integer),
  [DuckDBTypeId.INTEGER]: plain(integer),
  [DuckDBTypeId.BIGINT]: plain(integer),
  [DuckDBTypeId.UTINYINT]: plain(integer),
  [DuckDBTypeId.USMALLINT]: plain(integer),
  [DuckDBTypeId.UINTEGER]: plain(integer),
  [DuckDBTypeId.UBIGINT]: plain(integer),
  [DuckDBTypeId.HUGEINT]: plain(integer),
  [DuckDBTypeId.UHUGEINT]: plain(integer),
  [DuckDBTypeId.BIGNUM]: plain(integer),
  [DuckDBTypeId.FLOAT]: plain(finiteNumber),
  [DuckDBTypeId.DOUBLE]: plain(finiteNumber),
  [DuckDBTypeId.DECIMAL]: plain((v) => {
    const n = doubleFromDecimalValue(v);
    return Number.isFinite(n) ? n : null;
  }),
  [DuckDBTypeId.TIMESTAMP]: plain(timestamp()),
  [DuckDBTypeId.TIMESTAMP_S]: plain(timestamp()),
  [DuckDBTypeId.TIMESTAMP_MS]: plain(timestamp()),
  [DuckDBTypeId.TIMESTAMP_NS]: plain(timestamp()),
  [DuckDBTypeId.TIMESTAMP_TZ]: plain(timestamp()),
  [DuckDBTypeId.DATE]: plain(date),
  [DuckDBTypeId.TIME]: plain(text),
  [DuckDBTypeId.TIME_NS]: plain(text),
  [DuckDBTypeId.TIME_TZ]: plain(text),
  [DuckDBTypeId.INTERVAL]: plain(text),
  [DuckDBTypeId.VARCHAR]: plain(stringFromValue),
  [DuckDBTypeId.ENUM]: plain(stringFromValue),
  [DuckDBTypeId.UUID]: plain(stringFromValue),
  [DuckDBTypeId.BLOB]: plain(text),
  [DuckDBTypeId.BIT]: plain(text),
  [DuckDBTypeId.GEOMETRY]: plain(text),
  [DuckDBTypeId.LIST]: nested(arrayFromListValue<JsonValue>),
  [DuckDBTypeId.ARRAY]: nested(arrayFromArrayValue<JsonValue>),
  [DuckDBTypeId.STRUCT]: nested(objectFromStructValue<JsonValue>),
  [DuckDBTypeId.MAP]: nested(objectArrayFromMapValue<JsonValue>),
  [DuckDBTypeId.UNION]: nested(objectFromUnionValue<JsonValue>),
  [DuckDBTypeId.SQLNULL]: () => null,
  [DuckDBTypeId.ANY]: undefined,
  [DuckDBTypeId.STRING_LITERAL]: plain(text),
  [DuckDBTypeId.INTEGER_LITERAL]: plain(integer),
  [DuckDBTypeId.VARIANT]: plain(text),
};

const base = createDuckDBValueConverter<JsonValue>(BY_TYPE_ID);

/** The JSON converter: unknown type ids become their text form instead of throwing. */
export const jsonConverter: DuckDBValueConverter<JsonValue> = (value, type, converter) => {
  if (value == null) return null;
  if (BY_TYPE_ID[type.typeId] === undefined) return String(value);
  return base(value, type, converter);
};

/** All rows of a fully read result as JSON objects keyed by column name. */
export function rowsAsJson(reader: DuckDBResultReader): JsonRow[] {
  return reader.convertRowObjects(jsonConverter) as JsonRow[];
}
