/**
 * A tracked market its venue no longer knows: the per-market lookup answers "not found" (a 404,
 * Kalshi's `{"market": null}`, Polymarket's Gamma returning neither an open nor a closed market
 * for the condition id). Such a market never resolves on its venue, so before this rule its
 * question was forecast until its scheduled close, looked up and reported skipped at every sync
 * forever, and never scored.
 *
 * The rule applies to markets a venue sync discovered (a question imported from a dataset is
 * resolved by its later rounds: a "not found" for it stays a skipped item). It has two steps,
 * both recorded in the warehouse so the next sync knows where it stands:
 *  1. The first sync that gets "not found" closes the question at once: a `closed` lifecycle event
 *     whose reason starts with {@link REMOVED_PREFIX}, and, when its stored close is still ahead
 *     (or unknown), a new version closing now. No run forecasts it any more.
 *  2. A later sync that still gets "not found" once {@link RemovedMarketOptions.annulAfterDays}
 *     have passed since the first annuls it: a `resolutions` record with no outcome (method
 *     `<venue>:removed`, the reason naming when it was first missed) and an `annulled` event.
 *     Annulled questions are never scored.
 * A sync that finds the market again in the meantime records a later lifecycle event (`active`
 * when it is open with its close ahead, `closed` otherwise), which ends the count: a transient
 * "not found" costs a few missed forecasts, never a wrong annulment.
 */
import type { Row, TrackedMarket } from './types.ts';

/** How the reason of the step-1 `closed` event starts (sql/pipeline/tracked_markets.sql reads it back). */
export const REMOVED_PREFIX = 'removed from ';

/** Days between the first "not found" and the annulment, unless QUORUM_REMOVED_MARKET_ANNUL_DAYS says otherwise. */
export const DEFAULT_REMOVED_ANNUL_DAYS = 7;

export interface RemovedMarketOptions {
  /** Days after the first "not found" a market still not found is annulled (0: at the next sync). */
  annulAfterDays: number;
}

/** The rows one sync writes for such a market (empty arrays: it waits). */
export interface RemovedMarketRows {
  lifecycle_events: Row<'lifecycle_events'>[];
  close_time_changes: { question_id: string; close_time: Date }[];
  resolutions: Row<'resolutions'>[];
  /** 'closed': step 1 taken now; 'annulled': step 2; 'waiting': between the two. */
  step: 'closed' | 'annulled' | 'waiting';
}

/**
 * The rows of step 1, step 2 or neither for tracked market `m` (its stored close and
 * `removed_since`: absent or null, this is the first "not found"), not found on venue `venue`
 * (display name `name`) at `now`.
 */
function removedMarketRows(m: TrackedMarket, venue: string, name: string, now: Date, options: RemovedMarketOptions): RemovedMarketRows {
  const rows: RemovedMarketRows = { lifecycle_events: [], close_time_changes: [], resolutions: [], step: 'waiting' };
  if (!m.removed_since) {
    rows.step = 'closed';
    rows.lifecycle_events.push({
      question_id: m.question_id,
      state: 'closed',
      at: now,
      reason: `${REMOVED_PREFIX}${name}: the venue answers "not found" for market ${m.venue_market_id} (annulled if still not found after ${days(options.annulAfterDays)})`,
    });
    if (!m.close_time || m.close_time.getTime() > now.getTime()) {
      rows.close_time_changes.push({ question_id: m.question_id, close_time: now });
    }
    return rows;
  }
  if (now.getTime() - m.removed_since.getTime() < options.annulAfterDays * 86_400_000) return rows;
  rows.step = 'annulled';
  const reason = `removed from ${name}: market ${m.venue_market_id} not found since ${m.removed_since.toISOString()}, and still not found ${days((now.getTime() - m.removed_since.getTime()) / 86_400_000)} later`;
  rows.resolutions.push({
    question_id: m.question_id,
    outcome: null,
    resolved_at: now,
    source_slug: venue,
    source_url: null,
    evidence_excerpt: null,
    retrieved_at: now,
    method: `${venue}:removed`,
    annulled_reason: reason,
  });
  rows.lifecycle_events.push({ question_id: m.question_id, state: 'annulled', at: now, reason });
  return rows;
}

/** "7 days", "1 day", "0.5 days". */
function days(n: number): string {
  const rounded = Math.round(n * 100) / 100;
  return `${rounded} day${rounded === 1 ? '' : 's'}`;
}

/**
 * The rule over one sync of one venue: which tracked markets it applies to (discovered by a venue
 * sync, not resolved), which were missing before, the steps this sync takes, and its word in the
 * sync report.
 */
export class RemovedMarketRule {
  /** Tracked, unresolved markets a venue sync discovered, by question id: the rule's own. */
  readonly #applies = new Map<string, TrackedMarket>();
  readonly #steps: Record<RemovedMarketRows['step'], string[]> = { closed: [], annulled: [], waiting: [] };

  constructor(
    tracked: readonly TrackedMarket[],
    private readonly venue: string,
    private readonly name: string,
    private readonly now: Date,
    private readonly options: RemovedMarketOptions,
  ) {
    for (const t of tracked) if (t.discovered && !t.resolution) this.#applies.set(t.question_id, t);
  }

  /** Whether a sync found question `qid`'s market missing, nothing heard of it since. */
  wasMissing(qid: string): boolean {
    return !!this.#applies.get(qid)?.removed_since;
  }

  /** The rows for question `qid`, whose market the venue answered "not found" for (null: the rule does not apply to it). */
  notFound(qid: string): RemovedMarketRows | null {
    const t = this.#applies.get(qid);
    if (!t) return null;
    const rows = removedMarketRows(t, this.venue, this.name, this.now, this.options);
    this.#steps[rows.step].push(qid);
    return rows;
  }

  /** The sync report's warnings for the steps taken (none when none was). */
  warnings(): string[] {
    const list = (ids: string[]) => `${ids.slice(0, 5).join(', ')}${ids.length > 5 ? `, … (${ids.length - 5} more)` : ''}`;
    const plural = (n: number) => `${n} tracked market${n === 1 ? '' : 's'}`;
    const grace = days(this.options.annulAfterDays);
    const { closed, annulled } = this.#steps;
    return [
      ...(closed.length ? [`${plural(closed.length)} not found on ${this.name}, closed now (annulled if still not found after ${grace}, QUORUM_REMOVED_MARKET_ANNUL_DAYS): ${list(closed)}`] : []),
      ...(annulled.length ? [`${plural(annulled.length)} annulled, still not found on ${this.name} ${grace} or more after the first time: ${list(annulled)}`] : []),
    ];
  }
}
