/**
 * Thesis maps (clusters, issue 12) from the derived tables of sql/derive/97_theses.sql and
 * 98_thesis_vintages.sql: each thesis with its current consensus (weighted log-odds mean of the
 * members' signed headline consensus) beside the same from market prices, its members, and its
 * frozen records (one immutable vintage per run, scored as members resolve).
 *
 * - `GET /api/clusters/` (clusters): theses by thesis_id, keyset-paginated; `origin`
 *   (curated | computed) filters; `vintages` (0..50, default 5) = recent vintages per thesis.
 *   Body: { clusters: [Cluster], count, total, next_cursor }.
 * - `GET /api/clusters/{thesis_id}/` (clusters.detail): one thesis with its vintage history, newest
 *   first, each vintage with its members, a page at a time (vintages_limit, default 100;
 *   vintages_cursor: api/routes/history-page.ts). Unknown id: 404.
 */
import { z } from 'zod';
import type { JsonRow } from '../db/convert.ts';
import { cellInt as int, cellNum as num, fromColumns, groupRows } from '../db/cells.ts';
import { ApiError } from '../errors/problem.ts';
import { closestIds, notFoundClosest } from '../http/closest.ts';
import type { PinnedSnapshot } from '../snapshot/reader.ts';
import { bigintKey, decodeKeyset, encodeKeyset } from '../http/cursor.ts';
import { pathId, queryEnum, queryInt, queryString, STRUCTURE_ID_GRAMMAR } from '../http/params.ts';
import { jsonRoute } from '../http/registry.ts';
import { historyInput, historyNext, historyParams, historyQuery } from './history-page.ts';
import { count, DOC, MEMBER_QUESTION_FIELDS, isoTime, marketStale, published, zLogit, zNum, zProb } from '../openapi/common.ts';
import { staleParams } from './prediction-params.ts';

export const CLUSTERS_LIMIT = { min: 1, max: 500, default: 50 } as const;
const VINTAGES = { min: 0, max: 50, default: 5 } as const;
const ORIGINS = ['curated', 'computed'] as const;
const THESIS_ID = /^[a-z0-9][a-z0-9-]{1,62}$/;
const CURSOR_KIND = 'clusters';


export const ClusterMember = z
  .object({
    ...MEMBER_QUESTION_FIELDS,
    sign: z.number().int().meta({ description: '+1: YES supports the thesis; -1: YES contradicts it.' }),
    weight: z.number().meta({ description: 'The member\'s weight in the thesis consensus (computed clusters: 1).' }),
    consensus: zProb.meta({ description: 'The member\'s headline AI consensus (null: none for an active question at as_of).' }),
    disagreement_sd: zProb.meta({ description: 'Population sd of the model probabilities of that consensus.' }),
    market_probability: zProb.meta({ description: 'The member\'s latest market price at as_of.' }),
    market_observed_at: isoTime.nullable().meta({ description: DOC.market_observed_at }),
    market_stale: marketStale,
    outcome: zNum.meta({ description: '1 or 0 once resolved.' }),
  })
  .meta({ id: 'ClusterMember' });

export const ClusterConsensus = z
  .object({
    consensus: zProb.meta({ description: 'inv_logit(Σ w·logit(p_signed) / Σ w) over members with a consensus; p_signed = p, or 1 − p for sign −1.' }),
    consensus_logit: zLogit.meta({ description: 'The consensus in log-odds: Σ w·logit(p_signed) / Σ w.' }),
    market_consensus: zProb.meta({ description: 'The same over the market prices of the members with both a consensus and a price (n_with_market).' }),
    market_consensus_logit: zLogit.meta({ description: 'market_consensus in log-odds.' }),
    gap_vs_market: zProb.meta({ description: 'The consensus over the n_with_market members that have a price − market_consensus: both sides over the same members.' }),
    spread: zProb.meta({ description: 'Weighted population sd of the members\' signed consensus.' }),
    disagreement: zProb.meta({ description: 'Weighted mean of the members\' model disagreement (sd).' }),
    n_with_consensus: count.meta({ description: 'Members with a headline consensus (the members the consensus covers).' }),
    n_with_market: count.meta({ description: 'Members with both a consensus and a market price: the members market_consensus and gap_vs_market cover.' }),
  })
  .meta({ id: 'ClusterConsensus', description: 'The thesis\'s current consensus at as_of, beside the same from market prices.' });

