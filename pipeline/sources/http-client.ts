/**
 * The one HTTP client of every outside source (venues, official data, news): JSON over HTTP with
 * a per-source rate limit, retries with backoff on 429 and 5xx (obeying Retry-After up to a cap),
 * a total deadline per request, and zod validation of the body. Errors are `SourceHttpError` with a
 * kind, so callers can record why an item or a venue failed.
 *
 * Deadline: one real timer per request (pipeline/net/deadline.ts, not AbortSignal.timeout, which
 * can be garbage-collected before it fires) covering queueing, connecting, retries, backoff and
 * reading the whole body, so a silent host, a stalled body or a body trickling a byte a second all
 * end at `timeoutMs` with kind `timeout` (the caller's signal: kind `aborted`). Each client has its
 * own connection pool, renewed after a stopped request (pipeline/net/pool.ts).
 *
 * Transport: undici's `request` API, the engine under Node's fetch without the WHATWG Response
 * and stream layers: a sync of thousands of markets spends about half the CPU on HTTP that fetch
 * would. It behaves like fetch where it matters here: redirects are followed (up to 5), and gzip,
 * brotli and deflate bodies are asked for and decoded. A 2xx body is read up to `maxBodyBytes`
 * (MAX_BODY_BYTES, decoded bytes counted), an error body up to ERROR_BODY_BYTES.
 */
import { promisify } from 'node:util';
import { brotliDecompress, gunzip, inflate, type BrotliOptions, type ZlibOptions } from 'node:zlib';
import PQueue from 'p-queue';
import { request, type Dispatcher } from 'undici';
import type { z } from 'zod';
import { startDeadline, untilAborted, type Deadline } from '../net/deadline.ts';
import { createResettablePool } from '../net/pool.ts';

/** `timeout`: the request's own deadline passed; `aborted`: the caller's signal stopped it. */
export type SourceErrorKind = 'rate_limited' | 'server_error' | 'client_error' | 'timeout' | 'aborted' | 'network' | 'invalid_json' | 'invalid_payload';

export class SourceHttpError extends Error {
  constructor(
    readonly kind: SourceErrorKind,
    readonly url: string,
    message: string,
    readonly status?: number,
    /**
     * For client_error: the start of the answer's body (at most {@link ERROR_BODY_CHARS}
     * characters), where sources say why they refused (FRED's `error_message`). Not in `message`:
     * the caller decides what of it to show (it may echo the request).
     */
    readonly body?: string,
  ) {
    super(`${kind}: ${message} (${url})`);
    this.name = 'SourceHttpError';
  }
}

/**
 * Thrown by a `parseJson` whose source answered a 2xx with its rate-limit notice instead of data
 * (GDELT: a 200 with "Please limit requests to one every 5 seconds…"): the client treats it as a
 * 429 (kind `rate_limited`, retried with backoff), the notice as the message.
 */
export class RateLimitNotice extends Error {
  override readonly name = 'RateLimitNotice';
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
  /**
   * Total deadline of one request (ms): queueing, connecting, headers, retries, backoff and reading
   * the whole body included (pipeline/net/deadline.ts). Default 30 s.
   */
  timeoutMs?: number;
  headers?: Record<string, string>;
  /**
   * Reads a body's text into a value (default `JSON.parse`); throwing counts as a garbled body
   * (`invalid_json`, retried), for sources whose JSON needs a lenient reading (GDELT); throwing a
   * {@link RateLimitNotice} counts as a 429 (`rate_limited`, retried).
   */
  parseJson?: (text: string) => unknown;
  /**
   * Most bytes of a 2xx body read (decoded bytes for a compressed one); past it the request fails
   * at once as `invalid_payload` (not retried). Default {@link MAX_BODY_BYTES}.
   */
  maxBodyBytes?: number;
  /**
   * The undici dispatcher. Default: the client's own keep-alive pool that follows redirects,
   * replaced by a fresh one once a request has been stopped and none is in flight
   * (pipeline/net/pool.ts: undici leaves a spare connection open after an abort).
   */
  dispatcher?: Dispatcher;
}

export interface SourceClient {
  getJson<S extends z.ZodType>(url: string | URL, schema: S, signal?: AbortSignal): Promise<z.infer<S>>;
  /** The raw parsed JSON without validation (for payloads validated item by item). */
  getRaw(url: string | URL, signal?: AbortSignal): Promise<unknown>;
  readonly stats: { requests: number; retries: number };
}

/** Characters of a refused request's body kept on its error ({@link SourceHttpError.body}). */
export const ERROR_BODY_CHARS = 2000;
/** Bytes of a refused request's body read at most (the rest is not read: the connection is dropped). */
const ERROR_BODY_BYTES = 64 * 1024;
/**
 * Bytes of a 2xx body read at most, by default: a venue's page is a few MB (Kalshi's 1,000 markets
 * about 3 MB). Without a bound a body streaming without end, or a small gzip body inflating to
 * gigabytes, was read into memory until the deadline or V8's string limit, then retried (QA).
 */
