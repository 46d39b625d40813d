/**
 * Keeps the service fresh: a node-cron task (every 4 hours by default, QUORUM_SCHEDULE) that runs
 * the pipeline. Never two runs at once: node-cron's noOverlap within the process, and the run lock
 * file across processes (a tick that finds the lock held is skipped and logged).
 */
import cron, { type ScheduledTask } from 'node-cron';
import type { Logger } from './log.ts';
import type { QuorumConfig } from './config.ts';
import { runPipeline } from './run.ts';
import { RunLockedError } from './warehouse/lock.ts';

export function startScheduler(config: QuorumConfig, logger: Logger): ScheduledTask {
  const task = cron.schedule(
    config.schedule,
    async () => {
      try {
        await runPipeline({ config, logger });
      } catch (err) {
        if (err instanceof RunLockedError) logger.warn({ holder: err.holder }, 'scheduled run skipped: a run is in progress');
        else logger.error({ err }, 'scheduled run failed');
      }
    },
    { noOverlap: true, timezone: 'UTC', name: 'quorum-pipeline' },
  );
  logger.info({ schedule: config.schedule }, 'scheduler started');
  return task;
}

/** Seconds until the scheduler's next run (for Cache-Control), or null if unknown. */
export function secondsUntilNextRun(task: ScheduledTask): number | null {
  const next = task.getNextRun();
  return next ? Math.max(0, Math.round((next.getTime() - Date.now()) / 1000)) : null;
}
