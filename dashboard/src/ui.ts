/** Small DOM helpers, number formats (format.ts), the colour-blind-safe palette and the panel states. */
import { routesConfig, type Result } from './api.ts';

type Child = Node | string | number | null | undefined | false;

/** Creates an element: h('a', { href: '#/' }, 'text', child). Attributes are set, never parsed as HTML. */
export function h<K extends keyof HTMLElementTagNameMap>(
  tag: K,
  attrs: Record<string, string | number | boolean | undefined | null> = {},
  ...children: (Child | Child[])[]
): HTMLElementTagNameMap[K] {
  const el = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs)) {
    if (v === undefined || v === null || v === false) continue;
    el.setAttribute(k, v === true ? '' : String(v));
  }
  for (const c of children.flat()) {
    if (c === null || c === undefined || c === false) continue;
    el.append(c instanceof Node ? c : String(c));
  }
  return el;
}


export { counted, fixed, interval, inUnit, minus, num, pct, percent, quantity, signed, signedPoints, unitName } from './format.ts';
export const date = (iso: string | null | undefined): string => (iso ? iso.slice(0, 10) : '–');
/**
 * A time in UTC to the minute, "2026-11-27 14:00": for what can happen several times a day (a
 * thesis vintage per run, every 4 hours), where the date alone repeats (QA: a thesis's vintages
 * table listed one run after another as "2026-11-27", "2026-11-27", ...).
 */
export const dateTime = (iso: string | null | undefined): string => {
  const t = iso ? Date.parse(iso) : Number.NaN;
  return Number.isNaN(t) ? (iso ? iso.slice(0, 10) : '–') : new Date(t).toISOString().slice(0, 16).replace('T', ' ');
};

/**
 * Wilson 95% interval of k successes in n: within [0, 1], holding k / n ([0, 1] for n = 0). Its
 * bounds are exactly 0 at k = 0 and 1 at k = n, which c ∓ m misses by a rounding (wilson(0, 125)
 * was [1.7e-18, …], above the estimate 0 it should contain), so they are clamped to the estimate.
 */
export function wilson(k: number, n: number): [number, number] {
  if (n === 0) return [0, 1];
  const z = 1.959964;
  const p = k / n;
  const d = 1 + (z * z) / n;
  const c = (p + (z * z) / (2 * n)) / d;
  const m = (z * Math.sqrt((p * (1 - p)) / n + (z * z) / (4 * n * n))) / d;
  return [Math.max(0, Math.min(p, c - m)), Math.min(1, Math.max(p, c + m))];
}

export function panel(title: string, ...children: (Child | Child[])[]): HTMLElement {
  return h('section', { class: 'panel' }, h('h2', {}, title), ...children);
}

/**
 * `what` (a panel's subject, written to start a sentence: "The leaderboard") inside a sentence:
 * "Could not load the leaderboard". An initialism ("API …") keeps its capitals.
 */
function midSentence(what: string): string {
  return /^[A-Z][a-z]/.test(what) ? what[0]!.toLowerCase() + what.slice(1) : what;
}

/** What a panel shows instead of data: an endpoint not there yet, a plan the reader lacks, an error. */
export function notice(r: Exclude<Result<unknown>, { kind: 'ok' }>, what: string): HTMLElement {
  if (r.kind === 'missing') {
    return h('p', { class: 'notice missing', 'data-state': 'missing' },
      `Not available yet: this server has no endpoint for ${midSentence(what)} (${r.id}). The page fills in once it lands.`);
  }
  if (r.kind === 'locked') {
    const needs = r.keyRequired && r.plan === 'pro' ? 'an API key' : `a key of the ${r.plan} plan or above`;
    // Why this reader lacks it: no key, a key the server refused, or a key of a lower plan.
    const anonymous = anonymousAccess();
    const why = r.held !== null
      ? `your ${r.held} key does not include this (needs the ${r.plan} plan). `
      : r.refused
        ? `your key was refused, so the page reads as ${anonymous}, which does not include it. Check the key with “API key” at the top of the page.`
        : `${anonymous} does not include it. Enter a key with “API key” at the top of the page.`;
    return h('p', { class: 'notice locked', 'data-state': 'locked' }, `${what} needs ${needs}; ${why}`);
  }
  if (r.status === null) {
    return h('p', { class: 'notice error', 'data-state': 'error', role: 'alert' },
      `Could not load ${midSentence(what)}: the server could not be reached (${r.message}). Reload the page to try again.`);
  }
  // A short wait (a server still loading its first snapshot answers 503 with Retry-After: 5) is
  // waited out by the page itself (main.ts re-renders it); a longer one (a day's quota) is the
  // reader's to wait. QA: the panel said "Try again in 5 s" and never did.
  const auto = r.retryAfter !== undefined && r.retryAfter <= AUTO_RETRY_MAX_S;
  const again = r.retryAfter === undefined ? '' : auto ? ` Trying again in ${waitText(Math.max(1, r.retryAfter))}.` : ` Try again in ${waitText(r.retryAfter)}.`;
  const attrs: Record<string, string> = { class: 'notice error', 'data-state': 'error', role: 'alert' };
  if (auto) attrs['data-retry-after'] = String(Math.max(1, r.retryAfter!));
  return h('p', attrs, `Could not load ${midSentence(what)}: ${r.message} (HTTP ${r.status}).${again}`);
}

