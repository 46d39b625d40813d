import { DuckDBInstance, type DuckDBConnection } from '@duckdb/node-api';

/**
 * One in-memory DuckDB instance for a test file's reads of the Parquet files its CLIs write, a
 * connection per read, instead of an instance per read (created at the first read). Every read sees
 * the files as they are then: DuckDB's object cache is off by default, and its external file cache,
 * which keeps blocks of the files it read, is turned off (the CLIs add and replace files between
 * reads).
 */
export function parquetReader(opts: { threads?: number } = {}) {
  let db: Promise<DuckDBInstance> | undefined;
  return {
    async read<T>(body: (conn: DuckDBConnection) => Promise<T>): Promise<T> {
      db ??= DuckDBInstance.create(':memory:', { enable_external_file_cache: 'false', ...(opts.threads ? { threads: String(opts.threads) } : {}) });
      const conn = await (await db).connect();
      try {
        return await body(conn);
      } finally {
        conn.closeSync();
      }
    },
    async close(): Promise<void> {
      if (db) (await db).closeSync();
    },
  };
}
