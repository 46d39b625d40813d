/**
 * Runs one SQL statement with BOUND parameters and returns JSON rows.
 *
 * Parameters are named in the SQL (`$limit`, `$category`) and bound by their JS type: string →
 * VARCHAR, bigint or integral number → BIGINT, other number → DOUBLE, boolean → BOOLEAN,
 * array of strings → VARCHAR[], null → NULL. A parameter the SQL names but `params` lacks, or one `params` has but the SQL does
 * not name, is a programming error and throws. Values are never spliced into SQL text.
 */
import { LIST, VARCHAR, type DuckDBConnection, type DuckDBPreparedStatement } from '@duckdb/node-api';
import { rowsAsJson, type JsonRow } from './convert.ts';

export type SqlParam = string | number | bigint | boolean | readonly string[] | null;
export type SqlParams = Readonly<Record<string, SqlParam>>;

function bindOne(stmt: DuckDBPreparedStatement, index: number, name: string, value: SqlParam): void {
  if (value === null) stmt.bindNull(index);
  else if (typeof value === 'string') stmt.bindVarchar(index, value);
  else if (typeof value === 'bigint') stmt.bindBigInt(index, value);
  else if (typeof value === 'boolean') stmt.bindBoolean(index, value);
  else if (Array.isArray(value)) {
    if (!value.every((v) => typeof v === 'string')) throw new TypeError(`parameter $${name} is a list of other than strings`);
    stmt.bindList(index, value as string[], LIST(VARCHAR));
  }
  else if (typeof value === 'number') {
    if (Number.isSafeInteger(value)) stmt.bindBigInt(index, BigInt(value));
    else if (Number.isFinite(value)) stmt.bindDouble(index, value);
    else throw new TypeError(`parameter $${name} is not a finite number`);
  } else throw new TypeError(`parameter $${name} has an unsupported type`);
}

/** Prepares `sql` and binds every named parameter from `params` (strictly: no missing, no extra). */
export async function prepareBound(connection: DuckDBConnection, sql: string, params: SqlParams = {}): Promise<DuckDBPreparedStatement> {
  const stmt = await connection.prepare(sql);
  try {
    const seen = new Set<string>();
    for (let i = 1; i <= stmt.parameterCount; i++) {
      const name = stmt.parameterName(i);
      if (!Object.hasOwn(params, name)) throw new Error(`SQL parameter $${name} is not bound`);
      seen.add(name);
      bindOne(stmt, i, name, params[name] as SqlParam);
    }
    for (const name of Object.keys(params)) {
      if (!seen.has(name)) throw new Error(`parameter $${name} does not occur in the SQL`);
    }
    return stmt;
  } catch (err) {
    stmt.destroySync();
    throw err;
  }
}

/** Prepares `sql` on `connection`, binds `params` by name, runs it and reads every row. */
export async function runQuery(connection: DuckDBConnection, sql: string, params: SqlParams = {}): Promise<JsonRow[]> {
  const stmt = await prepareBound(connection, sql, params);
  try {
    const reader = await stmt.runAndReadAll();
    return rowsAsJson(reader);
  } finally {
    stmt.destroySync();
  }
}
