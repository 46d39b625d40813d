/**
 * Manifold adapter (API v0).
 *
 * Discovery: `GET {base}/markets?limit=1000&sort=created-time&order=desc&before=<last id>` (newest
 * first; a short page ends it, a `before` id already followed is a pagination loop). The order is
 * asked for, not left to the server: Manifold's handler (manifoldmarkets/manifold
 * backend/api/src/markets.ts) reads `before` as "created before that market" whatever the order,
 * so it pages only a descending listing, and a version of that handler defaults to ascending
 * (`order ?? 'asc'`): there the second page restarted at the oldest markets and the sync read only
 * the oldest 1,000 (all long closed), never a new one.
 * The listing mixes every market type and state: only open BINARY markets become new questions;
 * other types are skipped as non-binary, closed/resolved untracked ones are ignored. Tracked
 * markets the discovery did not return: `GET {base}/market/{id}` (404 = not found).
 *
 * Semantics:
 *  - question_id = `manifold:<id>`. Times are epoch MILLISECONDS, up to the year 9999 (a value that
 *    only makes sense as seconds or microseconds is rejected by the schema rather than dated 1970 or
 *    in the year 57000).
 *  - probability = `probability`; no order book (bid/ask null); volume = `volume`, liquidity =
 *    `totalLiquidity` (mana), forecasters = `uniqueBettorCount`.
 *  - Resolution (`isResolved`): YES → 1, NO → 0, CANCEL → annulled; MKT (resolved to a
 *    probability, `resolutionProbability`) → ANNULLED with reason "resolved to market probability
 *    (MKT)": a binary Brier score needs a 0/1 outcome, so a partial payout is not scored. Any other
 *    resolution is skipped. Not resolved and `closeTime` ≤ now → closed.
 */
import { z } from 'zod';
import {
  DriverSettings,
  lookupEach,
  paginationLoop,
  runVenueSync,
  type AdapterOptions,
  type DiscoveryControl,
  type MarketSnapshot,
  type Normalized,
  type RawPage,
  type VenueDriver,
} from './core.ts';
import type { VenueAdapter, VenueSyncContext } from './types.ts';
import { blankToNull, clip, firstIssue } from './util.ts';

export interface ManifoldAdapterOptions extends AdapterOptions {
  baseUrl: string;
}

export const MANIFOLD_PAGE_SIZE = 1000;

/**
 * Epoch milliseconds: anything before 1990 (6.3e11 ms) is seconds or garbage; anything after
 * 9999-12-31 is microseconds (any time since 1990 in µs is over 6.3e14) or garbage. Manifold's
 * create-market form takes close dates up to 9999-12-31 (its date input's max), and creators use
 * them: capped at 9,999,999,999,999 (year 2286), such a market was skipped as a schema error, and a
 * tracked one extended that far went unpriced (QA).
 */
const epochMs = z
  .number()
  .int()
  .min(631_152_000_000, 'expected epoch milliseconds')
  .max(253_402_300_799_999, 'expected epoch milliseconds');

const ManifoldMarket = z.object({
  id: z.string().min(1),
  question: z.string().min(1),
  slug: z.string().nullish(),
  url: z.string().nullish(),
  creatorUsername: z.string().nullish(),
  createdTime: epochMs,
  closeTime: epochMs.nullish(),
  outcomeType: z.string().min(1),
  mechanism: z.string().nullish(),
  probability: z.number().min(0).max(1).nullish(),
  volume: z.number().nullish(),
  totalLiquidity: z.number().nullish(),
  uniqueBettorCount: z.number().nullish(),
  isResolved: z.boolean(),
  resolution: z.string().nullish(),
  resolutionTime: epochMs.nullish(),
  resolutionProbability: z.number().min(0).max(1).nullish(),
  textDescription: z.string().nullish(),
});
type ManifoldMarket = z.infer<typeof ManifoldMarket>;

const ManifoldPage = z.array(z.unknown());

