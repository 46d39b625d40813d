/**
 * Scenarios (issue 13) from the derived tables of sql/derive/99_scenario_1_joint.sql and
 * 99_scenario_2_records.sql: small sets of related binary questions (components) in pathway order,
 * the joint distribution over their worlds (each model's by the chain rule, a maximum-entropy fit
 * or the independent product, and the consensus: the mean of the models' joints), and the archived
 * records (one immutable record per run) scored as the components resolve.
 *
 * - `GET /api/scenarios/` (scenarios): scenarios by scenario_id, keyset-paginated, each with its
 *   components and its latest archived record's pathway and component distributions and scores;
 *   `status` (active | resolved | annulled) and `since` (scenarios with a record dated at or after it:
 *   its run's as_of, not when it was archived)
 *   filter. Body: { scenarios: [Scenario], count, total, next_cursor }.
 * - `GET /api/scenarios/{scenario_id}/` (scenarios.detail): one scenario with its components, the
 *   current joint (consensus and per model, with the implied marginals and the coherence gap) and
 *   its record history with the scores, newest first, a page at a time (records_limit, default
 *   100; records_cursor: api/routes/history-page.ts). Unknown id: 404 (a retired one's says so).
 */
import { z } from 'zod';
import type { JsonRow } from '../db/convert.ts';
import { cellInt as int, cellRows, cellStr as str, fromColumns, groupRows } from '../db/cells.ts';
import type { PinnedSnapshot } from '../snapshot/reader.ts';
import { ApiError } from '../errors/problem.ts';
import { closestIds, notFoundClosest } from '../http/closest.ts';
import { decodeKeyset, encodeKeyset } from '../http/cursor.ts';
import { pathId, queryEnum, queryInt, queryString, queryTimestamp, STRUCTURE_ID_GRAMMAR } from '../http/params.ts';
import { jsonRoute } from '../http/registry.ts';
import { historyInput, historyNext, historyParams, historyQuery } from './history-page.ts';
import { count, DOC, isoTime, isoTimeParam, published, zNum, zProb } from '../openapi/common.ts';

export const SCENARIOS_LIMIT = { min: 1, max: 500, default: 50 } as const;
const STATUSES = ['active', 'resolved', 'annulled'] as const;
const SCENARIO_ID = /^[a-z0-9][a-z0-9-]{1,62}$/;
const CURSOR_KIND = 'scenarios';
const METHODS = ['chain_rule', 'max_entropy_ipf', 'independent'] as const;

/** The scenario's status column (a snapshot of an older version has only active and resolved). */
const statusOf = (v: unknown): (typeof STATUSES)[number] =>
  (STATUSES as readonly unknown[]).includes(v) ? (v as (typeof STATUSES)[number]) : 'active';

const methodsOf = (v: unknown): (typeof METHODS)[number][] =>
  (str(v) ?? '').split(',').filter((m): m is (typeof METHODS)[number] => (METHODS as readonly string[]).includes(m));

const worldDoc = 'One digit per component in pathway order: 1 YES, 0 NO (\'10\': the first YES, the second NO).';

export const ScenarioComponent = z
  .object({
    ord: z.number().int().meta({ description: 'Position in the pathway, from 1.' }),
    question_id: z.string().meta({ description: DOC.question_id }),
    label: z.string().nullable().meta({ description: 'The component\'s label in the scenario definition (default: the question\'s title).' }),
    title: z.string().nullable().meta({ description: DOC.title }),
    venue: z.string().nullable().meta({ description: DOC.venue }),
    url: z.string().nullable().meta({ description: DOC.url }),
    status: z.string().nullable().meta({ description: 'active | closed | resolved | annulled, as of the snapshot.' }),
    outcome: zNum.meta({ description: '1 or 0 once resolved.' }),
    resolved_at: isoTime.nullable().meta({ description: 'When the component resolved (null: not yet).' }),
    implied: zProb.meta({ description: 'P(YES) implied by the current consensus joint.' }),
    direct: zProb.meta({ description: 'The mean of the models\' direct forecasts (models with a joint).' }),
    coherence_gap: zProb.meta({ description: 'implied − direct.' }),
  })
  .meta({ id: 'ScenarioComponent' });

