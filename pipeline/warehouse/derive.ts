/**
 * Runs the scoring: the ordered pure-SQL files of `sql/derive/` on one DuckDB connection.
 *
 * The SQL reads the `raw_<table>` relations (views over the raw Parquet in the pipeline, tables in
 * tests) and the one-row `run_params(as_of TIMESTAMP, headline_modes VARCHAR[],
 * max_comparator_age_days DOUBLE, bootstrap_seed BIGINT, bootstrap_replicates INTEGER)`, which this
 * module creates with bound parameters. Every `CREATE TABLE name` whose name does not start with `_` is a
 * published derived table (see sql/README.md); `exportTables` writes them as Parquet.
 */
import { sqlIdent, sqlPath } from './duckdb.ts';
import { createHash } from 'node:crypto';
import { readdir, readFile } from 'node:fs/promises';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import {
  LIST,
  VARCHAR,
  listValue,
  timestampValue,
  type DuckDBConnection,
} from '@duckdb/node-api';
import { MODES, RAW_TABLES, type DuckType, type Mode } from './tables.ts';
import { splitSqlStatements } from './sql-statements.ts';
import type { SnapshotColumn } from './snapshot.ts';

/** Default order of headline modes (DESIGN §5): augmented, falling back to informed, then blind. */
export const DEFAULT_HEADLINE_MODES: readonly Mode[] = ['augmented', 'informed', 'blind'];

/** Default maximum age of a market comparator price, in days (QUORUM_MAX_COMPARATOR_AGE_DAYS). */
export const DEFAULT_MAX_COMPARATOR_AGE_DAYS = 7;

/** Fixed seed of the bootstrap draws (sql/derive/51_bootstrap.sql): reruns give the same intervals. */
export const DEFAULT_BOOTSTRAP_SEED = 20_260_101;

/** Bootstrap replicates of every published interval (at least 1,000). */
export const DEFAULT_BOOTSTRAP_REPLICATES = 1000;

/** `sql/derive/` of this checkout. */
export const DEFAULT_SQL_DIR = resolve(dirname(fileURLToPath(import.meta.url)), '..', '..', 'sql', 'derive');

const TABLE_NAME = /^[a-z][a-z0-9_]*$/;
/**
 * QUORUM_DERIVE_PROFILE=1: one stderr line per derive statement (file, statement, ms) and per
 * exported table (table, ms), for finding the slow SQL; off by default.
 */
const PROFILE = process.env.QUORUM_DERIVE_PROFILE === '1';
const SQL_FILE = /^\d+_[a-z0-9_]+\.sql$/;
/**
 * `CREATE [OR REPLACE] [TEMP|TEMPORARY] TABLE|VIEW|TYPE [IF NOT EXISTS] name` at the start of a
 * statement: whether TEMP, the kind, the name (createdObject).
 */
const CREATE_OBJECT =
  /^\s*create\s+(?:or\s+replace\s+)?((?:temp|temporary)\s+)?(table|view|type)\s+(?:if\s+not\s+exists\s+)?"?([A-Za-z_][A-Za-z0-9_]*)"?/i;

/**
 * What a derive statement creates, or null: a TEMP one goes with its connection; any other is an
 * object of the instance's database, which outlives it (dropDerivedObjects). A table or view whose
 * name does not start with `_` is published (deriveTables; a published view is written to the
 * snapshot like a table, exportTables).
 */
function createdObject(statement: string): { temporary: boolean; kind: StoredObject['kind']; name: string } | null {
  const m = CREATE_OBJECT.exec(stripLineComments(statement));
  return m ? { temporary: m[1] !== undefined, kind: m[2]!.toUpperCase() as StoredObject['kind'], name: m[3]! } : null;
}

/** A table, view or type the derive creates in the database (not TEMP). */
export interface StoredObject {
  kind: 'TABLE' | 'VIEW' | 'TYPE';
  name: string;
}

/** The tables, views and types the sql/derive files of `dir` create in the database, in creation order. */
export async function derivedStoredObjects(dir: string = DEFAULT_SQL_DIR): Promise<StoredObject[]> {
  const out: StoredObject[] = [];
  for (const file of await listSqlFiles(dir)) {
    for (const { text } of splitSqlStatements(await readFile(join(dir, file), 'utf8'))) {
      const created = createdObject(text);
      if (!created || created.temporary) continue;
      const object = { kind: created.kind, name: created.name.toLowerCase() };
      if (!out.some((o) => o.kind === object.kind && o.name === object.name)) out.push(object);
    }
  }
  return out;
}

/**
 * Drops what the sql/derive files of `dir` created in the database (tables, views, ENUM types;
 * newest first, so a table goes before the type it uses), once they are exported. They are no
 * TEMP tables (sql/README.md, TEMP tables), so they outlived the run's connection in the
 * process's instance: `quorum start` kept every derived table of its latest run between runs
 * (outside soak: 117 tables, 75 MB of DuckDB's IN_MEMORY_TABLE on the sample; a rescore of 10
 * million forecasts builds GBs of them), each run building its own beside them before replacing them.
 */