/** Validates one Manifold market and maps it to a snapshot (see the module doc for the rules). */
export function normalizeManifold(raw: unknown, now: Date): Normalized {
  const idHint = raw && typeof raw === 'object' && typeof (raw as { id?: unknown }).id === 'string' ? (raw as { id: string }).id : null;
  const parsed = ManifoldMarket.safeParse(raw);
  if (!parsed.success) return { ok: false, id: idHint, reason: `schema: ${firstIssue(parsed.error)}` };
  const m: ManifoldMarket = parsed.data;
  const id = m.id;
  if (m.outcomeType !== 'BINARY') return { ok: false, id, reason: `non-binary market: outcomeType ${JSON.stringify(m.outcomeType)}` };
  const url = m.url ?? (m.creatorUsername && m.slug ? `https://manifold.markets/${m.creatorUsername}/${m.slug}` : `https://manifold.markets/market/${id}`);
  const close_time = m.closeTime != null ? new Date(m.closeTime) : null;
  const base: MarketSnapshot = {
    id,
    title: m.question.trim(),
    description: blankToNull(m.textDescription),
    resolution_criteria: null,
    url,
    created_at: new Date(m.createdTime),
    close_time,
    state: 'open',
    state_reason: 'open on Manifold',
    probability: m.probability ?? null,
    best_bid: null,
    best_ask: null,
    volume: m.volume ?? null,
    liquidity: m.totalLiquidity ?? null,
    forecasters: m.uniqueBettorCount ?? null,
  };
  if (!m.isResolved) {
    if (close_time && close_time.getTime() <= now.getTime()) {
      return { ok: true, market: { ...base, state: 'closed', probability: null, state_reason: 'closed on Manifold, not yet resolved' } };
    }
    return { ok: true, market: base };
  }
  const resolution = m.resolution ?? '';
  const resolved_at = m.resolutionTime != null ? new Date(m.resolutionTime) : null;
  const excerpt = clip(
    `Manifold market ${id}: isResolved=true; resolution=${JSON.stringify(m.resolution ?? null)}; resolutionProbability=${m.resolutionProbability ?? 'null'}; resolutionTime=${m.resolutionTime ?? 'null'}`,
    500,
  );
  // method: the resolution Manifold recorded (manifold:resolution_yes / _no / _cancel / _mkt).
  const res = (outcome: 1 | 0 | null, annulled_reason: string | null) => ({
    outcome,
    resolved_at,
    evidence_excerpt: excerpt,
    method: `manifold:resolution_${resolution.toLowerCase()}`,
    annulled_reason,
  });
  const common = { ...base, probability: null };
  switch (resolution) {
    case 'YES':
    case 'NO':
      return { ok: true, market: { ...common, state: 'resolved', state_reason: `resolved ${resolution} on Manifold`, resolution: res(resolution === 'YES' ? 1 : 0, null) } };
    case 'CANCEL':
      return { ok: true, market: { ...common, state: 'annulled', state_reason: 'cancelled on Manifold (CANCEL)', resolution: res(null, 'cancelled on Manifold (resolution CANCEL): trades reverted, no outcome') } };
    case 'MKT': {
      const p = m.resolutionProbability;
      return {
        ok: true,
        market: {
          ...common,
          state: 'annulled',
          state_reason: 'resolved to market probability (MKT) on Manifold',
          resolution: res(null, `resolved to market probability (MKT)${p != null ? ` of ${p}` : ''}: not a YES/NO outcome, not scored`),
        },
      };
    }
    default:
      return { ok: false, id, reason: `unknown Manifold resolution ${JSON.stringify(m.resolution ?? null)}` };
  }
}

class ManifoldDriver extends DriverSettings implements VenueDriver {
  readonly venue = 'manifold' as const;
  readonly name = 'Manifold';

  constructor(opts: ManifoldAdapterOptions) {
    super(opts.baseUrl, opts, {
      pageSize: MANIFOLD_PAGE_SIZE,
      parallel: 4,
      client: { requestsPerInterval: 7, intervalMs: 1000, concurrency: 4 },
    });
  }

  async *discover(ctx: VenueSyncContext, control: DiscoveryControl): AsyncIterable<RawPage> {
    let before: string | null = null;
    const followed = new Set<string>();
    let page = 0;
    for (; page < this.maxPages && control.wantMore(); page++) {
      const url = new URL(`${this.base}/markets`);
      url.searchParams.set('limit', String(this.pageSize));
      // `before` pages only newest-first (see the module doc): the order is never the server's choice.
      url.searchParams.set('sort', 'created-time');
      url.searchParams.set('order', 'desc');
      if (before) url.searchParams.set('before', before);
      const items = await this.client.getJson(url, ManifoldPage, ctx.signal);
      yield { items, origin: `manifold:${this.base}/markets` };
      const last = items.at(-1) as { id?: unknown } | undefined;
      if (items.length < this.pageSize || !last || typeof last.id !== 'string') return;
      if (followed.has(last.id)) throw paginationLoop(this.name, url, page + 1, last.id);
      followed.add(last.id);
      before = last.id;
    }
    if (control.wantMore()) control.pageCapped(page);
  }

  lookup(ids: string[], ctx: VenueSyncContext): AsyncIterable<RawPage> {
    return lookupEach(
      ids,
      this.parallel,
      (id, signal) => this.client.getRaw(`${this.base}/market/${encodeURIComponent(id)}`, signal),
      () => `manifold:${this.base}/market/{id}`,
      ctx.signal,
    );
  }

  normalize(raw: unknown, now: Date): Normalized {
    return normalizeManifold(raw, now);
  }
}

/** The Manifold adapter (`before`-cursor discovery, YES/NO/MKT/CANCEL resolutions). */
export function createManifoldAdapter(opts: ManifoldAdapterOptions): VenueAdapter {
  const driver = new ManifoldDriver(opts);
  return { venue: 'manifold', sync: (ctx) => runVenueSync(driver, ctx, opts) };
}
