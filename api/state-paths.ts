/**
 * What the API server writes in its data directory, although it only reads the warehouse: the
 * usage counters, probability requests and spend (`state/`), the webhook delivery queue
 * (`webhooks/`) and its own address (`server.json`). Quotas, idempotency and deliveries must
 * survive a restart, so a server that cannot write them does not start.
 *
 * QA: `quorum serve` on a data directory it could not write stopped with "EACCES: permission
 * denied, mkdir '<dir>/webhooks'", from the middle of the start-up and without saying why a
 * read-only API writes at all.
 */
import { join, resolve } from 'node:path';
import { unwritable } from '../pipeline/fs/paths.ts';

/** The paths the server writes, relative to the data directory ('' is the directory itself). */
export const SERVER_WRITES = ['', 'state', 'webhooks'] as const;

/**
 * Why the server cannot keep its state in `dataDir` (a path it must write, or the directory it
 * would be made in, is not writable by this process), or null when it can.
 */
export function serverStateProblem(dataDir: string): string | null {
  for (const part of SERVER_WRITES) {
    const path = join(dataDir, part);
    const denied = unwritable(path);
    if (denied) {
      const { existing, code } = denied;
      const what = existing === resolve(path) ? existing : `${existing} (to make ${path})`;
      return (
        `the data directory ${dataDir} is not writable by this process (${code} on ${what}): the API server ` +
        'keeps usage counters and probability requests in state/, webhook deliveries in webhooks/ and its address in ' +
        'server.json there, and they must survive a restart. Make those writable (the warehouse itself may stay read-only ' +
        'to it: raw/, snapshots/ and CURRENT are only read), or serve a writable copy; nothing was started'
      );
    }
  }
  return null;
}
