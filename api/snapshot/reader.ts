/**
 * The snapshot reader: one DuckDB instance per process, a small connection pool, and the
 * published snapshot exposed as a schema of views over its Parquet files.
 *
 * - Loading a snapshot creates schema `snap_<n>_<id>` with one view per manifest table
 *   (`SELECT * FROM read_parquet('<dir>/<table>.parquet')`), in one transaction. A snapshot whose
 *   manifest is missing or invalid, or that lacks a listed file, is not loaded: the previous one
 *   stays served.
 * - `CURRENT` is polled every `pollMs` (and `reload()` checks it on demand). A new id (or the
 *   same id whose manifest `created_at` changed: re-published) is loaded and then swapped in
 *   atomically: requests already running keep the snapshot they pinned;
 *   the old schema is dropped when its last request finishes.
 * - Requests pin a snapshot with `withSnapshot(fn)`: every query of one response reads the same
 *   snapshot. Each query takes its own pooled connection and switches it to the pinned schema
 *   (`SET schema`), then runs the SQL file with bound parameters.
 */
import { deriveSqlHash } from '../../pipeline/warehouse/derive.ts';
import { openUtcInstance, sqlFilePath } from '../../pipeline/warehouse/duckdb.ts';
import { CURRENT_POLL_MS } from '../../pipeline/warehouse/snapshot.ts';
import { readdir, readFile, stat } from 'node:fs/promises';
import path from 'node:path';
import type { DuckDBInstance } from '@duckdb/node-api';
import type { Logger } from 'pino';
import { ApiError } from '../errors/problem.ts';
import type { JsonRow } from '../db/convert.ts';
import { ConnectionPool } from '../db/pool.ts';
import { runQuery, type SqlParams } from '../db/query.ts';
import { loadSql } from '../db/sql-files.ts';
import {
  SCHEMA_NAME,
  TABLE_NAME,
  isSnapshotId,
  manifestSchema,
  schemaNameFor,
  type SnapshotManifest,
} from './manifest.ts';

export interface SnapshotReaderOptions {
  dataDir: string;
  logger: Logger;
  /** How often CURRENT is checked, in ms (default 2000; 0 disables polling). */
  pollMs?: number;
  /** Pooled connections, i.e. queries that can run at once (default 4). */
  poolSize?: number;
  /**
   * Query-time setting (QUORUM_MAX_PRICE_AGE_HOURS, default 48): a market price older than this
   * many hours is published with `market_stale: true`. Bound into the API's SQL, so a change needs
   * a restart of the API, not a pipeline run.
   */
  maxPriceAgeHours?: number;
}

/** Default of QUORUM_MAX_PRICE_AGE_HOURS. */
export const DEFAULT_MAX_PRICE_AGE_HOURS = 48;

/** What the API tells about a loaded snapshot. */
export interface SnapshotInfo {
  readonly id: string;
  readonly runId: string;
  /** ISO 8601 UTC: the point in time the snapshot's run saw. */
  readonly asOf: string;
  readonly createdAt: string;
  readonly headlineModes: readonly string[];
  readonly tables: ReadonlySet<string>;
  readonly manifest: SnapshotManifest;
  /** ISO 8601 UTC: when this process loaded it. */
  readonly loadedAt: string;
  /** The query-time staleness bound of market prices, in hours (SnapshotReaderOptions). */
  readonly maxPriceAgeHours: number;
}

/** A snapshot pinned for the duration of one request. */
export interface PinnedSnapshot extends SnapshotInfo {
  /** Runs `sql/api/<file>.sql` with bound `params` against this snapshot. */
  query(file: string, params?: SqlParams): Promise<JsonRow[]>;
  /**
   * Throws a 503 not_ready problem naming the first table (`table`) or column (`table.column`) this
   * snapshot lacks: a snapshot published by an older pipeline is served for what it has until the
   * next run rebuilds it, never answered with a SQL error.
   */
  require(...tables: string[]): void;
}

interface LoadedSnapshot extends Omit<SnapshotInfo, 'maxPriceAgeHours'> {
  readonly schema: string;
  /** Every view's columns (`table.column`), read once at load. */
  readonly columns: ReadonlySet<string>;
  refs: number;
  retired: boolean;
}

