/**
 * A source's claims, on its page: the claims database (`GET /api/claims/?source=`, api plan) read
 * for one source, newest first, 25 a page by the API's cursor, filtered by kind and resolution.
 * Each claim as it was made (a probability, a side, a value in its unit), what came to be, its
 * score and where it was read from (dataset, file and line), so a reader can check a track record
 * claim by claim (outside test: no page showed the claims a track record is computed from).
 */
import { get, pageOrFirst } from '../api.ts';
import { counted, date, firstPageAfterFailure, listPager, h, hashHref, linkChoice, navigate, nothingMatches, notice, num, pager, pct, quantity, select, tableRegion } from '../ui.ts';

/** The parts of the API's Claim the panel reads, nullable as in the OpenAPI document. */
interface Claim {
  claim_id: string; made_at: string | null; question_id: string | null; subject: string | null; kind: 'probability' | 'direction' | 'value';
  probability: number | null; side: string | null; value: number | null; unit: string | null; threshold: number | null;
  tolerance: number | null; resolved: boolean; outcome: number | null; realized_value: number | null; resolved_at: string | null;
  hit: number | null; brier: number | null; error: number | null; within_tolerance: boolean | null;
  provenance: { dataset: string | null; file: string | null; line: number | null };
}
interface ClaimPage { claims: Claim[]; total: number; next_cursor: string | null }

/** Said under "kind: value" when nothing matches though the source's claims carry values: where they are. */
const VALUE_KIND_NOTE = ' Kind value lists the claims of a value alone: a claim that carries a value beside its side (a poll and its margin) is a direction claim, listed under kind direction.';

/** What the page's source says of its claims: its kind (a pollster's values are margins) and its resolved claims with a value (the value claims table's n). */
export interface ClaimsSource { kind: string | null; withValue: number }

/** The link parameters of the panel (the source page has no other filter). */
export interface ClaimFilters { kind: string; resolved: string; cursor: string }

const KINDS = ['', 'probability', 'direction', 'value'];
/**
 * The kind menu's entries. The API's `kind` is the claim's own kind, and a poll is a direction
 * claim that carries its margin beside its side: `kind=value` lists no poll, while this page's value
 * claims table (the track record's value figures, every claim with a value) counts the polls'
 * margins (outside test: a pollster's value claims read "11 resolved value claims" and its claims
 * filtered by kind value read "0 claims"). The entries say which way the polls go.
 */
const KIND_ENTRIES: [string, string][] = [['', 'all'], ['probability', 'probability'], ['direction', 'direction (polls included)'], ['value', 'value (polls\' margins excluded)']];
const RESOLVED = ['', 'true', 'false'];
/** Where focus and the scroll go after a pager link. */
const RESULTS = 'claims-results';
const PAGE_SIZE = '25';

/** The panel's filters from the page's link; a value it cannot use is named in `ignored`. */
export function claimFilters(q: URLSearchParams, ignored: string[]): ClaimFilters {
  return {
    kind: linkChoice(q, 'kind', KINDS, '', ignored, `one of ${KINDS.slice(1).join(', ')}`, true),
    resolved: linkChoice(q, 'resolved', RESOLVED, '', ignored, 'true or false', true),
    cursor: q.get('cursor') ?? '',
  };
}

/**
 * A claimed or realized value beside a side or a probability, or ''. A pollster's (a poll: a
 * direction claim names the leader and carries the margin, candidate 1 − candidate 2 as the subject
 * orders them) is its margin; any other source's is a value in its unit, claimed or realized
 * (outside test: every such value was called a margin, an institution's projection too). The
 * claims list gives no source kind: the page's source gives it (`pollster`).
 */
function valueBeside(c: Claim, x: number | null, poll: boolean, what: 'value' | 'realized'): string {
  return c.kind === 'value' || x === null ? '' : `, ${poll ? 'margin' : what} ${quantity(x, c.unit)}`;
}

