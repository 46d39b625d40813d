/**
 * A sync step's rows go in place together (as an import's do, raw-writer commitParts): a sync that
 * fails or is killed after it committed a step's `questions` part but before its
 * `lifecycle_events` part lost those lifecycle events for good, since the next sync drops the
 * first-seen events of every question already stored (onlyNewLifecycle). Shown in-process with a
 * question file (localOnly: nothing outside is reached) and a lifecycle_events table that cannot be
 * written the first time (its directory a plain file, as a write failing on a full disk would).
 */
import { afterAll, describe, expect, it } from 'vitest';
import { mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { createLogger } from '../../pipeline/log.ts';
import { runSync } from '../../pipeline/sync.ts';
import { closeDuckdb, withConnection } from '../../pipeline/warehouse/duckdb.ts';
import { rawTableDir } from '../../pipeline/warehouse/layout.ts';
import { rawRelation } from '../../pipeline/warehouse/raw-views.ts';
import { tempDir } from '../helpers/temp-dir.ts';

const tmp = tempDir('quorum-sync-batch-');
afterAll(async () => {
  await closeDuckdb();
  tmp.cleanup();
});

const questionFile = `questions:
  - id: batch-commit
    title: BATCHSER above 1 in December 2099
    resolution_criteria: BATCHSER 2099-12-01 above 1
    created_at: 2025-01-15
    close_time: 2099-12-01
    resolution: {source: fred, series_id: BATCHSER, observation_date: 2099-12-01, transform: level, operator: ">", threshold: 1}
`;

describe('a sync step that fails half-way through its writes', () => {
  it('leaves none of its rows, so the next sync writes them all: the questions and their lifecycle events', async () => {
    const root = join(tmp.dir, 'data');
    const questionsDir = join(tmp.dir, 'questions');
    mkdirSync(questionsDir, { recursive: true });
    writeFileSync(join(questionsDir, 'batch.yaml'), questionFile);
    const config = { dataDir: root, questionsDir };
    const logger = createLogger('silent');
    // lifecycle_events cannot be written this time: its partition of today is a plain file
    const blocker = join(rawTableDir(root, 'lifecycle_events'), `run_date=${new Date().toISOString().slice(0, 10)}`);
    mkdirSync(rawTableDir(root, 'lifecycle_events'), { recursive: true });
    writeFileSync(blocker, '');
    const failed = await runSync(config, logger, undefined, { localOnly: true });
    expect(failed.sources.find((s) => s.source === 'question-files')?.error).toBeTruthy();
    rmSync(blocker);

    await runSync(config, logger, undefined, { localOnly: true });
    const stored = await withConnection(async (conn) => {
      const q = await conn.runAndReadAll(`SELECT count(*)::INTEGER AS n FROM (${rawRelation(root, 'questions')}) WHERE question_id LIKE '%batch-commit'`);
      const e = await conn.runAndReadAll(`SELECT list(state ORDER BY state) AS s FROM (${rawRelation(root, 'lifecycle_events')}) WHERE question_id LIKE '%batch-commit'`);
      return { questions: q.getRowObjectsJS()[0]!.n, states: e.getRowObjectsJS()[0]!.s };
    });
    expect(stored).toEqual({ questions: 1, states: ['active', 'proposed'] });
  }, 60_000);
});