export const MAX_BODY_BYTES = 64 * 1024 * 1024;

/** A 2xx body over the client's maxBodyBytes (raw or decoded). */
class BodyTooLarge extends Error {}

type Decode = (b: Buffer, options: ZlibOptions & BrotliOptions) => Promise<Buffer>;
const DECODERS: Record<string, Decode> = {
  gzip: promisify(gunzip) as Decode,
  'x-gzip': promisify(gunzip) as Decode,
  br: promisify(brotliDecompress) as Decode,
  deflate: promisify(inflate) as Decode,
};

/** A header's value (undici gives repeated headers as arrays). */
function header(headers: Dispatcher.ResponseData['headers'], name: string): string | null {
  const v = headers[name];
  return v === undefined ? null : Array.isArray(v) ? v.join(', ') : v;
}

/** The response's Content-Encodings in the order to undo them (right to left), identity left out. */
function codingsToUndo(res: Dispatcher.ResponseData): string[] {
  return (header(res.headers, 'content-encoding') ?? '').split(',').map((c) => c.trim().toLowerCase()).filter((c) => c && c !== 'identity').reverse();
}

/**
 * `bytes` decoded per `codings` (from codingsToUndo), as text; throws on a coding it does not know,
 * and BodyTooLarge when a decoded stage would exceed `maxBytes` (zlib stops there).
 */
async function decodeText(bytes: Buffer, codings: readonly string[], maxBytes = Infinity): Promise<string> {
  let out = bytes;
  for (const coding of codings) {
    const decode = DECODERS[coding];
    if (!decode) throw new Error(`unsupported Content-Encoding ${coding}`);
    try {
      out = await decode(out, Number.isFinite(maxBytes) ? { maxOutputLength: maxBytes } : {});
    } catch (err) {
      if ((err as { code?: string }).code === 'ERR_BUFFER_TOO_LARGE') throw new BodyTooLarge();
      throw err;
    }
  }
  return out.toString('utf8');
}

/**
 * The body as text, decoded per Content-Encoding (several codings apply right to left), a leading
 * UTF-8 byte order mark dropped (as undici's `text()` does, compressed or not); throws BodyTooLarge
 * past `maxBytes`, raw or decoded (the rest is not read: the connection is dropped).
 */
async function bodyText(res: Dispatcher.ResponseData, maxBytes: number): Promise<string> {
  const chunks: Buffer[] = [];
  let bytes = 0;
  for await (const chunk of res.body) {
    bytes += (chunk as Buffer).length;
    if (bytes > maxBytes) throw new BodyTooLarge();
    chunks.push(chunk as Buffer);
  }
  const codings = codingsToUndo(res);
  const raw = Buffer.concat(chunks, bytes);
  const text = codings.length === 0 ? raw.toString('utf8') : await decodeText(raw, codings, maxBytes);
  return text.charCodeAt(0) === 0xfeff ? text.slice(1) : text;
}

/**
 * The start of a refused request's body: at most ERROR_BODY_BYTES are read, so a source answering
 * a 4xx with a body of any size (or one that never ends) costs neither memory nor the deadline
 * (it was read whole, until the deadline). A compressed body cut there cannot be decoded: undefined.
 */
