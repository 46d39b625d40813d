/**
 * One DuckDB instance per process (DESIGN §9), and one connection per in-flight query.
 * Thin wrappers only: callers use @duckdb/node-api's own connection API.
 */
import { DuckDBInstance, type DuckDBConnection } from '@duckdb/node-api';
import { z } from 'zod';
import { envSettings } from '../env.ts';
import { markDuckdbOpened } from './duckdb-opened.ts';
import { DuckdbEnv } from './duckdb-settings.ts';

let shared: Promise<DuckDBInstance> | null = null;

export interface DuckDbOptions {
  /** DuckDB `threads` setting; defaults to QUORUM_DUCKDB_THREADS, else the machine's core count. */
  threads?: number;
  /** DuckDB `memory_limit`, e.g. "3GB"; defaults to QUORUM_DUCKDB_MEMORY_LIMIT, else DuckDB's. */
  memoryLimit?: string;
  /** Where DuckDB may spill larger-than-memory work. */
  tempDirectory?: string;
}

/** The process-wide in-memory DuckDB instance (created on first use). */
export function duckdb(options: DuckDbOptions = {}): Promise<DuckDBInstance> {
  if (!shared) {
    const env = envSettings(z.object(DuckdbEnv));
    // No external file cache: it kept blocks of every Parquet file the instance ever read, evicted
    // only under the memory limit (DuckDB's default: 80% of the machine's). `quorum start` keeps
    // this instance for months, and each run reads new raw parts and snapshots (outside soak: RSS
    // 305 -> 464 MB over 21 scheduled runs, the JS heap flat). The API's snapshot reader had the
    // same growth (api/snapshot/reader.ts). The files stay in the OS page cache.
    const config: Record<string, string> = { enable_external_file_cache: 'false' };
    const threads = options.threads ?? env.QUORUM_DUCKDB_THREADS;
    const memoryLimit = options.memoryLimit ?? env.QUORUM_DUCKDB_MEMORY_LIMIT;
    if (threads) config.threads = String(threads);
    if (memoryLimit) config.memory_limit = memoryLimit;
    if (options.tempDirectory) config.temp_directory = options.tempDirectory;
    shared = openUtcInstance(config);
    markDuckdbOpened();
  }
  return shared;
}

/**
 * A new in-memory DuckDB instance whose every connection has TimeZone UTC, whatever the host's
 * time zone. DuckDB's TimeZone starts as the process's (TZ, /etc/localtime): on a host in
 * Kathmandu a `TIMESTAMP → TIMESTAMPTZ` cast, a TIMESTAMPTZ's `::DATE`, `date_trunc('day', …)` or
 * `strftime`, and a time string without an offset cast to TIMESTAMPTZ would read the warehouse's
 * UTC times 5 h 45 min off (README "The warehouse"). Every instance Quorum opens (the pipeline's,
 * the API's snapshot reader, the export engine, the benchmarks') is made here
 * (test/warehouse/duckdb-time-zone.test.ts checks it). Set GLOBAL once it exists, as the
 * creation config cannot name TimeZone (ICU's setting is unknown until the instance has loaded it:
 * "the icu extension needs to be loaded").
 */
export async function openUtcInstance(config: Record<string, string> = {}): Promise<DuckDBInstance> {
  const instance = await DuckDBInstance.create(':memory:', config);
  try {
    const conn = await instance.connect();
    try {
      await conn.run(`SET GLOBAL TimeZone = 'UTC'`);
    } finally {
      conn.closeSync();
    }
  } catch (err) {
    instance.closeSync();
    throw err;
  }
  return instance;
}

/** Runs `work` on a fresh connection of the shared instance and closes it afterwards. */
export async function withConnection<T>(work: (conn: DuckDBConnection) => Promise<T>): Promise<T> {
  const conn = await (await duckdb()).connect();
  try {
    return await work(conn);
  } finally {
    conn.closeSync();
  }
}

/** Closes the shared instance (tests and graceful shutdown). */
export async function closeDuckdb(): Promise<void> {
  if (!shared) return;
  const instance = await shared;
  shared = null;
  instance.closeSync();
}

/**
 * Quotes a filesystem path as a SQL string literal. Only for paths the pipeline itself builds
 * from its configuration (COPY targets and view definitions cannot take bound parameters);
 * user input is always bound, never passed here.
 */
/**
 * Bytes `conn`'s instance holds of the files it has read (DuckDB's external file cache): 0 on the
 * instances Quorum keeps, which turn it off (this module, api/snapshot/reader.ts, api/export/engine.ts).
 */
export async function externalFileCacheBytes(conn: DuckDBConnection): Promise<number> {
  const rows = await conn.runAndReadAll("SELECT coalesce(sum(memory_usage_bytes), 0)::BIGINT AS bytes FROM duckdb_memory() WHERE tag = 'EXTERNAL_FILE_CACHE'");
  return Number(rows.getRowObjectsJS()[0]!.bytes);
}

export function sqlPath(path: string): string {
  if (path.includes('\0')) throw new Error('path contains a NUL byte');
  return `'${path.replaceAll("'", "''")}'`;
}

/**
 * Whether DuckDB's readers would take `path` for a glob: it holds `*`, `?`, `[`, `]`, `{` or `}`.
 * Such a path is no single file to them (an operator's directory named `f*` read its sibling `fx`
 * too, outside test), and no escaping names every such file (DuckDB splits a glob at `\` as at
 * `/`): sqlFilePath refuses it, and an operator's file so named is read through a link named
 * plainly (claims generic-sql.ts).
 */
export function hasGlobCharacters(path: string): boolean {
  return /[*?[\]{}]/.test(path);
}

/**
 * Quotes the path of ONE file to read (read_parquet treats * ? [ ] { } as glob characters, which
 * none of our single-file paths is meant to contain, so such a path is refused).
 */
export function sqlFilePath(path: string): string {
  if (hasGlobCharacters(path)) throw new Error(`refusing a file path with glob characters: ${path}`);
  return sqlPath(path);
}

/** Quotes an identifier from our own schema definitions (checked against a strict pattern). */
export function sqlIdent(name: string): string {
  if (!/^[a-z_][a-z0-9_]*$/.test(name)) throw new Error(`not a plain identifier: ${name}`);
  return `"${name}"`;
}
