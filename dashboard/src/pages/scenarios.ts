/**
 * Scenarios (GET /api/scenarios/): each scenario's pathway, its components in order with the
 * consensus' implied marginal beside the models' direct forecasts, and the pathway distribution of
 * its latest archived record as bars (the worlds most likely first, each world read as the
 * components' outcomes), with the record's scores once its components resolve.
 */
import { get } from '../api.ts';
import { loadCharts, type Charts } from '../lazy-charts.ts';
import { counted, dateTime, filterMenu, firstPageAfterFailure, listPager, firstText, h, hashHref, hashQuery, menuEntry, minus, nothingMatches, notice, num, pager, panel, pastTheEnd, pct, signedPoints, tableRegion } from '../ui.ts';

interface Component { ord: number; question_id: string; label: string | null; title: string | null; status: string | null; outcome: number | null; implied: number | null; direct: number | null; coherence_gap: number | null }
interface World { world: string; probability: number | null; rank: number; consistent: boolean | null; disagreement_sd?: number | null }
interface Record {
  run_id: string; as_of: string | null; complete: boolean; realized_world: string | null; log_score: number | null; brier: number | null; component_brier: number | null; consistent_mass: number | null; pathway: World[];
  n_models?: number; methods?: string[]; top_world?: string | null; top_probability?: number | null; n_resolved?: number; resolved_pattern?: string | null; partial_log_score?: number | null;
}
/** A current joint of the scenario detail: the consensus (model null) or one model's. */
interface Joint { model: string | null; methods: string[]; n_models: number; pathway: World[] }
interface ScenarioDetail extends Scenario { current: Joint[]; records: Record[]; next_records_cursor: string | null }
interface Scenario {
  scenario_id: string; title: string | null; description: string | null; status: string; n_components: number; n_resolved: number;
  n_models: number; n_records: number; components: Component[]; latest_record: Record | null;
}

/** Top worlds shown per scenario. */
const TOP_WORLDS = 8;

/** '101' → 'YES · NO · YES' in pathway order. */
function readWorld(world: string): string {
  return [...world].map((d) => (d === '1' ? 'YES' : 'NO')).join(' · ');
}

/**
 * A record's resolved components in pathway order, '1-0' → 'YES · open · NO', or 'none' while no
 * component has resolved (outside test: the record history showed the API's raw pattern, "---").
 */
function readResolved(pattern: string | null | undefined): string {
  if (!pattern) return '–';
  if (!/[01]/.test(pattern)) return 'none';
  return [...pattern].map((d) => (d === '1' ? 'YES' : d === '0' ? 'NO' : 'open')).join(' · ');
}

function pathwayChart({ PagePlot: Plot, accessible, labelAxis, PALETTE }: Charts, r: Pick<Record, 'pathway'>, width: number): Element {
  const rows = r.pathway
    .filter((w) => w.probability !== null)
    .slice(0, TOP_WORLDS)
    .map((w) => ({ label: `${w.world}  ${readWorld(w.world)}`, p: w.probability!, status: w.consistent === false ? 'ruled out' : 'possible' }));
  const marginLeft = Math.min(260, width / 2.3);
  return accessible(Plot.plot({
    width, height: 40 + rows.length * 22, marginLeft, style: { fontSize: '12px' },
    x: { domain: [0, Math.max(0.05, ...rows.map((d) => d.p))], label: 'probability of the world (consensus joint)', grid: true, tickFormat: '%' },
    y: { label: null, domain: rows.map((d) => d.label) },
    color: { domain: ['possible', 'ruled out'], range: [PALETTE[0], '#999999'], legend: true },
    // each bar's figure in its tooltip, and so in the chart's figures under it (QA: no bar had one)
    marks: [labelAxis(marginLeft), Plot.barX(rows, { x: 'p', y: 'label', fill: 'status', className: 'q-point', title: (d: { label: string; p: number; status: string }) => `${d.label}: ${pct(d.p)} (${d.status})` })],
  }));
}

/**
 * The scenarios' names on a page: the title, or the id; with the id added to a title another
 * scenario of the page shares, so that their sections and tables have names of their own (outside
 * test: two scenarios of one title were two regions of one name).
 */
function scenarioNames(list: readonly Scenario[]): Map<string, string> {
  const titles = new Map<string, number>();
  for (const s of list) if (s.title) titles.set(s.title, (titles.get(s.title) ?? 0) + 1);
  return new Map(list.map((s) => [s.scenario_id, s.title && titles.get(s.title)! > 1 ? `${s.title} (${s.scenario_id})` : firstText(s.title, s.scenario_id)]));
}

