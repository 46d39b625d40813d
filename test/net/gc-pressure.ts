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

/**
 * Collects `everyMs` after the previous collection ended (a full collection can take tens of ms
 * on a loaded machine: the tests still get most of the time); returns a stop function.
 */
export function gcPressure(everyMs = 100): () => void {
  let t: NodeJS.Timeout;
  const tick = () => {
    gc();
    t = setTimeout(tick, everyMs);
  };
  t = setTimeout(tick, everyMs);
  return () => clearTimeout(t);
}
