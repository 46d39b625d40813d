/**
 * Active predictions: /api/predictions/lang/{lang} in the snapshot's main reasoning language (the
 * first of service_stats `languages`; another of them with `?lang=`, chosen in a menu when there
 * are several), one page at a time through the API's keyset cursor
 * (category and venue filtered by the API). The other filters (minimum edge, minimum disagreement,
 * stale markets) and the sort apply to the page shown, since the endpoint has no parameter for them.
 * Every filter, the sort and the cursor are in the URL. The cursor only goes forward (there is no
 * previous page, only the first; the browser's Back returns to the page before).
 */
import { get } from '../api.ts';
import { firstPageAfterFailure, listPager, firstText, focusedIn, h, ignoredInLink, linkChoice, menuEntry, hashHref, hashQuery, navigate, navLink, nothingMatches, notice, num, pager, pct, select, signedPoints, tableRegion } from '../ui.ts';
import { PREDICTIONS_PAGE_LIMIT } from '../first-reads.ts';
import { matchLanguage } from '../languages.ts';

/** The parts of the API's active prediction the page reads (nullable as in the OpenAPI document). */
interface Prediction {
  question_id: string;
  venue: string | null;
  title: string | null;
  category: string | null;
  close_time: string | null;
  consensus: { mean: number | null } | null;
  disagreement: { sd: number | null } | null;
  market_probability: number | null;
  market_stale: boolean | null;
  n_models: number;
}
interface Page { predictions: Prediction[]; total: number; next_cursor: string | null }
/** A reasoning language of the snapshot (service_stats `languages`, the main one first). */
interface Language { lang: string; codes: string[]; predictions: number }
interface Stats { by_category: { category: string; active: number }[]; languages: Language[] }

/**
 * Every venue a question can come from (the API's VENUES, api/routes/prediction-params.ts: the
 * synced venues, the ForecastBench sources and the operators' own questions), all offered: the
 * endpoint filters by venue over every page.
 */
const VENUES = ['infer', 'kalshi', 'manifold', 'metaculus', 'polymarket', 'quorum'];
/** Where focus and the scroll go after a pager link: the table (or what stands in for it). */
const RESULTS = 'predictions-results';

type Row = Prediction & { edge: number | null; sd: number | null; p: number | null };

const COLUMNS: [keyof Row, string][] = [
  ['title', 'Question'], ['category', 'Category'], ['venue', 'Venue'], ['p', 'Consensus'], ['market_probability', 'Market'],
  ['edge', 'Edge'], ['sd', 'Disagreement'], ['close_time', 'Closes (UTC)'],
];

const STALE = ['all', 'fresh', 'stale'] as const;

/**
 * The language the page lists: the link's `lang` when it names one of the snapshot's `languages`
 * (as the API matches a language: any case, another code of it), else the main one (the first);
 * the link's when the languages are unknown (the statistics could not be read), else `en`, the
 * API's default. Null: the snapshot has no reasoning in any language. The page asked for `en`
 * whatever the service ran in (outside test: a 404 on QUORUM_LANGS=pt-BR,zh-Hant, and only part of
 * the predictions where the runs' main languages differ).
 */
function listedLanguage(q: URLSearchParams, languages: Language[] | null, ignored: string[]): string | null {
  const asked = q.get('lang') ?? '';
  if (languages === null) return asked || 'en';
  if (languages.length === 0) return null;
  const hit = asked === '' ? undefined : languages.find((l) => matchLanguage(l.codes, asked) !== undefined);
  if (asked !== '' && hit === undefined) ignored.push(`lang=${asked} (one of ${languages.map((l) => l.lang).join(', ')})`);
  return (hit ?? languages[0]!).lang;
}

/** A link's minimum (a number ≥ 0, or '' for none); another value is named in `ignored`. */
function minimum(q: URLSearchParams, name: string, ignored: string[]): string {
  const v = q.get(name) ?? '';
  if (v === '' || (Number.isFinite(Number(v)) && Number(v) >= 0)) return v;
  ignored.push(`${name}=${v} (a number of at least 0)`);
  return '';
}

