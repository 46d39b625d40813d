/**
 * Anchor factors with driver trees and the health view (issue 12), from the derived tables of
 * sql/derive/99_factor_1_tree.sql and 99_factor_2_health.sql.
 *
 * - `GET /api/factors/` (factors): factors by factor_id, keyset-paginated, each with its tree
 *   (drivers and sub-drivers in depth-first order, each node with its level and change since the
 *   previous run) and its leaves. Body: { factors: [Factor], count, total, next_cursor }.
 * - `GET /api/factors/{factor_id}/` (factors.detail): one factor, the same shape. Unknown id: 404.
 * - `GET /api/factors/health/` (factors.health): per factor coverage, freshness, stale leaves,
 *   Brier against the market, disagreement, market share and contradictions; and the system's
 *   status ok | degraded | failing with the reasons, from the snapshot's checks plus the snapshot's
 *   age measured now (with the thresholds the pipeline published). Not cached: the age moves.
 */
import { z } from 'zod';
import type { JsonRow } from '../db/convert.ts';
import { cellInt as int, cellNum as num, fromColumns, groupRows } from '../db/cells.ts';
import { notFoundClosest } from '../http/closest.ts';
import { decodeKeyset, encodeKeyset } from '../http/cursor.ts';
import { pathId, queryInt, queryString, STRUCTURE_ID_GRAMMAR } from '../http/params.ts';
import { roundPercent } from '../http/precision.ts';
import { jsonRoute } from '../http/registry.ts';
import type { PinnedSnapshot } from '../snapshot/reader.ts';
import { count, DOC, MEMBER_QUESTION_FIELDS, isoTime, marketStale, published, zHours, zLogit, zNum, zProb } from '../openapi/common.ts';
import { staleParams } from './prediction-params.ts';

export const FACTORS_LIMIT = { min: 1, max: 500, default: 50 } as const;
const FACTOR_ID = /^[a-z0-9][a-z0-9-]{1,62}$/;
const CURSOR_KIND = 'factors';
const STATUSES = ['ok', 'degraded', 'failing'] as const;
type Status = (typeof STATUSES)[number];


const levelFields = {
  level: zProb.meta({ description: 'inv_logit(Σ w·logit(p_signed) / Σ w) over the subtree\'s leaves with a headline consensus; p_signed = p, or 1 − p for sign −1.' }),
  level_logit: zLogit.meta({ description: 'level in log-odds: Σ w·logit(p_signed) / Σ w.' }),
  previous_level: zProb.meta({ description: 'The same over each leaf\'s consensus of its previous run (leaves with one).' }),
  change: zProb.meta({ description: 'The level over the leaves with a previous consensus − previous_level: both over the same leaves (a leaf new since, with no previous consensus, does not move it).' }),
  market_level: zProb.meta({ description: 'The same over the active leaves\' latest market prices.' }),
  gap_vs_market: zProb.meta({ description: 'The level over the active leaves with both a consensus and a market price − the market level over those same leaves.' }),
  n_leaves: count.meta({ description: 'Leaf questions in the subtree.' }),
  n_active: count.meta({ description: 'Of them, active at as_of.' }),
  n_resolved: count.meta({ description: 'Of them, resolved at as_of.' }),
  n_with_consensus: count.meta({ description: 'Leaves with a headline consensus (the leaves `level` covers).' }),
  n_with_previous: count.meta({ description: 'Leaves with a previous consensus (the leaves `previous_level` covers).' }),
  n_with_market: count.meta({ description: 'Active leaves with a market price (the leaves `market_level` covers).' }),
};

export const FactorLeaf = z
  .object({
    ...MEMBER_QUESTION_FIELDS,
    sign: z.number().int().meta({ description: '+1: YES pushes the factor in its stated direction; −1: against it.' }),
    weight: z.number().meta({ description: 'The leaf\'s weight in its nodes\' levels (default 1).' }),
    origin: z.enum(['curated', 'rule']).meta({ description: 'Listed by hand, or attached by a rule of its driver.' }),
    consensus: zProb.meta({ description: 'Headline AI consensus (active questions).' }),
    previous_consensus: zProb.meta({
      description: 'The question\'s latest consensus in the same mode created before the headline one (null: none).',
    }),
    disagreement_sd: zProb.meta({ description: 'Population sd of the model probabilities of the headline consensus.' }),
    market_probability: zProb.meta({ description: DOC.market_probability }),
    market_observed_at: isoTime.nullable().meta({ description: DOC.market_observed_at }),
    market_stale: marketStale,
    outcome: zNum.meta({ description: '1 or 0 once resolved; null before, and when annulled.' }),
  })
  .meta({ id: 'FactorLeaf' });

