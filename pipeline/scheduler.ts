/**
 * Keeps the service fresh: a node-cron task (every 4 hours by default, QUORUM_SCHEDULE) that runs
 * the pipeline. Never two runs at once: node-cron's noOverlap within the process, and the run lock
 * file across processes (a tick that finds the lock held is skipped and logged).
 *
 * Stopping it (`quorum start`'s graceful shutdown) stops a scheduled run in progress the way SIGTERM
 * stops `quorum run`: no new model call, the calls in flight finish and are journaled, the run is
 * recorded `interrupted` (the next start continues it), and stop() resolves once it has ended. It
 * was left running while the process exited under it (QA soak: SIGTERM mid-run exited in 1.2 s
 * with the run's 64 in-flight calls cut, the runs table saying only `started`, and no log line
 * saying a run had been abandoned).
 *
 * Every tick that does not run is a structured warning in the service's log: one that finds the
 * lock held (another process's run), one that comes while this process's previous run is still
 * going (node-cron's `execution:overlap`) and one node-cron missed (`execution:missed`: one whose
 * next tick had come too before it could run, the process paused or the clock stepped forward past
 * both; a tick only late runs late, LATE_TICK_TOLERANCE_MS). node-cron's own messages go to the same pino logger: its
 * default logger wrote them to stderr as coloured plain text, the one non-JSON line of `quorum start`
 * (QA: a tick skipped by an overlong run was only `[NODE-CRON] [WARN] task still running, ...`,
 * which a JSON log pipeline such as `jq` rejects).
 */
import cron, { type Logger as CronLogger, type ScheduledTask } from 'node-cron';
import type { Logger } from './log.ts';
import type { QuorumConfig } from './config.ts';
import { ALREADY_PUBLISHED_NOTE, runPipeline, type RunSummary } from './run.ts';
import { RunLockedError } from './warehouse/lock.ts';

/**
 * node-cron's logger, onto pino. Its warnings are the overlap and the missed tick, which the task's
 * events log with the tick's time (startScheduler): kept at debug, so each skip is one line.
 */
function cronLogger(logger: Logger): CronLogger {
  const log = logger.child({ component: 'node-cron' });
  const errorLine = (level: 'error' | 'debug', message: string | Error, err?: Error) =>
    message instanceof Error ? log[level]({ err: message }, message.message) : log[level](err ? { err } : {}, message);
  return {
    info: (message) => log.debug(message),
    warn: (message) => log.debug(message),
    error: (message, err) => errorLine('error', message, err),
    debug: (message, err) => errorLine('debug', message, err),
  };
}

/**
 * How late a tick may come and still run: always, until the next tick's time has come (node-cron
 * runs a late tick only while the next one is still ahead; a tick whose next one has passed too is
 * `execution:missed`). node-cron's default is 1 s: a tick that came 2 s late (the event loop busy at
 * its time, a paused VM or throttled container, the clock stepped forward) was dropped, logged as
 * missed, and with the default schedule the served snapshot went 8 hours without a run (QA).
 */
const LATE_TICK_TOLERANCE_MS = Number.MAX_SAFE_INTEGER;

/** The scheduler: its next tick, and stop (which ends a scheduled run in progress gracefully). */
export interface Scheduler {
  getNextRun(): Date | null;
  stop(): Promise<void>;
}

/**
 * How often the scheduler looks at the wall clock for a suspend. Node's timers count a clock that
 * stands still while the machine is suspended (CLOCK_MONOTONIC), so node-cron's timer, armed for
 * the next tick before a suspend, fires that long late after it (QA: suspended at 00:30 and woken
 * at 20:00, the 04:00 tick's timer still had 3.5 hours to go: no run until 23:30). A look that
 * finds more than twice this much wall-clock time gone since the last one (a suspend, or the
 * clock stepped forward) re-arms node-cron from now and runs the tick that came meanwhile.
 */
const WAKE_CHECK_MS = 60_000;

