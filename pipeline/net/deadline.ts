/**
 * The one deadline mechanism of every outbound client (venues, CLOB, FRED, GDELT, models).
 *
 * Why not `AbortSignal.timeout` (and `AbortSignal.any`): Node holds a timeout signal only weakly
 * (its timer closes over a WeakRef, and a FinalizationRegistry clears the timer once the signal is
 * collected), and a composite from `AbortSignal.any` holds its sources weakly too. So in
 * `AbortSignal.any([outer, AbortSignal.timeout(ms)])` nothing keeps the timeout signal alive: a
 * garbage collection before the deadline silently cancels it, and a request to a host that never
 * answers waits for undici's own 300 s timeouts, or forever for a body trickling a byte a second
 * (nodejs/node#57736, "AbortSignal.any() is unreliable and breaks timeouts"). A deadline here is
 * a real `setTimeout` whose callback holds its AbortController strongly, cleared when the work
 * ends, so nothing is left armed and nothing can be collected early.
 *
 * A deadline covers everything it is given: queueing, connecting, headers, retries, backoff and
 * reading the whole body (undici's headersTimeout/bodyTimeout bound only the gap between chunks,
 * never a trickle). {@link untilAborted} additionally guarantees the caller gets control back at the
 * deadline even if some library ignores the abort.
 */

import { setMaxListeners } from 'node:events';

/** The reason a deadline aborts with: a DOMException named TimeoutError, like AbortSignal.timeout's. */
export function deadlineReason(ms: number, what = 'deadline'): DOMException {
  return new DOMException(`${what} of ${ms} ms exceeded`, 'TimeoutError');
}

export interface Deadline {
  /** Aborts at the deadline, or when the outer signal aborts (with the outer signal's reason). */
  readonly signal: AbortSignal;
  /** The deadline's length (ms). */
  readonly ms: number;
  /** When it fires (epoch ms). */
  readonly at: number;
  /** True once this deadline's own timer fired (not the outer signal). */
  readonly expired: boolean;
  /** Milliseconds left (0 when past). */
  remaining(): number;
  /** Disarms the timer and detaches from the outer signal. Idempotent; call it when the work ends. */
  clear(): void;
}

const followed = new WeakSet<AbortSignal>();

/**
 * Calls `onAbort` when `outer` aborts (now, if it already has). One caller's signal (a sync's, a
 * run's) is shared by every concurrent request under it by design, so its listener limit is lifted
 * once instead of warning about a leak; every listener is removed when its request ends.
 */
function follow(outer: AbortSignal | undefined, onAbort: () => void): void {
  if (!outer) return;
  if (outer.aborted) return onAbort();
  if (!followed.has(outer)) {
    followed.add(outer);
    setMaxListeners(0, outer);
  }
  outer.addEventListener('abort', onAbort, { once: true });
}

/**
 * Starts a deadline of `ms` milliseconds, optionally also following `outer` (a caller's stop
 * signal). The returned signal aborts with {@link deadlineReason} at the deadline.
 */
export function startDeadline(ms: number, outer?: AbortSignal, what?: string): Deadline {
  const ac = new AbortController();
  const at = Date.now() + ms;
  let expired = false;
  // The callback closes over `ac` itself: the timer keeps the controller (and its signal) alive.
  const timer = setTimeout(() => {
    expired = true;
    ac.abort(deadlineReason(ms, what));
  }, ms);
  const onOuter = () => ac.abort(outer!.reason);
  follow(outer, onOuter);
  return {
    signal: ac.signal,
    ms,
    at,
    get expired() {
      return expired;
    },
    remaining: () => Math.max(0, at - Date.now()),
    clear: () => {
      clearTimeout(timer);
      outer?.removeEventListener('abort', onOuter);
    },
  };
}

/**
 * A controller that also aborts when `outer` does (what `AbortSignal.any([outer, own])` does,
 * with strong references and a detach). Call `clear` when done so a long-lived outer signal does not
 * accumulate listeners.
 */