async function errorBodyText(res: Dispatcher.ResponseData): Promise<string | undefined> {
  const chunks: Buffer[] = [];
  let bytes = 0;
  let cut = false;
  for await (const chunk of res.body) {
    chunks.push(chunk as Buffer);
    bytes += (chunk as Buffer).length;
    if (bytes >= ERROR_BODY_BYTES) {
      cut = true;
      break; // ends the body: the rest is never read
    }
  }
  const codings = codingsToUndo(res);
  if (codings.length > 0 && cut) return undefined;
  return decodeText(Buffer.concat(chunks), codings).catch(() => undefined);
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
    parseJson = JSON.parse,
    maxBodyBytes = MAX_BODY_BYTES,
  } = options;
  const pool = options.dispatcher ? null : createResettablePool();
  const dispatcherNow = () => options.dispatcher ?? pool!.dispatcher;
  const requestHeaders = { accept: 'application/json', 'accept-encoding': 'gzip, br, deflate', ...headers };
  // strict: a rolling window. p-queue's default fixed windows let two requests out a few ms apart
  // at a window's boundary: twice a source's documented rate (GDELT: one request every 5 s).
  // (An interval of 0 is no limit, which p-queue refuses in strict mode.)
  const queue = new PQueue({ concurrency, intervalCap: requestsPerInterval, interval: intervalMs, strict: intervalMs > 0 });
  const stats = { requests: 0, retries: 0 };

  async function attempt(url: string, signal: AbortSignal): Promise<{ retryIn: number | null; body?: unknown }> {
    stats.requests++;
    let res: Dispatcher.ResponseData;
    try {
      res = await queue.add(() => request(url, { method: 'GET', headers: requestHeaders, signal, dispatcher: dispatcherNow() }), { signal });
    } catch (err) {
      if (signal.aborted) throw err; // getRaw turns it into timeout / aborted
      return { retryIn: -1, body: new SourceHttpError('network', url, (err as Error).message) };
    }
    const status = res.statusCode;
    if (status === 429 || status >= 500) {
      await res.body.dump().catch(() => {});
      const kind = status === 429 ? 'rate_limited' : 'server_error';
      const after = parseRetryAfter(header(res.headers, 'retry-after'));
      if (after !== null && after > maxRetryAfterMs) {
        throw new SourceHttpError(kind, url, `Retry-After ${after} ms exceeds the cap of ${maxRetryAfterMs} ms`, status);
      }
      return { retryIn: after ?? -1, body: new SourceHttpError(kind, url, `HTTP ${status}`, status) };
    }
    if (status < 200 || status > 299) {
      // The body says why (FRED: {"error_code":400,"error_message":"Bad Request.  ..."}).
      const body = await errorBodyText(res).then((t) => t?.slice(0, ERROR_BODY_CHARS), () => undefined);
      throw new SourceHttpError('client_error', url, `HTTP ${status}`, status, body);
    }
    let text: string;
    try {
      // undici aborts the body when the signal does (the deadline covers a trickling body too).
      text = await bodyText(res, maxBodyBytes);
    } catch (err) {
      if (signal.aborted) throw err;
      // Not a transient fault: the same request would bring the same body.
      if (err instanceof BodyTooLarge) throw new SourceHttpError('invalid_payload', url, `body over ${maxBodyBytes} bytes (the client's maxBodyBytes): not read`, status);
      return { retryIn: -1, body: new SourceHttpError('network', url, `body unreadable: ${(err as Error).message}`) };
    }
    try {
      return { retryIn: null, body: parseJson(text) };
    } catch (err) {
      // A throttling notice served with a 2xx (GDELT's "Please limit requests…"): a 429 by another name.
      if (err instanceof RateLimitNotice) {
        return { retryIn: -1, body: new SourceHttpError('rate_limited', url, `HTTP ${status}: ${err.message}`, status) };
      }
      // A truncated or garbled body: a transient fault at the source, worth one more try.
      return { retryIn: -1, body: new SourceHttpError('invalid_json', url, `body is not JSON (${text.length} bytes)`) };
    }
  }

  /**
   * The attempts and backoffs of one request, all under one deadline. A Retry-After that ends past
   * the deadline is not waited for: the source's answer (rate_limited, server_error) is the error
   * at once. Waited for, the request ended at the deadline as a `timeout`, as if the source had not
   * answered (QA: a venue answering 429 with Retry-After 5 s under a 3 s deadline was reported
   * "deadline of 3000 ms exceeded"; the operator looked at the network instead of the rate).
   */
  async function attempts(href: string, deadline: Deadline): Promise<unknown> {
    const { signal } = deadline;
    let last: unknown;
    for (let i = 0; i <= retries; i++) {
      const { retryIn, body } = await attempt(href, signal);
      if (retryIn === null) return body;
      last = body;
      if (i === retries) break;
      if (retryIn >= 0 && retryIn >= deadline.remaining()) {
        const e = body as SourceHttpError;
        throw new SourceHttpError(e.kind, href, `HTTP ${e.status}: Retry-After ${retryIn} ms ends past the request's deadline (${deadline.remaining()} ms left of ${timeoutMs} ms)`, e.status);
      }
      stats.retries++;
      const wait = retryIn >= 0 ? retryIn : backoffMs * 2 ** i * (0.5 + Math.random());
      await sleep(wait, signal);
    }
    throw last;
  }

  /** The error of a request stopped by its deadline (timeout) or by the caller's signal (aborted). */
  function stopped(href: string, deadline: Deadline, outer: AbortSignal | undefined): SourceHttpError {
    if (deadline.expired || !outer?.aborted) return new SourceHttpError('timeout', href, `deadline of ${timeoutMs} ms exceeded`);
    const why = outer.reason instanceof Error ? outer.reason.message : String(outer.reason ?? 'aborted');
    return new SourceHttpError('aborted', href, `stopped by the caller (${why})`);
  }

  async function getRaw(url: string | URL, outer?: AbortSignal): Promise<unknown> {
    const href = String(url);
    // One real timer for the whole request (see pipeline/net/deadline.ts for why not AbortSignal.timeout).
    const deadline = startDeadline(timeoutMs, outer);
    pool?.begin();
    let wasStopped = false;
    try {
      // untilAborted: control comes back at the deadline even if a read ignored the abort.
      return await untilAborted(attempts(href, deadline), deadline.signal);
    } catch (err) {
      if (deadline.signal.aborted) {
        wasStopped = true;
        throw stopped(href, deadline, outer);
      }
      throw err;
    } finally {
      deadline.clear();
      pool?.end(wasStopped);
    }
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
