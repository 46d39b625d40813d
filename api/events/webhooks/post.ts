/**
 * One webhook attempt: a POST through undici's dispatcher API. A receiver's answer body is not
 * wanted, so none is exposed: its bytes are dropped as they arrive, with no response stream, no
 * promise per read and no `dump()` (bench events: the request()/Readable path was a large part of
 * what a delivery cost beyond the bare loop). The attempt's deadline (one {@link DeadlineSweep}
 * for all attempts) covers connecting, the headers and the whole body: at the deadline the request
 * is aborted and the attempt ends with the deadline's error, even if undici has not started it
 * yet (it is then aborted as soon as it does).
 */
import type { Dispatcher } from 'undici';
import type { DeadlineSweep } from '../../../pipeline/net/deadline.ts';

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

/** POSTs `body` to `url` with `headers` through `dispatcher`, within a deadline of `deadlines`. */
export function postWebhook(
  dispatcher: Dispatcher,
  url: URL,
  headers: Record<string, string>,
  body: string,
  timeoutMs: number,
  deadlines: DeadlineSweep,
): Promise<PostOutcome> {
  return new Promise<PostOutcome>((resolve) => {
    let status: number | null = null;
    let retryAfter: string | null = null;
    let controller: Dispatcher.DispatchController | null = null;
    let expired: DOMException | null = null;
    let settled = false;
    const finish = (error: string | null): void => {
      if (settled) return;
      settled = true;
      deadline.clear();
      resolve({ status, retryAfter, error });
    };
    const deadline = deadlines.start((reason) => {
      expired = reason;
      controller?.abort(reason);
      finish(describe(reason)); // control back at the deadline, whatever undici does next
    });
    const handler: Dispatcher.DispatchHandler = {
      onRequestStart(c) {
        controller = c;
        if (expired) c.abort(expired);
      },
      onResponseStart(_c, statusCode, responseHeaders) {
        status = statusCode;
        const ra = responseHeaders['retry-after'];
        retryAfter = Array.isArray(ra) ? (ra[0] ?? null) : (ra ?? null);
      },
      onResponseData() {
        // the answer's body is not used
      },
      onResponseEnd() {
        finish(null);
      },
      onResponseError(_c, err) {
        finish(describe(err));
      },
    };
    try {
      dispatcher.dispatch(
        { origin: url.origin, path: url.pathname + url.search, method: 'POST', headers, body, headersTimeout: timeoutMs, bodyTimeout: timeoutMs },
        handler,
      );
    } catch (err) {
      finish(describe(err));
    }
  });
}
