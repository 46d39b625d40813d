/**
 * Other venues' prices of the same event (issue 12), shown beside a question by the lifecycle,
 * detail and edges routes: from the derived `same_event_prices` (sql/derive/96_question_links.sql),
 * one row per same_event link and direction. A snapshot published before that table existed
 * cannot say: the routes then leave the fields out (their other fields are unchanged).
 */
import { z } from 'zod';
import type { JsonRow } from '../db/convert.ts';
import { cellBool as bool, cellNum as num, cellStr as str } from '../db/cells.ts';
import type { PinnedSnapshot } from '../snapshot/reader.ts';
import { isoTime, marketStale, zProb } from '../openapi/common.ts';
import { staleParams } from './prediction-params.ts';

export const SameEventPrice = z
  .object({
    question_id: z.string().meta({ description: 'The same event\'s question on another venue.' }),
    venue: z.string().nullable().meta({ description: 'That question\'s venue.' }),
    title: z.string().nullable().meta({ description: 'That question\'s title.' }),
    url: z.string().nullable().meta({ description: 'That question\'s page on its venue.' }),
    sign: z.number().int().meta({ description: '-1: that market is phrased as the negation (its YES is this question\'s NO).' }),
    strength: zProb.meta({ description: 'Title cosine of the match (1 for curated links).' }),
    origin: z.enum(['computed', 'curated']).meta({
      description: 'computed: matched by title similarity across venues; curated: listed by hand in data/structure/.',
    }),
    market_probability: zProb.meta({ description: 'That market\'s latest price at as_of, as it trades.' }),
    market_observed_at: isoTime.nullable().meta({ description: 'When that price was observed (null: no price).' }),
    market_stale: marketStale,
    implied_probability: zProb.meta({ description: 'That price read as this question\'s YES (1 − p for a negated pair).' }),
    gap: zProb.meta({ description: 'This question\'s market price − implied_probability (the cross-venue gap).' }),
  })
  .meta({ id: 'SameEventPrice' });

export type SameEventItem = z.input<typeof SameEventPrice>;


function item(r: JsonRow): SameEventItem {
  return {
    question_id: String(r.other_question_id),
    venue: str(r.other_venue),
    title: str(r.other_title),
    url: str(r.other_url),
    sign: num(r.sign) ?? 1,
    strength: num(r.strength),
    origin: r.origin === 'curated' ? 'curated' : 'computed',
    market_probability: num(r.other_market_probability),
    market_observed_at: str(r.other_market_observed_at),
    market_stale: bool(r.other_market_stale),
    implied_probability: num(r.implied_probability),
    gap: num(r.gap),
  };
}

/**
 * The same-event prices of each of `questionIds` (every id present in the map, possibly empty);
 * null when the snapshot has no same_event_prices table (published before issue 12).
 */
export async function sameEventPrices(snap: PinnedSnapshot, questionIds: readonly string[]): Promise<Map<string, SameEventItem[]> | null> {
  if (!snap.tables.has('same_event_prices')) return null;
  const out = new Map<string, SameEventItem[]>(questionIds.map((id) => [id, []]));
  if (questionIds.length === 0) return out;
  const sorted = [...questionIds].sort();
  const rows = await snap.query('same-event-prices', { first: sorted[0]!, last: sorted.at(-1)!, ...staleParams(snap) });
  for (const r of rows) out.get(String(r.question_id))?.push(item(r));
  return out;
}

/** The cross-venue gap of the largest magnitude among `items` (null when none has one). */
export function crossVenueGap(items: readonly SameEventItem[]): number | null {
  let best: number | null = null;
  for (const i of items) if (typeof i.gap === 'number' && (best === null || Math.abs(i.gap) > Math.abs(best))) best = i.gap;
  return best;
}
