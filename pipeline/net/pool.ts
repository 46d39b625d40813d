/**
 * A client's own undici connection pool that is replaced after a stopped request.
 *
 * Why: when a request is aborted while it runs (a deadline, pipeline/net/deadline.ts), undici
 * destroys its connection as it should, but then puts the aborted request back in that
 * connection's queue, opens a NEW connection for it and only then drops it: the spare connection
 * to the unresponsive host stays open and idle, with no timer ever closing it (a keep-alive
 * timeout starts only after a response). So a client counts the requests it has in flight; once
 * one of them was stopped and none is left in flight, the pool is closed (every idle connection
 * with it) and the next request gets a fresh pool. Stops are rare; a healthy client keeps its
 * keep-alive connections.
 */
import { Agent, interceptors, type Dispatcher } from 'undici';

export interface ResettablePool {
  /** The pool to send the next request through. */
  readonly dispatcher: Dispatcher;
  /** A request starts (call `end` exactly once when it ends). */
  begin(): void;
  /** A request ended; `stopped` when its deadline or its caller's signal stopped it. */
  end(stopped: boolean): void;
}

/** A keep-alive pool that follows redirects like fetch does. */
export function newAgent(): Dispatcher {
  return new Agent({ keepAliveTimeout: 10_000 }).compose(interceptors.redirect({ maxRedirections: 5 }));
}

export function createResettablePool(create: () => Dispatcher = newAgent): ResettablePool {
  let dispatcher = create();
  let inFlight = 0;
  let tainted = false;
  return {
    get dispatcher() {
      return dispatcher;
    },
    begin() {
      inFlight++;
    },
    end(stopped) {
      inFlight--;
      if (stopped) tainted = true;
      if (!tainted || inFlight > 0) return;
      tainted = false;
      const old = dispatcher;
      dispatcher = create();
      old.close().catch(() => {});
    },
  };
}