export const ScenarioWorld = z
  .object({
    world: z.string().meta({ description: worldDoc }),
    probability: zProb.meta({ description: 'P(world) under the joint.' }),
    rank: z.number().int().meta({ description: '1 = the most likely world (ties by world).' }),
    disagreement_sd: zProb.meta({ description: 'Consensus: population sd of the models\' probabilities of the world.' }),
    consistent: z.boolean().nullable().meta({ description: 'Agrees with every component resolved so far.' }),
    conditional_probability: zProb.meta({ description: 'Renormalized over the consistent worlds (null for the others).' }),
  })
  .meta({ id: 'ScenarioWorld' });

export const ScenarioMarginal = z
  .object({
    ord: z.number().int().meta({ description: 'The component\'s position in the pathway, from 1.' }),
    question_id: z.string().meta({ description: DOC.question_id }),
    implied: zProb.meta({ description: 'Σ P(world) over the worlds where the component is YES.' }),
    direct: zProb.meta({ description: 'The direct forecast (latest, headline mode); consensus: the models\' mean.' }),
    coherence_gap: zProb.meta({ description: 'implied − direct.' }),
  })
  .meta({ id: 'ScenarioMarginal' });

export const ScenarioJoint = z
  .object({
    model: z.string().nullable().meta({ description: 'null: the consensus (the mean of the models\' joints).' }),
    methods: z.array(z.enum(METHODS)).meta({ description: 'chain_rule (from conditionals), max_entropy_ipf (fit to marginals and some conditionals), independent (product of marginals).' }),
    n_models: count.meta({ description: 'Models whose joint this is: 1 for a model, the number averaged for the consensus.' }),
    pathway: z.array(ScenarioWorld).meta({ description: 'Every world, most likely first.' }),
    components: z.array(ScenarioMarginal).meta({ description: 'Each component\'s implied and direct probability, in pathway order.' }),
  })
  .meta({ id: 'ScenarioJoint', description: 'A current joint distribution over the scenario\'s worlds (as of the snapshot).' });

export const RecordComponent = z
  .object({
    ord: z.number().int().meta({ description: 'The component\'s position in the pathway, from 1.' }),
    question_id: z.string().meta({ description: DOC.question_id }),
    implied: zProb.meta({ description: 'P(YES) implied by the record\'s joint.' }),
    outcome: zNum.meta({ description: '1 or 0 once resolved (as of this snapshot); null before.' }),
    resolved_at: isoTime.nullable().meta({ description: 'When the component resolved (null: not yet).' }),
    brier: zProb.meta({ description: '(implied − outcome)² once resolved.' }),
  })
  .meta({ id: 'ScenarioRecordComponent' });

export const ScenarioRecord = z
  .object({
    run_id: z.string().meta({ description: 'The run that archived the record.' }),
    as_of: isoTime.nullable().meta({ description: 'The as_of of that run.' }),
    content_hash: z.string().meta({ description: 'sha256 of the record\'s components and world probabilities (sql/derive/99_scenario_2_records.sql).' }),
    n_models: count.meta({ description: 'Models whose joints the archived consensus averaged.' }),
    methods: z.array(z.enum(METHODS)).meta({ description: 'The methods of those models\' joints (chain_rule, max_entropy_ipf, independent).' }),
    top_world: z.string().nullable().meta({ description: 'The record\'s most likely world.' }),
    top_probability: zProb.meta({ description: 'Its probability.' }),
    n_resolved: count.meta({ description: 'Components resolved as of the snapshot.' }),
    resolved_pattern: z.string().nullable().meta({ description: 'A digit per resolved component, - for the open ones.' }),
    complete: z.boolean().meta({ description: 'true when every component has resolved.' }),
    realized_world: z.string().nullable().meta({ description: 'The world that happened (the outcomes in pathway order); null until complete.' }),
    realized_probability: zProb.meta({ description: 'The probability the record gave the realized world; null until complete.' }),
    log_score: zProb.meta({ description: 'ln P(realized world) (P floored at 1e-12); once every component resolved.' }),
    brier: zProb.meta({ description: 'Multi-class Brier over the worlds, 0..2; once every component resolved.' }),
    component_brier: zProb.meta({ description: 'Mean Brier of the resolved components\' implied marginals.' }),
    consistent_mass: zProb.meta({ description: 'P(the worlds that agree with the components resolved so far).' }),
    partial_log_score: zProb.meta({ description: 'ln consistent_mass.' }),
    pathway: z.array(ScenarioWorld).meta({ description: 'The record\'s worlds, most likely first, with their agreement with the resolutions so far.' }),
    components: z.array(RecordComponent).meta({ description: 'The record\'s component distribution, in pathway order.' }),
  })
  .meta({ id: 'ScenarioRecord', description: 'An archived record: the consensus joint frozen by one run, scored as the components resolve.' });

