/**
 * `GET /api/predictions/lifecycle/{question_id}/`: the lifecycle and taxonomy of one question.
 *
 * `question_id`: the ids the detail endpoint accepts — venue-qualified (`metaculus:1554`;
 * `metaculus%3A1554` works too), or a bare venue market id that exactly one question has (several:
 * 400 listing the candidates in `allowed`). A malformed one is a 400 `invalid_parameter`; one the
 * snapshot does not know is a 404 `not_found`.
 * Body:
 * { question_id, venue, venue_market_id, title, url, status (as of as_of: active | closed |
 *   resolved | annulled), created_at, close_time,
 *   states: [{ seq, state, at, reason }] (the `lifecycle` table, in time order — by `at`, then the
 *     state's place in the lifecycle; seq numbers that order from 1; events up to as_of),
 *   taxonomy: { category, domain, tags,
 *     horizon: { basis, days, bucket, from, to } },
 *   resolution: null | { outcome (1, 0; null when annulled), annulled, annulled_reason, resolved_at,
 *     method, evidence_excerpt, retrieved_at, source: { slug, name, kind, url } },
 *   as_of }
 * Horizon: for an active question, basis `as_of_to_close`: days from as_of to close_time (fractional;
 * null without a close_time) and its bucket; for a resolved one, basis `forecast_to_resolution`:
 * the horizon of its headline scored consensus (resolved_predictions: days from that consensus to
 * the resolution, and its bucket); otherwise (closed, annulled, or resolved without a scored
 * consensus) basis null and nulls. Buckets as DESIGN §5 (`0-7`, `8-30`, `31-90`, `91-365`, `>365`;
 * inclusive upper bounds on the fractional days).
 */
import { z } from 'zod';
import type { JsonRow, JsonValue } from '../db/convert.ts';
import { jsonRoute } from '../http/registry.ts';
import { count, DOC, isoTime, published, zDays, zNum } from '../openapi/common.ts';
import { findQuestion, pathMarketRef, questionPathParams } from './prediction-params.ts';
import { SameEventPrice, sameEventPrices } from './same-event.ts';

const DAY_MS = 86_400_000;

/** DESIGN §5 horizon bucket of a fractional day count (inclusive upper bounds). */
export function horizonBucket(days: number | null): string | null {
  if (days === null || !Number.isFinite(days)) return null;
  if (days <= 7) return '0-7';
  if (days <= 30) return '8-30';
  if (days <= 90) return '31-90';
  if (days <= 365) return '91-365';
  return '>365';
}

export function stringList(v: JsonValue | undefined): string[] {
  return Array.isArray(v) ? v.filter((x): x is string => typeof x === 'string') : [];
}

const str = (v: JsonValue | undefined): string | null => (typeof v === 'string' ? v : null);
const num = (v: JsonValue | undefined): number | null => (typeof v === 'number' ? v : null);

/** The resolution block of a `questions` row (null unless resolved or annulled). */
export function resolutionOf(q: JsonRow): Record<string, unknown> | null {
  if (q.status !== 'resolved' && q.status !== 'annulled') return null;
  return {
    outcome: num(q.outcome),
    annulled: q.status === 'annulled',
    annulled_reason: str(q.annulled_reason),
    resolved_at: str(q.resolved_at),
    method: str(q.resolution_method),
    evidence_excerpt: str(q.evidence_excerpt),
    retrieved_at: str(q.retrieved_at),
    source: {
      slug: str(q.source_slug),
      name: str(q.source_name),
      kind: str(q.source_kind),
      url: str(q.source_url),
    },
  };
}

function horizon(q: JsonRow, scored: JsonRow | undefined, asOf: string): Record<string, unknown> {
  if (q.status === 'active') {
    const close = str(q.close_time);
    const days = close === null ? null : (Date.parse(close) - Date.parse(asOf)) / DAY_MS;
    return { basis: 'as_of_to_close', days, bucket: horizonBucket(days), from: asOf, to: close };
  }
  if (q.status === 'resolved' && scored) {
    return {
      basis: 'forecast_to_resolution',
      days: num(scored.horizon_days),
      bucket: str(scored.horizon_bucket),
      from: str(scored.forecast_at),
      to: str(scored.resolved_at),
    };
  }
  return { basis: null, days: null, bucket: null, from: null, to: null };
}

export const Resolution = z
  .object({
    outcome: zNum.meta({ description: '1 (YES), 0 (NO); null when annulled.' }),
    annulled: z.boolean().meta({ description: 'true when the question was annulled (resolved without a YES/NO outcome).' }),
    annulled_reason: z.string().nullable().meta({ description: 'Why the source annulled it, in its terms (null unless annulled).' }),
    resolved_at: isoTime.nullable().meta({ description: 'When the question resolved (or was annulled).' }),
    method: z.string().nullable().meta({
      description: 'The rule that produced the outcome, `<source>:<rule>` (e.g. `kalshi:settled_result`, `metaculus:resolved_yes`, `threshold:yoy_pct`).',
    }),
    evidence_excerpt: z.string().nullable().meta({ description: DOC.evidence_excerpt }),
    retrieved_at: isoTime.nullable().meta({ description: DOC.retrieved_at }),
    source: z.object({
      slug: z.string().nullable().meta({ description: DOC.source_slug }),
      name: z.string().nullable().meta({ description: DOC.source_name }),
      kind: z.string().nullable().meta({ description: 'government, central_bank, regulatory, primary_financial, secondary_reporting, market, analyst.' }),
      url: z.string().nullable().meta({ description: DOC.source_url }),
    }).meta({ description: 'The authoritative source the outcome was read from.' }),
  })
  .meta({ id: 'Resolution', description: 'The resolution and its provenance.' });

