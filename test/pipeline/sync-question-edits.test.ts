/**
 * An operator edits a question file after it was imported: `quorum sync` (the real CLI) writes a
 * new version of the edited question (`written.question_versions`), which readers take as the
 * latest, so the title, criteria and close shown agree with the rule FRED resolves it by (read
 * from the file on every sync). Before, raw `questions` kept the first import whatever the file
 * said: the question kept its old title and close while it resolved by the edited series and
 * threshold. An entry without created_at (the import time by default) is no edit on every sync.
 * An unresolved question removed from every file is warned about (nothing resolves it any more).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { DuckDBInstance } from '@duckdb/node-api';
import { quorumAsync } from '../helpers/cli.ts';
import { tempDir } from '../helpers/temp-dir.ts';
import { startFredReplay, type FredReplay } from '../fixtures/fred/replay-server.ts';
import { rawGlob } from '../../pipeline/warehouse/layout.ts';

const FRED_KEY = 'abcdef0123456789abcdef0123456789';
const tmp = tempDir('quorum-question-edits-');
const dataDir = join(tmp.dir, 'data');
const questionsDir = join(tmp.dir, 'questions');
let fred: FredReplay;

const file = (edited: boolean) => `questions:
  - id: edited-later
    title: ${edited ? 'EDITSER above 5 in October 2025' : 'NOSUCH above 1 in October 2025'}
    resolution_criteria: ${edited ? 'EDITSER 2025-10-01 above 5' : 'NOSUCH 2025-10-01 above 1'}
    created_at: 2025-01-15
    close_time: ${edited ? '2025-11-01' : '2027-06-01'}
    resolution: {source: fred, series_id: ${edited ? 'EDITSER' : 'NOSUCH'}, observation_date: 2025-10-01, transform: level, operator: ">", threshold: ${edited ? 5 : 1}}
  - id: no-created-at
    title: EDITSER above 1 in December 2099
    resolution_criteria: EDITSER 2099-12-01 above 1
    close_time: 2099-12-01
    resolution: {source: fred, series_id: EDITSER, observation_date: 2099-12-01, transform: level, operator: ">", threshold: 1}
`;

async function rows(table: 'questions' | 'resolutions', where: string) {
  const db = await DuckDBInstance.create(':memory:');
  const conn = await db.connect();
  try {
    const r = await conn.runAndReadAll(`SELECT * FROM read_parquet($1, hive_partitioning = false) WHERE ${where} ORDER BY ALL`, [rawGlob(dataDir, table)]);
    return r.getRowObjectsJS();
  } finally {
    conn.closeSync();
    db.closeSync();
  }
}

async function sync(): Promise<Record<string, number>> {
  const r = await quorumAsync(['sync', '--json'], {
    QUORUM_DATA_DIR: dataDir,
    QUORUM_QUESTIONS_DIR: questionsDir,
    QUORUM_VENUES: 'none',
    QUORUM_FRED_URL: fred.url,
    QUORUM_FRED_API_KEY: FRED_KEY,
  });
  const report = JSON.parse(r.stdout) as { sources: { source: string; ok: boolean; written: Record<string, number>; warnings: string[] }[] };
  const q = report.sources.find((s) => s.source === 'question-files')!;
  expect(q.ok).toBe(true);
  lastWarnings = q.warnings;
  return q.written;
}
let lastWarnings: string[] = [];

beforeAll(async () => {
  mkdirSync(questionsDir, { recursive: true });
  fred = await startFredReplay({
    apiKey: FRED_KEY,
    today: '2026-11-21',
    series: { EDITSER: [{ date: '2025-10-01', value: '2.0', realtime_start: '2025-11-12', realtime_end: '9999-12-31' }] },
  });
});

afterAll(async () => {
  await fred?.close();
  tmp.cleanup();
});

describe('question file edited after import', () => {
  it('writes a new version of the edited question, once, and it resolves by the rule it shows', async () => {
    writeFileSync(join(questionsDir, 'q.yaml'), file(false));
    expect(await sync()).toMatchObject({ questions: 2 });

    writeFileSync(join(questionsDir, 'q.yaml'), file(true));
    const written = await sync();
    expect(written.question_versions).toBe(1);

    const versions = await rows('questions', "question_id = 'quorum:edited-later'");
    expect(versions).toHaveLength(2);
    const at = (q: Record<string, unknown>) => new Date(q.ingested_at as Date).getTime();
    const latest = versions.reduce((a, b) => (at(a) > at(b) ? a : b));
    expect(latest).toMatchObject({ title: 'EDITSER above 5 in October 2025', resolution_criteria: 'EDITSER 2025-10-01 above 5', status: 'closed' });
    expect(new Date(String(latest.close_time)).toISOString()).toBe('2025-11-01T00:00:00.000Z');
    expect(new Date(String(latest.created_at)).toISOString()).toBe('2025-01-15T00:00:00.000Z');
    const [resolution] = await rows('resolutions', "question_id = 'quorum:edited-later'");
    expect(resolution).toMatchObject({ outcome: 0, source_url: 'https://fred.stlouisfed.org/series/EDITSER' });

    // nothing edited since: no version, and the entry without created_at never is one
    expect((await sync()).question_versions).toBeUndefined();
    expect(await rows('questions', "question_id = 'quorum:no-created-at'")).toHaveLength(1);
    expect(lastWarnings).toEqual([]);
  });

  it('warns when an unresolved question is no longer in any file (nothing will resolve it); a resolved one removed is no warning', async () => {
    // keep only the first entry (resolved above): the open no-created-at is removed
    writeFileSync(join(questionsDir, 'q.yaml'), file(true).split('  - id: no-created-at')[0]!);
    await sync();
    expect(lastWarnings).toHaveLength(1);
    expect(lastWarnings[0]).toMatch(/^1 unresolved question imported from question files is no longer in any file and will never resolve .*: quorum:no-created-at$/);
    writeFileSync(join(questionsDir, 'q.yaml'), 'questions: []\n');
    await sync();
    expect(lastWarnings.join()).not.toContain('quorum:edited-later');
  });
});
