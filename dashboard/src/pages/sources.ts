/**
 * Sources: every source's track record ranked with its accuracy interval (the overview endpoint needs
 * a pro key; anonymous readers can still open a source by its slug), and one source's page: its
 * calibration (public during the beta), its value claims' errors with their unit, and its trend
 * per year (api plan).
 */
import { get, pageOrFirst } from '../api.ts';
import { loadCharts } from '../lazy-charts.ts';
import { counted, firstPageAfterFailure, listPager, firstText, fixed, h, hashHref, ignoredInLink, linkChoice, hashQuery, inUnit, navigate, nothingMatches, notice, num, pager, panel, pct, percent, select, tableRegion, unitName } from '../ui.ts';
import { claimFilters, claimsPanel } from './source-claims.ts';

/** The parts of the API's SourceTrackRecord the pages read, nullable as in the OpenAPI document. */
interface Source {
  slug: string; name: string | null; kind: string; rank: number | null; ranked: boolean; n_resolved: number; n_directional: number; accuracy_score: number | null;
  accuracy_ci95: [number, number] | null;
  /** The ranking score: accuracy_score pulled toward prior_score by prior_weight pseudo-claims (percent). */
  shrunk_score: number | null; prior_score: number | null; prior_weight: number; probability: { n: number; brier: number | null } | null; description?: string | null; url?: string | null;
  calibration?: { bin: number; n: number; mean_probability: number | null; observed: number | null }[];
  value?: ValueErrors;
}
/** The errors of resolved value claims, as the API's `value` object (and a trend row's value_* fields) give them. */
interface ValueErrors { n: number; unit: string | null; units: number; mae: number | null; bias: number | null; share_within: number | null }
/** A trend row of the API (one year made). */
interface TrendRow {
  year: number; accuracy_score: number | null; accuracy_ci95: [number, number] | null; brier: number | null; n_resolved: number;
  /** The claims the year's accuracy counts (n_resolved holds its value claims too). */
  n_directional?: number;
  n_value?: number; value_unit?: string | null; value_units?: number; mae?: number | null; bias?: number | null; share_within?: number | null;
}

/** A source's name, or its slug when it has none. */
const sourceName = (s: Source): string => firstText(s.name, s.slug);
/** An accuracy interval in percent: "75.0–92.3%" ('–' when there is none). */
const ciText = (ci: [number, number] | null): string => (ci ? `${fixed(ci[0], 1)}–${percent(ci[1])}` : '–');
/** An accuracy score (in percent) and its interval: "85.7% (95% 75.0–92.3%)". */
const accuracyText = (s: Pick<Source, 'accuracy_score' | 'accuracy_ci95'>): string =>
  `${percent(s.accuracy_score)}${s.accuracy_ci95 ? ` (95% ${ciText(s.accuracy_ci95)})` : ''}`;
/** Resolved directional claims a source needs to be ranked (the API's threshold: `ranked`). */
const RANKED_FROM = 10;
/**
 * Why a source is where it is: its rank and the shrunk score the rank comes from, or why it has
 * none (QA: "rank unranked", beside an accuracy, with no reason given).
 */
const rankText = (s: Source): string => (s.ranked && s.rank !== null
  ? `rank ${s.rank} (ranking score ${percent(s.shrunk_score)})`
  : `unranked (${counted(s.n_directional, 'resolved directional claim')}: ranked from ${RANKED_FROM})`);
/**
 * What the ranked list's order means (`sample`: any source of it, for the prior they share): by the shrunk score, not by the accuracy shown beside it, and
 * who is not ranked (QA: the table gave the accuracy alone, so 100.0% at rank 5 sat under 96.1% at
 * rank 4, and unranked rows read "–" with no reason).
 */
function rankingNote(sample: Source): HTMLElement {
  const prior = `the pooled accuracy of all sources${sample.prior_score === null ? '' : ` (${percent(sample.prior_score)})`}`;
  return h('p', { class: 'note', id: 'ranking-note' },
    `Ranked by the ranking score: the accuracy pulled toward ${prior} by the weight of ${sample.prior_weight} claims, so a short run of lucky calls does not top the list. `,
    `Unranked: under ${RANKED_FROM} resolved directional claims (shown, not ranked). Accuracy intervals are Wilson 95% intervals.`);
}
/**
 * The trend chart's year ticks: whole years every 1, 2, 5, 10, 20, 50 or 100 years, the smallest
 * step whose labels ("2024": about 40 px with their gap) fit in a chart `width` px wide.
 */