/** The components in pathway order: each question, its status, the consensus' implied marginal beside the direct forecast. */
function componentsTable(s: Scenario, name: string): HTMLElement {
  return tableRegion(`Components of ${name}`, h('table', { class: 'scenario-components' },
    h('thead', {}, h('tr', {}, ['step', 'question', 'status', 'implied', 'direct', 'gap (implied − direct)'].map((c) => h('th', { scope: 'col' }, c)))),
    h('tbody', {}, s.components.map((c) => h('tr', {},
      h('td', { class: 'num' }, c.ord),
      h('td', {}, h('a', { href: `#/questions/${encodeURIComponent(c.question_id)}` }, firstText(c.label, c.title, c.question_id))),
      h('td', {}, c.outcome === null ? (c.status ?? '') : `resolved ${c.outcome === 1 ? 'YES' : 'NO'}`),
      h('td', { class: 'num' }, pct(c.implied)), h('td', { class: 'num' }, pct(c.direct)), h('td', { class: 'num' }, signedPoints(c.coherence_gap)))))));
}

/** A record's scores in words: on the realized world once complete, else the mass it gave the worlds still possible. */
function scoresText(s: Scenario, r: Record | null): HTMLElement | null {
  if (r?.complete) return h('p', { class: 'meta' }, `Scored on the world that came true (${r.realized_world}): log score ${minus(num(r.log_score))}, Brier ${num(r.brier)}, component Brier ${num(r.component_brier)}.`);
  if (r && r.consistent_mass !== null) return h('p', { class: 'meta' }, `${s.n_resolved} of ${s.n_components} components resolved: the record gave the worlds still possible ${pct(r.consistent_mass)}.`);
  return null;
}

function scenarioPanel(charts: Charts, s: Scenario, name: string, width: number): HTMLElement {
  const r = s.latest_record;
  const section = panel(name,
    h('p', {}, s.description ?? '', ` (${s.status}; ${counted(s.n_records, 'archived record')}: `,
      h('a', { href: `#/scenarios/${encodeURIComponent(s.scenario_id)}` }, 'joints and record history'), ')'),
    componentsTable(s, name),
    r && r.pathway.length
      ? h('figure', { class: 'chart', id: `pathway-${s.scenario_id}`, 'aria-label': `Worlds of ${name}, most likely first: the latest archived record` }, pathwayChart(charts, r, width))
      : h('p', {}, 'No archived record yet: a record is made once the models have forecast every component.'),
    scoresText(s, r));
  section.dataset.scenario = s.scenario_id;
  return section;
}

/** The API's scenario statuses (GET /api/scenarios/?status=), offered by the page's menu. */
const STATUSES = ['active', 'resolved', 'annulled'];

export async function scenariosPage(root: HTMLElement): Promise<void> {
  const q = hashQuery();
  const cursor = q.get('cursor') ?? '';
  const { value: status, entries } = menuEntry(STATUSES, q.get('status') ?? '');
  // After a pager link, focus and the scroll go to the heading: the new page's scenarios follow it.
  root.append(h('h1', { id: 'scenarios-results', tabindex: -1 }, 'Scenarios'));
  root.append(filterMenu('status', 'Status', entries, status, '/scenarios'));
  const [charts, r] = await Promise.all([
    loadCharts(),
    get<{ scenarios: Scenario[]; total: number; next_cursor: string | null }>('scenarios', {}, { limit: '20', cursor: cursor || undefined, status: status || undefined }),
  ]);
  if (r.kind !== 'ok') {
    root.append(notice(r, 'Scenarios and their pathways'), ...firstPageAfterFailure('Pages of scenarios', cursor, hashHref('/scenarios', { status }), 'scenarios-results'));
    return;
  }
  const width = Math.min(760, Math.max(300, document.documentElement.clientWidth - 48));
  if (r.body.scenarios.length === 0) {
    root.append(...(cursor
      ? pastTheEnd('Pages of scenarios', hashHref('/scenarios', { status }), 'scenarios-results')
      : [nothingMatches(undefined, status ? 'No scenario matches.' : 'No scenarios in this snapshot.')]));
    return;
  }
  root.append(h('p', { class: 'meta' }, `${counted(r.body.total, `${status ? `${status} ` : ''}scenario`)}. A world lists its components' outcomes in pathway order.`));
  const names = scenarioNames(r.body.scenarios);
  for (const s of r.body.scenarios) root.append(scenarioPanel(charts, s, names.get(s.scenario_id)!, width));
  root.append(listPager('Pages of scenarios', 'scenarios-results', '/scenarios', { status }, cursor, r.body.next_cursor));
}

/** The record history's page size (the API's records_limit). */
const RECORDS_PAGE = '25';

/** Each current joint (the consensus first, then each model's): the method that produced it and its most likely world. */
function jointsTable(d: ScenarioDetail): HTMLElement {
  return tableRegion('Current joints', h('table', { id: 'scenario-joints' },
    h('thead', {}, h('tr', {}, ['joint', 'method', 'most likely world', 'its probability'].map((c) => h('th', { scope: 'col' }, c)))),
    h('tbody', {}, d.current.map((j) => {
      const top = j.pathway[0];
      return h('tr', {}, h('td', {}, j.model ?? `consensus (mean of ${counted(j.n_models, 'model')})`), h('td', {}, j.methods.join(', ') || '–'),
        h('td', {}, top ? `${top.world}  ${readWorld(top.world)}` : '–'), h('td', { class: 'num' }, pct(top?.probability)));
    }))));
}

