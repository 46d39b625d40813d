/**
 * Full garbage collections on a short interval while deadline tests run: a timer that can be
 * collected before it fires (AbortSignal.timeout inside AbortSignal.any, nodejs/node#57736) is
 * then collected for sure instead of by chance, so a test catches the race every time.
 */
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';

setFlagsFromString('--expose-gc');
// A new context gets `gc` once the flag is set; the function collects the whole heap.
const gc = runInNewContext('gc') as () => void;

/** Starts collecting every `everyMs`; returns a stop function. */
export function gcPressure(everyMs = 100): () => void {
  const t = setInterval(gc, everyMs);
  return () => clearInterval(t);
}