export const VintageMember = z
  .object({
    question_id: z.string().meta({ description: DOC.question_id }),
    sign: z.number().int().meta({ description: '+1: YES supports the thesis; -1: YES contradicts it (as held in the vintage).' }),
    weight: z.number().meta({ description: 'The member\'s weight, as held in the vintage.' }),
    consensus: zProb.meta({ description: 'The member\'s headline consensus frozen in the vintage (null: none then).' }),
    market_probability: zProb.meta({ description: 'The member\'s market price frozen in the vintage (null: none then).' }),
    outcome: zNum.meta({ description: '1 or 0 once the question resolved (as of this snapshot); null before, and when annulled.' }),
    resolved_at: isoTime.nullable().meta({ description: 'When the member resolved (null: not yet).' }),
    brier: zProb.meta({ description: '(consensus − outcome)² once resolved.' }),
    market_brier: zProb.meta({ description: '(market_probability − outcome)² once resolved.' }),
  })
  .meta({ id: 'ClusterVintageMember' });

export const Vintage = z
  .object({
    run_id: z.string().meta({ description: 'The run that froze the vintage.' }),
    as_of: isoTime.nullable().meta({ description: 'The as_of of that run.' }),
    content_hash: z.string().meta({ description: 'sha256 of the vintage\'s canonical content (sql/derive/98_thesis_vintages.sql).' }),
    thesis_consensus: zProb.meta({ description: 'The thesis consensus when the vintage was frozen.' }),
    thesis_market_consensus: zProb.meta({ description: 'The thesis market consensus when the vintage was frozen.' }),
    n_members: count.meta({ description: 'Members held in the vintage.' }),
    n_with_consensus: count.meta({ description: 'Of them, members that had a consensus then.' }),
    n_resolved: count.meta({ description: 'Members held with a consensus that have since resolved.' }),
    brier: zProb.meta({ description: 'Mean Brier of those members\' consensus in this vintage.' }),
    n_market: count.meta({ description: 'Of the resolved members, those that had a market price in the vintage too.' }),
    market_brier: zProb.meta({ description: 'Mean Brier of those n_market members\' frozen market prices.' }),
    brier_vs_market: zProb.meta({
      description: 'Mean over the same n_market members of (consensus Brier − market Brier): paired, negative when the consensus did better.',
    }),
    realized: zProb.meta({ description: 'Weighted mean of the resolved members\' signed outcomes: how true the thesis turned out.' }),
    direction_held: z.boolean().nullable().meta({ description: 'thesis_consensus and realized on the same side of 0.5 (null: nothing resolved, or a tie).' }),
  })
  .meta({ id: 'ClusterVintage' });

export const Cluster = z
  .object({
    thesis_id: z.string().meta({ description: 'The thesis id: as curated, or `auto-` + 12 hex digits of sha256(the smallest member id) for a computed cluster.' }),
    origin: z.enum(ORIGINS).meta({
      description: 'curated: defined in data/structure/theses/; computed: a connected component of strongly linked similar questions.',
    }),
    statement: z.string().nullable().meta({ description: 'The thesis in words (computed: "Linked questions: <label>").' }),
    label: z.string().nullable().meta({ description: 'Computed clusters: their three top terms.' }),
    n_members: count.meta({ description: 'Member questions in this snapshot.' }),
    n_active: count.meta({ description: 'Members active at as_of.' }),
    n_resolved: count.meta({ description: 'Members resolved at as_of.' }),
    as_of: isoTime.nullable().meta({ description: 'The snapshot\'s as_of the current consensus refers to.' }),
    current: ClusterConsensus,
    members: z.array(ClusterMember).meta({ description: 'The member questions with their current consensus and price.' }),
    n_vintages: count.meta({ description: 'Vintages (frozen records) of the thesis in all, listed or not.' }),
    vintages: z.array(Vintage).meta({ description: 'Frozen records, newest first.' }),
  })
  .meta({ id: 'Cluster' });

export const ClusterPage = z
  .object({
    clusters: z.array(Cluster).meta({ description: 'This page of theses, by thesis_id.' }),
    count: count.meta({ description: DOC.count }),
    total: count.meta({ description: 'Theses matching the filter, on every page.' }),
    next_cursor: z.string().nullable().meta({ description: 'Pass as `cursor` for the next page; null on the last.' }),
  })
  .meta({ id: 'ClusterPage' });

export const ClusterDetail = z
  .object({
    cluster: Cluster.extend({
      vintages: z
        .array(Vintage.extend({
          members: z.array(VintageMember).meta({ description: 'The members as held in the vintage, with their outcomes so far.' }),
        }))
        .meta({ description: 'The thesis\'s frozen records, newest first: at most vintages_limit, from vintages_cursor on (n_vintages counts them all).' }),
      next_vintages_cursor: z.string().nullable().meta({ description: 'Pass as `vintages_cursor` for the older vintages; null when this page reached the oldest.' }),
    }).meta({ description: 'The thesis with its vintage history, a page at a time.' }),
  })
  .meta({ id: 'ClusterDetail' });