const CURRENT_FILE = 'CURRENT';
const MANIFEST_FILE = 'manifest.json';

function sqlIdent(name: string, pattern: RegExp): string {
  if (!pattern.test(name)) throw new Error(`refusing SQL identifier ${JSON.stringify(name)}`);
  return `"${name}"`;
}


export class SnapshotReader {
  readonly dataDir: string;
  readonly #logger: Logger;
  readonly #instance: DuckDBInstance;
  readonly #pool: ConnectionPool;
  readonly #pollMs: number;
  readonly #maxPriceAgeHours: number;
  #current: LoadedSnapshot | null = null;
  #generation = 0;
  #chain: Promise<unknown> = Promise.resolve();
  readonly #onLoaded: ((id: string) => void)[] = [];
  #timer: NodeJS.Timeout | null = null;
  #polling = false;
  #closed = false;
  #lastFailure: { id: string; message: string } | null = null;
  /** This version's sql/derive fingerprint (computed on the first query error that needs it). */
  #sqlHash: Promise<string> | null = null;

  private constructor(opts: SnapshotReaderOptions, instance: DuckDBInstance) {
    this.dataDir = path.resolve(opts.dataDir);
    this.#logger = opts.logger;
    this.#instance = instance;
    this.#pool = new ConnectionPool(instance, opts.poolSize ?? 4);
    this.#pollMs = opts.pollMs ?? CURRENT_POLL_MS;
    const maxAge = opts.maxPriceAgeHours ?? DEFAULT_MAX_PRICE_AGE_HOURS;
    if (!(Number.isFinite(maxAge) && maxAge > 0)) throw new TypeError('SnapshotReader: maxPriceAgeHours must be > 0');
    this.#maxPriceAgeHours = maxAge;
  }

  /** Opens the DuckDB instance, loads CURRENT if there is one, and starts polling. */
  static async open(opts: SnapshotReaderOptions): Promise<SnapshotReader> {
    const instance = await openUtcInstance({
      autoinstall_known_extensions: 'false',
      autoload_known_extensions: 'false',
      // DuckDB's external file cache kept blocks of every Parquet file the server ever read, with
      // no memory limit on this instance: each new snapshot added ~1.8 MB that nothing freed (QA:
      // RSS 237 → 606 MB over 145 snapshots; pruning them freed nothing). A snapshot's files are
      // small and stay in the OS page cache; the response cache holds the answers.
      enable_external_file_cache: 'false',
    });
    const reader = new SnapshotReader(opts, instance);
    try {
      await reader.reload();
    } catch (err) {
      // Not fatal: the API answers not_ready until a loadable snapshot is published.
      reader.#logger.error({ err }, 'initial snapshot load failed');
    }
    reader.#startPolling();
    return reader;
  }

  /** Calls `listener` with the id of each snapshot loaded from now on (after it is served). */
  onLoaded(listener: (id: string) => void): void {
    this.#onLoaded.push(listener);
  }

  /** The snapshot new requests get, or null before one is loaded. */
  get current(): SnapshotInfo | null {
    return this.#current ? info(this.#current, this.#maxPriceAgeHours) : null;
  }

  /** The id of the snapshot new requests get (null before one is loaded); cheap, for cache keys. */
  get currentId(): string | null {
    return this.#current?.id ?? null;
  }

  /**
   * Why the served snapshot can no longer be read, or null (it is whole, or none is served): its
   * directory or a table's file is gone from disk, pruned or deleted under the server (a newer
   * snapshot that cannot be loaded keeps it served past the prune's grace). One readdir.
   */
  async servedMissing(): Promise<string | null> {
    const snap = this.#current;
    return snap ? missingOnDisk(this.dataDir, snap) : null;
  }

