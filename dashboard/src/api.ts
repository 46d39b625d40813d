/**
 * The dashboard's one door to the API: same origin, anonymous public-beta access by default, or
 * the reader's own key (kept in localStorage, sent as X-API-Key). The server embeds which route
 * needs which plan (#quorum-routes, from the same entitlement table the API enforces), so a page
 * never calls an endpoint that does not exist yet or that the reader's plan cannot read: those
 * panels say so instead (and the browser logs no failed request).
 */

export type Plan = 'pro' | 'api' | 'enterprise';
export interface RouteInfo {
  path: string;
  /** null: open to anyone here (operational, or a public read during the beta). */
  plan: Plan | null;
  keyRequired: boolean;
}
interface Config {
  publicBeta: boolean;
  routes: Record<string, RouteInfo>;
}

const RANK: Record<Plan, number> = { pro: 1, api: 2, enterprise: 3 };
const KEY_STORE = 'quorum.apiKey';

let config: Config | null = null;
export function routesConfig(): Config {
  if (config) return config;
  const el = document.getElementById('quorum-routes');
  config = el?.textContent ? (JSON.parse(el.textContent) as Config) : { publicBeta: true, routes: {} };
  return config;
}

export function apiKey(): string | null {
  try {
    return localStorage.getItem(KEY_STORE);
  } catch {
    return null;
  }
}
export function setApiKey(key: string | null): void {
  if (key) localStorage.setItem(KEY_STORE, key);
  else localStorage.removeItem(KEY_STORE);
  keyCheckPromise = null;
}

export type Result<T> =
  | { kind: 'ok'; body: T }
  /** held: the plan of the reader's key when it is too low; refused: a key was entered and the server refused it. */
  | { kind: 'locked'; plan: Plan; keyRequired: boolean; held: Plan | null; refused: boolean }
  | { kind: 'missing'; id: string }
  /**
   * status null: no HTTP answer at all (connection refused or reset, offline, DNS). retryAfter:
   * the seconds a 429 or 503 asked the reader to wait (its Retry-After), when it gave them.
   */
  | { kind: 'error'; status: number | null; message: string; retryAfter?: number };

/**
 * What the server said of the reader's key (GET /api/usage/): no key; its plan; refused (401 or
 * 403: unknown or revoked); or unchecked, when no answer came (status null) or another error did.
 * Unchecked says nothing about the key: it is asked again by the next request, and the panels that
 * need it fail as the request did, instead of calling a good key refused (QA: a key entered while
 * the server could not be reached was "refused" in the header and in every keyed panel).
 */
export type KeyCheck =
  | { kind: 'anonymous' }
  | { kind: 'plan'; plan: Plan }
  | { kind: 'refused' }
  | { kind: 'unchecked'; status: number | null; message: string };

/** Fired on window with each key check's answer (detail: KeyCheck), for the header to show. */
export const KEY_CHECKED_EVENT = 'quorum:key-checked';

let keyCheckPromise: Promise<KeyCheck> | null = null;

async function askKey(key: string): Promise<KeyCheck> {
  let res: Response;
  try {
    res = await fetch('/api/usage/', { headers: { 'X-API-Key': key, Accept: 'application/json' } });
  } catch (err) {
    return { kind: 'unchecked', status: null, message: (err as Error).message };
  }
  if (res.status === 401 || res.status === 403) return { kind: 'refused' };
  const body = (await res.json().catch(() => null)) as { key?: { plan?: string }; detail?: string; title?: string } | null;
  const plan = body?.key?.plan;
  if (res.ok && plan !== undefined && Object.hasOwn(RANK, plan)) return { kind: 'plan', plan: plan as Plan };
  return { kind: 'unchecked', status: res.status, message: body?.detail ?? body?.title ?? (res.ok ? 'the answer could not be read' : res.statusText) };
}

/** The reader's key as the server sees it: asked once, and again after an unchecked answer. */
export function keyCheck(): Promise<KeyCheck> {
  const key = apiKey();
  if (!key) return Promise.resolve({ kind: 'anonymous' });
  if (keyCheckPromise) return keyCheckPromise;
  const asked = askKey(key);
  keyCheckPromise = asked;
  void asked.then((check) => {
    if (check.kind === 'unchecked' && keyCheckPromise === asked) keyCheckPromise = null;
    window.dispatchEvent(new CustomEvent<KeyCheck>(KEY_CHECKED_EVENT, { detail: check }));
  });
  return asked;
}

/** True when route `id` is served here (it may not have landed yet). */
export function hasRoute(id: string): boolean {
  return Object.hasOwn(routesConfig().routes, id);
}

/**
 * GET route `id` with path parameters and query: the body, or why not (missing route, a plan the
 * reader lacks, an API error with its problem detail, no answer at all). Never throws: a request
 * that fails at the network level is an error result like an HTTP error, so it costs its own
 * panel only, not the whole page.
 */
