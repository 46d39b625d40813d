/**
 * `quorum start` after an upgrade: a snapshot derived by other sql/derive files (or one that does
 * not say, published before the manifest recorded it) is rescored before the API serves it, with
 * no model call; a current one is served as it is.
 */
import { spawn } from 'node:child_process';
import { cpSync, existsSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { hostname } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { rescoreAfterRunEnds, rescoreIfDerivedByOtherSql, SNAPSHOT_CHECK_MS, snapshotFromOtherSql } from '../../pipeline/bootstrap.ts';
import { loadConfig } from '../../pipeline/config.ts';
import { createLogger } from '../../pipeline/log.ts';
import { runPipeline } from '../../pipeline/run.ts';
import { deriveSqlHash } from '../../pipeline/warehouse/derive.ts';
import { closeDuckdb, withConnection } from '../../pipeline/warehouse/duckdb.ts';
import { createRawViews } from '../../pipeline/warehouse/raw-views.ts';
import { makeCurrent, readCurrent, readManifest } from '../../pipeline/warehouse/snapshot.ts';
import { fixture, sampleFixture, type Fixture } from '../structure/helpers.ts';
import { ONE_DUCKDB_THREAD, oneDuckdbThread } from '../forecast/helpers.ts';
import { quorumProcess } from '../helpers/cli.ts';

/** Per as_of of raw `table`, the runs that froze something at that time. */
async function frozenRunsByAsOf(dataDir: string, table: 'thesis_vintages' | 'scenario_archive'): Promise<Map<string, string[]>> {
  return withConnection(async (conn) => {
    await createRawViews(conn, dataDir);
    const rows = (await conn.runAndReadAll(`SELECT strftime(as_of, '%Y-%m-%dT%H:%M:%S.%g') AS at, list(DISTINCT run_id ORDER BY run_id) AS runs FROM raw_${table} GROUP BY 1`)).getRowObjectsJS();
    return new Map(rows.map((r) => [String(r.at), (r.runs as string[])]));
  });
}

/** Rows of raw table `table` (0 when it has no part yet). */
async function rawCount(dataDir: string, table: 'claims'): Promise<number> {
  return withConnection(async (conn) => {
    await createRawViews(conn, dataDir);
    return Number((await conn.runAndReadAll(`SELECT count(*)::BIGINT AS n FROM raw_${table}`)).getRowObjectsJS()[0]!.n);
  });
}

/**
 * Warehouse directories in memory (`fixture`'s `memory`: a tmpfs): nothing this file checks is
 * about the disk (no power cut; a process's writes are in the page cache whether or not they were
 * fsynced), and on the disk of a busy machine every raw part and snapshot table each rescore
 * writes waited for its fsync.
 */
const inMemory = { memory: true };

/**
 * The sample imported and scored once as of 2026-03-10 (a published snapshot) for the whole file:
 * the describes below each get a copy of its warehouse (scoredSample), not an import and a run of
 * their own (five of each were a third of the file's time). Each describe changes its copy only.
 */
let scored: Fixture;

beforeAll(async () => {
  // The runs here (in this process and in the `quorum start` children) on one DuckDB thread: each
  // is the sample's score-only derive, small statements where a second thread only adds its
  // scheduling on a loaded 2-core machine (it cost ~20% more CPU a run); nothing checked here
  // depends on the thread count. In this process each describe opens the instance again
  // (oneDuckdbThread in its beforeAll) after the one before it closed it.
  await oneDuckdbThread();
  scored = await sampleFixture(inMemory);
  const config = loadConfig({ QUORUM_DATA_DIR: scored.dataDir, QUORUM_VENUES: 'none', LOG_LEVEL: 'silent' });
  expect((await runPipeline({ config, logger: createLogger('silent'), scoreOnly: true, asOf: new Date('2026-03-10T00:00:00Z') })).status).toBe('completed');
  await closeDuckdb();
}, 120_000);
afterAll(() => scored?.cleanup());

/** A copy of the sample scored as of 2026-03-10 (a published snapshot, nothing else), with its config. */
function scoredSample(): { f: Fixture; config: ReturnType<typeof loadConfig> } {
  const f = fixture({}, inMemory);
  cpSync(scored.dataDir, f.dataDir, { recursive: true });
  const config = loadConfig({ QUORUM_DATA_DIR: f.dataDir, QUORUM_VENUES: 'none', LOG_LEVEL: 'silent' });
  return { f, config };
}

/**
 * A describe's hooks for its own copy of the scored sample on this process's one DuckDB instance,
 * opened on one thread before it and closed after it (the describes in this process take turns):
 * `use` is given the copy.
 */
function inProcessSample(use: (sample: ReturnType<typeof scoredSample>) => void): void {
  let sample: ReturnType<typeof scoredSample> | undefined;
  beforeAll(async () => {
    await oneDuckdbThread();
    sample = scoredSample();
    use(sample);
  }, 120_000);
  afterAll(async () => {
    await closeDuckdb();
    sample?.f.cleanup();
  });
}

/** Rewrites the current snapshot's manifest by `change` (as an older version's would read). */
function tamperManifest(dataDir: string, change: (m: Record<string, unknown>) => void): void {
  const file = join(dataDir, 'snapshots', readCurrent(dataDir)!, 'manifest.json');
  const manifest = JSON.parse(readFileSync(file, 'utf8')) as Record<string, unknown>;
  change(manifest);
  writeFileSync(file, JSON.stringify(manifest));
}

/*
 * The describes below that run in this process (one DuckDB instance, opened and closed by each in
 * turn: one after the other, describe.sequential) run beside the two `quorum start` scenarios
 * after them (describe.concurrent: consecutive concurrent suites run together). Those are child
 * processes, each on a copy of its own, and most of their time is waiting (for the server's 2 s
 * looks, then three more of them); this process reads only their files and stderr there, no
 * DuckDB. One after the other, the file waited those 11 s with a core idle.
 */
describe.concurrent('in this process, beside the quorum start scenarios', () => {
  describe.sequential('rescore when the snapshot was derived by other SQL', () => {
    let f: Fixture;
    const logger = createLogger('silent');
    let config: ReturnType<typeof loadConfig>;
    inProcessSample((sample) => ({ f, config } = sample));

    it('a snapshot records the fingerprint of the SQL that derived it; a current one is not rescored', async () => {
      const id = readCurrent(f.dataDir)!;
      expect(readManifest(f.dataDir, id).derive_sql_hash).toBe(await deriveSqlHash());
      expect(await rescoreIfDerivedByOtherSql(config, logger)).toBeNull();
      expect(readCurrent(f.dataDir)).toBe(id);
    });

    it('other SQL, or none recorded: a score-only run publishes a snapshot derived by this version', async () => {
      const tampers = [(m: Record<string, unknown>) => { m.derive_sql_hash = '0'.repeat(64); }, (m: Record<string, unknown>) => { delete m.derive_sql_hash; }];
      let claimsAfterFirst = 0;
      expect(await rawCount(f.dataDir, 'claims')).toBe(0);
      for (const tamper of tampers) {
        const before = readCurrent(f.dataDir)!;
        tamperManifest(f.dataDir, tamper);
        // what quorum serve (which does not rescore) warns about
        expect(await snapshotFromOtherSql(f.dataDir)).toMatchObject({ snapshot: before, expected: await deriveSqlHash() });
        const summary = await rescoreIfDerivedByOtherSql(config, logger);
        expect(summary).toMatchObject({ status: 'completed', calls_made: 0 });
        const after = readCurrent(f.dataDir)!;
        expect(after).not.toBe(before);
        expect(readManifest(f.dataDir, after).derive_sql_hash).toBe(await deriveSqlHash());
        // the bundled claims datasets, which a first start of a version without claims never imported,
        // come in with the upgrade (QA), once
        const claims = await rawCount(f.dataDir, 'claims');
        expect(claims).toBeGreaterThan(10_000);
        if (tamper === tampers[1]) expect(claims).toBe(claimsAfterFirst);
        claimsAfterFirst = claims;
        // the same snapshot re-derived: as of the one it replaces (a past-dated one stays so, QA)
        expect(readManifest(f.dataDir, after).as_of).toBe('2026-03-10T00:00:00.000Z');
        expect(summary!.as_of).toBe('2026-03-10T00:00:00.000Z');
        expect(await snapshotFromOtherSql(f.dataDir)).toBeNull();
      }
    }, 120_000);
  });

  describe.sequential('rescore on upgrade and the frozen records', () => {
    let f: Fixture;
    const logger = createLogger('silent');
    let config: ReturnType<typeof loadConfig>;
    inProcessSample((sample) => ({ f, config } = sample));

    it('the rescore freezes no second thesis vintage or scenario record at the time of the snapshot it replaces', async () => {
      // The snapshot's own run froze its vintages as of its as_of; the rescore is dated at that same
      // as_of (QA upgrade pass: every upgrade added a copy of each thesis's vintage and each
      // scenario's record, same time and content under another run id, counted in n_vintages and
      // n_records).
      const thesesBefore = await frozenRunsByAsOf(f.dataDir, 'thesis_vintages');
      const recordsBefore = await frozenRunsByAsOf(f.dataDir, 'scenario_archive');
      expect(thesesBefore.get('2026-03-10T00:00:00.000')).toHaveLength(1);
      const before = readCurrent(f.dataDir)!;
      tamperManifest(f.dataDir, (m) => { m.derive_sql_hash = 'f'.repeat(64); });
      expect(await rescoreIfDerivedByOtherSql(config, logger)).toMatchObject({ status: 'completed', calls_made: 0 });
      expect(readCurrent(f.dataDir)).not.toBe(before);
      expect(await frozenRunsByAsOf(f.dataDir, 'thesis_vintages')).toEqual(thesesBefore);
      expect(await frozenRunsByAsOf(f.dataDir, 'scenario_archive')).toEqual(recordsBefore);
    }, 120_000);

    it('a snapshot whose time has no vintage (published by a version before thesis maps) gets one from the rescore', async () => {
      rmSync(join(f.dataDir, 'raw', 'thesis_vintages'), { recursive: true, force: true });
      tamperManifest(f.dataDir, (m) => { delete m.derive_sql_hash; });
      const summary = await rescoreIfDerivedByOtherSql(config, logger);
      expect(summary).toMatchObject({ status: 'completed', calls_made: 0 });
      expect(await frozenRunsByAsOf(f.dataDir, 'thesis_vintages')).toEqual(new Map([['2026-03-10T00:00:00.000', [summary!.run_id]]]));
    }, 120_000);
  });

  describe.sequential('rescore on upgrade while another process runs (a rolling upgrade)', () => {
    let f: Fixture;
    const logger = createLogger('silent');
    let config: ReturnType<typeof loadConfig>;
    inProcessSample((sample) => ({ f, config } = sample));

    it('an older version\'s run holding the lock: the snapshot it leaves is rescored once it has ended, not at the next scheduled run', async () => {
      // QA upgrade pass: quorum start found the lock of an older version's run still going, served on,
      // and that run then published a snapshot of its own SQL: the accuracy summary, the resolved list,
      // service stats and scenarios answered 503 until the next scheduled run, up to 4 hours later.
      tamperManifest(f.dataDir, (m) => { delete m.derive_sql_hash; }); // what the older run published
      const before = readCurrent(f.dataDir)!;
      // Its run: a live process named by a lock without token or heartbeat, as those versions wrote it.
      const older = spawn(process.execPath, ['-e', 'setInterval(() => {}, 1000)']);
      try {
        writeFileSync(join(f.dataDir, 'run.lock'), JSON.stringify({ pid: older.pid, host: hostname(), started_at: new Date().toISOString(), run_id: 'r-older' }));
        let locked = false;
        expect(await rescoreIfDerivedByOtherSql(config, logger, { onLocked: () => { locked = true; } })).toBeNull();
        expect(locked).toBe(true);
        const rescorer = rescoreAfterRunEnds(config, logger, { everyMs: 100 });
        try {
          await new Promise((resolve) => setTimeout(resolve, 1_000));
          expect(readCurrent(f.dataDir)).toBe(before); // its lock holds while its process lives
          rmSync(join(f.dataDir, 'run.lock')); // the older run ends
          const deadline = Date.now() + 100_000;
          while ((await snapshotFromOtherSql(f.dataDir)) !== null && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 50));
        } finally {
          await rescorer.stop();
        }
      } finally {
        older.kill('SIGKILL');
      }
      const after = readCurrent(f.dataDir)!;
      expect(after).not.toBe(before);
      expect(readManifest(f.dataDir, after)).toMatchObject({ derive_sql_hash: await deriveSqlHash(), as_of: '2026-03-10T00:00:00.000Z' });
    }, 180_000);
  });
});

