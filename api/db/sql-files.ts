/**
 * The API's SQL lives in `sql/api/<name>.sql` (one concern per file), loaded once and cached.
 * Files select from the snapshot's views by unqualified table name; the snapshot reader sets the
 * connection's schema to the pinned snapshot before running them.
 */
import { readFileSync } from 'node:fs';

const SQL_DIR = new URL('../../sql/api/', import.meta.url);
const NAME = /^[a-z0-9]+(?:-[a-z0-9]+)*$/;
const cache = new Map<string, string>();

/** The text of `sql/api/<name>.sql`. */
export function loadSql(name: string): string {
  const hit = cache.get(name);
  if (hit !== undefined) return hit;
  if (!NAME.test(name)) throw new Error(`invalid SQL file name: ${name}`);
  const text = readFileSync(new URL(`${name}.sql`, SQL_DIR), 'utf8');
  cache.set(name, text);
  return text;
}
