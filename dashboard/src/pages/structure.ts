/**
 * Theses (GET /api/clusters/: consensus beside the market consensus, with vintages), one thesis's
 * vintage history (GET /api/clusters/{thesis_id}/, whose body is { cluster, as_of }). Factors:
 * pages/factors.ts; scenarios: pages/scenarios.ts.
 */
import { get } from '../api.ts';
import type { SeriesRow } from '../charts.ts';
import { loadCharts } from '../lazy-charts.ts';
import { counted, dateTime, filterMenu, firstPageAfterFailure, listPager, firstText, h, hashHref, hashQuery, menuEntry, nothingMatches, notice, num, pager, panel, pastTheEnd, pct, tableRegion } from '../ui.ts';

/** The parts of the OpenAPI schemas Cluster and ClusterVintage the pages read (nullable as there). */
interface Vintage { run_id: string; as_of: string | null; thesis_consensus: number | null; thesis_market_consensus: number | null; brier: number | null; n_resolved: number }
interface Thesis {
  thesis_id: string; origin: string; statement: string | null; label: string | null; n_members: number; n_active: number; n_resolved: number;
  current: { consensus: number | null; market_consensus: number | null; disagreement: number | null; spread: number | null };
  members: { question_id: string; title: string | null; venue: string | null; status: string | null; sign: number; weight: number; consensus: number | null; market_probability: number | null; outcome: number | null }[];
  n_vintages: number;
  vintages: Vintage[];
}

/** Vintages the thesis page asks for: the API's largest history page (api/routes/history-page.ts). */
const VINTAGES_SHOWN = 500;

/** The theses chart's left margin, where the statements are (shortened to fit: labelAxis). */
const thesesMargin = (width: number): number => Math.min(340, width * 0.45);

/** A thesis's name: its statement, or a computed cluster's label, or its id. */
const thesisName = (t: Thesis): string => firstText(t.statement, t.label, t.thesis_id);

/** The API's thesis origins (GET /api/clusters/?origin=), offered by the page's menu. */
const ORIGINS = ['curated', 'computed'];

export async function thesesPage(root: HTMLElement): Promise<void> {
  const q = hashQuery();
  const cursor = q.get('cursor') ?? '';
  const { value: origin, entries } = menuEntry(ORIGINS, q.get('origin') ?? '');
  root.append(h('h1', {}, 'Theses'));
  root.append(filterMenu('origin', 'Origin', entries, origin, '/theses'));
  const [{ PagePlot: Plot, accessible, labelAxis, PALETTE }, r] = await Promise.all([
    loadCharts(),
    get<{ clusters: Thesis[]; total: number; next_cursor: string | null }>('clusters', {}, { limit: '30', cursor: cursor || undefined, origin: origin || undefined, vintages: '0' }),
  ]);
  if (r.kind !== 'ok') {
    root.append(notice(r, 'The theses (clusters)'), ...firstPageAfterFailure('Pages of theses', cursor, hashHref('/theses', { origin }), 'theses-results'));
    return;
  }
  const width = Math.min(760, Math.max(300, document.documentElement.clientWidth - 48));
  // One row per thesis, keyed by its id and labelled with its name (QA: keyed by the name's first
  // 48 characters, two theses whose statements began alike, "The Federal Reserve keeps cutting
  // rates through ...", were drawn on one row: four dots under one label, the second thesis unnamed).
  const names = new Map(r.body.clusters.map((t) => [t.thesis_id, thesisName(t)]));
  const rows = r.body.clusters.flatMap((t) => {
    const out: { id: string; p: number; who: string; title: string }[] = [];
    const title = (who: string, p: number) => `${thesisName(t)}: ${who} ${pct(p)}`;
    if (t.current.consensus !== null) out.push({ id: t.thesis_id, p: t.current.consensus, who: 'consensus', title: title('consensus', t.current.consensus) });
    if (t.current.market_consensus !== null) out.push({ id: t.thesis_id, p: t.current.market_consensus, who: 'market', title: title('market', t.current.market_consensus) });
    return out;
  });
  const RESULTS = 'theses-results';
  // the count names the filter it was counted under
  const title = origin ? `Theses, ${origin} (${r.body.total})` : `Theses (${r.body.total})`;
  // No thesis (none curated and none computed yet, or an origin with none): said, instead of a
  // table of headers alone (QA).
  if (r.body.clusters.length === 0) {
    root.append(panel(title, ...(cursor
      ? pastTheEnd('Pages of theses', hashHref('/theses', { origin }), RESULTS)
      : [nothingMatches(undefined, origin ? 'No thesis matches.' : 'No theses in this snapshot.')])));
    return;
  }
  const section = panel(title,
    rows.length ? h('figure', { class: 'chart', id: 'theses', 'aria-label': 'Thesis probability: consensus and market' }, accessible(Plot.plot({
      width, height: 40 + r.body.clusters.length * 22, marginLeft: thesesMargin(width), style: { fontSize: '12px' },
      x: { domain: [0, 1], label: 'thesis probability', grid: true, tickFormat: '%' }, y: { label: null, domain: [...new Set(rows.map((d) => d.id))] },
      color: { domain: ['consensus', 'market'], range: [PALETTE[0], PALETTE[1]], legend: true },
      marks: [labelAxis(thesesMargin(width), (id) => names.get(id) ?? id, 'ellipsis-middle'), Plot.dot(rows, { x: 'p', y: 'id', fill: 'who', r: 4, className: 'q-point', title: 'title' })],
    }))) : null,
    tableRegion('Theses table', h('table', { id: 'theses-table' },
      h('thead', {}, h('tr', {}, ['thesis', 'origin', 'members', 'consensus', 'market', 'disagreement'].map((c) => h('th', { scope: 'col' }, c)))),
      h('tbody', {}, r.body.clusters.map((t) => h('tr', {},
        h('td', {}, h('a', { href: `#/theses/${encodeURIComponent(t.thesis_id)}` }, thesisName(t))), h('td', {}, t.origin),
        h('td', { class: 'num' }, `${t.n_members} (${t.n_active} active, ${t.n_resolved} resolved)`), h('td', { class: 'num' }, pct(t.current.consensus)),
        h('td', { class: 'num' }, pct(t.current.market_consensus)), h('td', { class: 'num' }, num(t.current.disagreement))))))),
    listPager('Pages of theses', RESULTS, '/theses', { origin }, cursor, r.body.next_cursor));
  // After a pager link: the panel's heading (above this page's chart and table) takes focus.
  section.querySelector('h2')!.setAttribute('id', RESULTS);
  section.querySelector('h2')!.setAttribute('tabindex', '-1');
  root.append(section);
}