export function get<T>(id: string, params: Record<string, string> = {}, query: Record<string, string | undefined> = {}): Promise<Result<T>> {
  return request<T>(id, params, query, false);
}

async function request<T>(id: string, params: Record<string, string>, query: Record<string, string | undefined>, retried: boolean): Promise<Result<T>> {
  const route = routesConfig().routes[id];
  if (!route) return { kind: 'missing', id };
  const asked = keyCheck();
  const check = await asked;
  if (route.plan !== null || route.keyRequired) {
    // No word on the key (no answer, or an error): this panel fails as that request did.
    if (check.kind === 'unchecked') return { kind: 'error', status: check.status, message: check.message };
    const plan = check.kind === 'plan' ? check.plan : null;
    if (plan === null || (route.plan !== null && RANK[plan] < RANK[route.plan])) {
      return { kind: 'locked', plan: route.plan ?? 'pro', keyRequired: route.keyRequired, held: plan, refused: check.kind === 'refused' };
    }
  }
  let url = route.path.replace(/\{(\w+)\}/g, (_m, name: string) => encodeURIComponent(params[name] ?? ''));
  const qs = new URLSearchParams();
  for (const [k, v] of Object.entries(query)) if (v !== undefined && v !== '') qs.set(k, v);
  if ([...qs].length) url += `?${qs}`;
  const headers: Record<string, string> = { Accept: 'application/json' };
  // A key the server refused would turn every public read into a 401: send it only once accepted.
  const key = apiKey();
  if (key && check.kind === 'plan') headers['X-API-Key'] = key;
  let res: Response;
  try {
    res = await fetch(url, { headers });
  } catch (err) {
    // fetch rejects (a TypeError, "Failed to fetch") only when no HTTP answer came at all.
    return { kind: 'error', status: null, message: (err as Error).message };
  }
  // The key was accepted when checked and is refused now (revoked mid-session): the check is
  // dropped and the request made once more, as after a reload, so public reads go on anonymously
  // and keyed panels say the key was refused (QA: every panel, public ones included, was a 401
  // until the page was reloaded, and the header still gave the plan).
  if (res.status === 401 && headers['X-API-Key'] !== undefined && !retried) {
    if (keyCheckPromise === asked) keyCheckPromise = null;
    return request<T>(id, params, query, true);
  }
  // A body cut off by the network also rejects here: an answer that cannot be read.
  const body = (await res.json().catch(() => null)) as (T & { detail?: string; title?: string }) | null;
  if (res.ok && body) return { kind: 'ok', body };
  const message = body?.detail ?? body?.title ?? (res.ok ? 'the answer could not be read' : res.statusText);
  // A quota used up (429) says when the next request is allowed: the panel passes it on (QA: it said
  // only that the limit was used up).
  const retryAfter = retryAfterSeconds(res.headers.get('Retry-After'));
  return retryAfter === null ? { kind: 'error', status: res.status, message } : { kind: 'error', status: res.status, message, retryAfter };
}

/**
 * A keyset list's page read from `cursor` by `read`, or its first page when the API says the
 * cursor expired (410 cursor_expired: a newer snapshot re-ordered the list since the link was
 * made); `restarted` says which, for the page to say so.
 */
export async function pageOrFirst<T>(read: (cursor: string) => Promise<Result<T>>, cursor: string): Promise<{ list: Result<T>; restarted: boolean }> {
  const asked = await read(cursor);
  if (cursor === '' || asked.kind !== 'error' || asked.status !== 410) return { list: asked, restarted: false };
  return { list: await read(''), restarted: true };
}

/** Retry-After as seconds from now: delta-seconds or an HTTP date; null when absent or unreadable. */
function retryAfterSeconds(value: string | null): number | null {
  if (value === null || value.trim() === '') return null;
  if (/^\d+$/.test(value.trim())) return Number(value.trim());
  const at = Date.parse(value);
  return Number.isNaN(at) ? null : Math.max(0, Math.ceil((at - Date.now()) / 1000));
}

/**
 * GET of an operational path (health), outside the registry's entitlements: the body, or why not,
 * as `get` says it: an HTTP error with its status and problem detail (a 503 `not_ready`), or
 * status null when no answer came at all (the server stopped, offline). The two read apart: QA, a
 * stopped server read "readiness: not ready", as if it answered and had no snapshot.
 */
export async function getPlain<T>(path: string): Promise<Result<T>> {
  let res: Response;
  try {
    res = await fetch(path, { headers: { Accept: 'application/json' } });
  } catch (err) {
    return { kind: 'error', status: null, message: (err as Error).message };
  }
  const body = (await res.json().catch(() => null)) as (T & { detail?: string; title?: string }) | null;
  if (res.ok && body) return { kind: 'ok', body };
  return { kind: 'error', status: res.status, message: body?.detail ?? body?.title ?? (res.ok ? 'the answer could not be read' : res.statusText) };
}
