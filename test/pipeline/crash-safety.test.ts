/**
 * A run killed at any point (SIGKILL, no chance to clean up) leaves the previous snapshot served,
 * and no raw data lost or duplicated; the next run takes over the stale lock and completes.
 * The same holds for an import killed half-way and done again.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { cpSync, existsSync, mkdirSync, readdirSync, rmSync, statSync, utimesSync, writeFileSync } from 'node:fs';
import { journalDir } from '../../pipeline/forecast/journal.ts';
import { join } from 'node:path';
import { quorum, quorumAsync, quorumProcess, REPO } from '../helpers/cli.ts';
import { memTempDir } from '../helpers/mem-temp-dir.ts';
import { parquetReader } from '../helpers/parquet-reader.ts';
import { tempDir } from '../helpers/temp-dir.ts';
import { readCurrent, readManifest } from '../../pipeline/warehouse/snapshot.ts';
import { rawGlob, rawTableDir } from '../../pipeline/warehouse/layout.ts';
import type { RawTableName } from '../../pipeline/warehouse/tables.ts';
import { RAW_TABLES } from '../../pipeline/warehouse/tables.ts';
import { ONE_DUCKDB_THREAD } from '../forecast/helpers.ts';

const sample = join(REPO, 'data', 'sample', 'forecastbench');
/**
 * In memory (a tmpfs, test/helpers/mem-temp-dir.ts): what is tested is a process killed (SIGKILL),
 * whose writes are in the page cache whether or not they were fsynced; a power cut is not. On the
 * disk of a busy machine every run's fsyncs (each raw part, each snapshot table, the journal)
 * waited there.
 */
const tmp = memTempDir('quorum-crash-');
/**
 * On disk: the imports killed in their writes. In memory an import wrote its last part 100-180 ms
 * after its first (on disk 150-450 ms), too close to the last kill, 60 ms after the first part.
 */
const disk = tempDir('quorum-crash-disk-');

/** Every census reads through one DuckDB instance (test/helpers/parquet-reader.ts). */
const reader = parquetReader();

/** Rows and distinct natural keys of every raw table (equal when nothing is duplicated). */
async function census(root: string): Promise<Record<string, { rows: number; keys: number }>> {
  return reader.read(async (conn) => {
    const out: Record<string, { rows: number; keys: number }> = {};
    for (const table of Object.keys(RAW_TABLES) as RawTableName[]) {
      const glob = rawGlob(root, table);
      // questions: a question's versions (the sync's; a ForecastBench round whose text changed) share
      // its id, each once per ingested_at
      const key = table === 'questions' ? 'question_id, ingested_at' : RAW_TABLES[table].key.join(', ');
      try {
        const r = await conn.runAndReadAll(
          `SELECT count(*)::INTEGER AS rows, count(DISTINCT (${key}))::INTEGER AS keys FROM read_parquet($1, hive_partitioning=false)`,
          [glob],
        );
        out[table] = r.getRowObjectsJS()[0] as { rows: number; keys: number };
      } catch {
        out[table] = { rows: 0, keys: 0 }; // no parts yet
      }
    }
    return out;
  });
}

/**
 * The stages of a run, each as the data directory shows it has begun: the kills below land in
 * each of them whatever the machine's speed. (They were fractions of a run's duration measured
 * on a run dated with --as-of, about half as long as the undated runs killed: no kill reached
 * the derive or the publishing.)
 */
const STAGES = {
  /** Start-up and the sync: the process is up. */
  'start-up': () => true,
  /** The model calls: the run's journal written since it started (a new run's, or a resumed one's). */
  forecasting: (w: Watched) => newerFiles(journalDir(w.root), w.since) > 0,
  /** The raw rows of its calls: a forecasts part written since it started. */
  writing: (w: Watched) => newerFiles(rawTableDir(w.root, 'forecasts'), w.since) > 0,
  /** The derive: its snapshot's directory, not yet published, exists. */
  deriving: (w: Watched) => stagingDir(w) !== null,
  /** The export: the first of the snapshot's tables written. */
  exporting: (w: Watched) => parquetFiles(stagingDir(w)) > 0,
  /** The last tables, just before the manifest and the publishing. */
  publishing: (w: Watched) => parquetFiles(stagingDir(w)) >= w.tables - 2,
} as const;
type Stage = keyof typeof STAGES;
type Watched = { root: string; pid: number; since: number; tables: number };

/** Files under `dir` (recursively) modified after `since` (ms). */
function newerFiles(dir: string, since: number): number {
  if (!existsSync(dir)) return 0;
  let n = 0;
  for (const f of readdirSync(dir, { recursive: true, withFileTypes: true })) {
    if (!f.isFile()) continue;
    try {
      if (statSync(join(f.parentPath, f.name)).mtimeMs > since) n++;
    } catch {
      // removed meanwhile (a .tmp part renamed)
    }
  }
  return n;
}

