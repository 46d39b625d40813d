/**
 * One webhook attempt: a POST through undici's dispatcher API. A receiver's answer body is not
 * wanted, so none is exposed: its bytes are dropped as they arrive, with no response stream, no
 * promise per read and no `dump()` (bench events: the request()/Readable path was a large part of
 * what a delivery cost beyond the bare loop). The attempt's deadline (one {@link DeadlineSweep}
 * for all attempts) covers connecting, the headers and the whole body: at the deadline the request
 * is aborted and the attempt ends with the deadline's error, even if undici has not started it
 * yet (it is then aborted as soon as it does).
 */
import type { IncomingHttpHeaders } from 'node:http';
import type { Dispatcher } from 'undici';
import type { DeadlineSweep, SweptDeadline } from '../../../pipeline/net/deadline.ts';

export interface PostOutcome {
  /** The answer's status, or null when none arrived. */
  status: number | null;
  /** The answer's Retry-After header, if any. */
  retryAfter: string | null;
  /** Why the attempt failed (network error, deadline, aborted body), or null. */
  error: string | null;
}

function describe(err: unknown): string {
  return err instanceof Error ? `${err.name}: ${err.message}`.slice(0, 300) : String(err);
}

/**
 * One attempt in flight: undici's handler, and the deadline's callback. A class, so an attempt is
 * one object (not a closure per callback: thousands of attempts a second).
 */
class Attempt implements Dispatcher.DispatchHandler {
  status: number | null = null;
  retryAfter: string | null = null;
  controller: Dispatcher.DispatchController | null = null;
  expired: DOMException | null = null;
  settled = false;
  deadline: SweptDeadline | null = null;

  constructor(readonly resolve: (outcome: PostOutcome) => void) {}

  finish(error: string | null): void {
    if (this.settled) return;
    this.settled = true;
    this.deadline?.clear();
    this.resolve({ status: this.status, retryAfter: this.retryAfter, error });
  }

  /** The deadline passed: abort (now, or as soon as undici starts the request); control back at once. */
  expire(reason: DOMException): void {
    this.expired = reason;
    this.controller?.abort(reason);
    this.finish(describe(reason));
  }

  onRequestStart(controller: Dispatcher.DispatchController): void {
    this.controller = controller;
    if (this.expired) controller.abort(this.expired);
  }

  /**
   * A status line. An interim one (1xx: 103 Early Hints, say) is not the answer: undici reports it,
   * and the final one comes after it (outside test: a 103 followed by nothing was recorded as a
   * delivery refused with status 103, never sent again, where a receiver hung past the deadline is
   * retried).
   */
  onResponseStart(_c: Dispatcher.DispatchController, statusCode: number, headers: IncomingHttpHeaders): void {
    if (statusCode < 200) return;
    this.status = statusCode;
    const ra = headers['retry-after'];
    this.retryAfter = Array.isArray(ra) ? (ra[0] ?? null) : (ra ?? null);
  }

  onResponseData(): void {
    // the answer's body is not used
  }

  onResponseEnd(): void {
    this.finish(null);
  }

  onResponseError(_c: Dispatcher.DispatchController, err: Error): void {
    this.finish(describe(err));
  }
}

/** Where an attempt goes: a URL's origin and path (with its query). */
export interface PostTarget {
  origin: string;
  path: string;
}

/** The target of a URL. */
export function postTarget(url: string): PostTarget {
  const u = new URL(url);
  return { origin: u.origin, path: u.pathname + u.search };
}

/** POSTs `body` to `target` with `headers` through `dispatcher`, within a deadline of `deadlines`. */
export function postWebhook(
  dispatcher: Dispatcher,
  target: PostTarget,
  headers: Record<string, string>,
  body: string,
  timeoutMs: number,
  deadlines: DeadlineSweep,
): Promise<PostOutcome> {
  return new Promise<PostOutcome>((resolve) => {
    const attempt = new Attempt(resolve);
    attempt.deadline = deadlines.start((reason) => attempt.expire(reason));
    try {
      dispatcher.dispatch(
        { origin: target.origin, path: target.path, method: 'POST', headers, body, headersTimeout: timeoutMs, bodyTimeout: timeoutMs },
        attempt,
      );
    } catch (err) {
      attempt.finish(describe(err));
    }
  });
}