/** The consensus joint's every world, most likely first, with the models' disagreement on it and whether it is still possible. */
function worldsTable(j: Joint): HTMLElement {
  return tableRegion('Worlds of the consensus joint', h('table', { id: 'scenario-worlds' },
    h('thead', {}, h('tr', {}, ['rank', 'world', 'outcomes', 'probability', 'disagreement (sd)', 'still possible'].map((c) => h('th', { scope: 'col' }, c)))),
    h('tbody', {}, j.pathway.map((w) => h('tr', {}, h('td', { class: 'num' }, w.rank), h('td', {}, w.world), h('td', {}, readWorld(w.world)),
      h('td', { class: 'num' }, pct(w.probability)), h('td', { class: 'num' }, pct(w.disagreement_sd)), h('td', {}, w.consistent === null ? '–' : w.consistent ? 'yes' : 'no'))))));
}

/**
 * The archived records, newest first: how the scenario's record and its scores moved with the
 * record's date (issue 13): its most likely world, the components resolved, the mass it gave the
 * worlds still possible, and once complete its log score and Brier.
 */
function historyTable(records: Record[]): HTMLElement {
  return tableRegion('Record history', h('table', { id: 'scenario-records' },
    h('thead', {}, h('tr', {}, ['as of (UTC)', 'most likely world', 'resolved so far', 'still possible', 'log score', 'Brier', 'component Brier'].map((c) => h('th', { scope: 'col' }, c)))),
    h('tbody', {}, records.map((r) => h('tr', {}, h('td', { class: 'date' }, dateTime(r.as_of)),
      h('td', {}, r.top_world ? `${r.top_world} (${pct(r.top_probability)})` : '–'), h('td', {}, readResolved(r.resolved_pattern)),
      h('td', { class: 'num' }, pct(r.consistent_mass)), h('td', { class: 'num' }, r.complete ? minus(num(r.log_score)) : '–'),
      h('td', { class: 'num' }, r.complete ? num(r.brier) : '–'), h('td', { class: 'num' }, num(r.component_brier)))))));
}

/** One scenario (#/scenarios/<id>): its components, its current joints and worlds, and its record history, paged by the API's records cursor. */
export async function scenarioPage(root: HTMLElement, id: string | undefined): Promise<void> {
  const cursor = hashQuery().get('records_cursor') ?? '';
  const [charts, r] = await Promise.all([loadCharts(),
    get<{ scenario: ScenarioDetail }>('scenarios.detail', { scenario_id: id ?? '' }, { records_limit: RECORDS_PAGE, records_cursor: cursor || undefined })]);
  if (r.kind !== 'ok') {
    root.append(h('h1', {}, `Scenario ${id ?? ''}`), notice(r, 'This scenario'),
      ...firstPageAfterFailure('Pages of records', cursor, hashHref(`/scenarios/${encodeURIComponent(id ?? '')}`), 'records-results'),
      h('p', {}, h('a', { href: '#/scenarios' }, 'All scenarios')));
    return;
  }
  const d = r.body.scenario;
  const name = firstText(d.title, d.scenario_id);
  const width = Math.min(760, Math.max(300, document.documentElement.clientWidth - 48));
  const consensus = d.current.find((j) => j.model === null);
  root.append(h('h1', {}, name), h('p', { class: 'meta', id: 'scenario-meta' },
    `${d.scenario_id} · ${d.status} · ${counted(d.n_components, 'component')}, ${d.n_resolved} resolved · ${counted(d.n_records, 'archived record')}`),
  d.description ? h('p', {}, d.description) : '');
  root.append(panel('Components', componentsTable(d, name)));
  root.append(panel('The joint now',
    d.current.length ? jointsTable(d) : nothingMatches(undefined, 'No joint yet: the models have not forecast every component.'),
    consensus && consensus.pathway.length
      ? [h('figure', { class: 'chart', id: `pathway-${d.scenario_id}`, 'aria-label': `Worlds of ${name}, most likely first: the consensus joint` }, pathwayChart(charts, { pathway: consensus.pathway }, width)), worldsTable(consensus)]
      : null));
  const history = panel('Record history',
    d.records.length ? historyTable(d.records) : nothingMatches(undefined, cursor ? 'This page is past the end of the list.' : 'No archived record yet.'),
    scoresText(d, d.latest_record),
    listPager('Pages of records', 'records-results', `/scenarios/${encodeURIComponent(d.scenario_id)}`, {}, cursor, d.next_records_cursor, 'records_cursor', ['« Newest records', 'Older records »']));
  history.querySelector('h2')!.setAttribute('id', 'records-results');
  history.querySelector('h2')!.setAttribute('tabindex', '-1');
  root.append(history, h('p', {}, h('a', { href: '#/scenarios' }, 'All scenarios')));
}
