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
import { ApiError } from '../errors/problem.ts';
import { decodeKeyset, encodeKeyset } from '../http/cursor.ts';
import { pathId, queryInt, queryString } from '../http/params.ts';
import { jsonRoute } from '../http/registry.ts';
import type { PinnedSnapshot } from '../snapshot/reader.ts';
import { count, isoTime, published, zHours, zLogit, zNum, zProb } from '../openapi/common.ts';

export const FACTORS_LIMIT = { min: 1, max: 500, default: 50 } as const;
const FACTOR_ID = /^[a-z0-9][a-z0-9-]{1,62}$/;
const CURSOR_KIND = 'factors';
const STATUSES = ['ok', 'degraded', 'failing'] as const;
type Status = (typeof STATUSES)[number];


const levelFields = {
  level: zProb.meta({ description: 'inv_logit(Σ w·logit(p_signed) / Σ w) over the subtree\'s leaves with a headline consensus; p_signed = p, or 1 − p for sign −1.' }),
  level_logit: zLogit,
  previous_level: zProb.meta({ description: 'The same over each leaf\'s consensus of its previous run (leaves with one).' }),
  change: zProb.meta({ description: 'level − previous_level.' }),
  market_level: zProb.meta({ description: 'The same over the active leaves\' latest market prices.' }),
  gap_vs_market: zProb.meta({ description: 'level − market_level.' }),
  n_leaves: count,
  n_active: count,
  n_resolved: count,
  n_with_consensus: count,
  n_with_previous: count,
  n_with_market: count,
};

export const FactorLeaf = z
  .object({
    question_id: z.string(),
    title: z.string().nullable(),
    venue: z.string().nullable(),
    url: z.string().nullable(),
    category: z.string().nullable(),
    status: z.string().nullable(),
    sign: z.number().int().meta({ description: '+1: YES pushes the factor in its stated direction; −1: against it.' }),
    weight: z.number(),
    origin: z.enum(['curated', 'rule']).meta({ description: 'Listed by hand, or attached by a rule of its driver.' }),
    consensus: zProb.meta({ description: 'Headline AI consensus (active questions).' }),
    previous_consensus: zProb,
    disagreement_sd: zProb,
    market_probability: zProb,
    outcome: zNum,
  })
  .meta({ id: 'FactorLeaf' });

/** A driver (or the factor's root) with its level; `children` are its sub-drivers. */
export const FactorNode = z
  .object({
    node_id: z.string().meta({ description: 'factor_id, then /driver_id, then /sub_driver_id.' }),
    name: z.string(),
    description: z.string().nullable(),
    depth: z.number().int(),
    ...levelFields,
    leaves: z.array(z.string()).meta({ description: 'question_id of the leaves attached directly to this node.' }),
    children: z.array(z.string()).meta({ description: 'node_id of its sub-drivers.' }),
  })
  .meta({ id: 'FactorNode' });

export const Factor = z
  .object({
    factor_id: z.string(),
    name: z.string(),
    statement: z.string(),
    description: z.string().nullable(),
    ...levelFields,
    n_drivers: count,
    n_levels: count.meta({ description: 'Levels of the tree above the questions: 2 (drivers) or 3 (sub-drivers).' }),
    n_attached_by_rules: count,
    categories: z.array(z.string()),
    as_of: isoTime.nullable(),
    drivers: z.array(FactorNode).meta({ description: 'Every driver and sub-driver, depth-first.' }),
    leaves: z.array(FactorLeaf),
  })
  .meta({ id: 'Factor' });

export const FactorPage = z
  .object({ factors: z.array(Factor), count, total: count, next_cursor: z.string().nullable() })
  .meta({ id: 'FactorPage' });

export const FactorDetail = z.object({ factor: Factor }).meta({ id: 'FactorDetail' });

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
      const [n, l] = await Promise.all([snap.query('factors-nodes', range), snap.query('factors-leaves', range)]);
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
  input: (req) => ({ id: pathId(req, 'factor_id', FACTOR_ID, 'a factor id (a-z, 0-9, -)') }),
  data: async (snap, { id }) => {
    snap.require(...TREE_TABLES);
    const [f] = await snap.query('factors-detail', { factor_id: id });
    if (!f) throw ApiError.notFound(`No factor '${id}' in this snapshot.`, { parameter: 'factor_id' });
    const range = { first: id, last: id };
    const [nodes, leaves] = await Promise.all([snap.query('factors-nodes', range), snap.query('factors-leaves', range)]);
    return published(FactorDetail, { factor: factor(f, nodes, leaves) });
  },
});