export async function predictionsPage(root: HTMLElement): Promise<void> {
  const q = hashQuery();
  // What the link asks for that the page cannot do is named, the default used instead (outside
  // test: an unknown sort or minimum fell back silently, and `stale=x` filtered to fresh prices
  // while the menu showed "any").
  const ignored: string[] = [];
  const f = {
    category: q.get('category') ?? '',
    venue: q.get('venue') ?? '',
    min_edge_pts: minimum(q, 'min_edge_pts', ignored),
    min_disagreement: minimum(q, 'min_disagreement', ignored),
    stale: linkChoice(q, 'stale', STALE, 'all', ignored, STALE.join(', ')),
    sort: linkChoice(q, 'sort', COLUMNS.map(([k]) => String(k)), 'sd', ignored, `a column: ${COLUMNS.map(([k]) => String(k)).join(', ')}`),
    dir: linkChoice(q, 'dir', ['asc', 'desc'] as const, 'desc', ignored, 'asc or desc'),
    cursor: q.get('cursor') ?? '',
  };
  // The service's statistics: the snapshot's reasoning languages, and every category with an active
  // question, not those with a resolved one (outside test: the accuracy summary's categories were
  // offered, so climate and crypto, with active predictions and nothing resolved yet, could not be
  // picked from the menu).
  const cats = await get<Stats>('events.service_stats');
  const languages = cats.kind === 'ok' ? (cats.body.languages ?? null) : null;
  const lang = listedLanguage(q, languages, ignored);
  root.append(h('h1', {}, 'Active predictions'));
  root.append(ignoredInLink(ignored) ?? '');
  if (lang === null) {
    root.append(nothingMatches(RESULTS, 'No active prediction has reasoning in any language in this snapshot.'));
    return;
  }
  const page = await get<Page>('predictions.lang', { lang }, { limit: PREDICTIONS_PAGE_LIMIT, category: f.category || undefined, venue: f.venue || undefined, cursor: f.cursor || undefined });
  // the link's language stays in every link of the page (a menu, a sort, a pager); the main one needs none
  const langInLink = languages !== null && lang === languages[0]?.lang ? '' : lang;
  if (page.kind !== 'ok') {
    root.append(notice(page, 'Active predictions'), ...firstPageAfterFailure('Pages of active predictions', f.cursor, hashHref('/predictions', {
      lang: langInLink, category: f.category, venue: f.venue, min_edge_pts: f.min_edge_pts, min_disagreement: f.min_disagreement, stale: f.stale === 'all' ? '' : f.stale, sort: f.sort, dir: f.dir,
    }), RESULTS));
    return;
  }
  // A link's category or venue in another case is the menu's own entry (menuEntry).
  const category = menuEntry(cats.kind === 'ok' ? cats.body.by_category.filter((c) => c.active > 0).map((c) => c.category).sort() : [], f.category);
  f.category = category.value;
  const categories = category.entries;
  const seenVenues = [...VENUES];
  for (const p of page.body.predictions) if (p.venue !== null && !seenVenues.includes(p.venue)) seenVenues.push(p.venue);
  const venue = menuEntry(seenVenues, f.venue);
  f.venue = venue.value;
  const venues = venue.entries;

  // Several languages: a menu of them, each with its count (outside test: only `en` was ever listed).
  const several = languages !== null && languages.length > 1;
  const form = h('form', { class: 'filters', 'aria-label': 'Filters' },
    several ? select('lang', 'Reasoning language', languages.map((l): [string, string] => [l.lang, `${l.lang} (${l.predictions})`]), lang) : '',
    select('category', 'Category', [['', 'all'], ...categories.map((c): [string, string] => [c, c])], f.category),
    select('venue', 'Venue', [['', 'all'], ...venues.map((v): [string, string] => [v, v])], f.venue),
    // In points, as the table shows edges (QA: the field took a fraction, so 5 for '5 pts' was refused).
    h('label', { for: 'f-min_edge_pts' }, 'Min edge (pts) ', h('input', { id: 'f-min_edge_pts', name: 'min_edge_pts', type: 'number', min: 0, max: 100, step: 0.1, value: f.min_edge_pts, inputmode: 'decimal' })),
    h('label', { for: 'f-min_disagreement' }, 'Min disagreement ', h('input', { id: 'f-min_disagreement', name: 'min_disagreement', type: 'number', min: 0, max: 1, step: 0.01, value: f.min_disagreement, inputmode: 'decimal' })),
    select('stale', 'Market price', [['all', 'any'], ['fresh', 'fresh only'], ['stale', 'stale only']], f.stale),
    h('button', { type: 'submit', id: 'f-apply' }, 'Apply'));
  form.addEventListener('submit', (e) => {
    e.preventDefault();
    const d = new FormData(form);
    // Focus comes back to the control used (the select changed, the field Enter was pressed in, Apply).
    const chosen = String(d.get('lang') ?? '');
    navigate(hashHref('/predictions', {
      lang: chosen === languages?.[0]?.lang ? '' : chosen,
      category: String(d.get('category') ?? ''), venue: String(d.get('venue') ?? ''), min_edge_pts: String(d.get('min_edge_pts') ?? ''),
      min_disagreement: String(d.get('min_disagreement') ?? ''), stale: d.get('stale') === 'all' ? '' : String(d.get('stale')),
      sort: f.sort, dir: f.dir,
    }), focusedIn(form, 'f-apply'));
  });
  form.addEventListener('change', (e) => {
    if ((e.target as HTMLElement).tagName === 'SELECT') form.requestSubmit();
  });
  root.append(form);

  const minEdgePts = Number(f.min_edge_pts) || 0;
  const minSd = Number(f.min_disagreement) || 0;
  let rows: Row[] = page.body.predictions.map((p) => {
    const c = p.consensus?.mean ?? null;
    return { ...p, p: c, sd: p.disagreement?.sd ?? null, edge: c !== null && p.market_probability !== null ? c - p.market_probability : null };
  });
  rows = rows.filter((r) =>
    // the edge in points at 12 significant digits, its floating-point tail dropped (0.3 − 0.35 is
    // 5 pts, not 4.999999999999999); not at the one decimal the cell shows: 4.96 pts, shown +5.0,
    // is under a minimum of 5
    (!minEdgePts || (r.edge !== null && Number((Math.abs(r.edge) * 100).toPrecision(12)) >= minEdgePts)) &&
    (!minSd || (r.sd !== null && r.sd >= minSd)) &&
    (f.stale === 'all' || (f.stale === 'stale' ? r.market_stale === true : r.market_stale === false)));
  const key = (COLUMNS.find(([k]) => k === f.sort)?.[0] ?? 'sd') as keyof Row;
  const sign = f.dir === 'asc' ? 1 : -1;
  // The edge sorts by its size; a row with none (no market price) goes last like any missing value
  // (QA: `Math.abs(edge ?? -1)` made it 1, larger than every edge, so it led the default descending sort).
  const sortValue = (r: Row) => (key === 'edge' ? (r.edge === null ? null : Math.abs(r.edge)) : r[key]);
  rows.sort((a, b) => {
    const x = sortValue(a);
    const y = sortValue(b);
    if (x === y) return a.question_id < b.question_id ? -1 : 1;
    if (x === null || x === undefined) return 1;
    if (y === null || y === undefined) return -1;
    return (x < y ? -1 : 1) * sign;
  });

  const maxSd = Math.max(0.05, ...rows.map((r) => r.sd ?? 0));
  const base = { lang: langInLink, category: f.category, venue: f.venue, min_edge_pts: f.min_edge_pts, min_disagreement: f.min_disagreement, stale: f.stale === 'all' ? '' : f.stale, cursor: f.cursor };
  const head = h('tr', {}, COLUMNS.map(([k, label]) => {
    const active = k === key;
    const next = active && f.dir === 'desc' ? 'asc' : 'desc';
    return h('th', { scope: 'col', 'aria-sort': active ? (f.dir === 'asc' ? 'ascending' : 'descending') : undefined },
      navLink(hashHref('/predictions', { ...base, sort: String(k), dir: next }), `sort-${String(k)}`, false, { id: `sort-${String(k)}` }, label, active ? (f.dir === 'asc' ? ' ▲' : ' ▼') : ''));
  }));
  const body = h('tbody', {}, rows.map((r) => {
    const bar = h('span', { class: 'bar' });
    if (r.sd !== null) bar.style.width = `${Math.round((r.sd / maxSd) * 100)}%`;
    return h('tr', {},
      // in the language listed: the question's page shows its reasoning in it
      h('td', {}, h('a', { href: hashHref(`/questions/${encodeURIComponent(r.question_id)}`, { lang: langInLink }) }, firstText(r.title, r.question_id))),
      h('td', {}, r.category ?? '–'), h('td', {}, r.venue ?? '–'), h('td', { class: 'num' }, pct(r.p)),
      h('td', { class: 'num' }, pct(r.market_probability), r.market_stale ? h('span', { class: 'tag', title: 'market price older than the staleness limit' }, ' stale') : ''),
      h('td', { class: 'num' }, signedPoints(r.edge, 'pts')),
      // No disagreement (null in the API) is none, not a zero one: no bar, and a dash (QA: 0.000).
      h('td', { class: 'dis' }, r.sd === null ? '–' : [h('span', { class: 'bar-track', role: 'img', 'aria-label': `disagreement ${num(r.sd)}` }, bar), ` ${num(r.sd)}`]),
      h('td', {}, r.close_time?.slice(0, 10) ?? '–'));
  }));
  root.append(
    h('p', { class: 'note' }, `${page.body.total} active predictions${several ? ` with reasoning in ${lang}` : ''}${f.category ? ` in ${f.category}` : ''}${f.venue ? ` on ${f.venue}` : ''}; this page: ${page.body.predictions.length}, shown after filters: ${rows.length}. `,
      `The edge, disagreement and staleness filters and the sort apply to the page shown (the API filters by category and venue): `,
      'page on for the other predictions. Edge: consensus − market, in percentage points.'),
    rows.length
      ? tableRegion('Active predictions table', h('table', { id: 'predictions' }, h('thead', {}, head), body), RESULTS)
      : nothingMatches(RESULTS, f.category || f.venue || minEdgePts || minSd || f.stale !== 'all' ? undefined : 'No active predictions on this page.'),
    listPager('Pages of active predictions', RESULTS, '/predictions', { ...base, cursor: '', sort: f.sort, dir: f.dir }, f.cursor, page.body.next_cursor));
}
