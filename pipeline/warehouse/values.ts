/**
 * Table-driven conversions between JS row values and DuckDB values (duckdb-node-neo style).
 * TIMESTAMP columns hold UTC instants: JS Date <-> microseconds since the epoch.
 */
import { type DuckDBAppender, DOUBLE, LIST, listValue, timestampValue, VARCHAR } from '@duckdb/node-api';

/** Typed explicitly so an empty list is still typed (DuckDB cannot type `[]` alone). */
const VARCHAR_LIST = LIST(VARCHAR);
const DOUBLE_LIST = LIST(DOUBLE);
import type { DuckType } from './tables.ts';

type Appendable = (appender: DuckDBAppender, value: unknown, column: string) => void;

function expect(cond: boolean, column: string, type: DuckType, value: unknown): void {
  if (!cond) throw new TypeError(`column ${column}: expected ${type}, got ${JSON.stringify(value)}`);
}

function toDate(value: unknown, column: string): Date {
  const d = value instanceof Date ? value : typeof value === 'string' ? new Date(value) : null;
  expect(d !== null && !Number.isNaN(d.getTime()), column, 'TIMESTAMP', value);
  return d as Date;
}

/** How a JS value is appended for each DuckDB type used by the warehouse. */
const APPENDERS: Record<DuckType, Appendable> = {
  VARCHAR: (a, v, c) => {
    expect(typeof v === 'string', c, 'VARCHAR', v);
    a.appendVarchar(v as string);
  },
  DOUBLE: (a, v, c) => {
    expect(typeof v === 'number' && Number.isFinite(v), c, 'DOUBLE', v);
    a.appendDouble(v as number);
  },
  BIGINT: (a, v, c) => {
    expect((typeof v === 'number' && Number.isInteger(v)) || typeof v === 'bigint', c, 'BIGINT', v);
    a.appendBigInt(BigInt(v as number));
  },
  INTEGER: (a, v, c) => {
    expect(typeof v === 'number' && Number.isInteger(v), c, 'INTEGER', v);
    a.appendInteger(v as number);
  },
  BOOLEAN: (a, v, c) => {
    expect(typeof v === 'boolean', c, 'BOOLEAN', v);
    a.appendBoolean(v as boolean);
  },
  TIMESTAMP: (a, v, c) => {
    a.appendTimestamp(timestampValue(BigInt(toDate(v, c).getTime()) * 1000n));
  },
  'VARCHAR[]': (a, v, c) => {
    expect(Array.isArray(v) && v.every((x) => typeof x === 'string'), c, 'VARCHAR[]', v);
    a.appendList(listValue(v as string[]), VARCHAR_LIST);
  },
  'DOUBLE[]': (a, v, c) => {
    expect(Array.isArray(v) && v.every((x) => x === null || (typeof x === 'number' && Number.isFinite(x))), c, 'DOUBLE[]', v);
    a.appendList(listValue(v as (number | null)[]), DOUBLE_LIST);
  },
};

/** Appends one row (a plain object keyed by column name) in the column order given. */
export function appendRow(
  appender: DuckDBAppender,
  columns: Record<string, DuckType>,
  row: Record<string, unknown>,
): void {
  for (const [column, type] of Object.entries(columns)) {
    const value = row[column];
    if (value === null || value === undefined) appender.appendNull();
    else APPENDERS[type](appender, value, column);
  }
  appender.endRow();
}

/** Converts a value read back from DuckDB (getRowObjectsJS) into plain JSON-able JS. */
export function toPlain(value: unknown): unknown {
  if (typeof value === 'bigint') return Number(value);
  if (value instanceof Date) return value.toISOString();
  if (Array.isArray(value)) return value.map(toPlain);
  if (typeof value === 'number' && Number.isNaN(value)) return null;
  if (value && typeof value === 'object') {
    return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, toPlain(v)]));
  }
  return value;
}