const member = (r: JsonRow) => fromColumns(ClusterMember, r, { weight: num(r.weight) ?? 1 });
const vintage = (r: JsonRow) => fromColumns(Vintage, r);
const vintageMember = (r: JsonRow) =>
  fromColumns(VintageMember, r, { weight: num(r.weight) ?? 1, consensus: num(r.member_consensus), market_probability: num(r.member_market_probability) });

/** One thesis row with its members and vintages (the list item; the detail extends the vintages). */
function cluster(t: JsonRow, members: JsonRow[], vintages: JsonRow[]): z.input<typeof Cluster> {
  return fromColumns(Cluster, t, {
    origin: t.origin === 'computed' ? 'computed' : 'curated',
    current: fromColumns(ClusterConsensus, t),
    members: members.map(member),
    n_vintages: int(vintages[0]?.n_vintages),
    vintages: vintages.map(vintage),
  });
}


const TABLES = ['theses', 'thesis_members', 'thesis_vintage_scores'] as const;

export const clustersRoute = jsonRoute({
  id: 'clusters',
  path: '/api/clusters/',
  summary: 'Thesis maps (clusters) with current consensus and frozen records',
  description:
    'Theses (curated statements with signed, weighted member questions, and computed clusters of linked questions ' +
    'labelled by their top terms) with their current consensus: the weighted mean in log-odds of the members\' signed ' +
    'headline consensus, beside the same from market prices, the spread across members and the models\' disagreement; ' +
    'their members; and their most recent vintages (one immutable record per run) with their scores as members ' +
    'resolve. Ordered by thesis_id, keyset-paginated.',
  tags: ['clusters'],
  query: z.object({
    limit: z.int().min(CLUSTERS_LIMIT.min).max(CLUSTERS_LIMIT.max).default(CLUSTERS_LIMIT.default).optional(),
    cursor: z.string().max(1024).optional().meta({ description: 'The previous page\'s next_cursor.' }),
    origin: z.enum(ORIGINS).optional().meta({ description: 'curated or computed theses only.' }),
    vintages: z.int().min(VINTAGES.min).max(VINTAGES.max).default(VINTAGES.default).optional()
      .meta({ description: 'Recent vintages per thesis (0..50, default 5).' }),
  }),
  response: ClusterPage,
  errors: [400],
  cache: true,
  input: (req) => {
    const limit = queryInt(req, 'limit', CLUSTERS_LIMIT);
    const perThesis = queryInt(req, 'vintages', VINTAGES);
    const origin = queryEnum(req, 'origin', ORIGINS) ?? null;
    const raw = queryString(req, 'cursor', 1024);
    const after = raw === undefined ? null : decodeKeyset(raw, CURSOR_KIND, z.tuple([z.string().regex(THESIS_ID)]));
    return { limit, perThesis, origin, after: after?.[0] ?? null };
  },
  data: async (snap, { limit, perThesis, origin, after }) => {
    snap.require(...TABLES);
    const [rows, counted] = await Promise.all([
      snap.query('clusters-page', { origin, after, limit: limit + 1 }),
      snap.query('clusters-count', { origin }),
    ]);
    const page = rows.slice(0, limit);
    const first = page[0];
    const last = page.at(-1);
    let members = new Map<string, JsonRow[]>();
    let vintages = new Map<string, JsonRow[]>();
    if (first && last) {
      const range = { first: String(first.thesis_id), last: String(last.thesis_id) };
      const [m, v] = await Promise.all([
        snap.query('clusters-members', { ...range, ...staleParams(snap) }),
        perThesis > 0 ? snap.query('clusters-vintages', { ...range, per_thesis: perThesis, before_us: null, before_run: null }) : Promise.resolve([]),
      ]);
      members = groupRows(m, 'thesis_id');
      vintages = groupRows(v, 'thesis_id');
    }
    // n_vintages without listing any (vintages=0): the count query with a per-thesis cap of 1.
    if (perThesis === 0 && first && last) {
      const v = await snap.query('clusters-vintages', { first: String(first.thesis_id), last: String(last.thesis_id), per_thesis: 1, before_us: null, before_run: null });
      const counts = groupRows(v, 'thesis_id');
      const clusters = page.map((t) => ({ ...cluster(t, members.get(String(t.thesis_id)) ?? [], counts.get(String(t.thesis_id)) ?? []), vintages: [] }));
      return published(ClusterPage, { clusters, count: clusters.length, total: int(counted[0]?.total), next_cursor: next(rows, limit, last) });
    }
    const clusters = page.map((t) => cluster(t, members.get(String(t.thesis_id)) ?? [], vintages.get(String(t.thesis_id)) ?? []));
    return published(ClusterPage, { clusters, count: clusters.length, total: int(counted[0]?.total), next_cursor: next(rows, limit, last) });
  },
});