export const Scenario = z
  .object({
    scenario_id: z.string().meta({ description: 'The scenario\'s id: as defined in data/structure/scenarios/, or `thesis-<thesis id>` for a scenario made from a curated thesis.' }),
    title: z.string().nullable().meta({ description: 'The scenario\'s title.' }),
    description: z.string().nullable().meta({ description: 'What the scenario is about (null: none given).' }),
    status: z.enum(STATUSES).meta({
      description:
        'active: a component is still open (runs archive records); resolved: every component resolved; ' +
        'annulled: nothing is open and a component was annulled (no world will be realized; records keep their partial scores).',
    }),
    n_components: count.meta({ description: 'Component questions (2 to 6).' }),
    n_worlds: count.meta({ description: '2^n_components: the possible combinations of outcomes.' }),
    n_resolved: count.meta({ description: 'Components resolved as of the snapshot.' }),
    resolved_pattern: z.string().nullable().meta({ description: 'A digit per resolved component, - for the open ones (pathway order).' }),
    n_models: count.meta({ description: 'Models whose joints the current consensus averages (0: no joint).' }),
    top_world: z.string().nullable().meta({ description: 'The current consensus joint\'s most likely world.' }),
    top_probability: zProb.meta({ description: 'Its probability.' }),
    n_records: count.meta({ description: 'Archived records of the scenario.' }),
    as_of: isoTime.nullable().meta({ description: 'The snapshot\'s as_of the current joint refers to.' }),
    components: z.array(ScenarioComponent).meta({ description: 'The component questions in pathway order, with the current consensus\'s implied and direct probabilities.' }),
    latest_record: ScenarioRecord.nullable().meta({ description: 'The latest archived record (null: none yet).' }),
  })
  .meta({ id: 'Scenario' });

export const ScenarioPage = z
  .object({
    scenarios: z.array(Scenario).meta({ description: 'This page of scenarios, by scenario_id.' }),
    count: count.meta({ description: DOC.count }),
    total: count.meta({ description: 'Scenarios matching the filters, on every page.' }),
    next_cursor: z.string().nullable().meta({ description: 'Pass as `cursor` for the next page; null on the last.' }),
  })
  .meta({ id: 'ScenarioPage' });

export const ScenarioDetail = z
  .object({
    scenario: Scenario.extend({
      current: z.array(ScenarioJoint).meta({ description: 'The consensus joint first, then each model\'s.' }),
      records: z.array(ScenarioRecord).meta({ description: 'The archived records, newest first: at most records_limit, from records_cursor on (n_records counts them all).' }),
      next_records_cursor: z.string().nullable().meta({ description: 'Pass as `records_cursor` for the older records; null when this page reached the oldest.' }),
    }).meta({ description: 'The scenario with its current joints and its record history, a page at a time.' }),
  })
  .meta({ id: 'ScenarioDetail' });

const component = (r: JsonRow) => fromColumns(ScenarioComponent, r);
const world = (r: JsonRow) => fromColumns(ScenarioWorld, r);

/** A record with its pathway and component distributions (lists of sql/api/scenarios-records.sql). */
function record(r: JsonRow): z.input<typeof ScenarioRecord> {
  return fromColumns(ScenarioRecord, r, {
    methods: methodsOf(r.methods),
    pathway: cellRows(r.pathway_worlds).map(world),
    components: cellRows(r.record_components).map((c) => fromColumns(RecordComponent, c)),
  });
}