export function linkedController(outer?: AbortSignal): { controller: AbortController; signal: AbortSignal; clear(): void } {
  const controller = new AbortController();
  const onOuter = () => controller.abort(outer!.reason);
  follow(outer, onOuter);
  return { controller, signal: controller.signal, clear: () => outer?.removeEventListener('abort', onOuter) };
}

/**
 * Resolves with `p`, or rejects with the signal's reason as soon as `signal` aborts, whatever `p`
 * does: a library that ignores the abort (or a body read not wired to it) cannot hold the caller
 * past the deadline. A late rejection of `p` is swallowed.
 */
export function untilAborted<T>(p: Promise<T>, signal: AbortSignal): Promise<T> {
  p.catch(() => {});
  if (signal.aborted) return Promise.reject(signal.reason);
  return new Promise<T>((resolve, reject) => {
    const onAbort = () => reject(signal.reason);
    signal.addEventListener('abort', onAbort, { once: true });
    p.then(
      (v) => {
        signal.removeEventListener('abort', onAbort);
        resolve(v);
      },
      (e) => {
        signal.removeEventListener('abort', onAbort);
        reject(e);
      },
    );
  });
}

/**
 * Runs `work` under a deadline of `ms` (and the optional outer signal): the work gets the
 * deadline (pass its signal to every request and body read); the result is returned, or the
 * deadline's reason thrown at the deadline at the latest. The timer is cleared either way.
 */
export async function withDeadline<T>(ms: number, work: (deadline: Deadline) => Promise<T>, outer?: AbortSignal): Promise<T> {
  const deadline = startDeadline(ms, outer);
  try {
    return await untilAborted(work(deadline), deadline.signal);
  } finally {
    deadline.clear();
  }
}

/** One deadline of a {@link DeadlineSweep}. */
export class SweptDeadline {
  constructor(
    readonly sweep: DeadlineSweep,
    readonly at: number,
    readonly onExpire: (reason: DOMException) => void,
  ) {}

  /** Disarms it (idempotent); call it when the work ends. */
  clear(): void {
    this.sweep.disarm(this);
  }
}

/**
 * Deadlines of one length for many concurrent short requests (webhook deliveries): one interval
 * timer, running only while deadlines are armed, calls each entry's `onExpire` once it is past its
 * time. A {@link startDeadline} per request costs a timer and an AbortController (an EventTarget)
 * each: bench events measured them at about 9 µs of a 140 µs delivery. An entry fires at most
 * `tickMs` late. The sweep holds its entries strongly (nothing can be collected early, see the
 * file comment), and its timer keeps the process alive only while something is armed.
 */
export class DeadlineSweep {
  readonly #entries = new Set<SweptDeadline>();
  #timer: NodeJS.Timeout | null = null;

  constructor(
    readonly ms: number,
    readonly what = 'deadline',
    readonly tickMs = Math.max(10, Math.min(250, Math.floor(ms / 4))),
  ) {}

  /** Arms a deadline `ms` from now: `onExpire` is called with {@link deadlineReason} unless it is cleared first. */
  start(onExpire: (reason: DOMException) => void): SweptDeadline {
    const entry = new SweptDeadline(this, Date.now() + this.ms, onExpire);
    this.#entries.add(entry);
    this.#timer ??= setInterval(() => this.#sweep(), this.tickMs);
    return entry;
  }

  /** Disarms `entry` (SweptDeadline.clear). */
  disarm(entry: SweptDeadline): void {
    if (this.#entries.delete(entry) && this.#entries.size === 0) this.#stop();
  }

  /** Armed deadlines (for tests). */
  get armed(): number {
    return this.#entries.size;
  }

  #sweep(): void {
    const now = Date.now();
    for (const entry of this.#entries) {
      if (entry.at > now) continue;
      this.#entries.delete(entry);
      entry.onExpire(deadlineReason(this.ms, this.what));
    }
    if (this.#entries.size === 0) this.#stop();
  }

  #stop(): void {
    if (this.#timer) clearInterval(this.#timer);
    this.#timer = null;
  }
}
