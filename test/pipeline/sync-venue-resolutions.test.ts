/**
 * Tracked venue markets from discovery to close and resolution, through the real CLI (`quorum sync`
 * twice, then `quorum run --score-only`) against a loopback replay of Manifold's API: what the
 * venue said must be what the published snapshot shows.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { mkdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { quorumAsync } from '../helpers/cli.ts';
import { memTempDir as tempDir } from '../helpers/mem-temp-dir.ts';
import { parquetReader } from '../helpers/parquet-reader.ts';
import { json, startReplayServer, type ReplayServer } from '../helpers/replay-server.ts';
import { rawGlob } from '../../pipeline/warehouse/layout.ts';
import { withConnection } from '../../pipeline/warehouse/duckdb.ts';
import { appendRaw } from '../../pipeline/warehouse/raw-writer.ts';
import { ONE_DUCKDB_THREAD } from '../forecast/helpers.ts';

// The fixture's open BINARY market (Manifold's LiteMarket shape) under other ids.
const fixture = JSON.parse(readFileSync(new URL('../fixtures/venues/manifold/markets-page-1.json', import.meta.url), 'utf8'))[0];
/**
 * The data directory in memory (a tmpfs, test/helpers/mem-temp-dir.ts): each of the CLIs here
 * fsyncs every raw part it writes, every snapshot table and CURRENT, which on the disk of a busy
 * machine waited there; nothing tested here is about the disk.
 */
const tmp = tempDir('quorum-sync-res-');
const questionsDir = tempDir('quorum-sync-res-q-');
/**
 * No structure definitions: the bundled ones (data/structure/) name questions these runs never
 * have, so every `run --score-only` here parsed them only to leave them all out (about 0.4 s of
 * CPU a run); what these tests check is the questions' status and outcome in the snapshot.
 */
const structureDir = tempDir('quorum-sync-res-s-');
let phase: 'open' | 'resolved' | 'reversed' = 'open';
/** Close times of the markets whose close the creator moves (Manifold: POST /v0/market/{id}/close). */
const closeOf: Record<string, number> = {};
/** Markets answered as given, whatever the phase. */
const answerOf: Record<string, unknown> = {};
let manifold: ReplayServer;
let env: Record<string, string>;

/**
 * Markets that close this many ms after the venue first serves them: the close is then ahead of
 * the sync that discovers them however long the CLI took to start (a fixed close 2 s after the
 * test's start was already past on a busy machine, and the market was never tracked). The sync
 * takes its `now` as it starts, before it asks the venue, so any delay here is ahead of it; the
 * test then waits for the close to pass, so a short one (0.5 s, not 2 s) waits less.
 */
const closeAfterServed: Record<string, number> = {};

const defaultClose = Date.now() + 30 * 86_400_000;
function open(id: string) {
  if (id in closeAfterServed) {
    closeOf[id] = Date.now() + closeAfterServed[id]!;
    delete closeAfterServed[id];
  }
  return { ...fixture, id, isResolved: false, closeTime: closeOf[id] ?? defaultClose };
}
/**
 * Resolved YES. Manifold's LiteMarket documents `resolutionTime` as optional (`resolutionTime?:
 * number`); here it is absent.
 */
function resolvedWithoutTime(id: string, resolution = 'YES') {
  const { resolutionTime: _omitted, ...m } = { ...open(id), isResolved: true, resolution, closeTime: Date.now() - 60_000, resolutionTime: 0 };
  return m;
}

/** The file's queries read through one DuckDB instance (test/helpers/parquet-reader.ts), on one thread. */
const reader = parquetReader({ threads: 1 });
function query(sql: string): Promise<Record<string, unknown>[]> {
  return reader.read(async (conn) => (await conn.runAndReadAll(sql)).getRowObjectsJS());
}

