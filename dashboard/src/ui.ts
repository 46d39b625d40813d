/** Small DOM helpers, number formats, the colour-blind-safe palette and the panel states. */
import type { Result } from './api.ts';

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


export const pct = (p: number | null | undefined, digits = 1): string =>
  p === null || p === undefined ? '–' : `${(p * 100).toFixed(digits)}%`;
export const num = (x: number | null | undefined, digits = 3): string =>
  x === null || x === undefined ? '–' : x.toFixed(digits);
export const date = (iso: string | null | undefined): string => (iso ? iso.slice(0, 10) : '–');
export const interval = (ci: [number, number] | null | undefined, digits = 3): string =>
  ci ? `[${ci[0].toFixed(digits)}, ${ci[1].toFixed(digits)}]` : '';

/** Wilson 95% interval of k successes in n. */
export function wilson(k: number, n: number): [number, number] {
  if (n === 0) return [0, 1];
  const z = 1.959964;
  const p = k / n;
  const d = 1 + (z * z) / n;
  const c = (p + (z * z) / (2 * n)) / d;
  const m = (z * Math.sqrt((p * (1 - p)) / n + (z * z) / (4 * n * n))) / d;
  return [Math.max(0, c - m), Math.min(1, c + m)];
}

export function panel(title: string, ...children: (Child | Child[])[]): HTMLElement {
  return h('section', { class: 'panel' }, h('h2', {}, title), ...children);
}

/** What a panel shows instead of data: an endpoint not there yet, a plan the reader lacks, an error. */
export function notice(r: Exclude<Result<unknown>, { kind: 'ok' }>, what: string): HTMLElement {
  if (r.kind === 'missing') {
    return h('p', { class: 'notice missing', 'data-state': 'missing' },
      `Not available yet: this server has no ${what} endpoint (${r.id}). The page fills in once it lands.`);
  }
  if (r.kind === 'locked') {
    return h('p', { class: 'notice locked', 'data-state': 'locked' },
      `${what} needs ${r.keyRequired ? 'an API key' : `a key of the ${r.plan} plan or above`}; anonymous public-beta access does not include it. `,
      'Enter a key with “API key” at the top of the page.');
  }
  if (r.status === null) {
    return h('p', { class: 'notice error', 'data-state': 'error', role: 'alert' },
      `Could not load ${what}: the server could not be reached (${r.message}). Reload the page to try again.`);
  }
  return h('p', { class: 'notice error', 'data-state': 'error', role: 'alert' }, `Could not load ${what}: ${r.message} (HTTP ${r.status}).`);
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
export function tableRegion(label: string, table: HTMLTableElement): HTMLElement {
  return h('div', { class: 'table-wrap', role: 'region', 'aria-label': label, tabindex: 0 }, table);
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

export function select(name: string, label: string, options: [string, string][], value: string): HTMLElement {
  const s = h('select', { name, id: `f-${name}` }, ...options.map(([v, l]) => h('option', { value: v, selected: v === value }, l)));
  return h('label', { for: `f-${name}` }, `${label} `, s);
}
