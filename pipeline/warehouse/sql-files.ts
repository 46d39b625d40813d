/**
 * Loads SQL from the repository's `sql/` folder (SQL lives in files, one concern per file) and
 * runs it with bound parameters.
 */
import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { DuckDBConnection, DuckDBValue } from '@duckdb/node-api';
import { toPlain } from './values.ts';

export const SQL_DIR = join(dirname(fileURLToPath(import.meta.url)), '..', '..', 'sql');

const cache = new Map<string, string>();

/** The text of `sql/<relative>` (cached). */
export function sqlFile(relative: string): string {
  let text = cache.get(relative);
  if (text === undefined) {
    text = readFileSync(join(SQL_DIR, relative), 'utf8');
    cache.set(relative, text);
  }
  return text;
}

/** Runs `sql/<relative>` with named parameters bound, returning plain JS rows. */
export async function queryFile<T = Record<string, unknown>>(
  conn: DuckDBConnection,
  relative: string,
  params: Record<string, DuckDBValue> = {},
): Promise<T[]> {
  const reader = await conn.runAndReadAll(sqlFile(relative), params);
  return reader.getRowObjectsJS().map((row) => toPlain(row) as T);
}