beforeAll(async () => {
  manifold = await startReplayServer([
    { path: '/v0/markets', query: { before: null }, responses: () => json(phase === 'open' ? [open('NoTimeYes01'), open('Extended01'), open('EarlyEnd01')] : []) },
    { path: '/v0/markets', responses: [json([])] },
    {
      path: /^\/v0\/market\/[^/]+$/,
      responses: (req) => {
        const id = req.path.split('/').pop()!;
        if (id in answerOf) return json(answerOf[id]);
        return json(phase === 'open' || id in closeOf ? open(id) : resolvedWithoutTime(id, phase === 'reversed' ? 'NO' : 'YES'));
      },
    },
  ]);
  for (const sub of ['links', 'theses', 'factors', 'scenarios']) mkdirSync(join(structureDir.dir, sub), { recursive: true });
  env = {
    QUORUM_DATA_DIR: tmp.dir,
    QUORUM_QUESTIONS_DIR: questionsDir.dir,
    QUORUM_STRUCTURE_DIR: structureDir.dir,
    QUORUM_VENUES: 'manifold',
    QUORUM_MANIFOLD_URL: `${manifold.url}/v0`,
    QUORUM_MANIFOLD_RPS: '1000',
    QUORUM_VENUE_RETRIES: '0',
    QUORUM_FRED_API_KEY: '',
    // One DuckDB thread per CLI: on these few rows a second one only adds scheduling on a loaded
    // 2-core machine (each `run --score-only`'s derive: 0.2-0.5 s of CPU); nothing here depends on it.
    ...ONE_DUCKDB_THREAD,
  };
});

afterAll(async () => {
  await reader.close();
  await manifold?.close();
  tmp.cleanup();
  questionsDir.cleanup();
  structureDir.cleanup();
});

