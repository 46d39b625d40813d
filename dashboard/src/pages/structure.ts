/**
 * Theses (GET /api/clusters/: consensus beside the market consensus, with vintages), one thesis's
 * vintage history. Factors: pages/factors.ts; scenarios: pages/scenarios.ts.
 */
import { get } from '../api.ts';
import type { SeriesRow } from '../charts.ts';
import { loadCharts } from '../lazy-charts.ts';
import { h, hashHref, hashQuery, notice, num, panel, pct } from '../ui.ts';

interface Vintage { run_id: string; as_of: string; thesis_consensus: number | null; thesis_market_consensus: number | null; brier: number | null; n_resolved: number }
interface Thesis {
  thesis_id: string; origin: string; statement: string | null; label: string | null; n_members: number; n_active: number; n_resolved: number;
  current: { consensus: number | null; market_consensus: number | null; disagreement: number | null; spread: number | null } | null;
  members: { question_id: string; title: string; venue: string; status: string; sign: number; consensus: number | null; market_probability: number | null; outcome: number | null }[];
  vintages?: Vintage[];
}

export async function thesesPage(root: HTMLElement): Promise<void> {
  const q = hashQuery();
  const cursor = q.get('cursor') ?? '';
  const origin = q.get('origin') ?? '';
  root.append(h('h1', {}, 'Theses'));
  const [{ PagePlot: Plot, accessible, PALETTE }, r] = await Promise.all([
    loadCharts(),
    get<{ clusters: Thesis[]; total: number; next_cursor: string | null }>('clusters', {}, { limit: '30', cursor: cursor || undefined, origin: origin || undefined, vintages: '0' }),
  ]);
  if (r.kind !== 'ok') {
    root.append(notice(r, 'The theses (clusters)'));
    return;
  }
  const width = Math.min(760, Math.max(300, document.documentElement.clientWidth - 48));
  const rows = r.body.clusters.flatMap((t) => {
    const label = (t.statement ?? t.label ?? t.thesis_id).slice(0, 48);
    const out: { label: string; p: number; who: string }[] = [];
    if (t.current?.consensus !== null && t.current?.consensus !== undefined) out.push({ label, p: t.current.consensus, who: 'consensus' });
    if (t.current?.market_consensus !== null && t.current?.market_consensus !== undefined) out.push({ label, p: t.current.market_consensus, who: 'market' });
    return out;
  });
  root.append(panel(`Theses (${r.body.total})`,
    rows.length ? h('figure', { class: 'chart', id: 'theses' }, accessible(Plot.plot({
      width, height: 40 + r.body.clusters.length * 22, marginLeft: Math.min(260, width / 2.4), style: { fontSize: '12px' },
      x: { domain: [0, 1], label: 'thesis probability', grid: true, tickFormat: '%' }, y: { label: null },
      color: { domain: ['consensus', 'market'], range: [PALETTE[0], PALETTE[1]], legend: true },
      marks: [Plot.dot(rows, { x: 'p', y: 'label', fill: 'who', r: 4, className: 'q-point' })],
    }))) : null,
    h('div', { class: 'table-wrap' }, h('table', { id: 'theses-table' },
      h('thead', {}, h('tr', {}, ['thesis', 'origin', 'members', 'consensus', 'market', 'disagreement'].map((c) => h('th', { scope: 'col' }, c)))),
      h('tbody', {}, r.body.clusters.map((t) => h('tr', {},
        h('td', {}, h('a', { href: `#/theses/${encodeURIComponent(t.thesis_id)}` }, t.statement ?? t.label ?? t.thesis_id)), h('td', {}, t.origin),
        h('td', { class: 'num' }, `${t.n_members} (${t.n_active} active, ${t.n_resolved} resolved)`), h('td', { class: 'num' }, pct(t.current?.consensus)),
        h('td', { class: 'num' }, pct(t.current?.market_consensus)), h('td', { class: 'num' }, num(t.current?.disagreement))))))),
    h('nav', { class: 'pager', 'aria-label': 'Pages' },
      cursor ? h('a', { href: hashHref('/theses', { origin }) }, '« First page') : '',
      r.body.next_cursor ? h('a', { href: hashHref('/theses', { origin, cursor: r.body.next_cursor }), rel: 'next' }, 'Next page »') : '')));
}

export async function thesisPage(root: HTMLElement, id: string | undefined): Promise<void> {
  const [{ timeline }, r] = await Promise.all([loadCharts(), get<{ thesis?: Thesis } & Thesis>('clusters.detail', { thesis_id: id ?? '' })]);
  if (r.kind !== 'ok') {
    root.append(h('h1', {}, 'Thesis'), notice(r, 'This thesis'));
    return;
  }
  const t: Thesis = r.body.thesis ?? r.body;
  const width = Math.min(760, Math.max(300, document.documentElement.clientWidth - 48));
  root.append(h('h1', {}, t.statement ?? t.label ?? t.thesis_id), h('p', { class: 'meta' }, `${t.origin} · ${t.n_members} members`));
  const rows: SeriesRow[] = [];
  for (const v of t.vintages ?? []) {
    if (v.thesis_consensus !== null) rows.push({ t: new Date(v.as_of), p: v.thesis_consensus, series: 'consensus' });
    if (v.thesis_market_consensus !== null) rows.push({ t: new Date(v.as_of), p: v.thesis_market_consensus, series: 'market' });
  }
  root.append(panel('Vintages', rows.length ? h('figure', { class: 'chart', id: 'vintages' }, timeline(rows, ['consensus', 'market'], width)) : h('p', {}, 'No vintage yet.'),
    h('div', { class: 'table-wrap' }, h('table', {}, h('thead', {}, h('tr', {}, ['as of', 'consensus', 'market', 'resolved', 'Brier'].map((c) => h('th', { scope: 'col' }, c)))),
      h('tbody', {}, (t.vintages ?? []).map((v) => h('tr', {}, h('td', {}, v.as_of.slice(0, 10)), h('td', { class: 'num' }, pct(v.thesis_consensus)), h('td', { class: 'num' }, pct(v.thesis_market_consensus)), h('td', { class: 'num' }, v.n_resolved), h('td', { class: 'num' }, num(v.brier)))))))));
  root.append(panel('Members', h('ul', {}, t.members.map((m) => h('li', {}, h('a', { href: `#/questions/${encodeURIComponent(m.question_id)}` }, m.title),
    ` · ${m.venue} · ${m.status}${m.sign < 0 ? ' · counts against' : ''} · consensus ${pct(m.consensus)} · market ${pct(m.market_probability)}`)))));
}
