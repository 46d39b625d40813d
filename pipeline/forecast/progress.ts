/**
 * Progress of the pipeline's long stages (evidence, forecast): on a terminal (stderr is a TTY) a
 * cli-progress bar per stage with calls done, failed and cost; otherwise a structured pino line
 * (`msg: "progress"`, stage, done, total, failed, skipped, cost_usd, rate_per_s) every
 * `intervalMs` or every `everyN` units, and one at the end of the stage.
 */
import cliProgress from 'cli-progress';
import type { Logger } from '../log.ts';

export interface StageCounts {
  done: number;
  failed?: number;
  skipped?: number;
  cost_usd?: number;
}

export interface StageProgress {
  update(counts: StageCounts): void;
  /** Ends the stage's bar (or logs its last line). */
  stop(): void;
}

export interface ProgressReporter {
  stage(name: string, total: number): StageProgress;
  /** Stops every bar still running. */
  close(): void;
}

export interface ProgressOptions {
  logger: Logger;
  /** Bars on a terminal; log lines otherwise. Default: process.stderr.isTTY. */
  tty?: boolean;
  /** Log a line at most this often (ms). Default 10,000. */
  intervalMs?: number;
  /** …or every this many units. Default 500. */
  everyN?: number;
  stream?: NodeJS.WritableStream;
}

export function createProgress(opts: ProgressOptions): ProgressReporter {
  const tty = opts.tty ?? Boolean(process.stderr.isTTY);
  return tty ? barReporter(opts) : logReporter(opts);
}

/** A reporter that reports nothing (library use, tests). */
export const silentProgress: ProgressReporter = {
  stage: () => ({ update() {}, stop() {} }),
  close() {},
};

function barReporter(opts: ProgressOptions): ProgressReporter {
  let multi: cliProgress.MultiBar | null = null;
  const open = new Set<cliProgress.SingleBar>();
  return {
    stage(name, total) {
      multi ??= new cliProgress.MultiBar(
        {
          stream: opts.stream ?? process.stderr,
          format: '{stage} |{bar}| {value}/{total} done | {failed} failed | {skipped} skipped | ${cost} | {eta_formatted}',
          hideCursor: true,
          clearOnComplete: false,
          stopOnComplete: false,
          fps: 5,
        },
        cliProgress.Presets.shades_classic,
      );
      const bar = multi.create(Math.max(total, 0), 0, { stage: name.padEnd(8), failed: 0, skipped: 0, cost: '0.0000' });
      open.add(bar);
      return {
        update(c) {
          bar.update(c.done, { failed: c.failed ?? 0, skipped: c.skipped ?? 0, cost: (c.cost_usd ?? 0).toFixed(4) });
        },
        stop() {
          if (!open.delete(bar)) return;
          bar.stop();
          if (open.size === 0) {
            multi?.stop();
            multi = null;
          }
        },
      };
    },
    close() {
      for (const b of open) b.stop();
      open.clear();
      multi?.stop();
      multi = null;
    },
  };
}

function logReporter(opts: ProgressOptions): ProgressReporter {
  const intervalMs = opts.intervalMs ?? 10_000;
  const everyN = opts.everyN ?? 500;
  return {
    stage(name, total) {
      const t0 = Date.now();
      let lastAt = t0;
      let lastDone = 0;
      let last: StageCounts = { done: 0 };
      let stopped = false;
      const log = (c: StageCounts, final: boolean) => {
        const secs = (Date.now() - t0) / 1000;
        opts.logger.info(
          {
            stage: name,
            done: c.done,
            total,
            failed: c.failed ?? 0,
            skipped: c.skipped ?? 0,
            cost_usd: Math.round((c.cost_usd ?? 0) * 1e6) / 1e6,
            rate_per_s: secs > 0 ? Math.round((c.done / secs) * 10) / 10 : null,
            final,
          },
          'progress',
        );
        lastAt = Date.now();
        lastDone = c.done;
      };
      return {
        update(c) {
          last = c;
          if (Date.now() - lastAt >= intervalMs || c.done - lastDone >= everyN) log(c, false);
        },
        stop() {
          if (stopped) return;
          stopped = true;
          log(last, true);
        },
      };
    },
    close() {},
  };
}