describe("what venues say of tracked markets reaches the snapshot", () => {
  it('a close time the venue moves is the question\'s: an extended market stays open, one closed early is closed', async () => {
    const day = 86_400_000;
    closeAfterServed['Extended01'] = 500; // closes 0.5 s after the sync sees it…
    closeOf['EarlyEnd01'] = Date.now() + 30 * day;
    expect((await quorumAsync(['sync'], env)).status).toBe(0);
    await new Promise((r) => setTimeout(r, Math.max(0, closeOf['Extended01']! + 500 - Date.now())));
    closeOf['Extended01'] = Date.now() + 30 * day; // …extended by its creator by a month
    closeOf['EarlyEnd01'] = Date.now() - 1_000; // closed early
    expect((await quorumAsync(['sync'], env)).status).toBe(0);
    expect((await quorumAsync(['sync'], env)).status).toBe(0); // the same again: no new version
    const reopenedAt = closeOf['EarlyEnd01'];
    closeOf['EarlyEnd01'] = Date.now() + 30 * day; // reopened…
    expect((await quorumAsync(['sync'], env)).status).toBe(0);
    closeOf['EarlyEnd01'] = reopenedAt; // …and closed again at the time it closed before: a version too
    expect((await quorumAsync(['sync'], env)).status).toBe(0);

    const versions = await query(
      `SELECT question_id, count(*)::INTEGER AS n, arg_max(close_time, ingested_at) AS close_time FROM read_parquet('${rawGlob(tmp.dir, 'questions')}', hive_partitioning = false) GROUP BY 1 ORDER BY 1`,
    );
    expect(versions.map((v) => [v.question_id, v.n, (v.close_time as Date).getTime()])).toEqual([
      ['manifold:EarlyEnd01', 4, closeOf['EarlyEnd01']],
      ['manifold:Extended01', 2, closeOf['Extended01']],
      ['manifold:NoTimeYes01', 1, expect.any(Number)],
    ]);

    const run = await quorumAsync(['run', '--score-only'], env);
    expect(run.status, run.stderr).toBe(0);
    const current = readFileSync(join(tmp.dir, 'CURRENT'), 'utf8').trim();
    const status = Object.fromEntries(
      (await query(`SELECT question_id, status FROM read_parquet('${join(tmp.dir, 'snapshots', current, 'questions.parquet')}')`)).map((q) => [q.question_id, q.status]),
    );
    expect(status['manifold:Extended01']).toBe('active');
    expect(status['manifold:EarlyEnd01']).toBe('closed');
  });

  it('a resolution the venue gives no time for is dated by the sync that saw it, and published', async () => {
    expect((await quorumAsync(['sync'], env)).status).toBe(0);
    phase = 'resolved';
    const before = Date.now();
    const second = await quorumAsync(['sync'], env);
    expect(second.status, second.stderr).toBe(0);

    const res = await query(`SELECT outcome, resolved_at FROM read_parquet('${rawGlob(tmp.dir, 'resolutions')}', hive_partitioning = false)`);
    expect(res).toHaveLength(1);
    expect(res[0]!.outcome).toBe(1);
    // Not NULL: a NULL resolved_at is never visible, and the market is no longer tracked.
    expect(res[0]!.resolved_at).toBeInstanceOf(Date);
    expect((res[0]!.resolved_at as Date).getTime()).toBeGreaterThanOrEqual(before - 1000);

    const run = await quorumAsync(['run', '--score-only'], env);
    expect(run.status, run.stderr).toBe(0);
    const current = readFileSync(join(tmp.dir, 'CURRENT'), 'utf8').trim();
    const [q] = await query(`SELECT status, outcome FROM read_parquet('${join(tmp.dir, 'snapshots', current, 'questions.parquet')}') WHERE question_id = 'manifold:NoTimeYes01'`);
    expect(q).toMatchObject({ status: 'resolved', outcome: 1 });
  });
  it('a resolution the venue reverses within the recheck window is recorded beside the first, published, and announced again with the outcome it replaces', async () => {
    const snapshotQuestion = async () => {
      const current = readFileSync(join(tmp.dir, 'CURRENT'), 'utf8').trim();
      return (await query(`SELECT status, outcome FROM read_parquet('${join(tmp.dir, 'snapshots', current, 'questions.parquet')}') WHERE question_id = 'manifold:NoTimeYes01'`))[0];
    };
    expect(await snapshotQuestion()).toMatchObject({ status: 'resolved', outcome: 1 }); // the previous test's run
    const lookups = () => manifold.log.filter((r) => r.path === '/v0/market/NoTimeYes01').length;
    const before = lookups();
    expect((await quorumAsync(['sync'], env)).status).toBe(0); // still YES: looked up, nothing added
    expect(lookups()).toBe(before + 1);
    phase = 'reversed';
    const sync = await quorumAsync(['sync', '--json'], env);
    expect(sync.status, sync.stderr).toBe(0);
    expect(JSON.parse(sync.stdout).sources.find((x: { source: string }) => x.source === 'venue:manifold')?.written).toMatchObject({ resolutions_amended: 1 });
    expect((await quorumAsync(['sync'], env)).status).toBe(0); // the same NO again: nothing more
    const res = await query(`SELECT outcome FROM read_parquet('${rawGlob(tmp.dir, 'resolutions')}', hive_partitioning = false) ORDER BY retrieved_at`);
    expect(res.map((r) => r.outcome)).toEqual([1, 0]);

    const run = await quorumAsync(['run', '--score-only'], env);
    expect(run.status, run.stderr).toBe(0);
    expect(await snapshotQuestion()).toMatchObject({ status: 'resolved', outcome: 0 });
    const events = await query(
      `SELECT data FROM read_parquet('${rawGlob(tmp.dir, 'events')}', hive_partitioning = false) WHERE type = 'question.resolved' AND question_id = 'manifold:NoTimeYes01' ORDER BY seq`,
    );
    expect(events.map((e) => JSON.parse(String(e.data)))).toMatchObject([
      { outcome: 1, previous_outcome: null },
      { outcome: 0, previous_outcome: 1, previous_status: 'resolved' },
    ]);

    // outside the recheck window the market is not looked up again
    const after = lookups();
    expect((await quorumAsync(['sync'], { ...env, QUORUM_RESOLUTION_RECHECK_DAYS: '0' })).status).toBe(0);
    expect(lookups()).toBe(after);
  });
  it('a venue resolution an older version stored without a time (never visible, no longer tracked) is dated by the next sync, whatever its age', async () => {
    // as such a version left it: the question, and its resolution with resolved_at NULL
    const seen = new Date(Date.now() - 400 * 86_400_000);
    const partition = { runId: 'r20250101T000000Z-legacy01', runDate: '2025-01-01' };
    await withConnection(async (conn) => {
      await appendRaw(conn, tmp.dir, 'questions', [{
        question_id: 'manifold:Legacy01', venue: 'manifold', venue_market_id: 'Legacy01', title: 'Will the legacy market resolve?', category: 'tech',
        domain: 'other', tags: [], created_at: seen, close_time: seen, status: 'active', lang: 'en', origin: 'manifold:test', ingested_at: seen,
      }], partition);
      await appendRaw(conn, tmp.dir, 'resolutions', [{
        question_id: 'manifold:Legacy01', outcome: 0, resolved_at: null, source_slug: 'manifold', source_url: null, evidence_excerpt: 'NO',
        retrieved_at: seen, method: 'manifold:resolution', annulled_reason: null,
      }], partition);
    });
    expect(phase).toBe('reversed'); // the venue answers NO, without a resolution time
    const before = Date.now();
    const sync = await quorumAsync(['sync'], { ...env, QUORUM_RESOLUTION_RECHECK_DAYS: '0' });
    expect(sync.status, sync.stderr).toBe(0);
    const res = await query(`SELECT outcome, resolved_at FROM read_parquet('${rawGlob(tmp.dir, 'resolutions')}', hive_partitioning = false) WHERE question_id = 'manifold:Legacy01' ORDER BY retrieved_at`);
    expect(res.map((r) => [r.outcome, r.resolved_at === null])).toEqual([[0, true], [0, false]]);
    expect((res[1]!.resolved_at as Date).getTime()).toBeGreaterThanOrEqual(before - 1000);
    expect((await quorumAsync(['sync'], env)).status).toBe(0); // dated now: nothing more
    expect((await query(`SELECT count(*)::INTEGER AS n FROM read_parquet('${rawGlob(tmp.dir, 'resolutions')}', hive_partitioning = false) WHERE question_id = 'manifold:Legacy01'`))[0]!.n).toBe(2);

    const run = await quorumAsync(['run', '--score-only'], env);
    expect(run.status, run.stderr).toBe(0);
    const current = readFileSync(join(tmp.dir, 'CURRENT'), 'utf8').trim();
    const [q] = await query(`SELECT status, outcome FROM read_parquet('${join(tmp.dir, 'snapshots', current, 'questions.parquet')}') WHERE question_id = 'manifold:Legacy01'`);
    expect(q).toMatchObject({ status: 'resolved', outcome: 0 });
  });
  it('a market an older version resolved without moving its close (still a month ahead) gets the venue\'s close from the recheck', async () => {
    // As a version before close-time versions left it (QA upgrade pass): the question with the close
    // it was discovered with, a month ahead, and its resolution an hour ago. A fresh data directory
    // fed the same venue answers has the venue's close: the sync that saw the resolution wrote it.
    const discovered = new Date(Date.now() - 2 * 86_400_000);
    const storedClose = new Date(Date.now() + 30 * 86_400_000);
    const resolvedAt = new Date(Date.now() - 3_600_000);
    const partition = { runId: 'r20250101T000000Z-legacy02', runDate: '2025-01-01' };
    await withConnection(async (conn) => {
      await appendRaw(conn, tmp.dir, 'questions', [{
        question_id: 'manifold:LegacyClose1', venue: 'manifold', venue_market_id: 'LegacyClose1', title: 'Will the legacy market close?', category: 'tech',
        domain: 'other', tags: [], created_at: discovered, close_time: storedClose, status: 'active', lang: 'en', origin: 'manifold:test', ingested_at: discovered,
      }], partition);
      await appendRaw(conn, tmp.dir, 'resolutions', [{
        question_id: 'manifold:LegacyClose1', outcome: 0, resolved_at: resolvedAt, source_slug: 'manifold', source_url: null, evidence_excerpt: 'NO',
        retrieved_at: resolvedAt, method: 'manifold:resolution', annulled_reason: null,
      }], partition);
    });
    expect(phase).toBe('reversed'); // the venue answers NO (the stored outcome), closed a minute ago
    const before = Date.now();
    const sync = await quorumAsync(['sync', '--json'], env);
    expect(sync.status, sync.stderr).toBe(0);
    expect(JSON.parse(sync.stdout).sources.find((x: { source: string }) => x.source === 'venue:manifold')?.written).toMatchObject({ question_versions: 1 });
    const versions = await query(`SELECT close_time, category FROM read_parquet('${rawGlob(tmp.dir, 'questions')}', hive_partitioning = false) WHERE question_id = 'manifold:LegacyClose1' ORDER BY ingested_at`);
    expect(versions).toHaveLength(2);
    // the new version carries the current taxonomy rules' category (stored as tech by hand): the
    // sync's reclassification of the question is that one version, not a second one a sync later
    expect(versions[1]!.category).toBe('world');
    const close = (versions[1]!.close_time as Date).getTime();
    expect(close).toBeLessThan(before);
    expect(close).toBeGreaterThan(before - 5 * 60_000);
    // nothing more on the next sync, and no resolution was added (the outcome did not change)
    expect((await quorumAsync(['sync'], env)).status).toBe(0);
    expect((await query(`SELECT count(*)::INTEGER AS n FROM read_parquet('${rawGlob(tmp.dir, 'questions')}', hive_partitioning = false) WHERE question_id = 'manifold:LegacyClose1'`))[0]!.n).toBe(2);
    expect((await query(`SELECT count(*)::INTEGER AS n FROM read_parquet('${rawGlob(tmp.dir, 'resolutions')}', hive_partitioning = false) WHERE question_id = 'manifold:LegacyClose1'`))[0]!.n).toBe(1);
    const run = await quorumAsync(['run', '--score-only'], env);
    expect(run.status, run.stderr).toBe(0);
    const current = readFileSync(join(tmp.dir, 'CURRENT'), 'utf8').trim();
    const [q] = await query(`SELECT status, outcome, close_time FROM read_parquet('${join(tmp.dir, 'snapshots', current, 'questions.parquet')}') WHERE question_id = 'manifold:LegacyClose1'`);
    expect(q).toMatchObject({ status: 'resolved', outcome: 0 });
    expect((q!.close_time as Date).getTime()).toBe(close);
  });
  it('a resolution the venue annuls (YES, then CANCEL) is recorded once, and its return to YES is recorded too (QA: the annulment was recorded again on every sync, and the YES after it was lost)', async () => {
    // Stored YES an hour ago; Manifold now says CANCEL (its LiteMarket `resolution`), still inside the recheck window.
    const resolvedAt = new Date(Date.now() - 3_600_000);
    const partition = { runId: 'r20250101T000000Z-annul001', runDate: '2025-01-01' };
    await withConnection(async (conn) => {
      await appendRaw(conn, tmp.dir, 'questions', [{
        question_id: 'manifold:Annul01', venue: 'manifold', venue_market_id: 'Annul01', title: 'Will the annulled market resolve?', category: 'tech',
        domain: 'other', tags: [], created_at: new Date(Date.now() - 2 * 86_400_000), close_time: resolvedAt, status: 'active', lang: 'en',
        origin: 'manifold:test', ingested_at: new Date(Date.now() - 2 * 86_400_000),
      }], partition);
      await appendRaw(conn, tmp.dir, 'resolutions', [{
        question_id: 'manifold:Annul01', outcome: 1, resolved_at: resolvedAt, source_slug: 'manifold', source_url: null, evidence_excerpt: 'YES',
        retrieved_at: resolvedAt, method: 'manifold:resolution_yes', annulled_reason: null,
      }], partition);
    });
    answerOf['Annul01'] = { ...open('Annul01'), isResolved: true, resolution: 'CANCEL', resolutionTime: resolvedAt.getTime(), closeTime: resolvedAt.getTime() };
    const first = await quorumAsync(['sync', '--json'], env);
    expect(first.status, first.stderr).toBe(0);
    expect(JSON.parse(first.stdout).sources.find((x: { source: string }) => x.source === 'venue:manifold')?.written).toMatchObject({ resolutions_amended: 1 });
    for (let i = 0; i < 2; i++) {
      const again = await quorumAsync(['sync', '--json'], env);
      expect(again.status, again.stderr).toBe(0);
      expect(JSON.parse(again.stdout).sources.find((x: { source: string }) => x.source === 'venue:manifold')?.written.resolutions_amended ?? 0).toBe(0);
    }
    const res = await query(`SELECT outcome FROM read_parquet('${rawGlob(tmp.dir, 'resolutions')}', hive_partitioning = false) WHERE question_id = 'manifold:Annul01' ORDER BY retrieved_at`);
    expect(res.map((r) => r.outcome)).toEqual([1, null]);
    const amended = await query(
      `SELECT count(*)::INTEGER AS n FROM read_parquet('${rawGlob(tmp.dir, 'lifecycle_events')}', hive_partitioning = false) WHERE question_id = 'manifold:Annul01' AND reason LIKE 'resolution amended%'`,
    );
    expect(amended[0]!.n).toBe(1);

    // …and YES again: an amendment of the annulment, recorded (it read as "still YES", unchanged, and was lost)
    answerOf['Annul01'] = { ...(answerOf['Annul01'] as object), resolution: 'YES' };
    const back = await quorumAsync(['sync', '--json'], env);
    expect(back.status, back.stderr).toBe(0);
    expect(JSON.parse(back.stdout).sources.find((x: { source: string }) => x.source === 'venue:manifold')?.written).toMatchObject({ resolutions_amended: 1 });
    const after = await query(`SELECT outcome FROM read_parquet('${rawGlob(tmp.dir, 'resolutions')}', hive_partitioning = false) WHERE question_id = 'manifold:Annul01' ORDER BY retrieved_at`);
    expect(after.map((r) => r.outcome)).toEqual([1, null, 1]);
  });
});