export async function dropDerivedObjects(conn: DuckDBConnection, dir: string = DEFAULT_SQL_DIR): Promise<void> {
  for (const { kind, name } of (await derivedStoredObjects(dir)).reverse()) {
    await conn.run(`DROP ${kind} IF EXISTS ${sqlIdent(name)}`);
  }
}

/** Raw column type → DuckDB DDL type (table-driven; identity today, one place to change). */
const DDL_TYPE: Record<DuckType, string> = {
  VARCHAR: 'VARCHAR',
  DOUBLE: 'DOUBLE',
  BIGINT: 'BIGINT',
  INTEGER: 'INTEGER',
  BOOLEAN: 'BOOLEAN',
  TIMESTAMP: 'TIMESTAMP',
  'VARCHAR[]': 'VARCHAR[]',
  'DOUBLE[]': 'DOUBLE[]',
};

export interface DeriveOptions {
  /** The run's point in time: only what was known at asOf is scored. */
  asOf: Date;
  /** Headline consensus = the first of these modes with a scored consensus. */
  headlineModes?: Mode[];
  /** A market price older than this (days, at the forecast's created_at) is no comparator. */
  maxComparatorAgeDays?: number;
  /** Seed of the hash-based bootstrap draws. */
  bootstrapSeed?: number;
  /** Bootstrap replicates (>= 1000). */
  bootstrapReplicates?: number;
  /** Directory of the ordered `NN_name.sql` files (default: sql/derive of this checkout). */
  sqlDir?: string;
}

/** Thrown when one SQL file fails; names the file and the statement. */
export class DeriveError extends Error {
  constructor(
    readonly file: string,
    readonly statementIndex: number,
    /** The 1-based line of the file where the failed statement's code starts. */
    readonly line: number,
    cause: unknown,
  ) {
    const detail = cause instanceof Error ? cause.message : String(cause);
    super(`sql/derive/${file} (statement ${statementIndex + 1}, line ${line}) failed: ${detail}`, { cause });
    this.name = 'DeriveError';
  }
}

/** Strips `--` line comments (the SQL files use no `--` inside string literals). */
function stripLineComments(sql: string): string {
  return sql.replace(/--[^\n]*/g, '');
}

/** The `NN_name.sql` files of dir, in name order. */
export async function listSqlFiles(dir: string): Promise<string[]> {
  const names = (await readdir(dir)).filter((f) => SQL_FILE.test(f));
  return names.sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
}

/**
 * The fingerprint of the SQL a snapshot is derived with: sha256 over every sql/derive file's name
 * and text, in run order. A snapshot records it (manifest `derive_sql_hash`), so that a server
 * started on a newer version can tell that the snapshot it would serve was derived by other SQL
 * (other tables and columns than its routes read) and rescore it first.
 */
export async function deriveSqlHash(dir: string = DEFAULT_SQL_DIR): Promise<string> {
  const hash = createHash('sha256');
  for (const f of await listSqlFiles(dir)) hash.update(`${f}\0${await readFile(join(dir, f), 'utf8')}\0`);
  return hash.digest('hex');
}

/**
 * Creates `run_params` (bound parameters), runs every sql/derive file in name order and returns
 * the published tables it created (names without a leading `_`), in creation order.
 */
export async function deriveTables(conn: DuckDBConnection, opts: DeriveOptions): Promise<string[]> {
  const asOfMs = opts.asOf.getTime();
  if (!Number.isFinite(asOfMs)) throw new TypeError('deriveTables: asOf is not a valid date');
  const headline = opts.headlineModes ?? [...DEFAULT_HEADLINE_MODES];
  for (const m of headline) {
    if (!(MODES as readonly string[]).includes(m)) throw new TypeError(`deriveTables: unknown mode ${m}`);
  }
  const maxAge = opts.maxComparatorAgeDays ?? DEFAULT_MAX_COMPARATOR_AGE_DAYS;
  if (!(Number.isFinite(maxAge) && maxAge > 0)) throw new TypeError('deriveTables: maxComparatorAgeDays must be > 0');
  const seed = opts.bootstrapSeed ?? DEFAULT_BOOTSTRAP_SEED;
  if (!Number.isSafeInteger(seed) || seed < 0) throw new TypeError('deriveTables: bootstrapSeed must be a non-negative integer');
  const replicates = opts.bootstrapReplicates ?? DEFAULT_BOOTSTRAP_REPLICATES;
  if (!Number.isInteger(replicates) || replicates < 1000 || replicates > 100_000) {
    throw new TypeError('deriveTables: bootstrapReplicates must be an integer in [1000, 100000]');
  }
  const dir = opts.sqlDir ?? DEFAULT_SQL_DIR;

  await conn.run(
    'CREATE OR REPLACE TEMP TABLE run_params (as_of TIMESTAMP, headline_modes VARCHAR[], ' +
      'max_comparator_age_days DOUBLE, bootstrap_seed BIGINT, bootstrap_replicates INTEGER)',
  );
  const insert = await conn.prepare('INSERT INTO run_params VALUES ($1, $2, $3, $4, $5)');
  try {
    insert.bindTimestamp(1, timestampValue(BigInt(Math.trunc(asOfMs)) * 1000n));
    insert.bindList(2, listValue(headline), LIST(VARCHAR));
    insert.bindDouble(3, maxAge);
    insert.bindBigInt(4, BigInt(seed));
    insert.bindInteger(5, replicates);
    await insert.run();
  } finally {
    insert.destroySync();
  }

  const published: string[] = [];
  for (const file of await listSqlFiles(dir)) {
    const sql = await readFile(join(dir, file), 'utf8');
    // Each statement runs on its own (see sql-statements.ts for why not prepared), so a
    // failure names its statement and the profile can time each one.
    const statements = splitSqlStatements(sql);
    let index = 0;
    try {
      for (; index < statements.length; index++) {
        const t0 = PROFILE ? performance.now() : 0;
        await conn.run(statements[index]!.text);
        if (PROFILE) process.stderr.write(`derive ${file} #${index} ${Math.round(performance.now() - t0)} ms\n`);
      }
    } catch (err) {
      throw new DeriveError(file, index, statements[index]?.line ?? 0, err);
    }
    for (const { text } of statements) {
      const created = createdObject(text);
      const name = created && created.kind !== 'TYPE' ? created.name : undefined;
      if (name && !name.startsWith('_') && !published.includes(name)) published.push(name);
    }
  }
  for (const t of published) {
    if (!TABLE_NAME.test(t)) throw new Error(`deriveTables: published table name ${t} is not [a-z][a-z0-9_]*`);
  }
  return published;
}

