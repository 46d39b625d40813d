/**
 * Reading the cells of a query's JsonRow into a response's fields (fromColumns: by the zod schema that
 * documents them, so a route lists its fields once), and grouping a query's rows
 * (the members, vintages, nodes… of a page of parents) by their parent's key. One definition for
 * every route that maps SQL rows to its zod schema.
 */
import type { z } from 'zod';
import type { JsonRow } from './convert.ts';

/** A finite number, else null. */
export const cellNum = (v: unknown): number | null => (typeof v === 'number' && Number.isFinite(v) ? v : null);
/** A string, else null. */
export const cellStr = (v: unknown): string | null => (typeof v === 'string' ? v : null);
/** A count: a finite number, else 0. */
export const cellInt = (v: unknown): number => (typeof v === 'number' && Number.isFinite(v) ? v : 0);
/** A boolean, else null. */
export const cellBool = (v: unknown): boolean | null => (typeof v === 'boolean' ? v : null);
/** A list of structs (a nested LIST(STRUCT) column) as rows, else none. */
export const cellRows = (v: unknown): JsonRow[] =>
  Array.isArray(v) ? v.filter((x): x is JsonRow => typeof x === 'object' && x !== null && !Array.isArray(x)) : [];

/** `rows` grouped by `key` (a column name or a function), each group in the rows' order. */
export function groupRows(rows: readonly JsonRow[], key: string | ((r: JsonRow) => string)): Map<string, JsonRow[]> {
  const keyOf = typeof key === 'string' ? (r: JsonRow) => String(r[key]) : key;
  const out = new Map<string, JsonRow[]>();
  for (const r of rows) {
    const k = keyOf(r);
    const list = out.get(k);
    if (list) list.push(r);
    else out.set(k, [r]);
  }
  return out;
}

type CellReader = (v: unknown) => unknown;

/** The reader of a field by its zod type: [not nullable, nullable]. */
const READERS: Record<string, [CellReader, CellReader]> = {
  number: [cellInt, cellNum],
  string: [(v) => String(v), cellStr],
  boolean: [(v) => v === true, cellBool],
};

function readerOf(field: z.ZodType, key: string): CellReader {
  let def = field._zod.def as { type: string; innerType?: z.ZodType };
  let nullable = false;
  while ((def.type === 'nullable' || def.type === 'optional') && def.innerType) {
    nullable ||= def.type === 'nullable';
    def = def.innerType._zod.def as typeof def;
  }
  const pair = READERS[def.type];
  if (!pair) throw new Error(`no cell reader for field ${key} (${def.type}): give it in the overrides`);
  return pair[nullable ? 1 : 0];
}

const fieldReaders = new WeakMap<z.ZodType, CellReader>();

/**
 * An item of `schema` read from the same-named columns of `r`, each field by its type (a number,
 * string or boolean; nullable or not), so a route lists its fields once, in its schema. Fields
 * that are not a plain column (a default, an enum, a nested object) are given in `overrides`.
 */
export function fromColumns<S extends z.ZodObject>(schema: S, r: JsonRow, overrides: Partial<z.input<S>> = {}): z.input<S> {
  const given = overrides as Record<string, unknown>;
  const out: Record<string, unknown> = {};
  for (const [k, field] of Object.entries(schema.shape as Record<string, z.ZodType>)) {
    if (Object.hasOwn(given, k)) {
      out[k] = given[k];
      continue;
    }
    let read = fieldReaders.get(field);
    if (!read) fieldReaders.set(field, (read = readerOf(field, k)));
    out[k] = read(r[k]);
  }
  return out as z.input<S>;
}