/** The directory process `pid` builds its snapshot in (snapshot.ts: `<id>.tmp-<pid>`), if any. */
function stagingDir(w: Watched): string | null {
  const name = readdirSync(join(w.root, 'snapshots')).find((n) => n.endsWith(`.tmp-${w.pid}`));
  return name === undefined ? null : join(w.root, 'snapshots', name);
}

function parquetFiles(dir: string | null): number {
  try {
    return dir === null ? 0 : readdirSync(dir).filter((n) => n.endsWith('.parquet')).length;
  } catch {
    return 0; // renamed meanwhile
  }
}

/**
 * Starts the CLI with `args` and SIGKILLs it `intoMs` after `reached` (looked at every 5 ms) first
 * holds; resolves with whether it was killed (false: it ended first) and its exit code.
 */
function killWhen(
  args: string[],
  env: Record<string, string>,
  reached: (w: Watched) => boolean,
  intoMs: number,
  tables = 0,
): Promise<{ killed: boolean; code: number | null }> {
  const since = Date.now();
  const child = quorumProcess(args, env);
  const w: Watched = { root: env.QUORUM_DATA_DIR!, pid: child.pid!, since, tables };
  let killed = false;
  const look = setInterval(() => {
    if (!reached(w)) return;
    clearInterval(look);
    setTimeout(() => (killed = child.kill('SIGKILL')), intoMs);
  }, 5);
  return new Promise((resolve) => {
    child.on('exit', (code, signal) => {
      clearInterval(look);
      resolve({ killed: killed && signal === 'SIGKILL', code });
    });
  });
}

/** Kills `quorum run` a little into `stage` (start-up: once the process is loaded, not yet locked). */
function killDuring(stage: Stage, env: Record<string, string>, tables: number) {
  return killWhen(['run'], env, STAGES[stage], stage === 'start-up' ? 300 : 20, tables);
}

/**
 * 20 of the sample's questions per run: every stage still runs (forecasting 240-odd calls,
 * writing, every derive, publishing), and a kill lands in each of them (each kill waits for its
 * stage to show in the data directory). The derive and the export are those of the whole sample
 * whatever the number forecast; the forecasting is not: the whole sample made each of the eight
 * runs 12 s of forecasting alone, 100 questions about 2 s of CPU a run more than 20. Here the
 * forecasting stage lasts some 0.6 s, the writing 0.15 s, the derive 1.5 s, the export 0.1 s
 * before its last tables and the publishing 0.3 s (in memory, on a loaded 2-core machine): each
 * kill, 20 ms into its stage, lands in it.
 *
 * One DuckDB thread per run (QUORUM_DUCKDB_THREADS): the derives are small statements on the
 * sample, where a second thread only adds scheduling on a loaded 2-core machine (about 0.5 s of
 * CPU a run); no kill point or check depends on the thread count.
 */
const env = {
  QUORUM_DATA_DIR: join(tmp.dir, 'runs'),
  QUORUM_SIMULATOR_LATENCY_MS: '2',
  QUORUM_MAX_QUESTIONS: '20',
  ...ONE_DUCKDB_THREAD,
};

/**
 * The sample imported once by the real CLI into a warehouse of its own, never changed after: what
 * a complete import leaves (its census, `cleanCensus`, is what the killed and failed imports below
 * must end with), and the start of the warehouses that begin with an import (each a copy of it,
 * not an import of its own: one import instead of four).
 */
const clean = join(tmp.dir, 'clean');
let cleanCensus: Awaited<ReturnType<typeof census>>;

beforeAll(async () => {
  expect(quorum(['import', 'forecastbench', sample], { QUORUM_DATA_DIR: clean }).status).toBe(0);
  cleanCensus = await census(clean);
  cpSync(clean, env.QUORUM_DATA_DIR, { recursive: true });
  const first = quorum(['run', '--as-of', '2025-10-16T00:00:00Z'], env);
  expect(first.status, first.stderr).toBe(0);
  // The sources registry and the bundled question files come in with the first sync; later syncs
  // (every live run starts with one) add nothing to them.
  expect(quorum(['sync'], env).status).toBe(0);
}, 300_000);

afterAll(async () => {
  await reader.close();
  tmp.cleanup();
  disk.cleanup();
});