/** A driver (or the factor's root) with its level; `children` are its sub-drivers. */
export const FactorNode = z
  .object({
    node_id: z.string().meta({ description: 'factor_id, then /driver_id, then /sub_driver_id.' }),
    name: z.string().meta({ description: 'The driver\'s name.' }),
    description: z.string().nullable().meta({ description: 'What the driver is (null: none given).' }),
    depth: z.number().int().meta({ description: '1: a driver; 2: a sub-driver.' }),
    ...levelFields,
    leaves: z.array(z.string()).meta({ description: 'question_id of the leaves attached directly to this node.' }),
    children: z.array(z.string()).meta({ description: 'node_id of its sub-drivers.' }),
  })
  .meta({ id: 'FactorNode' });

export const Factor = z
  .object({
    factor_id: z.string().meta({ description: 'The factor\'s id (its definition in data/structure/factors/).' }),
    name: z.string().meta({ description: 'The factor\'s name.' }),
    statement: z.string().meta({ description: 'The direction the factor states (e.g. "US monetary policy eases"); a leaf of sign +1 pushes it that way.' }),
    description: z.string().nullable().meta({ description: 'What the factor is (null: none given).' }),
    ...levelFields,
    n_drivers: count.meta({ description: 'Drivers and sub-drivers in the tree.' }),
    n_levels: count.meta({ description: 'Levels of the tree above the questions: 2 (drivers) or 3 (sub-drivers).' }),
    n_attached_by_rules: count.meta({ description: 'Leaves attached by a rule rather than listed by hand.' }),
    categories: z.array(z.string()).meta({ description: 'The categories of its leaves, sorted.' }),
    as_of: isoTime.nullable().meta({ description: 'The snapshot\'s as_of the levels refer to.' }),
    drivers: z.array(FactorNode).meta({ description: 'Every driver and sub-driver, depth-first.' }),
    leaves: z.array(FactorLeaf).meta({ description: 'Every leaf question of the factor (a question is one leaf per factor).' }),
  })
  .meta({ id: 'Factor' });

export const FactorPage = z
  .object({
    factors: z.array(Factor).meta({ description: 'This page of factors, by factor_id.' }),
    count: count.meta({ description: DOC.count }),
    total: count.meta({ description: 'Factors in the snapshot, on every page.' }),
    next_cursor: z.string().nullable().meta({ description: 'Pass as `cursor` for the next page; null on the last.' }),
  })
  .meta({ id: 'FactorPage' });

export const FactorDetail = z
  .object({ factor: Factor.meta({ description: 'The factor with its tree and leaves.' }) })
  .meta({ id: 'FactorDetail' });

const leaf = (r: JsonRow) => fromColumns(FactorLeaf, r, { weight: num(r.weight) ?? 1, origin: r.origin === 'rule' ? 'rule' : 'curated' });

/** One factor with its drivers (nodes below the root) and leaves. */
function factor(f: JsonRow, nodes: JsonRow[], leaves: JsonRow[]): z.input<typeof Factor> {
  const drivers = nodes
    .filter((n) => int(n.depth) > 0)
    .map((n) =>
      fromColumns(FactorNode, n, {
        leaves: leaves.filter((l) => l.node_id === n.node_id).map((l) => String(l.question_id)),
        children: nodes.filter((c) => c.parent_id === n.node_id).map((c) => String(c.node_id)),
      }),
    );
  return fromColumns(Factor, f, {
    categories: Array.isArray(f.categories) ? f.categories.map(String) : [],
    drivers,
    leaves: leaves.map(leaf),
  });
}


const TREE_TABLES = ['factors', 'factor_nodes', 'factor_leaves'] as const;