/*
 * The two `quorum start` scenarios below run side by side (describe.concurrent), and beside the
 * describes above: each is a child process of its own on a copy of its own, and this process only
 * reads their files and stderr (no DuckDB: the describes above open and close their own). The
 * second spends most of its time waiting (for the server's 2 s looks, then three more of them):
 * one after the other, the file waited that long with a core idle.
 */
describe.concurrent('quorum start stopped during the rescore on upgrade', () => {
  let f: Fixture;

  beforeAll(() => {
    ({ f } = scoredSample()); // (the file's beforeAll closed its DuckDB: this process holds none open)
  });
  afterAll(() => f.cleanup());

  it('SIGTERM while the rescore runs: it finishes and publishes, then the process exits, nothing left locked (QA review: it exited 0 in the middle of the run, run.lock and the snapshot\'s .tmp directory left)', async () => {
    tamperManifest(f.dataDir, (m) => { m.derive_sql_hash = '0'.repeat(64); });
    const env = { QUORUM_DATA_DIR: f.dataDir, QUORUM_VENUES: 'none', QUORUM_FRED_API_KEY: '', PORT: '0', HOST: '127.0.0.1', LOG_LEVEL: 'info', ...ONE_DUCKDB_THREAD };
    const child = quorumProcess(['start'], env);
    let stderr = '';
    child.stderr!.on('data', (d) => (stderr += d));
    const exited = new Promise<number | null>((resolve) => child.on('exit', resolve));
    const deadline = Date.now() + 120_000;
    while (!/"msg":"run started"/.test(stderr) && child.exitCode === null && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20));
    child.kill('SIGTERM');
    expect(await exited).toBe(0);
    expect(stderr).toContain('"msg":"snapshot published"');
    expect(stderr).not.toContain('api listening');
    expect(existsSync(join(f.dataDir, 'run.lock'))).toBe(false);
    expect(existsSync(join(f.dataDir, 'import.lock'))).toBe(false);
    expect(readdirSync(join(f.dataDir, 'snapshots')).filter((d) => d.includes('.tmp'))).toEqual([]);
    expect(await snapshotFromOtherSql(f.dataDir)).toBeNull();
  }, 180_000);
});

