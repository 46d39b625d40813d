import { InvalidArgumentError } from 'commander';
import { parseInstant } from '../time/instant.ts';

/** Tolerance for a caller whose clock runs slightly ahead of this machine's (`--as-of` of now). */
const AS_OF_CLOCK_SKEW_MS = 5 * 60_000;

/**
 * `--as-of`: a date or date-time that exists (2026-02-30 is an error, not 2026-03-02), from 1970,
 * and not in the future: a run dated later than now would make calls, then publish a snapshot
 * dated then as the current one, hiding every later real run's snapshot behind it. A time at most
 * AS_OF_CLOCK_SKEW_MS ahead (a caller's clock slightly ahead of this machine's) is now: accepted as
 * written it was published as a snapshot dated minutes ahead, and the scheduled run that came in
 * those minutes was taken for a backfill (scored as of that future time, no thesis vintage or
 * scenario record frozen; QA).
 */
export function parseAsOf(value: string): Date {
  const d = parseInstant(value);
  if (d === null) {
    throw new InvalidArgumentError('expected an ISO 8601 date or time from 1970 that exists, e.g. 2026-03-06 or 2026-03-06T00:00:00Z');
  }
  const now = Date.now();
  if (d.getTime() > now + AS_OF_CLOCK_SKEW_MS) {
    throw new InvalidArgumentError(`expected a time in the past (a run is dated when it happened); ${d.toISOString()} is in the future`);
  }
  return d.getTime() > now ? new Date(now) : d;
}