/** The longest Retry-After (seconds) the page waits out on its own before loading again. */
export const AUTO_RETRY_MAX_S = 60;

/**
 * The wait (ms) before the page shown in `root` loads again by itself: the longest Retry-After of
 * its panels that asked for a short wait (notice()'s data-retry-after), or null when none did.
 */
export function autoRetryDelayMs(root: ParentNode): number | null {
  const waits = [...root.querySelectorAll<HTMLElement>('[data-retry-after]')].map((e) => Number(e.dataset.retryAfter));
  const ok = waits.filter((w) => Number.isFinite(w) && w > 0);
  return ok.length ? Math.max(...ok) * 1000 : null;
}

/**
 * What a reader without a key gets here: public-beta access while the server's QUORUM_PUBLIC_BETA
 * is on, plain anonymous access when it is off (QA: with it off, every locked panel spoke of
 * "anonymous public-beta access" on a server that has no public beta).
 */
export function anonymousAccess(): string {
  return routesConfig().publicBeta ? 'anonymous public-beta access' : 'anonymous access (this server has no public beta)';
}

/** A wait in seconds, as a reader counts it: "40 s", "12 min", "18 h 5 min" (minutes rounded up). */
export function waitText(seconds: number): string {
  if (seconds < 60) return `${seconds} s`;
  const minutes = Math.ceil(seconds / 60);
  if (minutes < 60) return `${minutes} min`;
  const [hours, rest] = [Math.floor(minutes / 60), minutes % 60];
  return rest ? `${hours} h ${rest} min` : `${hours} h`;
}

/**
 * `url` when it is a web address (http or https), else null: a link built from data (a venue's
 * page, evidence, a resolution source) never carries another scheme. QA: evidence from a local
 * file or a news provider with url `javascript:…` was rendered as a link (blocked by the page's
 * Content-Security-Policy when clicked, but a dead link that runs script wherever the policy is lost).
 */
export function webUrl(url: string | null | undefined): string | null {
  if (!url) return null;
  try {
    const u = new URL(url);
    return u.protocol === 'http:' || u.protocol === 'https:' ? u.href : null;
  } catch {
    return null;
  }
}

/**
 * `text` up to `max` characters, counted in code points (an emoji or other astral character is
 * never split into half a surrogate pair), cut after a whole word and ended with an ellipsis when
 * it is longer. QA: evidence snippets were cut at 280 UTF-16 units, mid-word and with no sign of
 * the cut ("two have a fair degree of infl").
 */
export function excerpt(text: string, max: number): string {
  const chars = [...text];
  if (chars.length <= max) return text;
  const cut = chars.slice(0, max).join('');
  const space = cut.lastIndexOf(' ');
  return `${(space > cut.length * 0.6 ? cut.slice(0, space) : cut).trimEnd()}…`;
}

/** The first of `texts` that is not blank: a heading or link text from nullable API fields, never empty. */
export function firstText(...texts: (string | null | undefined)[]): string {
  return texts.find((t) => t !== null && t !== undefined && t.trim() !== '') ?? '–';
}