describe('a pipeline run killed at any point', () => {
  it('leaves the previous snapshot served and no raw row duplicated or lost', async () => {
    const root = env.QUORUM_DATA_DIR;
    const served = readCurrent(root)!;
    expect(served).not.toBeNull();
    const before = await census(root);
    const tables = readManifest(root, served).tables.length;
    // A kill in each stage: start-up, forecasting, writing, deriving, exporting, publishing.
    for (const stage of Object.keys(STAGES) as Stage[]) {
      const { killed, code } = await killDuring(stage, env, tables);
      expect(killed, `the run ended (exit ${code}) before it was killed in its ${stage} stage`).toBe(true);
      const current = readCurrent(root);
      expect(current).not.toBeNull();
      // Either the old snapshot, or (if the kill came after publishing) a complete new one.
      const manifest = readManifest(root, current!);
      expect(manifest.tables.length).toBeGreaterThan(5);
      for (const t of manifest.tables) expect(existsSync(join(root, 'snapshots', current!, `${t}.parquet`))).toBe(true);
      const after = await census(root);
      for (const [table, c] of Object.entries(after)) {
        expect(c.keys, `${table} duplicated after a kill in the ${stage} stage`).toBe(c.rows);
        expect(c.rows, `${table} lost rows`).toBeGreaterThanOrEqual(before[table]!.rows);
      }
      // Imported data is untouched by runs.
      for (const table of ['questions', 'resolutions', 'sources'] as const) expect(after[table]).toEqual(before[table]);
    }
    // The next run takes over the dead run's lock and publishes.
    const next = quorum(['run'], env);
    expect(next.status, next.stderr).toBe(0);
    const summary = JSON.parse(next.stdout.trim().split('\n').pop()!);
    expect(summary.status).toBe('completed');
    expect(readCurrent(root)).toBe(summary.snapshot);
    expect(readCurrent(root)).not.toBe(served);
  }, 600_000);
});

/*
 * The three tests below run together (describe.concurrent): each has a data directory of its own
 * (one on disk, two in memory) and only its own processes. Their CLI calls are asynchronous
 * (quorumAsync, not spawnSync), so that one test's import or run does not hold up another's
 * event loop, where the killed imports' 5 ms looks and kill timers run.
 */
describe.concurrent('an import killed half-way', () => {
  it('is completed by importing again, with nothing duplicated', async () => {
    const expected = cleanCensus;
    const root = join(disk.dir, 'killed');
    // Killed while reading (before any part is written), then as its first part is written and a
    // little later, in the writes (they were kills at fixed times, most before or after them).
    const writing = (w: Watched) => newerFiles(join(w.root, 'raw'), w.since) > 0;
    for (const [reached, ms] of [[() => true, 300], [writing, 0], [writing, 30], [writing, 60]] as const) {
      const { killed, code } = await killWhen(['import', 'forecastbench', sample], { QUORUM_DATA_DIR: root }, reached, ms);
      expect(killed, `the import ended (exit ${code}) before its kill (${ms} ms after ${reached === writing ? 'its first part' : 'its start'})`).toBe(true);
    }
    expect((await quorumAsync(['import', 'forecastbench', sample], { QUORUM_DATA_DIR: root })).status).toBe(0);
    const got = await census(root);
    for (const table of ['questions', 'market_prices', 'resolutions', 'sources', 'lifecycle_events']) {
      expect(got[table], table).toEqual(expected[table]);
    }
  }, 300_000);

  it('whose write fails on a later table (as on a full disk) writes nothing; importing again writes it all (QA)', async () => {
    const expected = cleanCensus;
    const root = join(tmp.dir, 'failing');
    // a file where the lifecycle_events table's directory goes: its write, the last, fails
    mkdirSync(join(root, 'raw'), { recursive: true });
    const blocker = rawTableDir(root, 'lifecycle_events');
    writeFileSync(blocker, 'in the way');
    const failed = await quorumAsync(['import', 'forecastbench', sample], { QUORUM_DATA_DIR: root });
    expect(failed.status).toBe(1);
    const none = await census(root);
    for (const table of ['questions', 'market_prices', 'resolutions', 'sources']) expect(none[table], table).toEqual({ rows: 0, keys: 0 });
    const left = readdirSync(join(root, 'raw'), { recursive: true }).map(String).filter((f) => f.endsWith('.tmp'));
    expect(left).toEqual([]);
    rmSync(blocker);
    expect((await quorumAsync(['import', 'forecastbench', sample], { QUORUM_DATA_DIR: root })).status).toBe(0);
    const got = await census(root);
    for (const table of ['questions', 'market_prices', 'resolutions', 'sources', 'lifecycle_events']) expect(got[table], table).toEqual(expected[table]);
  }, 300_000);

  it("leaves unfinished parts that the next run removes once they are an hour old, not younger ones (an import may be writing them) (QA: never removed)", async () => {
    const root = join(tmp.dir, 'abandoned-parts');
    cpSync(clean, root, { recursive: true }); // the sample imported
    const partition = join(rawTableDir(root, 'questions'), 'run_date=2026-01-01', 'run_id=i-killed');
    mkdirSync(partition, { recursive: true });
    const old = join(partition, 'part-old.parquet.tmp');
    const young = join(partition, 'part-young.parquet.tmp');
    writeFileSync(old, 'cut short');
    writeFileSync(young, 'being written');
    const twoHoursAgo = new Date(Date.now() - 2 * 3_600_000);
    utimesSync(old, twoHoursAgo, twoHoursAgo);
    const r = await quorumAsync(['run', '--score-only'], { QUORUM_DATA_DIR: root, QUORUM_VENUES: 'none', LOG_LEVEL: 'warn' });
    expect(r.status, r.stderr).toBe(0);
    expect(existsSync(old)).toBe(false);
    expect(existsSync(young)).toBe(true);
    expect(r.stderr).toContain('removed raw parts left unfinished by a process killed while writing');
  }, 300_000);
});