export async function thesisPage(root: HTMLElement, id: string | undefined): Promise<void> {
  const [{ timeline }, r] = await Promise.all([loadCharts(), get<{ cluster: Thesis; as_of: string }>('clusters.detail', { thesis_id: id ?? '' }, { vintages_limit: String(VINTAGES_SHOWN) })]);
  if (r.kind !== 'ok') {
    // A way on from a dead link (an id not in this snapshot), as a question's or a source's page
    // has (outside test: the notice alone, and only the browser's Back).
    root.append(h('h1', {}, 'Thesis'), notice(r, 'This thesis'), h('p', {}, h('a', { href: '#/theses' }, 'All theses')));
    return;
  }
  const t = r.body.cluster;
  const width = Math.min(760, Math.max(300, document.documentElement.clientWidth - 48));
  root.append(h('h1', {}, thesisName(t)), h('p', { class: 'meta' }, `${t.origin} · ${counted(t.n_members, 'member')}`));
  const rows: SeriesRow[] = [];
  for (const v of t.vintages) {
    if (v.as_of === null) continue; // a vintage with no time has no place on the time axis (the table lists it)
    if (v.thesis_consensus !== null) rows.push({ t: new Date(v.as_of), p: v.thesis_consensus, series: 'consensus' });
    if (v.thesis_market_consensus !== null) rows.push({ t: new Date(v.as_of), p: v.thesis_market_consensus, series: 'market' });
  }
  // the latest VINTAGES_SHOWN (the API's largest page; one vintage per run): said when there are more
  const shown = t.n_vintages > t.vintages.length ? h('p', { class: 'meta' }, `The latest ${t.vintages.length} of ${t.n_vintages} vintages.`) : null;
  // Nothing to draw is said as what it is: no vintage at all (and no table of headers alone), or
  // vintages frozen without a figure (every member resolved or unforecast), which the table lists
  // (QA: "No vintage yet." above a table of four vintages).
  const chart = rows.length
    ? h('figure', { class: 'chart', id: 'vintages', 'aria-label': 'Vintages: thesis consensus and market over time' }, timeline(rows, ['consensus', 'market'], width))
    : t.vintages.length === 0
      ? nothingMatches(undefined, 'No vintage yet: each run freezes one.')
      : nothingMatches(undefined, `None of its ${t.vintages.length} vintages has a consensus or a market consensus to draw: none of its members had a consensus when each was frozen.`);
  root.append(panel('Vintages', shown, chart,
    t.vintages.length === 0 ? null : tableRegion('Vintages table', h('table', { id: 'thesis-vintages' }, h('thead', {}, h('tr', {}, ['as of (UTC)', 'consensus', 'market', 'resolved', 'Brier'].map((c) => h('th', { scope: 'col' }, c)))),
      h('tbody', {}, t.vintages.map((v) => h('tr', {}, h('td', {}, dateTime(v.as_of)), h('td', { class: 'num' }, pct(v.thesis_consensus)), h('td', { class: 'num' }, pct(v.thesis_market_consensus)), h('td', { class: 'num' }, v.n_resolved), h('td', { class: 'num' }, num(v.brier)))))))));
  root.append(panel('Members', h('ul', { id: 'thesis-members' }, t.members.map((m) => h('li', {}, h('a', { href: `#/questions/${encodeURIComponent(m.question_id)}` }, firstText(m.title, m.question_id)),
    // a member weighted other than 1 says so: the thesis consensus is a weighted mean (outside test: agi-soon's member of weight 2 read like the others)
    ` · ${m.venue ?? '–'} · ${m.status ?? '–'}${m.sign < 0 ? ' · counts against' : ''}${m.weight !== 1 ? ` · weight ${m.weight}` : ''} · consensus ${pct(m.consensus)} · market ${pct(m.market_probability)}`)))));
}