function yearTicks(years: number[], width: number): number[] {
  const [first, last] = [Math.min(...years), Math.max(...years)];
  const room = Math.max(1, Math.floor((width - 60) / 40)); // Plot's default margins: 40 left, 20 right
  const step = [1, 2, 5, 10, 20, 50].find((k) => Math.floor((last - first) / k) + 1 <= room) ?? 100;
  const ticks: number[] = [];
  for (let y = Math.ceil(first / step) * step; y <= last; y += step) ticks.push(y);
  return ticks;
}

/**
 * One row of the value-errors table: mean absolute error and bias with their unit; over claims in
 * several units the API gives neither (errors in different units are not averaged), and the row
 * says so instead of showing blanks. The share within tolerance judges each claim in its own unit.
 */
function valueRow(label: string, v: ValueErrors): HTMLTableRowElement {
  const several = v.units > 1;
  // a negative bias with a true minus (QA: "-10.000 usd_bn"), the unit as read ("−$10.000 bn")
  const figure = (x: number | null) => (several ? `not averaged across ${v.units} units` : x === null ? '–' : inUnit(num(x), v.unit));
  return h('tr', {}, h('td', {}, label), h('td', { class: 'num' }, v.n), h('td', {}, several ? `${v.units} units` : (v.unit ? unitName(v.unit) : 'none named')),
    h('td', { class: 'num' }, figure(v.mae)), h('td', { class: 'num' }, figure(v.bias)), h('td', { class: 'num' }, pct(v.share_within)));
}

/** Where focus and the scroll go after a pager link. */
const RESULTS = 'sources-results';
const KINDS = ['', 'pollster', 'forecaster', 'institution', 'market', 'ai_model', 'consensus', 'media', 'other'];

export async function sourcesPage(root: HTMLElement): Promise<void> {
  const q = hashQuery();
  const ignored: string[] = [];
  // in any case, as the API reads it (`?kind=Market` is market); another value is named (outside
  // test: every source, under the menu's "all")
  const kind = linkChoice(q, 'kind', KINDS, '', ignored, `one of ${KINDS.slice(1).join(', ')}`, true);
  let cursor = q.get('cursor') ?? '';
  const width = Math.min(760, Math.max(300, document.documentElement.clientWidth - 48));
  root.append(h('h1', {}, 'Sources'));
  const open = h('form', { class: 'filters', 'aria-label': 'Open a source' },
    h('label', { for: 'f-slug' }, 'Open a source by slug ', h('input', { id: 'f-slug', name: 'slug', placeholder: 'e.g. manifold', required: true })), h('button', { type: 'submit' }, 'Open'));
  open.addEventListener('submit', (e) => {
    e.preventDefault();
    location.hash = `#/sources/${encodeURIComponent(String(new FormData(open).get('slug') ?? '').trim())}`;
  });
  const kindPick = select('kind', 'Kind', KINDS.map((k): [string, string] => [k, k || 'all']), kind);
  kindPick.querySelector('select')!.addEventListener('change', (e) => { navigate(hashHref('/sources', { kind: (e.target as HTMLSelectElement).value }), 'f-kind'); });
  root.append(ignoredInLink(ignored) ?? '', open, kindPick);

  const page = (from: string) =>
    get<{ sources: Source[]; total: number; next_cursor: string | null }>('track_records.overview', {}, { limit: '30', kind: kind || undefined, cursor: from || undefined });
  // A newer snapshot has re-ranked the sources since this page's cursor was issued (410
  // cursor_expired): the ranking's first page, said, instead of an error.
  const [{ intervals }, { list, restarted: reRanked }] = await Promise.all([loadCharts(), pageOrFirst(page, cursor)]);
  if (reRanked) {
    cursor = '';
    root.append(h('p', { class: 'meta', role: 'status' }, 'The ranking changed with a newer snapshot: back to its first page.'));
  }
  if (list.kind !== 'ok') {
    root.append(panel('Track records', notice(list, 'The ranked list of track records'), ...firstPageAfterFailure('Pages of track records', cursor, hashHref('/sources', { kind }), RESULTS)));
    return;
  }
  if (list.body.sources.length === 0) {
    root.append(panel('Track records, ranked', nothingMatches(RESULTS, kind || cursor ? undefined : 'No track records yet.')));
    return;
  }
  const ranked = list.body.sources.filter((s) => s.accuracy_score !== null && s.accuracy_ci95);
  const rows = ranked.map((s) => {
    // The whole "rank. name": the chart's axis shortens a label too long for its margin with an
    // ellipsis (QA: cut here at 40 characters, so "University of Arkansas Department of Political
    // Science" read "27. University of Arkansas Department of", a cut with no sign of one). An
    // unranked source says so, as its row of the table does (it read "–. name").
    const label = s.ranked && s.rank !== null ? `${s.rank}. ${sourceName(s)}` : `unranked: ${sourceName(s)}`;
    return {
      label, value: s.accuracy_score!, lo: s.accuracy_ci95![0], hi: s.accuracy_ci95![1], group: s.kind,
      title: `${label} (${s.kind}): accuracy ${accuracyText(s)}, ${s.n_resolved} resolved`,
    };
  });
  const section = panel('Track records, ranked',
    rows.length ? h('figure', { class: 'chart', id: 'track-records', 'aria-label': 'Track records ranked: accuracy score with its 95% interval' },
      intervals(rows, { width, xLabel: 'accuracy score, % (95% interval)', groups: [...new Set(rows.map((r) => r.group))] })) : null,
    tableRegion('Track records table', h('table', { id: 'sources' },
      h('thead', {}, h('tr', {}, ['rank', 'source', 'kind', 'resolved', 'accuracy', 'accuracy, 95% interval', 'ranking score', 'Brier'].map((c) => h('th', { scope: 'col' }, c)))),
      h('tbody', {}, list.body.sources.map((s) => h('tr', {}, h('td', {}, s.ranked && s.rank !== null ? s.rank : 'unranked'), h('td', {}, h('a', { href: `#/sources/${encodeURIComponent(s.slug)}` }, sourceName(s))), h('td', {}, s.kind),
        h('td', { class: 'num' }, s.n_resolved), h('td', { class: 'num' }, percent(s.accuracy_score)), h('td', { class: 'num' }, ciText(s.accuracy_ci95)),
        h('td', { class: 'num' }, s.ranked ? percent(s.shrunk_score) : '–'), h('td', { class: 'num' }, num(s.probability?.brier))))))),
    rankingNote(list.body.sources[0]!),
    listPager('Pages of track records', RESULTS, '/sources', { kind }, cursor, list.body.next_cursor));
  // After a pager link: the panel's heading (above this page's chart and table) takes focus.
  section.querySelector('h2')!.setAttribute('id', RESULTS);
  section.querySelector('h2')!.setAttribute('tabindex', '-1');
  root.append(section);
}