/**
 * One scheduled tick's run. The tick continues an unfinished run first (QUORUM_AUTO_RESUME); one
 * that had published its snapshot before it was killed is only recorded completed, and the tick
 * then runs its own: before, that tick synced, forecast and announced nothing, a whole cycle lost
 * (outside test: 4 hours at the default schedule).
 */
export async function scheduledRun(config: QuorumConfig, logger: Logger, signal: AbortSignal): Promise<RunSummary> {
  const first = await runPipeline({ config, logger, signal });
  if (!first.resumed || !first.notes.includes(ALREADY_PUBLISHED_NOTE) || signal.aborted) return first;
  logger.info({ continued: first.run_id }, 'the run continued had published before it was stopped (now recorded completed): this tick runs its own');
  return runPipeline({ config, logger, signal });
}

export function startScheduler(config: QuorumConfig, logger: Logger): Scheduler {
  const stopping = new AbortController();
  let running: Promise<unknown> | null = null;
  /** The time of the latest tick a run was started for (a tick is never run twice). */
  let lastTick = 0;
  const tick = async (at: Date): Promise<void> => {
    if (stopping.signal.aborted) return;
    // node-cron's noOverlap knows only its own ticks since it was last (re-)armed (see the wake check)
    if (running) {
      logger.warn({ tick: at.toISOString(), schedule: config.schedule }, 'scheduled run skipped: the previous scheduled run is still in progress');
      return;
    }
    lastTick = Math.max(lastTick, at.getTime());
    const run = scheduledRun(config, logger, stopping.signal);
    running = run;
    try {
      await run;
    } catch (err) {
      if (err instanceof RunLockedError) logger.warn({ holder: err.holder }, 'scheduled run skipped: a run is in progress');
      else logger.error({ err }, 'scheduled run failed');
    } finally {
      if (running === run) running = null;
    }
  };
  const task = cron.schedule(
    config.schedule,
    (ctx) => tick(ctx.date),
    { noOverlap: true, timezone: 'UTC', name: 'quorum-pipeline', logger: cronLogger(logger), missedExecutionTolerance: LATE_TICK_TOLERANCE_MS },
  );
  task.on('execution:overlap', (ctx) => {
    logger.warn({ tick: ctx.date.toISOString(), schedule: config.schedule }, 'scheduled run skipped: the previous scheduled run is still in progress');
  });
  task.on('execution:missed', (ctx) => {
    logger.warn({ tick: ctx.date.toISOString(), schedule: config.schedule }, 'scheduled run missed: the process could not run it before the next tick came (paused, blocked, or the clock stepped forward)');
  });
  let look = { at: Date.now(), next: task.getNextRun() };
  const wake = setInterval(() => {
    const now = Date.now();
    const { at, next } = look;
    if (now - at > 2 * WAKE_CHECK_MS && !stopping.signal.aborted) {
      task.stop(); // re-armed from now: its timer still counts the time the machine was suspended
      task.start();
      logger.warn({ gap_s: Math.round((now - at) / 1000), schedule: config.schedule }, 'the wall clock moved on while this process was not running (the machine suspended, or the clock stepped forward): schedule re-armed');
      if (next && next.getTime() <= now && next.getTime() > lastTick) void tick(next);
    }
    look = { at: now, next: task.getNextRun() };
  }, WAKE_CHECK_MS);
  wake.unref();
  logger.info({ schedule: config.schedule }, 'scheduler started');
  return {
    getNextRun: () => task.getNextRun(),
    stop: async () => {
      clearInterval(wake);
      await task.stop();
      stopping.abort();
      const run = running;
      if (run) {
        logger.warn('stopping the scheduled run in progress: no new model call; the calls in flight finish, and the next start continues it');
        await run.catch(() => undefined);
      }
    },
  };
}

/** Seconds until the scheduler's next run (for Cache-Control), or null if unknown. */
export function secondsUntilNextRun(task: Pick<ScheduledTask, 'getNextRun'>): number | null {
  const next = task.getNextRun();
  return next ? Math.max(0, Math.round((next.getTime() - Date.now()) / 1000)) : null;
}