describe.concurrent('quorum start serving while an older version publishes (a rolling upgrade)', () => {
  let f: Fixture;

  beforeAll(() => {
    ({ f } = scoredSample()); // (the file's beforeAll closed its DuckDB: this process holds none open)
  });
  afterAll(() => f.cleanup());

  it('a snapshot of other SQL published after the server started is rescored (QA: served as it was until the next scheduled run, up to 4 hours, without a word)', async () => {
    // The older version's run (`quorum run` of a cron job or a container not yet upgraded) started
    // after this server: it publishes a snapshot of its own SQL. Made here as that run leaves it: a
    // snapshot directory whose manifest records no derive_sql_hash (or another), then CURRENT.
    const env = { QUORUM_DATA_DIR: f.dataDir, QUORUM_VENUES: 'none', QUORUM_FRED_API_KEY: '', PORT: '0', HOST: '127.0.0.1', LOG_LEVEL: 'info', ...ONE_DUCKDB_THREAD };
    const child = quorumProcess(['start'], env);
    let stderr = '';
    child.stderr!.on('data', (d) => (stderr += d));
    const exited = new Promise<number | null>((resolve) => child.on('exit', resolve));
    try {
      const deadline = Date.now() + 120_000;
      while (!/api listening/.test(stderr) && child.exitCode === null && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50));
      expect(stderr).toContain('api listening');
      expect(stderr).not.toContain('rescoring before serving'); // the sample's snapshot is this version's
      const served = readCurrent(f.dataDir)!;
      const older = 'r20260310T000000Z-olderv01';
      cpSync(join(f.dataDir, 'snapshots', served), join(f.dataDir, 'snapshots', older), { recursive: true });
      const manifestFile = join(f.dataDir, 'snapshots', older, 'manifest.json');
      const manifest = JSON.parse(readFileSync(manifestFile, 'utf8')) as Record<string, unknown>;
      manifest.run_id = older;
      manifest.derive_sql_hash = '0'.repeat(64);
      writeFileSync(manifestFile, JSON.stringify(manifest));
      makeCurrent(f.dataDir, older);
      // rescored by the serving process as soon as no run holds the lock: it looks every
      // SNAPSHOT_CHECK_MS (2 s), as often as the API looks for a new snapshot (it was every 15 s)
      const until = Date.now() + 60_000;
      while (readCurrent(f.dataDir) === older && Date.now() < until) await new Promise((r) => setTimeout(r, 50));
      const after = readCurrent(f.dataDir)!;
      expect(after).not.toBe(older);
      expect(readManifest(f.dataDir, after)).toMatchObject({ derive_sql_hash: await deriveSqlHash(), as_of: '2026-03-10T00:00:00.000Z' });
      // once: a snapshot of this version's SQL is not rescored again (three looks later)
      await new Promise((r) => setTimeout(r, 3 * SNAPSHOT_CHECK_MS));
      expect(readCurrent(f.dataDir)).toBe(after);
      expect(stderr.match(/rescoring before serving/g)).toHaveLength(1);
    } finally {
      child.kill('SIGTERM');
      await exited;
    }
  }, 180_000);
});