/** What the claim says: "64.0% yes", "Clinton, margin −3.5 points", "cut, value −0.5 pp", "−3.5 points" (above/below a threshold where one applies). */
function claimed(c: Claim, poll: boolean): string {
  if (c.kind === 'probability') return `${pct(c.probability)}${c.side ? ` ${c.side}` : ''}${valueBeside(c, c.value, poll, 'value')}`;
  if (c.kind === 'direction') return `${c.side ?? '–'}${valueBeside(c, c.value, poll, 'value')}`;
  return `${quantity(c.value, c.unit)}${c.threshold === null ? '' : ` (threshold ${quantity(c.threshold, c.unit)})`}`;
}

/** What came to be: the realized value, or whether the claim came true (and the realized margin or value beside it); "unresolved" before. */
function outcomeText(c: Claim, poll: boolean): string {
  if (!c.resolved) return 'unresolved';
  if (c.kind === 'value') return quantity(c.realized_value, c.unit);
  const came = c.outcome === 1 ? 'came true' : c.outcome === 0 ? 'did not' : c.outcome === 0.5 ? 'tie' : '–';
  return `${came}${valueBeside(c, c.realized_value, poll, 'realized')}`;
}

/**
 * The tolerance a value was judged against, as the API defines it: the claim's own (`tolerance`),
 * or, where it gives none, 5% of |realized_value| (said so): "±5 points", "±$55 bn: 5% of the
 * realized value"; '' when neither is known.
 */
function toleranceText(c: Claim): string {
  if (c.tolerance !== null) return `±${quantity(c.tolerance, c.unit)}`;
  if (c.realized_value === null) return '';
  return `±${quantity(0.05 * Math.abs(c.realized_value), c.unit)}: 5% of the realized value`;
}

/**
 * A value's error, claimed − realized with a true minus and its unit, and whether it is within the
 * tolerance, which is given: "error +0.2 points, within tolerance (±5 points)" (outside test: "within
 * tolerance" alone, the tolerance nowhere on the page).
 */
function errorText(c: Claim): string {
  if (c.error === null) return '';
  const bound = toleranceText(c);
  const tolerance = c.within_tolerance === null ? '' : `${c.within_tolerance ? ', within tolerance' : ', outside tolerance'}${bound ? ` (${bound})` : ''}`;
  // signed, with a true minus: claimed − realized, as the bias is
  return `error ${c.error > 0 ? '+' : ''}${quantity(c.error, c.unit)}${tolerance}`;
}

/**
 * The claim's score: Brier of a probability, hit or miss of a direction, the error of a value and
 * whether it is within tolerance; a direction claim that carries a value (a poll's margin) has
 * both, its hit and its margin's error (outside test: a pollster's page showed "hit" alone, while
 * its value-claims table above counted the same polls' margins and their errors).
 */
function scoreText(c: Claim): string {
  if (!c.resolved) return '–';
  const error = errorText(c);
  if (c.kind === 'value') return error || '–';
  const score = c.kind === 'probability'
    ? (c.brier === null ? '–' : `Brier ${num(c.brier)}`)
    : c.hit === 1 ? 'hit' : c.hit === 0 ? 'miss' : c.hit === 0.5 ? 'tie (half)' : '–';
  return error ? `${score}; ${error}` : score;
}

/** Where the claim was read from: "dataset · file:line". */
function fromText(p: Claim['provenance']): string {
  const where = p.file === null ? '' : `${p.file}${p.line === null ? '' : `:${p.line}`}`;
  return [p.dataset, where].filter((x) => x).join(' · ') || '–';
}

/**
 * What each kind's score means, under the table (outside test: "Brier 0.065", "hit" and "error
 * −69.653 usd_bn" stood side by side with nothing to say which way is better, nor what sign an
 * error or a poll's margin takes).
 */
function scoreNote(): HTMLElement {
  return h('p', { class: 'note', id: 'claims-score-note' },
    'Score: a probability claim\'s Brier score, (probability − outcome)², 0 best and 1 worst; a direction claim hit or missed (a tie counts half); ',
    'a value\'s error is claimed − realized, in its unit, within the claim\'s tolerance (±, in its unit; where the claim gives none, 5% of the realized value) or not. A poll\'s margin is the first candidate of its subject minus the second, in points.');
}

