/**
 * Reading the cells of a query's JsonRow into a response's fields, and grouping a query's rows
 * (the members, vintages, nodes… of a page of parents) by their parent's key. One definition for
 * every route that maps SQL rows to its zod schema.
 */
import type { JsonRow } from './convert.ts';

/** A finite number, else null. */
export const cellNum = (v: unknown): number | null => (typeof v === 'number' && Number.isFinite(v) ? v : null);
/** A string, else null. */
export const cellStr = (v: unknown): string | null => (typeof v === 'string' ? v : null);
/** A count: a finite number, else 0. */
export const cellInt = (v: unknown): number => (typeof v === 'number' && Number.isFinite(v) ? v : 0);
/** A boolean, else null. */
export const cellBool = (v: unknown): boolean | null => (typeof v === 'boolean' ? v : null);

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
