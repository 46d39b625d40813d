/**
 * The scheduler's ticks with the pipeline stubbed (each "run" is a promise the test controls): a
 * failed run does not stop the schedule, a run longer than the interval is never doubled, and a
 * tick that comes late (the event loop busy at its time) still runs.
 */
import { afterEach, describe, expect, it, vi } from 'vitest';
import { capturedLog } from '../helpers/captured-log.ts';

const calls: { started: number; ended: number | null }[] = [];
let behaviour: (n: number) => Promise<unknown> = async () => ({ status: 'completed' });

vi.mock('../../pipeline/run.ts', () => ({
  runPipeline: async () => {
    const call = { started: Date.now(), ended: null as number | null };
    calls.push(call);
    try {
      return await behaviour(calls.length);
    } finally {
      call.ended = Date.now();
    }
  },
}));

const { loadConfig } = await import('../../pipeline/config.ts');
const { startScheduler } = await import('../../pipeline/scheduler.ts');

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const waitFor = async (cond: () => boolean, ms: number) => {
  const end = Date.now() + ms;
  while (!cond() && Date.now() < end) await sleep(20);
  return cond();
};

afterEach(() => {
  calls.length = 0;
  behaviour = async () => ({ status: 'completed' });
});

describe('scheduler ticks', () => {
  it('a run that fails (throws) does not stop the schedule: the next tick runs again, and the failure is logged', async () => {
    behaviour = async (n) => {
      if (n === 1) throw new Error('disk full');
      return { status: 'completed' };
    };
    const { logger, lines } = capturedLog();
    const s = startScheduler(loadConfig({ QUORUM_SCHEDULE: '* * * * * *' }), logger);
    try {
      expect(await waitFor(() => calls.length >= 3, 10_000)).toBe(true);
    } finally {
      await s.stop();
    }
    expect(lines.some((l) => l.level === 50 && l.msg === 'scheduled run failed')).toBe(true);
  }, 20_000);

  it('a run longer than the interval is never doubled: the ticks during it are skipped, each logged', async () => {
    // The first run is the long one (2.6 s: the ticks of two seconds come during it); the one
    // after it, which only has to start after it ended, returns at once, so that stopping the
    // scheduler does not wait another 2.6 s for it.
    behaviour = (n) => (n === 1 ? sleep(2_600) : Promise.resolve({ status: 'completed' }));
    const { logger, lines } = capturedLog();
    const s = startScheduler(loadConfig({ QUORUM_SCHEDULE: '* * * * * *' }), logger);
    try {
      expect(await waitFor(() => calls.length >= 2, 15_000)).toBe(true);
    } finally {
      await s.stop();
    }
    for (let i = 1; i < calls.length; i++) expect(calls[i]!.started).toBeGreaterThanOrEqual(calls[i - 1]!.ended!);
    expect(lines.filter((l) => l.msg === 'scheduled run skipped: the previous scheduled run is still in progress').length).toBeGreaterThanOrEqual(2);
  }, 20_000);

  it('a tick that comes while the event loop is busy (2.3 s) still runs, late, rather than being dropped until the next one', async () => {
    // QA: node-cron's default tolerance is 1 s; past it the tick was logged "missed" and the run
    // skipped, so with the default schedule the snapshot went 8 hours without a run. A pause of
    // the process (a suspended VM, a throttled container, a long synchronous piece of work) is
    // enough.
    const { logger, lines } = capturedLog();
    // One tick a minute, at a second 1 to 2 s ahead: the tick comes as soon as it can be blocked
    // over (with */5 the test waited up to 5 s for it), and the next one is a minute on.
    const second = (new Date().getUTCSeconds() + 2) % 60;
    const s = startScheduler(loadConfig({ QUORUM_SCHEDULE: `${second} * * * * *` }), logger);
    try {
      const next = s.getNextRun()!.getTime();
      await sleep(Math.max(0, next - Date.now() - 200));
      const until = next + 2_300;
      while (Date.now() < until) {
        /* the event loop is blocked over the tick */
      }
      expect(await waitFor(() => calls.length >= 1, 2_000)).toBe(true);
      expect(calls[0]!.started).toBeLessThan(next + 4_000); // at once, not at the next tick, a minute on
    } finally {
      await s.stop();
    }
    expect(lines.filter((l) => String(l.msg).startsWith('scheduled run missed'))).toEqual([]);
  }, 20_000);

  it('a machine suspended over a tick (the wall clock moves on, the process timers do not) runs the missed tick within a minute of waking, not hours later', async () => {
    // QA: Node timers count CLOCK_MONOTONIC, which stands still while a machine (a laptop, a paused
    // VM) is suspended: suspended at 00:30 with the 04:00 tick armed, woken at 20:00, node-cron's
    // timer still had 3.5 hours to go, so the ticks of 04:00 to 20:00 only ran (the latest, late)
    // at 23:30. Fake timers show it: setSystemTime moves the clock without running any timer.
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout', 'setInterval', 'clearInterval', 'Date'] });
    try {
      vi.setSystemTime(new Date('2026-03-01T00:01:00Z'));
      const { logger } = capturedLog();
      const s = startScheduler(loadConfig({ QUORUM_SCHEDULE: '0 */4 * * *' }), logger);
      try {
        await vi.advanceTimersByTimeAsync(29 * 60_000);
        expect(calls.length).toBe(0);
        vi.setSystemTime(new Date('2026-03-01T20:00:30Z')); // suspended until now
        await vi.advanceTimersByTimeAsync(2 * 60_000);
        expect(calls.length).toBe(1);
        // and the schedule goes on: the 00:00 tick, once
        await vi.advanceTimersByTimeAsync(4 * 3_600_000);
        expect(calls.length).toBe(2);
      } finally {
        await s.stop();
      }
    } finally {
      vi.useRealTimers();
    }
  });
});