export const Lifecycle = z
  .object({
    question_id: z.string().meta({ description: DOC.question_id }),
    venue: z.string().nullable().meta({ description: DOC.venue }),
    venue_market_id: z.string().nullable().meta({ description: DOC.venue_market_id }),
    title: z.string().nullable().meta({ description: DOC.title }),
    url: z.string().nullable().meta({ description: DOC.url }),
    status: z.enum(['active', 'closed', 'resolved', 'annulled']).meta({ description: DOC.status }),
    created_at: isoTime.nullable().meta({ description: DOC.created_at }),
    close_time: isoTime.nullable().meta({ description: DOC.close_time }),
    states: z.array(
      z.object({
        seq: count.meta({ description: 'Position in the lifecycle, from 1: by time, then by the state\'s place in the lifecycle.' }),
        state: z.string().meta({ description: 'proposed, active, closed, resolved or annulled.' }),
        at: isoTime.nullable().meta({ description: 'When the question entered the state.' }),
        reason: z.string().nullable().meta({ description: 'Why, as recorded (e.g. `discovered on Polymarket (…)`, the venue\'s own words).' }),
      }),
    ).meta({ description: 'The recorded lifecycle events up to as_of, in `seq` order; the last is the current status.' }),
    taxonomy: z.object({
      category: z.string().nullable().meta({ description: DOC.category }),
      domain: z.string().nullable().meta({ description: DOC.domain }),
      tags: z.array(z.string()).meta({ description: DOC.tags }),
      horizon: z.object({
        basis: z.enum(['as_of_to_close', 'forecast_to_resolution']).nullable().meta({
          description:
            'as_of_to_close (active question): from as_of to close_time; forecast_to_resolution (resolved question): from ' +
            'its headline scored consensus to the resolution; null otherwise (closed, annulled, or no scored consensus).',
        }),
        days: zDays.meta({ description: 'Fractional days from `from` to `to` (6 decimals).' }),
        bucket: z.string().nullable().meta({ description: '0-7, 8-30, 31-90, 91-365 or >365.' }),
        from: isoTime.nullable().meta({ description: 'Start of the horizon: as_of, or the scored consensus\'s time.' }),
        to: isoTime.nullable().meta({ description: 'End of the horizon: close_time, or resolved_at.' }),
      }).meta({ description: 'The question\'s time horizon, bucketed as in the accuracy breakdowns.' }),
    }).meta({ description: 'The question\'s classification and time horizon.' }),
    resolution: Resolution.nullable().meta({ description: 'The resolution and its provenance; null unless resolved or annulled.' }),
    other_venues: z.array(SameEventPrice).optional().meta({ description: 'The same event on other venues, with their prices and the cross-venue gap (issue 12; absent from snapshots published before it).' }),
  })
  .meta({ id: 'Lifecycle' });

export const predictionsLifecycleRoute = jsonRoute({
  id: 'predictions.lifecycle',
  path: '/api/predictions/lifecycle/{question_id}/',
  summary: 'Lifecycle and taxonomy of one question',
  description:
    'The recorded lifecycle states with their times, the current status, the taxonomy (category, domain, tags, ' +
    'horizon) and the resolution with its provenance.',
  tags: ['predictions'],
  params: questionPathParams,
  response: Lifecycle,
  errors: [400, 404],
  cache: true,
  input: (req) => pathMarketRef(req, 'question_id'),
  data: async (snap, ref) => {
    snap.require('questions', 'lifecycle', 'resolved_predictions');
    const q = await findQuestion(snap, ref, 'question_id');
    const questionId = String(q.question_id);
    const [states, scored, sameEvent] = await Promise.all([
      snap.query('lifecycle-states', { question_id: questionId }),
      snap.query('lifecycle-horizon', { question_id: questionId }),
      sameEventPrices(snap, [questionId]),
    ]);
    return published(Lifecycle, {
      question_id: q.question_id,
      venue: str(q.venue),
      venue_market_id: str(q.venue_market_id),
      title: str(q.title),
      url: str(q.url),
      status: q.status,
      created_at: str(q.created_at),
      close_time: str(q.close_time),
      states: states.map((s) => ({ seq: num(s.seq) ?? 0, state: s.state, at: str(s.at), reason: str(s.reason) })),
      taxonomy: {
        category: str(q.category),
        domain: str(q.domain),
        tags: stringList(q.tags),
        horizon: horizon(q, scored[0], snap.asOf),
      },
      resolution: resolutionOf(q),
      ...(sameEvent ? { other_venues: sameEvent.get(questionId) ?? [] } : {}),
    });
  },
});