/**
 * A table in a box that scrolls sideways on narrow screens. The box is a named region in the tab
 * order, so a keyboard reader can reach it and scroll it (axe: scrollable-region-focusable);
 * `label` names it and must be unique on the page, since a named region is a landmark.
 */
export function tableRegion(label: string, table: HTMLTableElement, id?: string): HTMLElement {
  return h('div', { class: 'table-wrap', role: 'region', 'aria-label': label, tabindex: 0, id }, table);
}

/** What a page shows instead of an empty table (and instead of an empty chart). */
export function nothingMatches(id?: string, text = 'Nothing matches these filters.'): HTMLElement {
  return h('p', { class: 'notice empty', 'data-state': 'empty', id, tabindex: id ? -1 : undefined }, text);
}

/**
 * A pager's navigation. `label` says what is paged: the header's navigation is already named
 * "Pages", and landmarks of one kind need different names (axe: landmark-unique).
 */
export function pager(label: string, ...links: (Child | Child[])[]): HTMLElement {
  return h('nav', { class: 'pager', 'aria-label': label }, ...links);
}

/** The hash route's query, as URLSearchParams (filters live in the URL, so links are shareable). */
export function hashQuery(): URLSearchParams {
  const i = location.hash.indexOf('?');
  return new URLSearchParams(i >= 0 ? location.hash.slice(i + 1) : '');
}

/** A link to `path` with `query` (empty values dropped). */
export function hashHref(path: string, query: Record<string, string | undefined | null> = {}): string {
  const qs = new URLSearchParams();
  for (const [k, v] of Object.entries(query)) if (v !== undefined && v !== null && v !== '') qs.set(k, v);
  const s = qs.toString();
  return `#${path}${s ? `?${s}` : ''}`;
}

/**
 * Where focus goes once the page a control led to has rendered (the router replaces the whole
 * page, so focus would fall to <body>): back on the control itself (a select, so ArrowDown steps
 * on; a button), or, after a pager link, on the new page's table, scrolled into view from its top.
 * Kept with the hash it was asked for, so it never applies to some later, unrelated render.
 */
interface FocusRequest { hash: string; id: string; scroll: boolean }
let focusRequest: FocusRequest | null = null;

/** The focus request for the render of the current hash, if any (taken: asked once). */
export function takeFocusRequest(): { id: string; scroll: boolean } | null {
  const r = focusRequest;
  focusRequest = null;
  return r && r.hash === location.hash ? r : null;
}

/** Goes to `hash` (a hashHref); once the page has rendered, focus is on element `focusId`. */
export function navigate(hash: string, focusId: string, scroll = false): void {
  const before = location.hash;
  location.hash = hash;
  // The same hash again renders nothing: focus stays where it is, and no request is left over.
  if (location.hash !== before) focusRequest = { hash: location.hash, id: focusId, scroll };
}

/** A link within the dashboard after which focus goes to `focusId` (see navigate). */
export function navLink(href: string, focusId: string, scroll: boolean, attrs: Record<string, string | undefined>, ...children: (Child | Child[])[]): HTMLAnchorElement {
  const a = h('a', { ...attrs, href }, ...children);
  a.addEventListener('click', (e) => {
    if (e.button !== 0 || e.metaKey || e.ctrlKey || e.shiftKey || e.altKey) return; // a new tab or window: no focus to move here
    const hash = new URL(a.href).hash;
    if (hash !== location.hash) focusRequest = { hash, id: focusId, scroll };
  });
  return a;
}

/** The id of the focused form control in `form`, or `fallback`: where focus goes back after a submit. */
export function focusedIn(form: HTMLFormElement, fallback: string): string {
  const el = document.activeElement;
  return el instanceof HTMLElement && el.id && form.contains(el) ? el.id : fallback;
}

export function select(name: string, label: string, options: [string, string][], value: string): HTMLElement {
  const s = h('select', { name, id: `f-${name}` }, ...options.map(([v, l]) => h('option', { value: v, selected: v === value }, l)));
  return h('label', { for: `f-${name}` }, `${label} `, s);
}

/**
 * A link's `value` among a menu's `known` entries, which the API matches in any case: the entry it
 * names in another case (QA: `Politics`, `METACULUS` were added beside politics and metaculus, and
 * counts named them so), or itself added to the entries when none does, so the menu shows what the
 * link asked for (empty: no filter, nothing added).
 */
