/** The scheduler runs the pipeline on its cron, and skips a tick while another run holds the lock. */
import { afterAll, describe, expect, it, vi } from 'vitest';
import { capturedLog } from '../helpers/captured-log.ts';
import { existsSync, readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { lockFile } from '../../pipeline/warehouse/layout.ts';
import { loadConfig } from '../../pipeline/config.ts';
import { startScheduler } from '../../pipeline/scheduler.ts';
import { acquireRunLock } from '../../pipeline/warehouse/lock.ts';
import { readCurrent } from '../../pipeline/warehouse/snapshot.ts';
import { closeDuckdb, withConnection } from '../../pipeline/warehouse/duckdb.ts';
import { importForecastBench } from '../../pipeline/bootstrap.ts';
import { tempDir } from '../helpers/temp-dir.ts';

const tmp = tempDir('quorum-sched-');
const tmpOverlap = tempDir('quorum-sched-overlap-');
const tmpStop = tempDir('quorum-sched-stop-');
afterAll(async () => {
  await closeDuckdb();
  tmp.cleanup();
  tmpOverlap.cleanup();
  tmpStop.cleanup();
});

const waitFor = async (cond: () => boolean, ms: number) => {
  const end = Date.now() + ms;
  while (!cond() && Date.now() < end) await new Promise((r) => setTimeout(r, 100));
  return cond();
};

describe('scheduler', () => {
  it('skips ticks while the lock is held, then runs and publishes', async () => {
    const config = loadConfig({ QUORUM_DATA_DIR: tmp.dir, QUORUM_SCHEDULE: '* * * * * *' });
    const { logger, lines } = capturedLog();
    const release = acquireRunLock(tmp.dir, 'r-held-by-test');
    const task = startScheduler(config, logger);
    try {
      expect(await waitFor(() => lines.some((l) => String(l.msg).includes('skipped')), 5000)).toBe(true);
      expect(readCurrent(tmp.dir)).toBeNull();
      release();
      expect(await waitFor(() => readCurrent(tmp.dir) !== null, 20_000)).toBe(true);
    } finally {
      await task.stop();
      release();
      // Let a run the last tick started finish before the directory is removed.
      await waitFor(() => !existsSync(lockFile(tmp.dir)), 30_000);
    }
  }, 40_000);

  it('logs a tick skipped because its own previous run is still going as a JSON warning, never plain text on the console', async () => {
    // A run takes seconds; ticking every second, the next ticks come while it runs (QA soak: the
    // only trace was node-cron's coloured `[NODE-CRON] [WARN] task still running` on stderr).
    const config = loadConfig({ QUORUM_DATA_DIR: tmpOverlap.dir, QUORUM_SCHEDULE: '* * * * * *' });
    const { logger, lines } = capturedLog();
    const consoleLines: string[] = [];
    const spies = (['warn', 'info', 'error', 'debug', 'log'] as const).map((m) =>
      vi.spyOn(console, m).mockImplementation((...args: unknown[]) => {
        consoleLines.push(args.map(String).join(' '));
      }),
    );
    const task = startScheduler(config, logger);
    try {
      const skipped = () => lines.find((l) => l.msg === 'scheduled run skipped: the previous scheduled run is still in progress');
      expect(await waitFor(() => skipped() !== undefined, 20_000)).toBe(true);
      expect(skipped()).toMatchObject({ level: 40, schedule: '* * * * * *' });
      expect(typeof skipped()!.tick).toBe('string');
      expect(consoleLines.filter((l) => l.includes('NODE-CRON'))).toEqual([]);
    } finally {
      await task.stop();
      for (const s of spies) s.mockRestore();
      await waitFor(() => !existsSync(lockFile(tmpOverlap.dir)), 30_000);
    }
  }, 60_000);

  it('stop() ends a scheduled run in progress gracefully: recorded interrupted, lock released, then resolves', async () => {
    // QA soak: SIGTERM to `quorum start` mid-run exited at once under the run (its in-flight calls
    // cut, the runs table left at `started`, nothing logged about it).
    const config = loadConfig({
      QUORUM_DATA_DIR: tmpStop.dir,
      QUORUM_SCHEDULE: '* * * * * *',
      QUORUM_VENUES: 'none',
      QUORUM_FRED_API_KEY: '',
      QUORUM_SIMULATOR_LATENCY_MS: '300',
    });
    await importForecastBench(config, config.sampleDir);
    const { logger, lines } = capturedLog();
    const scheduler = startScheduler(config, logger);
    const journal = join(tmpStop.dir, 'journal');
    const calling = () => existsSync(journal) && readdirSync(journal).some((f) => statSync(join(journal, f)).size > 0);
    try {
      expect(await waitFor(calling, 30_000)).toBe(true);
    } finally {
      await scheduler.stop();
    }
    // stop() resolved after the run ended: its lock is gone, and it is recorded as interrupted.
    expect(existsSync(lockFile(tmpStop.dir))).toBe(false);
    const runId = readdirSync(journal)[0]!.replace(/\.jsonl$/, '');
    const statuses = await withConnection(async (conn) =>
      (
        await conn.runAndReadAll(
          `SELECT status FROM read_parquet('${join(tmpStop.dir, 'raw', 'runs')}/**/*.parquet', union_by_name = true) WHERE run_id = '${runId}'`,
        )
      )
        .getRowObjects()
        .map((r) => String(r.status)),
    );
    expect(statuses.sort()).toEqual(['interrupted', 'started']);
    expect(lines.some((l) => l.level === 40 && String(l.msg).startsWith('stopping the scheduled run in progress'))).toBe(true);
  }, 90_000);
});
