/**
 * The one HTTP client of every outside source (venues, official data, news): JSON over fetch with
 * a per-source rate limit, retries with backoff on 429 and 5xx (obeying Retry-After up to a cap),
 * a total deadline per request, and zod validation of the body. Errors are `SourceHttpError` with a
 * kind, so callers can record why an item or a venue failed.
 */
import PQueue from 'p-queue';
import type { z } from 'zod';

export type SourceErrorKind = 'rate_limited' | 'server_error' | 'client_error' | 'timeout' | 'network' | 'invalid_json' | 'invalid_payload';

export class SourceHttpError extends Error {
  constructor(
    readonly kind: SourceErrorKind,
    readonly url: string,
    message: string,
    readonly status?: number,
  ) {
    super(`${kind}: ${message} (${url})`);
    this.name = 'SourceHttpError';
  }
}

export interface SourceClientOptions {
  /** Requests per interval (the source's documented rate limit). */
  requestsPerInterval?: number;
  intervalMs?: number;
  /** Requests in flight at once. */
  concurrency?: number;
  /** Retries after the first attempt, on 429, 5xx and network errors. */
  retries?: number;
  /** Base of the exponential backoff when the server gives no Retry-After. */
  backoffMs?: number;
  /** Longest Retry-After obeyed; longer waits count as a failure. */
  maxRetryAfterMs?: number;
  /** Total deadline of one request, retries included. */
  timeoutMs?: number;
  headers?: Record<string, string>;
  fetchImpl?: typeof fetch;
}

export interface SourceClient {
  getJson<S extends z.ZodType>(url: string | URL, schema: S, signal?: AbortSignal): Promise<z.infer<S>>;
  /** The raw parsed JSON without validation (for payloads validated item by item). */
  getRaw(url: string | URL, signal?: AbortSignal): Promise<unknown>;
  readonly stats: { requests: number; retries: number };
}

const sleep = (ms: number, signal?: AbortSignal) =>
  new Promise<void>((resolve, reject) => {
    if (signal?.aborted) return reject(signal.reason);
    const t = setTimeout(resolve, ms);
    signal?.addEventListener('abort', () => { clearTimeout(t); reject(signal.reason); }, { once: true });
  });

/** Retry-After as milliseconds: delta-seconds or an HTTP date; null when absent or unreadable. */
export function parseRetryAfter(value: string | null, now = Date.now()): number | null {
  if (!value) return null;
  if (/^\d+(\.\d+)?$/.test(value.trim())) return Math.round(Number(value) * 1000);
  const at = Date.parse(value);
  return Number.isNaN(at) ? null : Math.max(0, at - now);
}

export function createSourceClient(options: SourceClientOptions = {}): SourceClient {
  const {
    requestsPerInterval = 10,
    intervalMs = 1000,
    concurrency = 4,
    retries = 4,
    backoffMs = 250,
    maxRetryAfterMs = 30_000,
    timeoutMs = 30_000,
    headers = {},
    fetchImpl = fetch,
  } = options;
  const queue = new PQueue({ concurrency, intervalCap: requestsPerInterval, interval: intervalMs });
  const stats = { requests: 0, retries: 0 };

  async function attempt(url: string, signal: AbortSignal): Promise<{ retryIn: number | null; body?: unknown }> {
    stats.requests++;
    let res: Response;
    try {
      res = await queue.add(() => fetchImpl(url, { headers: { accept: 'application/json', ...headers }, signal }), { signal });
    } catch (err) {
      if (signal.aborted) throw new SourceHttpError('timeout', url, 'deadline exceeded');
      return { retryIn: -1, body: new SourceHttpError('network', url, (err as Error).message) };
    }
    if (res.status === 429 || res.status >= 500) {
      await res.body?.cancel().catch(() => {});
      const kind = res.status === 429 ? 'rate_limited' : 'server_error';
      const after = parseRetryAfter(res.headers.get('retry-after'));
      if (after !== null && after > maxRetryAfterMs) {
        throw new SourceHttpError(kind, url, `Retry-After ${after} ms exceeds the cap of ${maxRetryAfterMs} ms`, res.status);
      }
      return { retryIn: after ?? -1, body: new SourceHttpError(kind, url, `HTTP ${res.status}`, res.status) };
    }
    if (!res.ok) {
      await res.body?.cancel().catch(() => {});
      throw new SourceHttpError('client_error', url, `HTTP ${res.status}`, res.status);
    }
    let text: string;
    try {
      text = await res.text();
    } catch (err) {
      if (signal.aborted) throw new SourceHttpError('timeout', url, 'deadline exceeded');
      return { retryIn: -1, body: new SourceHttpError('network', url, `body cut off: ${(err as Error).message}`) };
    }
    try {
      return { retryIn: null, body: JSON.parse(text) };
    } catch {
      // A truncated or garbled body: a transient fault at the source, worth one more try.
      return { retryIn: -1, body: new SourceHttpError('invalid_json', url, `body is not JSON (${text.length} bytes)`) };
    }
  }

  async function getRaw(url: string | URL, outer?: AbortSignal): Promise<unknown> {
    const href = String(url);
    const signal = outer ? AbortSignal.any([outer, AbortSignal.timeout(timeoutMs)]) : AbortSignal.timeout(timeoutMs);
    let last: unknown;
    for (let i = 0; i <= retries; i++) {
      const { retryIn, body } = await attempt(href, signal);
      if (retryIn === null) return body;
      last = body;
      if (i === retries) break;
      stats.retries++;
      const wait = retryIn >= 0 ? retryIn : backoffMs * 2 ** i * (0.5 + Math.random());
      try {
        await sleep(wait, signal);
      } catch {
        throw new SourceHttpError('timeout', href, 'deadline exceeded while backing off');
      }
    }
    throw last;
  }

  async function getJson<S extends z.ZodType>(url: string | URL, schema: S, signal?: AbortSignal): Promise<z.infer<S>> {
    const body = await getRaw(url, signal);
    const parsed = schema.safeParse(body);
    if (!parsed.success) {
      const issue = parsed.error.issues[0]!;
      throw new SourceHttpError('invalid_payload', String(url), `${issue.path.join('.') || '(root)'}: ${issue.message}`);
    }
    return parsed.data;
  }

  return { getJson, getRaw, stats };
}