/**
 * The trend's figures as a table beside its chart, as the leaderboard and the track records have
 * one: each year's accuracy, its interval and n were only in the dots' tooltips, out of reach of a
 * keyboard or a screen reader (outside test). `n` is the year's directional claims, those the
 * accuracy counts (the tooltip gave n_resolved, value claims included).
 */
function trendTable(years: TrendRow[]): HTMLElement {
  return tableRegion('Trend per year table', h('table', { id: 'trend-table' },
    h('thead', {}, h('tr', {}, ['year made', 'directional claims', 'accuracy', 'accuracy, 95% interval', 'Brier'].map((c) => h('th', { scope: 'col' }, c)))),
    h('tbody', {}, years.map((r) => h('tr', {}, h('td', {}, r.year), h('td', { class: 'num' }, r.n_directional ?? r.n_resolved),
      h('td', { class: 'num' }, percent(r.accuracy_score)), h('td', { class: 'num' }, ciText(r.accuracy_ci95)), h('td', { class: 'num' }, num(r.brier)))))));
}

export async function sourcePage(root: HTMLElement, slug: string | undefined): Promise<void> {
  const width = Math.min(760, Math.max(300, document.documentElement.clientWidth - 48));
  const ignored: string[] = [];
  const filters = claimFilters(hashQuery(), ignored);
  const source = get<{ source: Source }>('track_records.source', { source_slug: slug ?? '' });
  const [{ PagePlot: Plot, accessible, calibration, PALETTE }, one, trends, claims] = await Promise.all([
    loadCharts(),
    source,
    get<{ trends: TrendRow[] }>('track_records.trends', { source_slug: slug ?? '' }),
    // the source's kind says whether a value beside a side is a poll's margin
    claimsPanel(slug ?? '', filters, source.then((r) => (r.kind === 'ok' ? { kind: r.body.source.kind, withValue: r.body.source.value?.n ?? 0 } : { kind: null, withValue: 0 }))),
  ]);
  if (one.kind !== 'ok') {
    root.append(h('h1', {}, `Source ${slug}`), notice(one, 'This source'), h('p', {}, h('a', { href: '#/sources' }, 'All sources')));
    return;
  }
  const s = one.body.source;
  root.append(h('h1', {}, sourceName(s)), h('p', { class: 'meta', id: 'source-meta' }, `${s.kind} · ${rankText(s)} · ${counted(s.n_resolved, 'resolved claim')} · accuracy ${accuracyText(s)}`,
    ` · Brier ${num(s.probability?.brier)}`), s.description ? h('p', {}, s.description) : '', ignoredInLink(ignored) ?? '');
  if (trends.kind === 'ok') {
    const t = trends.body.trends.filter((r) => r.accuracy_score !== null);
    const years = t.map((r) => r.year);
    // No year with an accuracy score (a source of value claims only, such as the CBO's
    // projections): said, instead of empty axes (QA).
    if (t.length === 0) {
      root.append(panel('Trend per year', nothingMatches(undefined, 'No year with a scored directional claim: no accuracy trend to draw.')));
    } else root.append(panel('Trend per year', h('figure', { class: 'chart', id: 'trend', 'aria-label': `Accuracy score of ${sourceName(s)} per year made, with its 95% interval` }, accessible(Plot.plot({
      width, height: 260, style: { fontSize: '12px' },
      // Years on a linear axis, so a year without a score is a gap, and a tick every few
      // years, as many as fit (QA: a point axis labelled every year with a score, evenly spaced:
      // SurveyUSA's 21 years overlapped into one unreadable run at phone width, and 2012 → 2014
      // was drawn one step apart like 2011 → 2012).
      x: { label: 'year', type: 'linear', domain: [Math.min(...years) - 0.5, Math.max(...years) + 0.5], ticks: yearTicks(years, width), tickFormat: 'd' },
      y: { label: 'accuracy score, %', grid: true, domain: [0, 100] },
      marks: [
        Plot.ruleX(t.filter((r) => r.accuracy_ci95), { x: 'year', y1: (r) => r.accuracy_ci95![0], y2: (r) => r.accuracy_ci95![1], stroke: PALETTE[0], strokeWidth: 3, strokeOpacity: 0.5, className: 'q-interval' }),
        Plot.line(t, { x: 'year', y: 'accuracy_score', stroke: PALETTE[0] }),
        Plot.dot(t, { x: 'year', y: 'accuracy_score', fill: PALETTE[0], r: 4, className: 'q-point', title: (r) => `${r.year}: ${accuracyText(r)} (n ${r.n_directional ?? r.n_resolved})` }),
      ],
    }))), trendTable(t)));
  } else root.append(panel('Trend per year', notice(trends, 'The per-year trend')));
  // Value claims (a margin, a projection): their errors with their unit, overall and per year made
  // (QA: the page showed none of them, so the CBO's projections had no figure but their count). The
  // years come from the trends (api plan); without them the table holds the whole record only.
  const v = s.value;
  if (v && v.n > 0) {
    const years = trends.kind === 'ok' ? trends.body.trends.filter((r) => (r.n_value ?? 0) > 0) : [];
    root.append(panel('Value claims',
      h('p', { id: 'source-values' }, counted(v.n, 'resolved value claim'), v.units > 1
        ? ` in ${v.units} units: their mean absolute error and bias are not averaged across units (each unit's errors are its own); the share within tolerance judges each claim in its own unit.`
        : v.unit ? `, in ${unitName(v.unit)}.` : ', naming no unit.'),
      tableRegion('Value claims table', h('table', { id: 'value-errors' },
        h('thead', {}, h('tr', {}, ['claims made', 'resolved', 'unit', 'mean absolute error', 'bias (claimed − realized)', 'within tolerance'].map((c) => h('th', { scope: 'col' }, c)))),
        h('tbody', {}, valueRow('all years', v), years.map((r) => valueRow(String(r.year), {
          n: r.n_value ?? 0, unit: r.value_unit ?? null, units: r.value_units ?? 0, mae: r.mae ?? null, bias: r.bias ?? null, share_within: r.share_within ?? null,
        })))))));
  }
  // A bin no claim fell into has no mean and no frequency to draw.
  const cal = (s.calibration ?? []).flatMap((b) => (b.n > 0 && b.mean_probability !== null && b.observed !== null
    ? [{ n: b.n, mean_probability: b.mean_probability, observed: b.observed }] : []));
  root.append(panel('Calibration', cal.length ? h('figure', { class: 'chart', id: 'source-calibration' }, calibration(cal, width),
    h('figcaption', {}, 'Stated probability against how often it happened; dot size grows with the number of claims.')) : h('p', {}, 'No probability claims to calibrate.')));
  root.append(claims);
}