/**
 * The row order of a published file that its derive object does not fix. `claims` is a view read
 * through joins run on several threads: its rows came out in another order at each publish of the
 * same claims (a helper's test saw the claims export reorder in 3 runs of 8), and the export, sliced
 * in file order, with them. Written in the order GET /api/claims/ pages them: newest made first,
 * then by claim id (about 0.3 s more for a million claims).
 */
const PUBLISHED_ORDER: Readonly<Record<string, string>> = { claims: 'made_at DESC, claim_id' };

/**
 * Writes each table to `<dir>/<table>.parquet` (zstd). Paths cannot be bound in COPY.
 * zstd level 1, not DuckDB's default 3: the same rows and about the same files (the scoring bench's
 * snapshot +0.5%, its text table 9% smaller) for a tenth less export CPU, a third less on the wide
 * text columns of scored_forecast_texts.
 */
export async function exportTables(conn: DuckDBConnection, tables: string[], dir: string): Promise<void> {
  for (const t of tables) {
    if (!TABLE_NAME.test(t)) throw new Error(`exportTables: invalid table name ${JSON.stringify(t)}`);
  }
  for (const t of tables) {
    const path = join(dir, `${t}.parquet`);
    const t0 = PROFILE ? performance.now() : 0;
    const rows = PUBLISHED_ORDER[t] ? `(SELECT * FROM ${t} ORDER BY ${PUBLISHED_ORDER[t]})` : t;
    await conn.run(`COPY ${rows} TO ${sqlPath(path)} (FORMAT parquet, COMPRESSION zstd, COMPRESSION_LEVEL 1)`);
    if (PROFILE) process.stderr.write(`export ${t} ${Math.round(performance.now() - t0)} ms\n`);
  }
}

/**
 * The columns (name and type, in file order) of each table's Parquet file in `dir`, as DuckDB
 * reads them back: what an analyst opening the file sees (a HUGEINT, for one, is written as a
 * DOUBLE). For the snapshot's manifest; only the files' footers are read.
 */
export async function parquetColumns(conn: DuckDBConnection, tables: string[], dir: string): Promise<Record<string, SnapshotColumn[]>> {
  const columns: Record<string, SnapshotColumn[]> = {};
  for (const t of tables) {
    if (!TABLE_NAME.test(t)) throw new Error(`parquetColumns: invalid table name ${JSON.stringify(t)}`);
    const rows = (await conn.runAndReadAll(`DESCRIBE SELECT * FROM read_parquet(${sqlPath(join(dir, `${t}.parquet`))})`)).getRowObjectsJS();
    columns[t] = rows.map((r) => ({ name: String(r.column_name), type: String(r.column_type) }));
  }
  return columns;
}

/** DDL of an empty `raw_<table>` table with the columns of RAW_TABLES[table]. */
export function rawTableDdl(table: keyof typeof RAW_TABLES): string {
  const cols = Object.entries(RAW_TABLES[table].columns as Record<string, DuckType>)
    .map(([name, type]) => `"${name}" ${DDL_TYPE[type]}`)
    .join(', ');
  return `CREATE OR REPLACE TABLE raw_${table} (${cols})`;
}

/** Creates an empty `raw_<table>` TABLE for every raw table (tests; empty warehouses). */
export async function createRawTables(conn: DuckDBConnection): Promise<void> {
  for (const table of Object.keys(RAW_TABLES) as (keyof typeof RAW_TABLES)[]) {
    await conn.run(rawTableDdl(table));
  }
}