export const factorsRoute = jsonRoute({
  id: 'factors',
  path: '/api/factors/',
  summary: 'Anchor factors with their driver trees',
  description:
    'Anchor factors (named drivers of many questions) with their trees: factor → drivers → (sub-drivers) → questions. ' +
    'Leaves are listed by hand in data/structure/factors/ or attached by the drivers\' rules. A factor\'s (or driver\'s) ' +
    'level is the weighted mean in log-odds of its leaves\' signed headline consensus, with its change since the previous ' +
    'run and the same from market prices. Ordered by factor_id, keyset-paginated.',
  tags: ['factors'],
  query: z.object({
    limit: z.int().min(FACTORS_LIMIT.min).max(FACTORS_LIMIT.max).default(FACTORS_LIMIT.default).optional(),
    cursor: z.string().max(1024).optional().meta({ description: 'The previous page\'s next_cursor.' }),
  }),
  response: FactorPage,
  errors: [400],
  cache: true,
  input: (req) => {
    const limit = queryInt(req, 'limit', FACTORS_LIMIT);
    const raw = queryString(req, 'cursor', 1024);
    const after = raw === undefined ? null : decodeKeyset(raw, CURSOR_KIND, z.tuple([z.string().regex(FACTOR_ID)]));
    return { limit, after: after?.[0] ?? null };
  },
  data: async (snap, { limit, after }) => {
    snap.require(...TREE_TABLES);
    const [rows, counted] = await Promise.all([snap.query('factors-page', { after, limit: limit + 1 }), snap.query('factors-count')]);
    const page = rows.slice(0, limit);
    const first = page[0];
    const last = page.at(-1);
    let nodes = new Map<string, JsonRow[]>();
    let leaves = new Map<string, JsonRow[]>();
    if (first && last) {
      const range = { first: String(first.factor_id), last: String(last.factor_id) };
      const [n, l] = await Promise.all([snap.query('factors-nodes', range), snap.query('factors-leaves', { ...range, ...staleParams(snap) })]);
      nodes = groupRows(n, 'factor_id');
      leaves = groupRows(l, 'factor_id');
    }
    const factors = page.map((f) => factor(f, nodes.get(String(f.factor_id)) ?? [], leaves.get(String(f.factor_id)) ?? []));
    const next = rows.length > limit && last ? encodeKeyset(CURSOR_KIND, [String(last.factor_id)]) : null;
    return published(FactorPage, { factors, count: factors.length, total: int(counted[0]?.total), next_cursor: next });
  },
});

export const factorsDetailRoute = jsonRoute({
  id: 'factors.detail',
  path: '/api/factors/{factor_id}/',
  summary: 'One anchor factor with its driver tree',
  description: 'One factor as in the list: its levels, every driver and sub-driver with theirs, and its leaves.',
  tags: ['factors'],
  params: z.object({ factor_id: z.string().regex(FACTOR_ID).meta({ description: 'e.g. us-monetary-easing' }) }),
  response: FactorDetail,
  errors: [400, 404],
  cache: true,
  input: (req) => ({ id: pathId(req, 'factor_id', FACTOR_ID, `a factor id (${STRUCTURE_ID_GRAMMAR})`) }),
  data: async (snap, { id }) => {
    snap.require(...TREE_TABLES);
    const [f] = await snap.query('factors-detail', { factor_id: id });
    if (!f) throw notFoundClosest('factor', id, 'factor_id', (await snap.query('factors-ids')).map((r) => String(r.factor_id)));
    const range = { first: id, last: id };
    const [nodes, leaves] = await Promise.all([snap.query('factors-nodes', range), snap.query('factors-leaves', { ...range, ...staleParams(snap) })]);
    return published(FactorDetail, { factor: factor(f, nodes, leaves) });
  },
});

export const HealthCheck = z
  .object({
    check: z.string().meta({ description: 'model_failures | venue_sync | stale_prices | snapshot_age' }),
    status: z.enum(STATUSES).meta({ description: 'failing when value ≥ failing_at, degraded when value ≥ degraded_at, else ok (ok when there is nothing to measure).' }),
    value: zLogit.meta({ description: 'The measure: a share, to 6 decimals, or for snapshot_age hours, to 2 (as every age in hours; its status is judged on the exact age, so within 18 s of a threshold the value shown may already read as the threshold); null when there is nothing to measure.' }),
    degraded_at: zNum.meta({ description: 'The threshold from which the check is degraded (QUORUM_HEALTH_*).' }),
    failing_at: zNum.meta({ description: 'The threshold from which the check is failing (QUORUM_HEALTH_*).' }),
    detail: z.string().nullable().meta({ description: 'What was measured, in words (e.g. the failing venues).' }),
  })
  .meta({ id: 'HealthCheck' });

const Contradiction = z.object({
  question_a: z.string().meta({ description: 'The link\'s first question (implies: the one that implies).' }),
  question_b: z.string().meta({ description: 'The link\'s second question.' }),
  kind: z.enum(['implies', 'excludes']).meta({ description: 'implies: a ⇒ b, so P(a) ≤ P(b); excludes: not both, so P(a) + P(b) ≤ 1.' }),
  consensus_a: zProb.meta({ description: 'The headline consensus of question_a.' }),
  consensus_b: zProb.meta({ description: 'The headline consensus of question_b.' }),
  violation: zProb.meta({ description: 'implies: P(a) − P(b) > 0; excludes: P(a) + P(b) − 1 > 0.' }),
});

