/**
 * Factors (GET /api/factors/ and /api/factors/health/): the system's status with its reasons and
 * checks, then each anchor factor as its tree (factor → drivers → sub-drivers) with a health
 * badge, each node's level (the signed log-odds mean of its leaves' consensus) beside the market's
 * and its change since the previous run, and the leaves linked to their question pages.
 */
import { get } from '../api.ts';
import { loadCharts, type Charts } from '../lazy-charts.ts';
import { counted, firstPageAfterFailure, listPager, h, hashHref, hashQuery, nothingMatches, notice, num, pager, panel, pct, signedPoints, tableRegion } from '../ui.ts';

interface Levels { level: number | null; change: number | null; market_level: number | null; n_leaves: number; n_with_consensus: number }
interface Node extends Levels { node_id: string; name: string; depth: number; leaves: string[]; children: string[] }
interface Leaf { question_id: string; title: string | null; sign: number; origin: string; consensus: number | null; market_probability: number | null; status: string | null }
interface Factor extends Levels { factor_id: string; name: string; statement: string; n_levels: number; drivers: Node[]; leaves: Leaf[] }
interface Check { check: string; status: string; value: number | null; degraded_at: number | null; failing_at: number | null; detail: string | null }
interface FactorHealth {
  factor_id: string; status: string; reasons: string[]; coverage: number | null; n_active: number; stale_leaves: unknown[];
  n_scored: number; brier: number | null; market_brier: number | null; disagreement: number | null; market_share: number | null; n_contradictions: number;
}
interface Health { status: string; reasons: string[]; checks: Check[]; factors: FactorHealth[] }

/** A status word as a badge; its colour and its text both say it. */
function badge(status: string): HTMLElement {
  return h('span', { class: `status status-${status.replace(/[^a-z]/gi, '')}` }, status);
}

/** "+3.2 pp" / "−1.0 pp" / "0.0 pp" / "–". */
const change = (x: number | null): string => signedPoints(x, 'pp');

function systemPanel(health: Health): HTMLElement {
  return panel('System health',
    h('p', { id: 'system-status' }, badge(health.status), health.reasons.length ? '' : ' every check is ok'),
    health.reasons.length ? h('ul', {}, health.reasons.map((r) => h('li', {}, r))) : null,
    tableRegion('System checks', h('table', { id: 'system-checks' },
      h('thead', {}, h('tr', {}, ['check', 'status', 'value', 'degraded at', 'failing at', 'detail'].map((c) => h('th', { scope: 'col' }, c)))),
      h('tbody', {}, health.checks.map((c) => h('tr', {},
        h('td', {}, c.check), h('td', {}, badge(c.status)), h('td', { class: 'num' }, num(c.value, 2)),
        h('td', { class: 'num' }, num(c.degraded_at, 2)), h('td', { class: 'num' }, num(c.failing_at, 2)), h('td', {}, c.detail ?? '')))))));
}

/** Each node's level and the market's, one row per node, indented by depth. */
function levelsChart({ PagePlot: Plot, accessible, labelAxis, PALETTE }: Charts, f: Factor, width: number): Element {
  // One row per node, keyed by its id and labelled with its name (QA: keyed by the name, two
  // sub-drivers of one name under different drivers were drawn on one row, their dots mixed).
  const nodes = [{ key: `factor:${f.factor_id}`, label: f.name, ...f }, ...f.drivers.map((d) => ({ key: `node:${d.node_id}`, label: `${'· '.repeat(d.depth)}${d.name}`, ...d }))];
  const labels = new Map(nodes.map((n) => [n.key, n.label]));
  const dots = nodes.flatMap((n) => [
    ...(n.level === null ? [] : [{ key: n.key, p: n.level, who: 'AI consensus', title: `${n.name}: AI consensus ${pct(n.level)}` }]),
    ...(n.market_level === null ? [] : [{ key: n.key, p: n.market_level, who: 'market', title: `${n.name}: market ${pct(n.market_level)}` }]),
  ]);
  const marginLeft = Math.min(300, width / 2.5);
  return accessible(Plot.plot({
    width, height: 40 + nodes.length * 22, marginLeft, style: { fontSize: '12px' },
    x: { domain: [0, 1], label: 'level (toward the statement)', grid: true, tickFormat: '%' },
    y: { label: null, domain: nodes.map((n) => n.key) },
    color: { domain: ['AI consensus', 'market'], range: [PALETTE[0], PALETTE[1]], legend: true },
    marks: [labelAxis(marginLeft, (key) => labels.get(key) ?? key), Plot.ruleX([0.5], { stroke: '#999', strokeDasharray: '3,3' }),
      Plot.dot(dots, { x: 'p', y: 'key', fill: 'who', symbol: 'who', r: 4, className: 'q-point', title: 'title' })],
  }));
}