  /**
   * The snapshot schemas (`snap_<n>_<id>`) the reader's DuckDB instance holds now, each with its
   * number of views, by name: the served snapshot's, plus a retired one's only while a request
   * still reads it (its schema is dropped when the last one finishes). What a long-lived server
   * keeps across publishes, for tests to check (test/api/snapshot-retirement.test.ts; no endpoint
   * or metric shows it).
   */
  async loadedSchemas(): Promise<Array<{ schema: string; views: number }>> {
    return this.#pool.use(async ({ connection }) => {
      const rows = await runQuery(
        connection,
        'SELECT s.schema_name AS schema, count(v.view_name)::INTEGER AS views FROM duckdb_schemas() s ' +
          'LEFT JOIN duckdb_views() v ON v.schema_name = s.schema_name AND v.database_name = s.database_name ' +
          "WHERE s.schema_name LIKE 'snap\\_%' ESCAPE '\\' GROUP BY ALL ORDER BY 1",
        {},
      );
      return rows.map((r) => ({ schema: String(r.schema), views: Number(r.views) }));
    });
  }

  /** The last load failure (id and message), cleared by a successful load. */
  get lastFailure(): { id: string; message: string } | null {
    return this.#lastFailure;
  }

  /**
   * Checks CURRENT now and loads it if it names a snapshot other than the served one.
   * Resolves to the served snapshot afterwards (null if none); rejects if the named snapshot
   * cannot be loaded (the previous one stays served). Calls are serialised.
   */
  reload(): Promise<SnapshotInfo | null> {
    const run = this.#chain.then(() => this.#reloadOnce());
    this.#chain = run.catch(() => undefined);
    return run;
  }

  /**
   * Pins the current snapshot for `fn` (all its queries read the same snapshot). Throws a 503
   * not_ready ApiError when no snapshot is loaded.
   */
  async withSnapshot<T>(fn: (snapshot: PinnedSnapshot) => Promise<T>): Promise<T> {
    const snap = this.#current;
    if (!snap || this.#closed) {
      // As /readyz says it: a published snapshot that cannot be loaded (a damaged copy) is not
      // "nothing published yet", which a client or an operator would wait out.
      const failure = this.#closed ? null : this.#lastFailure;
      throw ApiError.notReady(failure ? `No snapshot is loaded yet; the published snapshot ${failure.id} could not be loaded.` : undefined);
    }
    snap.refs++;
    const pinned: PinnedSnapshot = {
      ...info(snap, this.#maxPriceAgeHours),
      query: (file, params = {}) => this.#query(snap, file, params),
      require: (...tables) => {
        for (const t of tables) {
          if (t.includes('.')) {
            if (!snap.columns.has(t)) {
              throw ApiError.notReady(`Snapshot ${snap.id} has no column '${t}' (published before it existed; the next run adds it).`);
            }
          } else if (!snap.tables.has(t)) {
            throw ApiError.notReady(`Snapshot ${snap.id} has no table '${t}' (published before it existed; the next run adds it).`);
          }
        }
      },
    };
    try {
      return await fn(pinned);
    } finally {
      snap.refs--;
      if (snap.retired && snap.refs === 0) this.#drop(snap);
    }
  }

  /** Stops polling, waits for a running load, closes every connection and the instance. */
  async close(): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    if (this.#timer) clearInterval(this.#timer);
    this.#timer = null;
    await this.#chain.catch(() => undefined);
    this.#pool.close();
    this.#instance.closeSync();
  }

  #startPolling(): void {
    if (this.#pollMs <= 0 || this.#closed) return;
    this.#timer = setInterval(() => {
      if (this.#polling || this.#closed) return;
      this.#polling = true;
      this.reload()
        .catch(() => undefined) // logged in #reloadOnce
        .finally(() => {
          this.#polling = false;
        });
    }, this.#pollMs);
    this.#timer.unref();
  }

  async #readCurrentId(): Promise<string | null> {
    let text: string;
    try {
      text = await readFile(path.join(this.dataDir, CURRENT_FILE), 'utf8');
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === 'ENOENT') return null;
      throw err;
    }
    const id = (text.split(/\r?\n/, 1)[0] ?? '').trim();
    return id === '' ? null : id;
  }

  async #reloadOnce(): Promise<SnapshotInfo | null> {
    if (this.#closed) return this.current;
    const id = await this.#readCurrentId();
    if (id === null) return this.current;
    if (this.#current && this.#current.id === id && !(await this.#republished(this.#current))) return this.current;
    let snap: LoadedSnapshot;
    try {
      snap = await this.#load(id);
    } catch (err) {
      // Logged once per snapshot and failure, judged by the message's first line: DuckDB follows it
      // with the statement around the error, which names this attempt's schema (snap_<n>_<id>, n
      // counting the attempts), so whole messages never repeated and a damaged Parquet file was
      // logged at error level on every poll, every 2 s (outside upgrade test: a half-written snapshot).
      const message = (err instanceof Error ? err.message : String(err)).split('\n', 1)[0]!;
      if (this.#lastFailure?.id !== id || this.#lastFailure.message !== message) {
        this.#logger.error({ snapshot: id, err }, 'snapshot load failed; keeping the served snapshot');
      }
      this.#lastFailure = { id, message };
      throw err;
    }
    if (this.#closed) {
      await this.#dropSchema(snap.schema).catch(() => undefined);
      return null;
    }
    const old = this.#current;
    this.#current = snap;
    this.#lastFailure = null;
    this.#logger.info({ snapshot: id, as_of: snap.asOf, previous: old?.id ?? null }, 'snapshot loaded');
    for (const listener of this.#onLoaded) listener(id);
    if (old) {
      old.retired = true;
      if (old.refs === 0) this.#drop(old);
    }
    return info(snap, this.#maxPriceAgeHours);
  }

  /**
   * Whether the served snapshot's directory was replaced under the same id (a run re-published
   * with its id): its manifest's created_at changed. An unreadable manifest counts as unchanged.
   */
  async #republished(snap: LoadedSnapshot): Promise<boolean> {
    try {
      const raw = await readFile(path.join(this.dataDir, 'snapshots', snap.id, MANIFEST_FILE), 'utf8');
      const parsed = manifestSchema.safeParse(JSON.parse(raw));
      return parsed.success && parsed.data.created_at !== snap.createdAt;
    } catch {
      return false;
    }
  }

  async #load(id: string): Promise<LoadedSnapshot> {
    if (!isSnapshotId(id)) throw new Error(`CURRENT names an invalid snapshot id ${JSON.stringify(id.slice(0, 200))}`);
    const snapshotsDir = path.join(this.dataDir, 'snapshots');
    const dir = path.join(snapshotsDir, id);
    if (path.dirname(dir) !== snapshotsDir) throw new Error(`snapshot id escapes the snapshots directory: ${id}`);

    const raw = await readFile(path.join(dir, MANIFEST_FILE), 'utf8');
    const parsed = manifestSchema.safeParse(JSON.parse(raw));
    if (!parsed.success) throw new Error(`invalid ${MANIFEST_FILE} in snapshot ${id}: ${parsed.error.message}`);
    const manifest = parsed.data;
    const tables = [...new Set(manifest.tables)];
    const files = new Map<string, string>();
    for (const table of tables) {
      const file = path.join(dir, `${table}.parquet`);
      const st = await stat(file).catch(() => null);
      if (!st?.isFile()) throw new Error(`snapshot ${id} lists table ${table} but ${file} is missing`);
      files.set(table, file);
    }

    const schema = schemaNameFor(id, ++this.#generation);
    const schemaSql = sqlIdent(schema, SCHEMA_NAME);
    const columns = new Set<string>();
    await this.#pool.use(async ({ connection }) => {
      await connection.run('BEGIN TRANSACTION');
      try {
        await connection.run(`CREATE SCHEMA ${schemaSql}`);
        for (const [table, file] of files) {
          // Binding the view reads the Parquet footer: an unreadable file fails the load here.
          await connection.run(
            `CREATE VIEW ${schemaSql}.${sqlIdent(table, TABLE_NAME)} AS SELECT * FROM read_parquet(${sqlFilePath(file)})`,
          );
        }
        const described = await runQuery(
          connection,
          'SELECT table_name, column_name FROM information_schema.columns WHERE table_schema = $schema',
          { schema },
        );
        for (const c of described) columns.add(`${String(c.table_name)}.${String(c.column_name)}`);
        await connection.run('COMMIT');
      } catch (err) {
        await connection.run('ROLLBACK').catch(() => undefined);
        throw err;
      }
    });

    return {
      id,
      schema,
      runId: manifest.run_id,
      asOf: manifest.as_of,
      createdAt: manifest.created_at,
      headlineModes: manifest.headline_modes,
      tables: new Set(tables),
      columns,
      manifest,
      loadedAt: new Date().toISOString(),
      refs: 0,
      retired: false,
    };
  }

  async #query(snap: LoadedSnapshot, file: string, params: SqlParams): Promise<JsonRow[]> {
    const sql = loadSql(file);
    try {
      return await this.#pool.use(async (pooled) => {
        if (pooled.schema !== snap.schema) {
          await pooled.connection.run(`SET schema = '${sqlIdent(snap.schema, SCHEMA_NAME).slice(1, -1)}'`);
          pooled.schema = snap.schema;
        }
        return runQuery(pooled.connection, sql, params);
      });
    } catch (err) {
      // the snapshot's files gone from disk: not ready (a 503 saying so), not an internal error (QA)
      const missing = await missingOnDisk(this.dataDir, snap);
      if (missing !== null) throw ApiError.notReady(missing);
      throw (await this.#otherSqlProblem(snap, err)) ?? err;
    }
  }

  /**
   * A query this version's API makes that fails to bind on a snapshot derived by other sql/derive
   * files (an upgrade's `quorum serve` before a run rescored it: a column or table its queries read
   * is not there) is a 503 not_ready saying so, like a missing table that a route requires; it was
   * a 500 (QA: `market_status` on /api/predictions/resolved). On a snapshot this version derived,
   * such an error stays what it is, a bug.
   */
  async #otherSqlProblem(snap: LoadedSnapshot, err: unknown): Promise<ApiError | null> {
    const message = err instanceof Error ? err.message : String(err);
    if (!/^(Binder|Catalog) Error/.test(message)) return null;
    this.#sqlHash ??= deriveSqlHash().catch(() => ''); // (unreadable: judged as other SQL)
    if (snap.manifest.derive_sql_hash === (await this.#sqlHash)) return null;
    const what = /Referenced column "([^"]+)"|Table with name ([^ ]+) does not exist/.exec(message);
    const missing = what ? ` (${what[1] ? `column '${what[1]}'` : `table '${what[2]}'`})` : '';
    return ApiError.notReady(
      `Snapshot ${snap.id} was derived by other SQL than this version's and lacks what this request reads${missing}; ` +
        'the next run, or `quorum run --score-only`, rescores it.',
    );
  }

  #drop(snap: LoadedSnapshot): void {
    if (this.#closed) return;
    this.#dropSchema(snap.schema).then(
      () => this.#logger.debug({ snapshot: snap.id }, 'retired snapshot dropped'),
      (err: unknown) => this.#logger.warn({ snapshot: snap.id, err }, 'dropping a retired snapshot failed'),
    );
  }

  async #dropSchema(schema: string): Promise<void> {
    await this.#pool.use(async ({ connection }) => {
      await connection.run(`DROP SCHEMA IF EXISTS ${sqlIdent(schema, SCHEMA_NAME)} CASCADE`);
    });
  }
}

/** Why snapshot `snap` can no longer be read from disk (see servedMissing), or null. */
async function missingOnDisk(dataDir: string, snap: LoadedSnapshot): Promise<string | null> {
  let names: Set<string>;
  try {
    names = new Set(await readdir(path.join(dataDir, 'snapshots', snap.id)));
  } catch {
    return `The served snapshot ${snap.id} is no longer on disk (pruned or deleted); retry once a new snapshot is loaded.`;
  }
  for (const table of snap.tables) {
    if (!names.has(`${table}.parquet`)) {
      return `The served snapshot ${snap.id} has lost ${table}.parquet from disk (pruned or deleted); retry once a new snapshot is loaded.`;
    }
  }
  return null;
}

function info(s: LoadedSnapshot, maxPriceAgeHours: number): SnapshotInfo {
  return {
    id: s.id,
    runId: s.runId,
    asOf: s.asOf,
    createdAt: s.createdAt,
    headlineModes: s.headlineModes,
    tables: s.tables,
    manifest: s.manifest,
    loadedAt: s.loadedAt,
    maxPriceAgeHours,
  };
}