function next(rows: JsonRow[], limit: number, last: JsonRow | undefined): string | null {
  return rows.length > limit && last ? encodeKeyset(CURSOR_KIND, [String(last.thesis_id)]) : null;
}

/**
 * The 404 of a thesis id the snapshot does not define, naming the closest ids; for a retired one
 * (its vintages still in the snapshot) it says so, and where they are: before, it read as a typo,
 * "No thesis", though the snapshot held its scored vintages (outside test: two computed clusters
 * of 2025-10-16 merged into others since).
 */
async function unknownThesis(snap: PinnedSnapshot, id: string): Promise<ApiError> {
  const [[retired], defined] = await Promise.all([snap.query('clusters-retired', { thesis_id: id }), snap.query('clusters-ids')]);
  const ids = defined.map((r) => String(r.thesis_id));
  if (!retired) return notFoundClosest('thesis', id, 'thesis_id', ids);
  const last = String(retired.last_as_of).slice(0, 10);
  return ApiError.notFound(
    `Thesis '${id}' is no longer defined in this snapshot (retired: a computed cluster merged into another, or a curated thesis removed from its file). ` +
      `${Number(retired.n_vintages) === 1 ? `Its one scored vintage, of ${last}, is` : `Its ${retired.n_vintages} scored vintages, the newest of ${last}, are`} ` +
      "in the snapshot's thesis_vintage_scores and thesis_vintage_members tables.",
    { parameter: 'thesis_id', closest: closestIds(id, ids) },
  );
}

export const clustersDetailRoute = jsonRoute({
  id: 'clusters.detail',
  path: '/api/clusters/{thesis_id}/',
  summary: 'One thesis with its vintage history',
  description:
    'One thesis (as in the list) with the vintages it has had (one per run), newest first, each with the members it ' +
    'held (sign, weight, consensus, market price) and, once they resolved, their outcomes and Brier scores: at most ' +
    'vintages_limit of them, the older ones through next_vintages_cursor.',
  tags: ['clusters'],
  params: z.object({ thesis_id: z.string().regex(THESIS_ID).meta({ description: 'e.g. fed-easing-2026 or auto-07c0eb15bac4' }) }),
  query: z.object(historyQuery('vintages', 'Vintages')),
  response: ClusterDetail,
  errors: [400, 404],
  cache: true,
  input: (req) => ({ id: pathId(req, 'thesis_id', THESIS_ID, `a thesis id (${STRUCTURE_ID_GRAMMAR})`), page: historyInput(req, 'vintages') }),
  data: async (snap, { id, page }) => {
    snap.require(...TABLES, 'thesis_vintage_members');
    const [t] = await snap.query('clusters-detail', { thesis_id: id });
    if (!t) throw await unknownThesis(snap, id);
    const range = { first: id, last: id };
    const [members, rows] = await Promise.all([
      snap.query('clusters-members', { ...range, ...staleParams(snap) }),
      snap.query('clusters-vintages', { ...range, per_thesis: page.limit + 1, ...historyParams(page) }),
    ]);
    const vintages = rows.slice(0, page.limit);
    const newest = vintages[0];
    const oldest = vintages.at(-1);
    const vintageMembers = newest && oldest
      ? await snap.query('clusters-vintage-members', {
          thesis_id: id,
          newest_us: BigInt(bigintKey(newest.key_us) ?? 0),
          newest_run: String(newest.run_id),
          oldest_us: BigInt(bigintKey(oldest.key_us) ?? 0),
          oldest_run: String(oldest.run_id),
        })
      : [];
    const held = groupRows(vintageMembers, 'run_id');
    // n_vintages rides on each vintage row; a page past the oldest has none, so it is counted apart
    const counted = vintages.length > 0 ? vintages : await snap.query('clusters-vintages', { ...range, per_thesis: 1, before_us: null, before_run: null });
    const base = cluster(t, members, counted);
    return published(ClusterDetail, {
      cluster: {
        ...base,
        vintages: vintages.map((v) => ({ ...vintage(v), members: (held.get(String(v.run_id)) ?? []).map(vintageMember) })),
        next_vintages_cursor: historyNext('vintages', rows, page.limit),
      },
    });
  },
});
