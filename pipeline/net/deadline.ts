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
  /** The callback while armed; dropped when cleared or fired, so a finished request is not held. */
  #onExpire: ((reason: DOMException) => void) | null;

  constructor(
    readonly sweep: DeadlineSweep,
    /** When it fires (monotonic ms, `performance.now()` scale). */
    readonly at: number,
    onExpire: (reason: DOMException) => void,
  ) {
    this.#onExpire = onExpire;
  }

  /** True until it is cleared or has fired. */
  get armed(): boolean {
    return this.#onExpire !== null;
  }

  /** Disarms it (idempotent); call it when the work ends. */
  clear(): void {
    if (this.#onExpire === null) return;
    this.#onExpire = null;
    this.sweep.disarm();
  }

  /** Fires it (the sweep's call; once). */
  fire(reason: DOMException): void {
    const onExpire = this.#onExpire;
    this.#onExpire = null;
    onExpire?.(reason);
  }
}

/**
 * Deadlines of one length for many concurrent short requests (webhook deliveries): one interval
 * timer, running only while deadlines are armed, calls each entry's `onExpire` once it is past its
 * time. A {@link startDeadline} per request costs a timer and an AbortController (an EventTarget)
 * each: bench events measured them at about 9 µs of a 140 µs delivery. An entry fires at most
 * `tickMs` late. The sweep holds its armed entries strongly (nothing can be collected early, see
 * the file comment), and its timer keeps the process alive only while something is armed.
 *
 * The entries are a FIFO in start order, which is deadline order (one length, a monotonic clock),
 * so a sweep stops at the first entry still in the future. A cleared entry drops its callback at
 * once (the callback closes over the attempt, its undici handler and controller) and leaves the
 * line as soon as the entries before it have. Why not a Set of entries, deleted at clear (as
 * before): in bench events' dispatcher phase (143,000 deliveries, about 20 s) that sweep left
 * about 3.4 KB per delivery alive at the next scavenge (531 MB survived, 517 MB promoted, 2.5 s of
 * scavenge pauses); with this line 206 MB, 166 MB and 1.1 s, the same as with no deadline at all
 * (202 MB, 171 MB, 1.0 s). Deliveries/s did not move beyond the bench's noise.
 */
export class DeadlineSweep {
  #line: (SweptDeadline | undefined)[] = [];
  #head = 0;
  #armed = 0;
  /** True while #dropFront runs: an entry cleared from inside a firing callback is passed over then. */
  #dropping = false;
  #timer: NodeJS.Timeout | null = null;

  constructor(
    readonly ms: number,
    readonly what = 'deadline',
    readonly tickMs = Math.max(10, Math.min(250, Math.floor(ms / 4))),
  ) {}

  /** Arms a deadline `ms` from now: `onExpire` is called with {@link deadlineReason} unless it is cleared first. */
  start(onExpire: (reason: DOMException) => void): SweptDeadline {
    const entry = new SweptDeadline(this, performance.now() + this.ms, onExpire);
    this.#line.push(entry);
    this.#armed++;
    this.#timer ??= setInterval(() => this.#sweep(), this.tickMs);
    return entry;
  }

  /** An entry was cleared (SweptDeadline.clear): the cleared entries at the front leave the line. */
  disarm(): void {
    this.#armed--;
    if (!this.#dropping) this.#dropFront(-Infinity);
    if (this.#armed === 0) this.#stop();
  }

  /** Armed deadlines (for tests). */
  get armed(): number {
    return this.#armed;
  }

  /**
   * Takes entries off the front while they are cleared, or armed and due at `now` (those fire).
   * The consumed front is cut off once it is both 1,024 slots long and half of the line.
   */
  #dropFront(now: number): void {
    this.#dropping = true;
    try {
      this.#dropDue(now);
    } finally {
      this.#dropping = false;
    }
  }

  #dropDue(now: number): void {
    const line = this.#line;
    while (this.#head < line.length) {
      const entry = line[this.#head]!;
      if (entry.armed) {
        if (entry.at > now) break;
        this.#armed--;
        line[this.#head++] = undefined;
        entry.fire(deadlineReason(this.ms, this.what));
        continue;
      }
      line[this.#head++] = undefined;
    }
    if (this.#head === line.length) {
      this.#line = [];
      this.#head = 0;
    } else if (this.#head >= 1024 && this.#head * 2 >= line.length) {
      this.#line = line.slice(this.#head);
      this.#head = 0;
    }
  }

  #sweep(): void {
    this.#dropFront(performance.now());
    if (this.#armed === 0) this.#stop();
  }

  #stop(): void {
    if (this.#timer) clearInterval(this.#timer);
    this.#timer = null;
  }
}