function treeTable(f: Factor): HTMLElement {
  const rows = [{ ...f, node_id: f.factor_id, depth: 0 }, ...f.drivers];
  return tableRegion(`Tree of ${f.name}`, h('table', { class: 'factor-tree' },
    h('thead', {}, h('tr', {}, ['node', 'level', 'change', 'market', 'leaves (with consensus)'].map((c) => h('th', { scope: 'col' }, c)))),
    h('tbody', {}, rows.map((n) => h('tr', { 'data-depth': String(n.depth) },
      h('td', { class: `depth-${n.depth}` }, n.name), h('td', { class: 'num' }, pct(n.level)), h('td', { class: 'num' }, change(n.change)),
      h('td', { class: 'num' }, pct(n.market_level)), h('td', { class: 'num' }, `${n.n_leaves} (${n.n_with_consensus})`))))));
}

/**
 * The levels chart, or what stands in for it when no node has a level or a market level to draw
 * (QA: a factor whose rules attached no question yet, as on a new deployment, was drawn as empty
 * axes under an empty "0 questions" list).
 */
function levelsFigure(charts: Charts, f: Factor, width: number): HTMLElement {
  if ([f, ...f.drivers].some((n) => n.level !== null || n.market_level !== null)) {
    return h('figure', { class: 'chart', id: `factor-${f.factor_id}`, 'aria-label': `Levels of ${f.name} and its drivers: AI consensus and market` }, levelsChart(charts, f, width));
  }
  return nothingMatches(undefined, f.leaves.length === 0
    ? 'No question is attached to this factor yet: nothing to draw.'
    : 'No node of this factor has a level yet: none of its questions has a consensus or a market price.');
}

function factorPanel(charts: Charts, f: Factor, health: FactorHealth | undefined, width: number): HTMLElement {
  const leaves = f.leaves.length === 0 ? null : h('details', {}, h('summary', {}, counted(f.leaves.length, 'question')),
    h('ul', {}, f.leaves.map((l) => h('li', {}, h('a', { href: `#/questions/${encodeURIComponent(l.question_id)}` }, l.title ?? l.question_id),
      ` · ${l.status ?? ''}${l.sign < 0 ? ' · counts against' : ''}${l.origin === 'rule' ? ' · attached by a rule' : ''} · consensus ${pct(l.consensus)} · market ${pct(l.market_probability)}`))));
  const healthLine = health
    ? h('p', { class: 'meta' },
      `coverage ${pct(health.coverage, 0)} · ${health.stale_leaves.length} stale · ${health.n_contradictions} contradictions · disagreement ${num(health.disagreement)}`,
      // nothing resolved yet: said, not "Brier – vs market – on 0 resolved" (outside test)
      health.n_scored === 0 ? ' · no resolved question scored yet' : ` · Brier ${num(health.brier)} vs market ${num(health.market_brier)} on ${health.n_scored} resolved`)
    : null;
  const section = panel(f.name,
    h('p', {}, health ? badge(health.status) : '', ` ${f.statement}: ${pct(f.level)} (${f.change === null ? 'no change to show since the previous run' : `${change(f.change)} since the previous run`}; market ${pct(f.market_level)})`),
    health?.reasons.length ? h('ul', { class: 'reasons' }, health.reasons.map((r) => h('li', {}, r))) : null,
    healthLine,
    levelsFigure(charts, f, width),
    treeTable(f),
    leaves);
  section.dataset.factor = f.factor_id;
  return section;
}

/** Factors per page; more are paged through the API's cursor (in the URL). */
const FACTORS_PER_PAGE = 200;

export async function factorsPage(root: HTMLElement): Promise<void> {
  const cursor = hashQuery().get('cursor') ?? '';
  // After a pager link, focus and the scroll go to the heading: the new page's factors follow it.
  root.append(h('h1', { id: 'factors-results', tabindex: -1 }, 'Factors'));
  const [charts, list, health] = await Promise.all([
    loadCharts(),
    get<{ factors: Factor[]; total: number; next_cursor: string | null }>('factors', {}, { limit: String(FACTORS_PER_PAGE), cursor: cursor || undefined }),
    get<Health>('factors.health'),
  ]);
  if (health.kind === 'ok') root.append(systemPanel(health.body));
  else root.append(notice(health, 'The health view'));
  if (list.kind !== 'ok') {
    root.append(notice(list, 'The factors'), ...firstPageAfterFailure('Pages of factors', cursor, hashHref('/factors'), 'factors-results'));
    return;
  }
  const width = Math.min(760, Math.max(300, document.documentElement.clientWidth - 48));
  const byId = new Map((health.kind === 'ok' ? health.body.factors : []).map((x) => [x.factor_id, x]));
  if (list.body.factors.length === 0) root.append(nothingMatches(undefined, cursor ? 'No more factors.' : 'No factors in this snapshot.'));
  // More factors than one page: said, and paged (QA: the first 200 were shown and the rest dropped silently).
  const paged = cursor !== '' || list.body.next_cursor !== null;
  if (paged && list.body.factors.length) root.append(h('p', { class: 'meta', id: 'factors-count' }, `This page: ${list.body.factors.length} of ${list.body.total} factors.`));
  for (const f of list.body.factors) root.append(factorPanel(charts, f, byId.get(f.factor_id), width));
  if (paged) {
    root.append(listPager('Pages of factors', 'factors-results', '/factors', {}, cursor, list.body.next_cursor));
  }
}
