/**
 * Theses (GET /api/clusters/: consensus beside the market consensus, with vintages), one thesis's
 * vintage history, and the scenarios page, which shows "not available yet" while the server has no
 * such endpoint, and a plain table of what the endpoint returns once it lands (its pathway bars
 * from the first distribution of each item). Factors: pages/factors.ts.
 */
import * as Plot from '@observablehq/plot';
import { get, hasRoute } from '../api.ts';
import { accessible, timeline, type SeriesRow } from '../charts.ts';
import { h, hashHref, hashQuery, notice, num, panel, pct, PALETTE } from '../ui.ts';

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
  const r = await get<{ clusters: Thesis[]; total: number; next_cursor: string | null }>('clusters', {}, { limit: '30', cursor: cursor || undefined, origin: origin || undefined, vintages: '0' });
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
  const r = await get<{ thesis?: Thesis } & Thesis>('clusters.detail', { thesis_id: id ?? '' });
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

/** A status word (ok, degraded, failing, …) as a badge; its colour and its text both say it. */
function badge(status: string): HTMLElement {
  return h('span', { class: `status status-${status.replace(/[^a-z]/gi, '')}` }, status);
}

const LABEL_KEYS = ['label', 'world', 'name', 'title', 'id', 'component'];
const PROB_KEYS = ['probability', 'p', 'consensus', 'share'];

/** An array of {label-ish, probability-ish} objects (a pathway or component distribution), as bars. */
function distribution(rows: Record<string, unknown>[], width: number): Element | null {
  const lk = LABEL_KEYS.find((k) => rows.every((r) => r[k] !== undefined));
  const pk = PROB_KEYS.find((k) => rows.every((r) => typeof r[k] === 'number' && (r[k] as number) >= 0 && (r[k] as number) <= 1));
  if (!lk || !pk || rows.length === 0) return null;
  const data = rows.slice(0, 16).map((r) => ({ label: String(Array.isArray(r[lk]) ? (r[lk] as unknown[]).join(' ') : r[lk]).slice(0, 40), p: r[pk] as number }));
  return accessible(Plot.plot({
    width, height: 30 + data.length * 20, marginLeft: Math.min(240, width / 2.5), style: { fontSize: '12px' },
    x: { domain: [0, 1], label: pk, grid: true, tickFormat: '%' }, y: { label: null, domain: data.map((d) => d.label) },
    marks: [Plot.barX(data, { x: 'p', y: 'label', fill: PALETTE[0], className: 'q-point' })],
  }));
}

/**
 * A page over an endpoint whose response shape this dashboard does not know yet (factors health,
 * scenarios): a status badge where the body or an item has a `status`, each item's first
 * probability distribution as bars (pathways, components), and a table of the scalar fields.
 */
async function genericPage(root: HTMLElement, id: string, title: string, what: string): Promise<void> {
  root.append(h('h1', {}, title));
  if (!hasRoute(id)) {
    root.append(notice({ kind: 'missing', id }, what));
    return;
  }
  const r = await get<Record<string, unknown>>(id);
  if (r.kind !== 'ok') {
    root.append(notice(r, what));
    return;
  }
  const width = Math.min(760, Math.max(300, document.documentElement.clientWidth - 48));
  for (const [k, v] of Object.entries(r.body)) {
    if (v && typeof v === 'object' && !Array.isArray(v) && typeof (v as { status?: unknown }).status === 'string') {
      const o = v as { status: string; reasons?: unknown };
      root.append(panel(k.replace(/_/g, ' '), h('p', {}, badge(o.status), Array.isArray(o.reasons) ? ` ${o.reasons.map(String).join('; ')}` : '')));
    }
  }
  const list = Object.values(r.body).find((v): v is Record<string, unknown>[] => Array.isArray(v) && v.every((x) => x && typeof x === 'object')) ?? [];
  const cols = [...new Set(list.flatMap((x) => Object.keys(x).filter((k) => x[k] === null || typeof x[k] !== 'object')))].slice(0, 8);
  const items = h('div', {});
  for (const x of list.slice(0, 20)) {
    const name = String(LABEL_KEYS.map((k) => x[k]).find((v) => typeof v === 'string') ?? '');
    const dist = Object.values(x).find((v): v is Record<string, unknown>[] => Array.isArray(v) && v.length > 0 && v.every((y) => y && typeof y === 'object'));
    const chart = dist ? distribution(dist, width) : null;
    if (chart || typeof x.status === 'string') {
      items.append(h('h3', {}, name, ' ', typeof x.status === 'string' ? badge(x.status) : ''), chart ? h('figure', { class: 'chart' }, chart) : '');
    }
  }
  root.append(panel(`${title} (${list.length})`, items, h('div', { class: 'table-wrap' }, h('table', {},
    h('thead', {}, h('tr', {}, cols.map((c) => h('th', { scope: 'col' }, c)))),
    h('tbody', {}, list.map((x) => h('tr', {}, cols.map((c) => h('td', {}, c === 'status' && typeof x[c] === 'string' ? badge(x[c] as string) : x[c] === null || x[c] === undefined ? '–' : String(x[c]))))))))));
}

export const scenariosPage = (root: HTMLElement): Promise<void> => genericPage(root, 'scenarios', 'Scenarios', 'Scenarios and their pathways');
