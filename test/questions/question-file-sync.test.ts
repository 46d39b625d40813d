/**
 * Question files through the sync itself (syncAll, with the sync's time given), against the FRED
 * replay on 127.0.0.1: what the lifecycle and resolution rows say across several syncs.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { DuckDBInstance } from '@duckdb/node-api';
import { tempDir } from '../helpers/temp-dir.ts';
import { startFredReplay, type FredReplay } from '../fixtures/fred/replay-server.ts';
import { newRunId, rawGlob, runDate } from '../../pipeline/warehouse/layout.ts';
import { withConnection } from '../../pipeline/warehouse/duckdb.ts';
import { syncAll, type SyncReport } from '../../pipeline/sync.ts';
import { appendRaw } from '../../pipeline/warehouse/raw-writer.ts';
import { silentLogger } from '../../pipeline/log.ts';
import type { RawTableName } from '../../pipeline/warehouse/tables.ts';

const KEY = 'abcdef0123456789abcdef0123456789';
const tmp = tempDir('quorum-qfile-sync-');
let fred: FredReplay;

afterAll(async () => {
  await fred?.close();
  tmp.cleanup();
});
beforeAll(async () => {
  fred = await startFredReplay({
    apiKey: KEY,
    today: '2026-11-21',
    series: { LATESER: [{ date: '2026-10-01', value: '2.0', realtime_start: '2026-11-12', realtime_end: '9999-12-31' }] },
  });
});

function setup(name: string) {
  const dataDir = join(tmp.dir, name, 'data');
  const questionsDir = join(tmp.dir, name, 'questions');
  mkdirSync(questionsDir, { recursive: true });
  const sync = (now: Date): Promise<SyncReport> =>
    withConnection((conn) =>
      syncAll(conn, {
        root: dataDir,
        questionsDir,
        now,
        logger: silentLogger(),
        env: { QUORUM_VENUES: 'none', QUORUM_FRED_URL: fred.url, QUORUM_FRED_API_KEY: KEY },
        partition: { runId: newRunId(now), runDate: runDate(now) },
      }),
    );
  const rows = async (table: RawTableName): Promise<Record<string, unknown>[]> => {
    const db = await DuckDBInstance.create(':memory:');
    const conn = await db.connect();
    try {
      return (await conn.runAndReadAll(`SELECT * FROM read_parquet($1, hive_partitioning = false) ORDER BY ALL`, [rawGlob(dataDir, table)])).getRowObjectsJS();
    } finally {
      conn.closeSync();
      db.closeSync();
    }
  };
  return { questionsDir, sync, rows, dataDir };
}

describe('lifecycle of a question-file question across syncs', () => {
  it('a question imported before its created_at gets its active event once created_at has passed (it read proposed -> closed)', async () => {
    const { questionsDir, sync, rows } = setup('later-open');
    writeFileSync(
      join(questionsDir, 'q.yaml'),
      `questions:
  - id: later-open
    title: LATESER above 1 in October 2026
    resolution_criteria: LATESER 2026-10-01 above 1
    created_at: 2026-06-01
    close_time: 2026-10-15
    resolution: {source: fred, series_id: LATESER, observation_date: 2026-10-01, transform: level, operator: ">", threshold: 1}
`,
    );
    await sync(new Date('2026-05-01T00:00:00Z')); // imported while proposed
    await sync(new Date('2026-07-01T00:00:00Z')); // open now
    await sync(new Date('2026-07-02T00:00:00Z')); // and again: nothing twice
    await sync(new Date('2026-11-20T00:00:00Z')); // closed and resolved
    const events = (await rows('lifecycle_events')).map((e) => [String(e.state), (e.at as Date).toISOString()]).sort((a, b) => a[1]!.localeCompare(b[1]!));
    expect(events).toEqual([
      ['proposed', '2026-05-01T00:00:00.000Z'],
      ['active', '2026-06-01T00:00:00.000Z'],
      ['closed', '2026-10-15T00:00:00.000Z'],
      ['resolved', '2026-11-12T00:00:00.000Z'],
    ]);
    expect(await rows('resolutions')).toHaveLength(1);
  });
});

describe('an edited close_time that reopens a closed question-file question', () => {
  const file = (close: string) => `questions:
  - id: extended
    title: NOSER above 1 in October 2027
    resolution_criteria: NOSER 2027-10-01 above 1
    created_at: 2026-01-01
    close_time: ${close}
    resolution: {source: fred, series_id: NOSER, observation_date: 2027-10-01, transform: level, operator: ">", threshold: 1}
`;

  it('is active again in its lifecycle from that sync (it stayed closed while forecast again), once', async () => {
    const { questionsDir, sync, rows } = setup('extended');
    writeFileSync(join(questionsDir, 'q.yaml'), file('2026-03-01'));
    await sync(new Date('2026-02-01T00:00:00Z'));
    await sync(new Date('2026-04-01T00:00:00Z')); // closed
    writeFileSync(join(questionsDir, 'q.yaml'), file('2026-12-01')); // the operator extends it
    const report = await sync(new Date('2026-05-01T00:00:00Z'));
    expect(report.sources.find((s) => s.source === 'question-files')!.written).toMatchObject({ question_versions: 1, lifecycle_events: 1 });
    await sync(new Date('2026-05-02T00:00:00Z')); // nothing new
    const events = (await rows('lifecycle_events')).map((e) => [String(e.state), (e.at as Date).toISOString()]).sort((a, b) => a[1]!.localeCompare(b[1]!));
    expect(events).toEqual([
      ['active', '2026-01-01T00:00:00.000Z'],
      ['proposed', '2026-02-01T00:00:00.000Z'],
      ['closed', '2026-03-01T00:00:00.000Z'],
      ['active', '2026-05-01T00:00:00.000Z'],
    ]);
    const reopened = (await rows('lifecycle_events')).find((e) => e.state === 'active' && (e.at as Date).getTime() === Date.parse('2026-05-01T00:00:00Z'))!;
    expect(reopened.reason).toMatch(/^reopened: close_time moved to 2026-12-01T00:00:00\.000Z in question file .*q\.yaml$/);
  });

  it('is active again after an upgrade when an older version wrote the extended close without reopening it (its lifecycle stayed closed)', async () => {
    const { questionsDir, sync, rows, dataDir } = setup('extended-before-upgrade');
    writeFileSync(join(questionsDir, 'q.yaml'), file('2026-03-01'));
    await sync(new Date('2026-02-01T00:00:00Z'));
    await sync(new Date('2026-04-01T00:00:00Z')); // closed
    // What 9c62793's sync wrote for the operator's edit: the new version, no lifecycle event (QA upgrade pass)
    writeFileSync(join(questionsDir, 'q.yaml'), file('2026-12-01'));
    const [stored] = await rows('questions');
    const olderSync = new Date('2026-05-01T00:00:00Z');
    await withConnection((conn) =>
      appendRaw(conn, dataDir, 'questions', [{ ...stored, close_time: new Date('2026-12-01T00:00:00Z'), ingested_at: olderSync }], { runId: newRunId(olderSync), runDate: runDate(olderSync) }, { key: ['question_id', 'ingested_at'] }),
    );
    // the upgraded version's first sync: the file is as stored, so no edit, but the lifecycle is closed while the close is ahead
    const report = await sync(new Date('2026-06-01T00:00:00Z'));
    expect(report.sources.find((s) => s.source === 'question-files')!.written).toMatchObject({ lifecycle_events: 1 });
    await sync(new Date('2026-06-02T00:00:00Z')); // nothing new
    const events = (await rows('lifecycle_events')).map((e) => [String(e.state), (e.at as Date).toISOString()]).sort((a, b) => a[1]!.localeCompare(b[1]!));
    expect(events).toEqual([
      ['active', '2026-01-01T00:00:00.000Z'],
      ['proposed', '2026-02-01T00:00:00.000Z'],
      ['closed', '2026-03-01T00:00:00.000Z'],
      ['active', '2026-06-01T00:00:00.000Z'],
    ]);
    expect(events.length).toBe(4);
    const reopened = (await rows('lifecycle_events')).find((e) => e.state === 'active' && (e.at as Date).getTime() === Date.parse('2026-06-01T00:00:00Z'))!;
    expect(reopened.reason).toMatch(/^reopened: close_time moved to 2026-12-01T00:00:00\.000Z in question file .*q\.yaml$/);
  });
});

describe('a bad question file among good ones', () => {
  it("is reported, and the other files' questions are still imported and resolved (one typo stopped them all)", async () => {
    const { questionsDir, sync, rows } = setup('one-bad');
    writeFileSync(
      join(questionsDir, 'a-good.yaml'),
      `questions:
  - id: good-one
    title: LATESER above 1 in October 2026
    resolution_criteria: LATESER 2026-10-01 above 1
    created_at: 2026-06-01
    close_time: 2026-10-15
    resolution: {source: fred, series_id: LATESER, observation_date: 2026-10-01, transform: level, operator: ">", threshold: 1}
`,
    );
    writeFileSync(
      join(questionsDir, 'b-bad.yaml'),
      `questions:
  - id: bad-one
    title: A typo below
    resolution_criteria: LATESER 2026-10-01 above 1
    close_time: 2026-10-15
    resolution: {source: fred, series_id: LATESER, observation_date: 2026-10-01, transform: level, operator: ">", threshhold: 1}
`,
    );
    const report = await sync(new Date('2026-11-20T00:00:00Z'));
    const files = report.sources.find((s) => s.source === 'question-files')!;
    expect(files.ok).toBe(false);
    expect(files.error).toBe(`${join(questionsDir, 'b-bad.yaml')}:6: questions[0] (id "bad-one"): resolution.threshhold: unknown field (missing here: threshold)`);
    expect(files.written).toMatchObject({ questions: 1 });
    expect(report.status).toBe('partial');
    const fredReport = report.sources.find((s) => s.source === 'fred')!;
    expect(fredReport).toMatchObject({ ok: true, written: { resolutions: 1 } });
    expect((await rows('questions')).map((q) => q.question_id)).toEqual(['quorum:good-one']);
    expect((await rows('resolutions')).map((r) => [r.question_id, r.outcome])).toEqual([['quorum:good-one', 1]]);
  });
});
