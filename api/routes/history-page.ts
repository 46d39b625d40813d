/**
 * One page of a history nested in a detail route: a scenario's archived records
 * (`GET /api/scenarios/{id}/`) and a thesis' vintages (`GET /api/clusters/{id}/`). Both grow by one
 * item per run, for as long as the service runs (six a day on the default schedule), so the detail
 * lists at most `<name>_limit` of them (default 100), newest first, with `next_<name>_cursor` for
 * the rest, keyset-paginated by (as_of, run_id) descending: the SQL reads `$before_us` (the epoch µs
 * of the previous page's oldest item's as_of) and `$before_run` (its run id), and returns each
 * item's `key_us`.
 */
import { z } from 'zod';
import type { Request } from 'express';
import type { JsonRow } from '../db/convert.ts';
import { bigintKey, decodeKeyset, encodeKeyset, int64String } from '../http/cursor.ts';
import { queryInt, queryString } from '../http/params.ts';

export const HISTORY_LIMIT = { min: 1, max: 500, default: 100 } as const;

/** The history's position: after the item with this as_of (epoch µs) and run id, or from the newest (null). */
export interface HistoryPage {
  limit: number;
  before: { us: bigint; run: string } | null;
}

const KEY = z.tuple([int64String, z.string().min(1).max(200)]);

/** The two query parameters of a history named `name` (records, vintages), for the route's OpenAPI entry. */
export function historyQuery(name: string, what: string) {
  return {
    [`${name}_limit`]: z.int().min(HISTORY_LIMIT.min).max(HISTORY_LIMIT.max).default(HISTORY_LIMIT.default).optional()
      .meta({ description: `${what} listed, newest first (${HISTORY_LIMIT.min}..${HISTORY_LIMIT.max}, default ${HISTORY_LIMIT.default}).` }),
    [`${name}_cursor`]: z.string().max(1024).optional().meta({ description: `The previous answer's next_${name}_cursor: the older ${what.toLowerCase()}.` }),
  };
}

/** Reads `<name>_limit` and `<name>_cursor` (a 400 problem when either is malformed). */
export function historyInput(req: Request, name: string): HistoryPage {
  const limit = queryInt(req, `${name}_limit`, HISTORY_LIMIT);
  const raw = queryString(req, `${name}_cursor`, 1024);
  if (raw === undefined) return { limit, before: null };
  const [us, run] = decodeKeyset(raw, `${name}-history`, KEY, `${name}_cursor`);
  return { limit, before: { us: BigInt(us), run } };
}

/** The SQL parameters of a page's position (the caller asks for limit + 1 items, to learn whether more follow). */
export function historyParams(page: HistoryPage): { before_us: bigint | null; before_run: string | null } {
  return { before_us: page.before?.us ?? null, before_run: page.before?.run ?? null };
}

/** The cursor of the page after `rows` (fetched with limit + 1), or null when `rows` held the last item. */
export function historyNext(name: string, rows: readonly JsonRow[], limit: number): string | null {
  if (rows.length <= limit) return null;
  const oldest = rows[limit - 1]!;
  const us = bigintKey(oldest.key_us);
  return us === null ? null : encodeKeyset(`${name}-history`, [us, String(oldest.run_id)]);
}