/** The records of the scenarios in [first, last] (only each one's latest, or all), by scenario. */
async function records(
  snap: PinnedSnapshot,
  first: string,
  last: string,
  latestOnly: boolean,
): Promise<Map<string, z.input<typeof ScenarioRecord>[]>> {
  const rows = await snap.query('scenarios-records', { first, last, latest_only: latestOnly, before_us: null, before_run: null, per_scenario: null });
  return new Map([...groupRows(rows, 'scenario_id')].map(([id, rs]) => [id, rs.map(record)]));
}

function scenario(s: JsonRow, components: JsonRow[], latest: z.input<typeof ScenarioRecord> | null): z.input<typeof Scenario> {
  return fromColumns(Scenario, s, {
    status: statusOf(s.status),
    components: components.map(component),
    latest_record: latest,
  });
}

const TABLES = ['scenarios', 'scenario_components', 'scenario_record_scores', 'scenario_records', 'questions'] as const;

export const scenariosRoute = jsonRoute({
  id: 'scenarios',
  path: '/api/scenarios/',
  summary: 'Scenarios with their latest archived record\'s pathway and component distributions',
  description:
    'Scenarios: small sets of related binary questions (components) in pathway order. Each with its components ' +
    '(resolution, the consensus joint\'s implied marginal beside the models\' direct forecasts) and its latest ' +
    'archived record: the consensus joint over the worlds (most likely first, conditioned on the components ' +
    'resolved so far), the components\' implied marginals and the scores once components resolve. Ordered by ' +
    'scenario_id, keyset-paginated.',
  tags: ['scenarios'],
  query: z.object({
    limit: z.int().min(SCENARIOS_LIMIT.min).max(SCENARIOS_LIMIT.max).default(SCENARIOS_LIMIT.default).optional(),
    cursor: z.string().max(1024).optional().meta({ description: 'The previous page\'s next_cursor.' }),
    status: z.enum(STATUSES).optional().meta({ description: 'active (a component open), resolved (every component resolved) or annulled (nothing open, a component annulled).' }),
    since: isoTimeParam.optional().meta({
      description:
        'Only scenarios with a record dated at or after this time: the record\'s as_of (its run\'s), not when it was archived ' +
        '(a run dated in the past, such as a first start\'s, archives its records under that past time).',
    }),
  }),
  response: ScenarioPage,
  errors: [400],
  cache: true,
  input: (req) => {
    const limit = queryInt(req, 'limit', SCENARIOS_LIMIT);
    const status = queryEnum(req, 'status', STATUSES) ?? null;
    const since = queryTimestamp(req, 'since');
    const raw = queryString(req, 'cursor', 1024);
    const after = raw === undefined ? null : decodeKeyset(raw, CURSOR_KIND, z.tuple([z.string().regex(SCENARIO_ID)]));
    return { limit, status, sinceUs: since ? since.epochUs.toString() : null, after: after?.[0] ?? null };
  },
  data: async (snap, { limit, status, sinceUs, after }) => {
    snap.require(...TABLES);
    const filters = { status, since_us: sinceUs === null ? null : BigInt(sinceUs) };
    const [rows, counted] = await Promise.all([
      snap.query('scenarios-page', { ...filters, after, limit: limit + 1 }),
      snap.query('scenarios-count', filters),
    ]);
    const page = rows.slice(0, limit);
    const first = page[0];
    const last = page.at(-1);
    let components = new Map<string, JsonRow[]>();
    let latest = new Map<string, z.input<typeof ScenarioRecord>[]>();
    if (first && last) {
      const range = { first: String(first.scenario_id), last: String(last.scenario_id) };
      const [c, r] = await Promise.all([snap.query('scenarios-components', range), records(snap, range.first, range.last, true)]);
      components = groupRows(c, 'scenario_id');
      latest = r;
    }
    const scenarios = page.map((s) =>
      scenario(s, components.get(String(s.scenario_id)) ?? [], latest.get(String(s.scenario_id))?.[0] ?? null),
    );
    const next = rows.length > limit && last ? encodeKeyset(CURSOR_KIND, [String(last.scenario_id)]) : null;
    return published(ScenarioPage, { scenarios, count: scenarios.length, total: int(counted[0]?.total), next_cursor: next });
  },
});