export const FactorHealth = z
  .object({
    factor_id: z.string().meta({ description: 'The factor\'s id.' }),
    name: z.string().nullable().meta({ description: 'The factor\'s name.' }),
    status: z.enum(STATUSES).meta({
      description: 'failing: active leaves but none with a consensus; degraded: coverage below QUORUM_HEALTH_COVERAGE_DEGRADED, contradictions, many stale leaves, or no active leaf.',
    }),
    reasons: z.array(z.string()).meta({ description: 'Why the status is not ok, in words (empty when ok).' }),
    n_leaves: count.meta({ description: 'Leaf questions of the factor.' }),
    n_active: count.meta({ description: 'Of them, active at as_of.' }),
    n_resolved: count.meta({ description: 'Of them, resolved at as_of.' }),
    coverage: zProb.meta({ description: 'Share of the active leaves forecast by every model of the latest run.' }),
    latest_run_id: z.string().nullable().meta({ description: 'The latest run: the run of the newest forecast at or before as_of.' }),
    latest_run_models: count.meta({ description: 'The distinct models that forecast in that run ("every model" of coverage).' }),
    newest_forecast_at: isoTime.nullable().meta({ description: 'The newest forecast of any leaf.' }),
    newest_forecast_age_hours: zHours.meta({ description: 'Hours from newest_forecast_at to as_of.' }),
    newest_price_at: isoTime.nullable().meta({ description: 'The newest market price of any leaf.' }),
    newest_price_age_hours: zHours.meta({ description: 'Hours from newest_price_at to as_of.' }),
    stale_leaves: z
      .array(z.object({
        question_id: z.string().meta({ description: DOC.question_id }),
        reasons: z.array(z.enum(['no_forecast_in_latest_run', 'stale_price'])).meta({
          description: 'no_forecast_in_latest_run: no model forecast it in the latest run; stale_price: its latest price is older than QUORUM_HEALTH_STALE_PRICE_HOURS (48).',
        }),
      }))
      .meta({ description: 'Active leaves that are stale, with why.' }),
    n_scored: count.meta({ description: 'Resolved leaves with a headline scored consensus and a fresh market comparator.' }),
    brier: zProb.meta({ description: 'Mean Brier of their consensus.' }),
    market_brier: zProb.meta({ description: 'Mean Brier of the market on the same questions.' }),
    brier_vs_market: zProb.meta({ description: 'brier − market_brier (negative: the AI did better).' }),
    disagreement: zProb.meta({ description: 'Mean model disagreement (sd) of the leaves with a consensus.' }),
    market_share: zProb.meta({ description: 'Share of the leaves with a market price.' }),
    n_contradictions: count.meta({ description: 'Linked pairs of its leaves whose consensus breaks the link.' }),
    contradictions: z.array(Contradiction).meta({ description: 'Those pairs, largest violation first.' }),
  })
  .meta({ id: 'FactorHealth' });

/** One forecaster's coherence on one check (99_scenario_9_coherence.sql); check 'all' sums them. */
export const CoherenceRate = z
  .object({
    forecaster: z.string().meta({ description: 'A model, or consensus.' }),
    check: z.string().meta({ description: 'all | implies | excludes | complement | same_event | conjunction | marginal' }),
    n: count.meta({ description: 'Checks made: linked pairs and scenario checks where the forecaster has both forecasts, per mode.' }),
    n_violated: count.meta({ description: 'Checks whose value is past its bound (by more than 1e-9, or the tolerance where one applies).' }),
    rate: zProb.meta({ description: 'n_violated / n.' }),
    mean_violation: zProb.meta({ description: 'Mean distance past the bound of the violated checks.' }),
  })
  .meta({ id: 'CoherenceRate' });

/** The coherence rows of a snapshot ([] for a snapshot published before they existed). */
export async function coherenceRates(snap: PinnedSnapshot): Promise<z.input<typeof CoherenceRate>[]> {
  if (!snap.tables.has('coherence')) return [];
  return (await snap.query('coherence')).map((r) => fromColumns(CoherenceRate, r));
}

