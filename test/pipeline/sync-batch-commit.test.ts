/**
 * A sync step's rows go in place together (as an import's do, raw-writer commitParts): a sync that
 * fails or is killed after it committed a step's `questions` part but before its
 * `lifecycle_events` part lost those lifecycle events for good, since the next sync drops the
 * first-seen events of every question already stored (onlyNewLifecycle). Shown in-process with a
 * question file (localOnly: nothing outside is reached) and a lifecycle_events table that cannot be
 * written the first time (its directory a plain file, as a write failing on a full disk would).
 */
import { afterAll, describe, expect, it } from 'vitest';
import { existsSync, mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { hostname } from 'node:os';
import { join } from 'node:path';
import { createLogger } from '../../pipeline/log.ts';
import { runSync, syncAll } from '../../pipeline/sync.ts';
import { closeDuckdb, withConnection } from '../../pipeline/warehouse/duckdb.ts';
import { lockFile, rawTableDir } from '../../pipeline/warehouse/layout.ts';
import { rawRelation } from '../../pipeline/warehouse/raw-views.ts';
import { withLockTakenAtManifold } from '../helpers/lock-takeover.ts';
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

/**
 * A sync paused past the run lock's staleness (Ctrl-Z, a paused container) has its lock taken over
 * by another process; on resuming it wrote the venue's rows beside the new holder's (two writers of
 * the same keys, each checking only what was stored before it wrote). Shown in-process: the
 * loopback Manifold replay replaces the lock with another host's while the sync waits for it
 * (test/helpers/lock-takeover.ts), as a takeover during the pause would.
 */
describe('a sync whose run lock is taken over while it waits for a venue', () => {
  it('writes nothing more, fails saying it lost the run lock, and leaves the new holder\'s lock alone', async () => {
    const root = join(tmp.dir, 'lost');
    const questionsDir = join(tmp.dir, 'no-questions');
    mkdirSync(questionsDir, { recursive: true });
    const other = JSON.stringify({ pid: 4242, host: `${hostname()}-other`, started_at: new Date().toISOString(), run_id: 'r-new-holder', token: 'new-holder' });
    const requests = await withLockTakenAtManifold(lockFile(root), other, () =>
      expect(runSync({ dataDir: root, questionsDir }, createLogger('silent'))).rejects.toThrow(/^sync \S+ lost the run lock: .*writing nothing more/),
    );
    expect(requests).toBeGreaterThan(0);
    expect(readFileSync(lockFile(root), 'utf8'), "the new holder's lock stays").toBe(other);
    // the registry went in before the takeover; no venue row after it
    const stored = existsSync(rawTableDir(root, 'questions'))
      ? await withConnection(async (conn) => (await conn.runAndReadAll(`SELECT count(*)::INTEGER AS n FROM (${rawRelation(root, 'questions')})`)).getRowObjectsJS()[0]!.n)
      : 0;
    expect(stored).toBe(0);
    expect(existsSync(rawTableDir(root, 'market_prices'))).toBe(false);
  }, 60_000);
});

/**
 * The other write paths check the lock too: the question files' step (its rows, then its edited
 * versions) rethrows the loss instead of reporting a failed step and going on to the taxonomy step.
 * The lock is "lost" right after the registry went in (held() false from its second call on).
 */
describe('a sync whose run lock is lost after the registry', () => {
  it('writes none of the question files\' rows and fails, not a failed step', async () => {
    const root = join(tmp.dir, 'lost-files');
    const questionsDir = join(tmp.dir, 'lost-files-questions');
    mkdirSync(questionsDir, { recursive: true });
    writeFileSync(join(questionsDir, 'batch.yaml'), questionFile);
    let checks = 0;
    await expect(
      withConnection((conn) =>
        syncAll(conn, {
          root, questionsDir, now: new Date(), logger: createLogger('silent'), localOnly: true,
          partition: { runId: 'r-lost-files', runDate: new Date().toISOString().slice(0, 10) },
          held: () => checks++ === 0,
        }),
      ),
    ).rejects.toThrow(/^sync r-lost-files lost the run lock: .*writing nothing more/);
    expect(checks).toBe(2);
    const parts = (table: 'sources' | 'questions' | 'lifecycle_events') =>
      existsSync(rawTableDir(root, table)) ? readdirSync(rawTableDir(root, table), { recursive: true }).filter((f) => String(f).endsWith('.parquet')).length : 0;
    expect({ sources: parts('sources') > 0, questions: parts('questions'), lifecycle_events: parts('lifecycle_events') }).toEqual({ sources: true, questions: 0, lifecycle_events: 0 });
  }, 60_000);
});
