/**
 * Scenarios (GET /api/scenarios/): each scenario's pathway, its components in order with the
 * consensus' implied marginal beside the models' direct forecasts, and the pathway distribution of
 * its latest archived record as bars (the worlds most likely first, each world read as the
 * components' outcomes), with the record's scores once its components resolve.
 */
import { get } from '../api.ts';
import { loadCharts, type Charts } from '../lazy-charts.ts';
import { counted, filterMenu, firstPageAfterFailure, firstText, h, hashHref, hashQuery, menuEntry, navLink, nothingMatches, notice, num, pager, panel, pastTheEnd, pct, signedPoints, tableRegion } from '../ui.ts';

interface Component { ord: number; question_id: string; label: string | null; title: string | null; status: string | null; outcome: number | null; implied: number | null; direct: number | null; coherence_gap: number | null }
interface World { world: string; probability: number | null; rank: number; consistent: boolean | null }
interface Record { run_id: string; as_of: string | null; complete: boolean; realized_world: string | null; log_score: number | null; brier: number | null; component_brier: number | null; consistent_mass: number | null; pathway: World[] }
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

function pathwayChart({ PagePlot: Plot, accessible, labelAxis, PALETTE }: Charts, r: Record, width: number): Element {
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
    marks: [labelAxis(marginLeft), Plot.barX(rows, { x: 'p', y: 'label', fill: 'status', className: 'q-point' })],
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

function scenarioPanel(charts: Charts, s: Scenario, name: string, width: number): HTMLElement {
  const r = s.latest_record;
  const scores = r?.complete
    ? h('p', { class: 'meta' }, `Scored on the world that came true (${r.realized_world}): log score ${num(r.log_score)}, Brier ${num(r.brier)}, component Brier ${num(r.component_brier)}.`)
    : r && r.consistent_mass !== null
      ? h('p', { class: 'meta' }, `${s.n_resolved} of ${s.n_components} components resolved: the record gave the worlds still possible ${pct(r.consistent_mass)}.`)
      : null;
  const section = panel(name,
    h('p', {}, s.description ?? '', ` (${s.status}; ${counted(s.n_records, 'archived record')})`),
    tableRegion(`Components of ${name}`, h('table', { class: 'scenario-components' },
      h('thead', {}, h('tr', {}, ['step', 'question', 'status', 'implied', 'direct', 'gap (implied − direct)'].map((c) => h('th', { scope: 'col' }, c)))),
      h('tbody', {}, s.components.map((c) => h('tr', {},
        h('td', { class: 'num' }, c.ord),
        h('td', {}, h('a', { href: `#/questions/${encodeURIComponent(c.question_id)}` }, firstText(c.label, c.title, c.question_id))),
        h('td', {}, c.outcome === null ? (c.status ?? '') : `resolved ${c.outcome === 1 ? 'YES' : 'NO'}`),
        h('td', { class: 'num' }, pct(c.implied)), h('td', { class: 'num' }, pct(c.direct)), h('td', { class: 'num' }, signedPoints(c.coherence_gap))))))),
    r && r.pathway.length
      ? h('figure', { class: 'chart', id: `pathway-${s.scenario_id}` }, pathwayChart(charts, r, width))
      : h('p', {}, 'No archived record yet: a record is made once the models have forecast every component.'),
    scores);
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
  root.append(pager('Pages of scenarios',
    cursor ? navLink(hashHref('/scenarios', { status }), 'scenarios-results', true, {}, '« First page') : '',
    r.body.next_cursor ? navLink(hashHref('/scenarios', { status, cursor: r.body.next_cursor }), 'scenarios-results', true, { rel: 'next' }, 'Next page »') : ''));
}
