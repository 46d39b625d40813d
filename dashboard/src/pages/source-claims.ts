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
  resolved: boolean; outcome: number | null; realized_value: number | null; resolved_at: string | null;
  hit: number | null; brier: number | null; error: number | null; within_tolerance: boolean | null;
  provenance: { dataset: string | null; file: string | null; line: number | null };
}
interface ClaimPage { claims: Claim[]; total: number; next_cursor: string | null }

/** The link parameters of the panel (the source page has no other filter). */
export interface ClaimFilters { kind: string; resolved: string; cursor: string }

const KINDS = ['', 'probability', 'direction', 'value'];
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
 * A claimed value beside a side or a probability (a poll's margin: a direction claim names the
 * leader and carries the margin, candidate 1 − candidate 2 as the subject orders them), or ''.
 */
function valueBeside(c: Claim, x: number | null): string {
  return c.kind === 'value' || x === null ? '' : `, margin ${quantity(x, c.unit)}`;
}

/** What the claim says: "64.0% yes", "Clinton, margin −3.5 points", "−3.5 points" (above/below a threshold where one applies). */
function claimed(c: Claim): string {
  if (c.kind === 'probability') return `${pct(c.probability)}${c.side ? ` ${c.side}` : ''}${valueBeside(c, c.value)}`;
  if (c.kind === 'direction') return `${c.side ?? '–'}${valueBeside(c, c.value)}`;
  return `${quantity(c.value, c.unit)}${c.threshold === null ? '' : ` (threshold ${quantity(c.threshold, c.unit)})`}`;
}

/** What came to be: the realized value, or whether the claim came true (and the realized margin beside it); "unresolved" before. */
function outcomeText(c: Claim): string {
  if (!c.resolved) return 'unresolved';
  if (c.kind === 'value') return quantity(c.realized_value, c.unit);
  const came = c.outcome === 1 ? 'came true' : c.outcome === 0 ? 'did not' : c.outcome === 0.5 ? 'tie' : '–';
  return `${came}${valueBeside(c, c.realized_value)}`;
}

/** A value's error, claimed − realized with a true minus and its unit, and whether it is within tolerance: "error +0.2 points, within tolerance". */
function errorText(c: Claim): string {
  if (c.error === null) return '';
  const tolerance = c.within_tolerance === null ? '' : c.within_tolerance ? ', within tolerance' : ', outside tolerance';
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
    'a value\'s error is claimed − realized, in its unit, within tolerance or not. A poll\'s margin is the first candidate of its subject minus the second, in points.');
}

function claimRow(c: Claim): HTMLTableRowElement {
  const subject = c.subject ?? c.claim_id;
  return h('tr', {}, h('td', { class: 'date' }, date(c.made_at)),
    h('td', { class: 'subject' }, c.question_id ? h('a', { href: `#/questions/${encodeURIComponent(c.question_id)}` }, subject) : subject),
    h('td', {}, c.kind), h('td', {}, claimed(c)), h('td', {}, outcomeText(c)), h('td', {}, scoreText(c)), h('td', { class: 'provenance' }, fromText(c.provenance)));
}

/** The panel's two menus: changing one opens the source's first page of claims so filtered, focus kept on it. */
function menus(base: string, f: ClaimFilters): HTMLElement {
  const at = (kind: string, resolved: string) => hashHref(base, { kind, resolved });
  const kind = select('kind', 'Kind', KINDS.map((k): [string, string] => [k, k || 'all']), f.kind);
  kind.querySelector('select')!.addEventListener('change', (e) => navigate(at((e.target as HTMLSelectElement).value, f.resolved), 'f-kind'));
  const resolved = select('resolved', 'Resolved', [['', 'all'], ['true', 'resolved'], ['false', 'unresolved']], f.resolved);
  resolved.querySelector('select')!.addEventListener('change', (e) => navigate(at(f.kind, (e.target as HTMLSelectElement).value), 'f-resolved'));
  return h('div', { class: 'filters' }, kind, resolved);
}

/** The claims panel of source `slug`, filtered and paged as the page's link says. */
export async function claimsPanel(slug: string, f: ClaimFilters): Promise<HTMLElement> {
  const base = `/sources/${encodeURIComponent(slug)}`;
  const page = (from: string) => get<ClaimPage>('claims', {}, { source: slug, limit: PAGE_SIZE, kind: f.kind || undefined, resolved: f.resolved || undefined, cursor: from || undefined });
  // A newer snapshot since the cursor was issued (410 cursor_expired): the first page, said.
  const { list, restarted: expired } = await pageOrFirst(page, f.cursor);
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
    section.append(nothingMatches(undefined, cursor ? 'This page is past the end of the list.' : f.kind || f.resolved ? 'No claim of this source matches these filters.' : 'No claims from this source.'));
  } else {
    section.append(tableRegion('Claims table', h('table', { id: 'claims' },
      h('thead', {}, h('tr', {}, ['made (UTC)', 'subject', 'kind', 'claim', 'outcome', 'score', 'read from'].map((c) => h('th', { scope: 'col' }, c)))),
      h('tbody', {}, list.body.claims.map(claimRow)))), scoreNote());
  }
  section.append(listPager('Pages of claims', RESULTS, base, { kind: f.kind, resolved: f.resolved }, cursor, list.body.next_cursor));
  return section;
}