export function menuEntry(known: readonly string[], value: string): { value: string; entries: string[] } {
  const found = known.find((k) => k.toLowerCase() === value.toLowerCase());
  if (found !== undefined) return { value: found, entries: [...known] };
  return { value, entries: value ? [...known, value] : [...known] };
}

/**
 * The menu of a list page's one filter, link parameter `name` (`all` clears it): changing it opens
 * `path` filtered so, focus kept on the menu (QA: a filter read from the link only was shown as
 * the whole list).
 */
export function filterMenu(name: string, label: string, entries: readonly string[], value: string, path: string): HTMLElement {
  const pick = select(name, label, [['', 'all'], ...entries.map((e): [string, string] => [e, e])], value);
  pick.querySelector('select')!.addEventListener('change', (e) => {
    navigate(hashHref(path, { [name]: (e.target as HTMLSelectElement).value }), `f-${name}`);
  });
  return h('div', { class: 'filters' }, pick);
}

/**
 * What a page past the end of a list shows (a link kept after the list shrank): saying so, and the
 * list's first page a link away (`pagerLabel`, `focusId` as its pager's; outside test: "No …
 * matches." and no way back).
 */
export function pastTheEnd(pagerLabel: string, firstPage: string, focusId: string): HTMLElement[] {
  return [nothingMatches(undefined, 'This page is past the end of the list.'), pager(pagerLabel, firstPageLink(firstPage, focusId))];
}

/** The link back to a list's first page (`text`: the list's own words for it), focus then on `focusId`. */
function firstPageLink(href: string, focusId: string, text = '« First page'): HTMLAnchorElement {
  return navLink(href, focusId, true, {}, text);
}

/**
 * A keyset list's pager: its first page, when the link's cursor `at` is not it, and the next, when
 * the API gave a `next` cursor; both keep the list's `query` (its filters: a `cursor` key in it
 * keeps its place in the link) at `path`, focus then on `focusId`. `param` is the link's cursor
 * parameter and `words` the two links' texts, for a list paged otherwise (a record history).
 */
export function listPager(label: string, focusId: string, path: string, query: Record<string, string | undefined | null>, at: string, next: string | null,
  param = 'cursor', words: [string, string] = ['« First page', 'Next page »']): HTMLElement {
  return pager(label, at ? firstPageLink(hashHref(path, query), focusId, words[0]) : '',
    next ? navLink(hashHref(path, { ...query, [param]: next }), focusId, true, { rel: 'next' }, words[1]) : '');
}

/**
 * What follows a list page's failed request when its link has a cursor (`cursor` not empty): the
 * list's first page a link away (`pagerLabel`, `focusId` as its pager's). A cursor the API does not
 * take (a link cut short when copied: 400, "not a cursor this endpoint issued") left the reader
 * with the notice alone and no way back to the list but the header (outside test).
 */
export function firstPageAfterFailure(pagerLabel: string, cursor: string, firstPage: string, focusId: string): HTMLElement[] {
  return cursor ? [pager(pagerLabel, firstPageLink(firstPage, focusId))] : [];
}

/**
 * What a page says of the values in its link it could not use, the default used instead
 * (`ignored`: "name=value (what it takes)"), or null when there are none (outside test: an
 * unknown value fell back silently, under a menu showing the default).
 */
export function ignoredInLink(ignored: readonly string[]): HTMLElement | null {
  return ignored.length === 0 ? null
    : h('p', { class: 'notice', id: 'ignored-in-link', role: 'status' }, `Not understood in the link, the default used instead: ${ignored.join('; ')}.`);
}

/**
 * A link's value of `name` when it is one of `allowed` (in any case with `anyCase`, for a value the
 * API reads so: `?kind=Market`), else `fallback`, the value named in `ignored` ("name=value
 * (`what`)", ignoredInLink); absent or empty: `fallback`, nothing named.
 */
export function linkChoice<T extends string>(q: URLSearchParams, name: string, allowed: readonly T[], fallback: T, ignored: string[], what: string, anyCase = false): T {
  const v = q.get(name);
  if (v === null || v === '') return fallback;
  const found = allowed.find((a) => a === v || (anyCase && a === v.toLowerCase()));
  if (found !== undefined) return found;
  ignored.push(`${name}=${v} (${what})`);
  return fallback;
}