/** The current joints of one scenario: the consensus first, then each model. */
function joints(worlds: JsonRow[], marginals: JsonRow[]): z.input<typeof ScenarioJoint>[] {
  const key = (r: JsonRow) => (r.model === null || r.model === undefined ? '' : `m:${String(r.model)}`);
  const m = groupRows(marginals, key);
  return [...groupRows(worlds, key).entries()].map(([k, rows]) => ({
    model: k === '' ? null : k.slice(2),
    methods: methodsOf(rows[0]!.method),
    n_models: int(rows[0]!.n_models),
    pathway: rows.map(world),
    components: (m.get(k) ?? []).map((r) => fromColumns(ScenarioMarginal, r)),
  }));
}

/**
 * The 404 of a scenario id the snapshot does not define, naming the closest ids; for a retired one
 * (its archived records still in the snapshot) it says so, and where they are: before, it read as
 * a typo, "No scenario", though the snapshot and the export held its records (outside test: a
 * scenario taken out of its file after two runs archived it), unlike a retired thesis.
 */
async function unknownScenario(snap: PinnedSnapshot, id: string): Promise<ApiError> {
  const [[retired], defined] = await Promise.all([snap.query('scenarios-retired', { scenario_id: id }), snap.query('scenarios-ids')]);
  const ids = defined.map((r) => String(r.scenario_id));
  if (!retired) return notFoundClosest('scenario', id, 'scenario_id', ids);
  const last = String(retired.last_as_of).slice(0, 10);
  const n = int(retired.n_records);
  return ApiError.notFound(
    `Scenario '${id}' is no longer defined in this snapshot (taken out of its file, or a component is a question the warehouse does not have: the run's notes name it). ` +
      `${n === 1 ? `Its one archived record, of ${last}, is` : `Its ${n} archived records, the newest of ${last}, are`} ` +
      "in the snapshot's scenario_records and scenario_record_scores tables (GET /api/export/scenario_records/).",
    { parameter: 'scenario_id', closest: closestIds(id, ids) },
  );
}

export const scenariosDetailRoute = jsonRoute({
  id: 'scenarios.detail',
  path: '/api/scenarios/{scenario_id}/',
  summary: 'One scenario: components, the current joint, the record history and the scores',
  description:
    'One scenario (as in the list) with the current joint of the consensus and of every model (the method that ' +
    'produced it, every world most likely first, the implied marginals beside the direct forecasts and the ' +
    'coherence gap), and its archived records (one per run), newest first, with their pathway and component ' +
    'distributions and their scores as the components resolved: at most records_limit of them, the older ones ' +
    'through next_records_cursor.',
  tags: ['scenarios'],
  params: z.object({ scenario_id: z.string().regex(SCENARIO_ID).meta({ description: 'e.g. fed-2026-path' }) }),
  query: z.object(historyQuery('records', 'Archived records')),
  response: ScenarioDetail,
  errors: [400, 404],
  cache: true,
  input: (req) => ({ id: pathId(req, 'scenario_id', SCENARIO_ID, `a scenario id (${STRUCTURE_ID_GRAMMAR})`), page: historyInput(req, 'records') }),
  data: async (snap, { id, page }) => {
    snap.require(...TABLES, 'scenario_worlds', 'scenario_marginals');
    const [s] = await snap.query('scenarios-detail', { scenario_id: id });
    if (!s) throw await unknownScenario(snap, id);
    const pageOf = { first: id, last: id, latest_only: false, ...historyParams(page), per_scenario: page.limit + 1 };
    const [components, rows, worlds, marginals, latest] = await Promise.all([
      snap.query('scenarios-components', { first: id, last: id }),
      snap.query('scenarios-records', pageOf),
      snap.query('scenarios-worlds', { scenario_id: id }),
      snap.query('scenarios-marginals', { scenario_id: id }),
      // past the first page the latest record is not among the rows
      page.before ? records(snap, id, id, true) : null,
    ]);
    const history = rows.slice(0, page.limit).map(record);
    const latestRunId = str(s.latest_run_id);
    const latestRecord = (latest ? latest.get(id)?.[0] : history.find((r) => r.run_id === latestRunId)) ?? null;
    const base = scenario(s, components, latestRecord);
    return published(ScenarioDetail, {
      scenario: { ...base, current: joints(worlds, marginals), records: history, next_records_cursor: historyNext('records', rows, page.limit) },
    });
  },
});