export const FactorsHealth = z
  .object({
    status: z.enum(STATUSES).meta({ description: 'The worst status of the checks.' }),
    reasons: z.array(z.string()).meta({ description: 'The detail of every check that is not ok, worst first.' }),
    checks: z.array(HealthCheck).meta({ description: 'The system checks: model_failures, venue_sync, stale_prices (from the snapshot) and snapshot_age (measured now).' }),
    snapshot_published_at: isoTime.meta({ description: 'When the served snapshot was created (its manifest\'s created_at): snapshot_age counts from it.' }),
    factors: z.array(FactorHealth).meta({ description: 'The health of each factor.' }),
    coherence: z.array(CoherenceRate).meta({
      description: 'Coherence across the book: per model and the consensus, how often their forecasts of linked questions and scenario joints break the laws of probability.',
    }),
  })
  .meta({ id: 'FactorsHealth' });

const RANK: Record<Status, number> = { ok: 0, degraded: 1, failing: 2 };

function statusOf(v: unknown): Status {
  return v === 'failing' || v === 'degraded' ? v : 'ok';
}

/** A time elapsed for the snapshot_age detail: minutes under an hour (outside test: "0.0 h ago" beside a value of 0.03 h), else hours. */
function ago(hours: number): string {
  return hours < 1 ? `${Math.round(hours * 60)} min` : `${hours.toFixed(1)} h`;
}

/** The snapshot_age check, measured now against the thresholds the pipeline published; its value
 *  is an age in hours, published to 2 decimals as every one is (README, Precision), the status
 *  judged on the unrounded age. */
function snapshotAgeCheck(row: JsonRow | undefined, publishedAt: string, now: number): z.input<typeof HealthCheck> {
  const hours = Math.max(0, (now - Date.parse(publishedAt)) / 3_600_000);
  const degradedAt = num(row?.degraded_at) ?? 36;
  const failingAt = num(row?.failing_at) ?? 108;
  const status: Status = hours >= failingAt ? 'failing' : hours >= degradedAt ? 'degraded' : 'ok';
  return { check: 'snapshot_age', status, value: roundPercent(hours), degraded_at: degradedAt, failing_at: failingAt, detail: `the snapshot was published ${ago(hours)} ago` };
}

export const factorsHealthRoute = jsonRoute({
  id: 'factors.health',
  path: '/api/factors/health/',
  summary: 'Health of the factor system',
  description:
    'Per factor: leaves, coverage (share of active leaves forecast by every model of the latest run), freshness (age of ' +
    'the newest forecast and market price; stale leaves listed with reasons), Brier of the resolved leaves against the ' +
    'market on the same questions, mean disagreement, market share, and contradictions among linked leaves. And the ' +
    'system\'s status ok | degraded | failing with its reasons: model failure rate of the latest run, venues failing to ' +
    'sync, stale prices, and the age of the snapshot, each derived from data with its thresholds.',
  tags: ['factors'],
  response: FactorsHealth,
  errors: [],
  input: () => ({}),
  data: async (snap) => {
    snap.require('factor_health', 'factor_contradictions', 'system_health');
    const [health, contradictions, checks, coherence] = await Promise.all([
      snap.query('factors-health'),
      snap.query('factors-contradictions'),
      snap.query('system-health'),
      coherenceRates(snap),
    ]);
    const byId = groupRows(contradictions, 'factor_id');
    const all = [
      ...checks.filter((c) => c.check !== 'snapshot_age').map((c) => fromColumns(HealthCheck, c, { status: statusOf(c.status) })),
      snapshotAgeCheck(checks.find((c) => c.check === 'snapshot_age'), snap.createdAt, Date.now()),
    ];
    const status = all.reduce<Status>((s, c) => (RANK[c.status] > RANK[s] ? c.status : s), 'ok');
    const reasons = all
      .filter((c) => c.status !== 'ok')
      .sort((a, b) => RANK[b.status] - RANK[a.status])
      .map((c) => `${c.check} ${c.status}: ${c.detail ?? ''}`.trim());
    const factors = health.map((h) =>
      fromColumns(FactorHealth, h, {
        status: statusOf(h.status),
        reasons: Array.isArray(h.reasons) ? h.reasons.map(String) : [],
        stale_leaves: Array.isArray(h.stale_leaves)
          ? (h.stale_leaves as { question_id: string; reasons: ('no_forecast_in_latest_run' | 'stale_price')[] }[]).map((x) => ({ question_id: String(x.question_id), reasons: [...x.reasons] }))
          : [],
        contradictions: (byId.get(String(h.factor_id)) ?? []).map((c) => fromColumns(Contradiction, c, { kind: c.kind === 'excludes' ? 'excludes' : 'implies' })),
      }),
    );
    return published(FactorsHealth, { status, reasons, checks: all, snapshot_published_at: snap.createdAt, factors, coherence });
  },
});