export const HealthCheck = z
  .object({
    check: z.string().meta({ description: 'model_failures | venue_sync | stale_prices | snapshot_age' }),
    status: z.enum(STATUSES),
    value: zLogit.meta({ description: 'The measure (a share, or hours for snapshot_age), to 6 decimals; null when there is nothing to measure.' }),
    degraded_at: zNum,
    failing_at: zNum,
    detail: z.string().nullable(),
  })
  .meta({ id: 'HealthCheck' });

const Contradiction = z.object({
  question_a: z.string(),
  question_b: z.string(),
  kind: z.enum(['implies', 'excludes']),
  consensus_a: zProb,
  consensus_b: zProb,
  violation: zProb.meta({ description: 'implies: P(a) − P(b) > 0; excludes: P(a) + P(b) − 1 > 0.' }),
});

export const FactorHealth = z
  .object({
    factor_id: z.string(),
    name: z.string().nullable(),
    status: z.enum(STATUSES).meta({
      description: 'failing: active leaves but none with a consensus; degraded: coverage below QUORUM_HEALTH_COVERAGE_DEGRADED, contradictions, many stale leaves, or no active leaf.',
    }),
    reasons: z.array(z.string()),
    n_leaves: count,
    n_active: count,
    n_resolved: count,
    coverage: zProb.meta({ description: 'Share of the active leaves forecast by every model of the latest run.' }),
    latest_run_id: z.string().nullable(),
    latest_run_models: count,
    newest_forecast_at: isoTime.nullable(),
    newest_forecast_age_hours: zHours,
    newest_price_at: isoTime.nullable(),
    newest_price_age_hours: zHours,
    stale_leaves: z.array(z.object({ question_id: z.string(), reasons: z.array(z.enum(['no_forecast_in_latest_run', 'stale_price'])) })),
    n_scored: count.meta({ description: 'Resolved leaves with a headline scored consensus and a fresh market comparator.' }),
    brier: zProb.meta({ description: 'Mean Brier of their consensus.' }),
    market_brier: zProb.meta({ description: 'Mean Brier of the market on the same questions.' }),
    brier_vs_market: zProb.meta({ description: 'brier − market_brier (negative: the AI did better).' }),
    disagreement: zProb.meta({ description: 'Mean model disagreement (sd) of the leaves with a consensus.' }),
    market_share: zProb.meta({ description: 'Share of the leaves with a market price.' }),
    n_contradictions: count,
    contradictions: z.array(Contradiction),
  })
  .meta({ id: 'FactorHealth' });

/** One forecaster's coherence on one check (99_scenario_9_coherence.sql); check 'all' sums them. */
export const CoherenceRate = z
  .object({
    forecaster: z.string().meta({ description: 'A model, or consensus.' }),
    check: z.string().meta({ description: 'all | implies | excludes | complement | same_event | conjunction | marginal' }),
    n: count,
    n_violated: count,
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
    checks: z.array(HealthCheck),
    snapshot_published_at: isoTime,
    factors: z.array(FactorHealth),
    coherence: z.array(CoherenceRate).meta({
      description: 'Coherence across the book: per model and the consensus, how often their forecasts of linked questions and scenario joints break the laws of probability.',
    }),
  })
  .meta({ id: 'FactorsHealth' });

const RANK: Record<Status, number> = { ok: 0, degraded: 1, failing: 2 };

function statusOf(v: unknown): Status {
  return v === 'failing' || v === 'degraded' ? v : 'ok';
}

/** The snapshot_age check, measured now against the thresholds the pipeline published. */
function snapshotAgeCheck(row: JsonRow | undefined, publishedAt: string, now: number): z.input<typeof HealthCheck> {
  const hours = Math.max(0, (now - Date.parse(publishedAt)) / 3_600_000);
  const degradedAt = num(row?.degraded_at) ?? 36;
  const failingAt = num(row?.failing_at) ?? 108;
  const status: Status = hours >= failingAt ? 'failing' : hours >= degradedAt ? 'degraded' : 'ok';
  return { check: 'snapshot_age', status, value: hours, degraded_at: degradedAt, failing_at: failingAt, detail: `the snapshot was published ${hours.toFixed(1)} h ago` };
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