function claimRow(c: Claim, poll: boolean): HTMLTableRowElement {
  const subject = c.subject ?? c.claim_id;
  return h('tr', {}, h('td', { class: 'date' }, date(c.made_at)),
    h('td', { class: 'subject' }, c.question_id ? h('a', { href: `#/questions/${encodeURIComponent(c.question_id)}` }, subject) : subject),
    h('td', {}, c.kind), h('td', {}, claimed(c, poll)), h('td', {}, outcomeText(c, poll)), h('td', {}, scoreText(c)), h('td', { class: 'provenance' }, fromText(c.provenance)));
}

/** The panel's two menus: changing one opens the source's first page of claims so filtered, focus kept on it. */
function menus(base: string, f: ClaimFilters): HTMLElement {
  const at = (kind: string, resolved: string) => hashHref(base, { kind, resolved });
  const kind = select('kind', 'Kind', KIND_ENTRIES, f.kind);
  kind.querySelector('select')!.addEventListener('change', (e) => navigate(at((e.target as HTMLSelectElement).value, f.resolved), 'f-kind'));
  const resolved = select('resolved', 'Resolved', [['', 'all'], ['true', 'resolved'], ['false', 'unresolved']], f.resolved);
  resolved.querySelector('select')!.addEventListener('change', (e) => navigate(at(f.kind, (e.target as HTMLSelectElement).value), 'f-resolved'));
  return h('div', { class: 'filters' }, kind, resolved);
}

/**
 * The claims panel of source `slug`, filtered and paged as the page's link says. `source`: read by
 * the page beside the claims (kind null: not known); its kind says whether a value beside a side is
 * a poll's margin.
 */
export async function claimsPanel(slug: string, f: ClaimFilters, source: Promise<ClaimsSource>): Promise<HTMLElement> {
  const base = `/sources/${encodeURIComponent(slug)}`;
  const page = (from: string) => get<ClaimPage>('claims', {}, { source: slug, limit: PAGE_SIZE, kind: f.kind || undefined, resolved: f.resolved || undefined, cursor: from || undefined });
  // A newer snapshot since the cursor was issued (410 cursor_expired): the first page, said.
  const [{ list, restarted: expired }, about] = await Promise.all([pageOrFirst(page, f.cursor), source]);
  const poll = about.kind === 'pollster';
  const section = h('section', { class: 'panel' }, h('h2', { id: RESULTS, tabindex: -1 }, 'Claims'));
  if (list.kind !== 'ok') {
    // a cursor the API refuses (a link cut short when copied): the first page a link away
    section.append(notice(list, 'The claims database'), ...firstPageAfterFailure('Pages of claims', f.cursor, hashHref(base, { kind: f.kind, resolved: f.resolved }), RESULTS));
    return section;
  }
  const cursor = expired ? '' : f.cursor;
  if (expired) section.append(h('p', { class: 'meta', role: 'status' }, 'The claims changed with a newer snapshot: back to their first page.'));
  const n = list.body.total;
  section.append(menus(base, f), h('p', { class: 'meta', id: 'claims-total' }, `${counted(n, 'claim')}${f.kind || f.resolved ? ` ${n === 1 ? 'matches' : 'match'} these filters` : ''}, newest first.`));
  if (list.body.claims.length === 0) {
    section.append(nothingMatches(undefined, cursor ? 'This page is past the end of the list.' : f.kind || f.resolved ? `No claim of this source matches these filters.${f.kind === 'value' && about.withValue > 0 ? VALUE_KIND_NOTE : ''}` : 'No claims from this source.'));
  } else {
    section.append(tableRegion('Claims table', h('table', { id: 'claims' },
      h('thead', {}, h('tr', {}, ['made (UTC)', 'subject', 'kind', 'claim', 'outcome', 'score', 'read from'].map((c) => h('th', { scope: 'col' }, c)))),
      h('tbody', {}, list.body.claims.map((c) => claimRow(c, poll))))), scoreNote());
  }
  section.append(listPager('Pages of claims', RESULTS, base, { kind: f.kind, resolved: f.resolved }, cursor, list.body.next_cursor));
  return section;
}
