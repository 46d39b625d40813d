/**
 * The deadline helper (pipeline/net/deadline.ts): a real timer that fires under garbage
 * collection with nothing but the work holding it, follows a caller's signal, and is disarmed
 * when the work ends. The clients built on it are tested against real servers in
 * client-deadlines.test.ts.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DeadlineSweep, deadlineReason, linkedController, startDeadline, untilAborted, withDeadline } from '../../pipeline/net/deadline.ts';
import { gcPressure } from './gc-pressure.ts';
import { runInNewContext } from 'node:vm';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const aborted = (signal: AbortSignal) => new Promise<unknown>((resolve) => signal.addEventListener('abort', () => resolve(signal.reason), { once: true }));

let stopGc: () => void;
beforeAll(() => {
  stopGc = gcPressure(20);
});
afterAll(() => stopGc());

describe('startDeadline', () => {
  it('aborts at the deadline with a TimeoutError and says it expired', async () => {
    const t0 = Date.now();
    const d = startDeadline(150);
    const reason = await aborted(d.signal);
    expect(Date.now() - t0).toBeGreaterThanOrEqual(140);
    expect(reason).toBeInstanceOf(DOMException);
    expect((reason as DOMException).name).toBe('TimeoutError');
    expect((reason as DOMException).message).toBe('deadline of 150 ms exceeded');
    expect(d.expired).toBe(true);
    expect(d.remaining()).toBe(0);
  });

  it('fires under repeated full collections when only the listener holds the signal (20 at once)', async () => {
    const outer = new AbortController();
    const t0 = Date.now();
    // Nothing keeps the deadline objects but the abort listeners' promises.
    const ends = Array.from({ length: 20 }, () => aborted(startDeadline(200, outer.signal).signal).then(() => Date.now() - t0));
    const watchdog = sleep(3000).then(() => 'hang' as const);
    const out = await Promise.race([Promise.all(ends), watchdog]);
    expect(out).not.toBe('hang');
    for (const ms of out as number[]) expect(ms).toBeLessThan(2000);
  });

  it('follows the caller: aborts with its reason, not as expired; an already aborted caller aborts at once', async () => {
    const outer = new AbortController();
    const d = startDeadline(10_000, outer.signal);
    outer.abort(new Error('stop'));
    expect(d.signal.aborted).toBe(true);
    expect((d.signal.reason as Error).message).toBe('stop');
    expect(d.expired).toBe(false);
    d.clear();
    expect(startDeadline(10_000, outer.signal).signal.aborted).toBe(true);
  });

  it('clear() disarms the timer and detaches from the caller', async () => {
    const outer = new AbortController();
    const d = startDeadline(50, outer.signal);
    d.clear();
    await sleep(120);
    outer.abort();
    expect(d.signal.aborted).toBe(false);
    expect(d.expired).toBe(false);
  });
});

describe('untilAborted / withDeadline / linkedController', () => {
  it('untilAborted gives control back at the abort even when the work never settles', async () => {
    const d = startDeadline(100);
    const t0 = Date.now();
    const err = await untilAborted(new Promise<never>(() => {}), d.signal).catch((e: unknown) => e);
    expect(Date.now() - t0).toBeLessThan(2000);
    expect((err as DOMException).name).toBe('TimeoutError');
  });

  it('withDeadline returns the work result, or the deadline reason at the deadline; the work sees the signal', async () => {
    expect(await withDeadline(1000, async () => 42)).toBe(42);
    let seen: AbortSignal | undefined;
    const err = await withDeadline(80, async (d) => {
      seen = d.signal;
      await new Promise(() => {});
    }).catch((e: unknown) => e);
    expect((err as DOMException).message).toBe(deadlineReason(80).message);
    expect(seen!.aborted).toBe(true);
    // A failing work's own error passes through.
    await expect(withDeadline(1000, async () => Promise.reject(new Error('boom')))).rejects.toThrow('boom');
  });

  it('linkedController aborts with the caller, and stops following it once cleared', () => {
    const outer = new AbortController();
    const a = linkedController(outer.signal);
    const b = linkedController(outer.signal);
    b.clear();
    outer.abort(new Error('x'));
    expect(a.signal.aborted).toBe(true);
    expect((a.signal.reason as Error).message).toBe('x');
    expect(b.signal.aborted).toBe(false);
    a.controller.abort();
  });
});

describe('DeadlineSweep (many deadlines of one length, one timer)', () => {
  it('calls each entry past its time with a TimeoutError, at most a tick late, under collections, nothing else holding them', async () => {
    const sweep = new DeadlineSweep(150, 'webhook delivery deadline', 20);
    const t0 = Date.now();
    const ends = Array.from(
      { length: 20 },
      () => new Promise<{ ms: number; reason: DOMException }>((resolve) => void sweep.start((reason) => resolve({ ms: Date.now() - t0, reason }))),
    );
    const out = await Promise.race([Promise.all(ends), sleep(3000).then(() => 'hang' as const)]);
    expect(out).not.toBe('hang');
    for (const e of out as { ms: number; reason: DOMException }[]) {
      expect(e.ms).toBeGreaterThanOrEqual(140);
      expect(e.ms).toBeLessThan(2000);
      expect(e.reason.name).toBe('TimeoutError');
      expect(e.reason.message).toBe('webhook delivery deadline of 150 ms exceeded');
    }
    expect(sweep.armed).toBe(0);
  });

  it('a cleared entry lets go of its callback at once, even while an earlier entry is still armed', async () => {
    const sweep = new DeadlineSweep(10_000, 'deadline', 50);
    const first = sweep.start(() => {});
    let ref: WeakRef<object> | undefined;
    // The callback closes over a large object, as an attempt's closes over its request.
    const entry = (() => {
      const payload = { bytes: new Uint8Array(1 << 20) };
      ref = new WeakRef(payload);
      return sweep.start(() => void payload.bytes.length);
    })();
    entry.clear();
    expect(sweep.armed).toBe(1);
    await sleep(0); // a WeakRef's target is kept until the job that made it ends
    runInNewContext('gc')();
    expect(ref!.deref()).toBeUndefined();
    first.clear();
    expect(sweep.armed).toBe(0);
  });

  it('thousands of deadlines started and cleared out of order: each fires once or never, none is lost', async () => {
    const sweep = new DeadlineSweep(40, 'deadline', 10);
    const fired = new Map<number, number>();
    const entries = Array.from({ length: 5000 }, (_, i) => sweep.start(() => fired.set(i, (fired.get(i) ?? 0) + 1)));
    // Every third entry is cleared, back to front, before it is due; the rest must fire.
    for (let i = entries.length - 1; i >= 0; i--) if (i % 3 === 0) entries[i]!.clear();
    expect(sweep.armed).toBe(entries.length - Math.ceil(entries.length / 3));
    await sleep(200);
    for (let i = 0; i < entries.length; i++) expect(fired.get(i), `entry ${i}`).toBe(i % 3 === 0 ? undefined : 1);
    expect(sweep.armed).toBe(0);
    for (const e of entries) e.clear(); // late clears of fired entries change nothing
    expect(sweep.armed).toBe(0);
  });

  it('clear() disarms one entry; the timer stops once nothing is armed', async () => {
    const sweep = new DeadlineSweep(60, 'deadline', 10);
    let fired = 0;
    const kept = new Promise<void>((resolve) => void sweep.start(() => resolve()));
    const cleared = sweep.start(() => fired++);
    cleared.clear();
    cleared.clear(); // idempotent
    expect(sweep.armed).toBe(1);
    await kept;
    await sleep(80);
    expect(fired).toBe(0);
    expect(sweep.armed).toBe(0);
  });
});
