/**
 * The model runner: asks every configured model for every task's probability (DESIGN §6).
 *
 * One `openai` client and one p-queue per model (concurrency = `max_concurrency`, at most
 * `requests_per_minute` calls started in any rolling 60 s). Each call has a total deadline
 * (pipeline/net/deadline.ts: a real timer, not AbortSignal.timeout) covering the SDK's own retries (429/5xx/connection errors, `maxRetries: 2`)
 * and our one content retry; a Retry-After that does not fit in what is left of the deadline is
 * not obeyed: the call fails at once as `rate_limited` (or `server_error`).
 *
 * A reply that is not JSON (or whose HTTP body is cut off), violates the schema, or stopped at
 * the token limit (finish_reason "length") is asked once more, then recorded as a failed call. A
 * JSON object inside other text (a sentence before it, a fence, a `<think>` block) is the reply.
 * Every call becomes a `model_calls` row; only a validated reply becomes `forecasts` rows (one per
 * configured language, all from the same reply): a forecast is never invented. A valid forecast
 * whose translations are still bad when asked again, or whose reply asked again fails otherwise, is
 * kept without them (status ok, the missing languages in error_message). Rows come back in
 * task order, then model order, whatever order the calls finished in.
 *
 * Stopping: `signal` aborts hard (in-flight calls are cancelled, the promise rejects: for callers
 * that drop everything, like an HTTP request that went away); `stopSignal` stops gracefully (no
 * new call starts, in-flight calls finish within their deadline, the promise resolves with
 * `stopped: true` and the rows of every finished call: what the forecast stage journals on SIGTERM).
 *
 * Budget: with `budgetUsd`, once the cost of finished calls (plus `spentUsd` from earlier sessions
 * of the run) reaches the budget, no new call starts; every (task, model) not yet started becomes
 * a `skipped` call row with error_kind `budget_exhausted` (calls already in flight finish, so the
 * spend can exceed the budget by at most the calls in flight).
 *
 * | fault                                   | status  | error_kind       | attempts           |
 * |-----------------------------------------|---------|------------------|--------------------|
 * | 429 (Retry-After fits the deadline)     | failed  | rate_limited     | 3 (SDK retries 2)  |
 * |   (no Retry-After: x-ratelimit-reset-*)  |         |                  |                    |
 * | 429 (Retry-After beyond deadline / 60 s)| failed  | rate_limited     | 1                  |
 * | 429 insufficient_quota, 402 (no credit)  | failed  | quota_exhausted  | 1 (not retried)    |
 * | 5xx                                     | failed  | server_error     | 3                  |
 * | hang / stalled body                     | failed  | timeout          | 1 (deadline)       |
 * | still queued at `deadlineAt`            | failed  | timeout          | 0 (never sent)     |
 * | connection refused / reset              | failed  | network          | 3                  |
 * | content not JSON, or an empty 200 body  | failed  | invalid_json     | 2 (asked again)    |
 * | JSON that violates the schema           | failed  | schema_violation | 2                  |
 * | finish_reason "length" (Mistral: also   | failed  | truncated        | 2                  |
 * | "model_length")                         |         |                  |                    |
 * | HTTP body cut mid-way                   | failed  | truncated_body   | 2                  |
 * | finish_reason "insufficient_system_      | failed  | server_error     | 2                  |
 * |   resource" (DeepSeek: interrupted)      |         |                  |                    |
 * | refusal set, or finish_reason           | failed  | refused          | 1 (not asked again)|
 * |   "content_filter", or the prompt       |         |                  |                    |
 * |   filtered (400/403, isPromptFiltered;  |         |                  |                    |
 * |   OpenAI's 400 invalid_prompt)          |         |                  |                    |
 * | an error object with status 200         | failed  | by its code, as  | 2 (asked again;    |
 * |   (OpenRouter, once generation started; |         | an HTTP error    |  402: 1)           |
 * |   at the top or in the choice)          |         |                  |                    |
 * | budget spent before the call started    | skipped | budget_exhausted | 0                  |
 * A fault that clears on the second ask gives status ok with attempts 2.
 */
import { randomUUID } from 'node:crypto';
import { setMaxListeners } from 'node:events';
import OpenAI from 'openai';
import { zodResponseFormat } from 'openai/helpers/zod';
import PQueue from 'p-queue';
import { z } from 'zod';
import { Agent } from 'undici';
import { startDeadline, untilAborted } from '../net/deadline.ts';
import { createResettablePool, type ResettablePool } from '../net/pool.ts';
import type { RAW_TABLES } from '../warehouse/tables.ts';
import { roundUsd, type ResolvedModel } from './config.ts';
import { languageKey, renderPrompt, type ForecastTask, type RenderedPrompt } from './prompts.ts';

export type { ForecastTask } from './prompts.ts';

/**
 * The structured reply every model must give (sent as a strict json_schema, checked with zod). Its
 * reasoning must have some text, as a translation's must (textSchema): a blank one (`""`,
 * whitespace) was an ok call whose forecast was stored and served with an empty reasoning (QA);
 * it is a schema violation, asked again like any other.
 */
export const forecastReplySchema = z
  .object({
    probability: z.number().min(0).max(1),
    reasoning: z.string().refine((s) => s.trim() !== '', 'a blank reasoning'),
    key_factors: z.array(z.string()),
  });
// Not .strict(): the schema sent to the model forbids extra keys (additionalProperties: false),
// but a JSON-mode reply with an extra key still carries a valid forecast; extras are dropped.
export type ForecastReply = z.infer<typeof forecastReplySchema> & {
  translations?: Record<string, { reasoning: string; key_factors: string[] }>;
};

/**
 * One translation: its reasoning must have some text. A blank one (`""`, whitespace) was stored and
 * served as the model's reasoning in that language, an empty paragraph in the language feeds and the
 * dashboard (QA); it is a schema violation, asked again like any other (the refinement is checked
 * here, it is not part of the JSON schema sent to the model).
 */
const textSchema = z.object({
  reasoning: z.string().refine((s) => s.trim() !== '', 'a blank translation'),
  key_factors: z.array(z.string()),
});

/** The reply schema for a language set: the extra languages are required translations. */
export function replySchemaFor(langs: readonly string[]) {
  const extra = langs.slice(1);
  if (extra.length === 0) return forecastReplySchema;
  return forecastReplySchema.extend({
    translations: z.object(Object.fromEntries(extra.map((l) => [l, textSchema]))),
  });
}

const formats = new Map<string, { schema: z.ZodType<ForecastReply>; format: ReturnType<typeof zodResponseFormat> }>();
function replyFormat(langs: readonly string[]) {
  const key = langs.join(',');
  let f = formats.get(key);
  if (!f) {
    const schema = replySchemaFor(langs) as z.ZodType<ForecastReply>;
    f = { schema, format: zodResponseFormat(schema, 'forecast') };
    formats.set(key, f);
  }
  return f;
}

export const ERROR_KINDS = [
  'rate_limited',
  'server_error',
  'timeout',
  'invalid_json',
  'schema_violation',
  'truncated',
  'truncated_body',
  'network',
  'budget_exhausted',
  'quota_exhausted',
  'refused',
  'other',
] as const;
export type ErrorKind = (typeof ERROR_KINDS)[number];

/** A raw `forecasts` row (column names of `RAW_TABLES.forecasts`). */
export interface ForecastRow {
  run_id: string;
  question_id: string;
  model: string;
  mode: ForecastTask['mode'];
  /** The run's as-of time (so backfills are dated correctly), not the wall clock. */
  created_at: Date;
  probability: number;
  reasoning: string;
  lang: string;
  key_factors: string[];
  evidence_ids: string[];
  provider: string;
  /** sha256 hex of the rendered prompt (system + user). */
  prompt_hash: string;
  /** null for the forecast itself; the main language for a translation of its reasoning. */
  translation_of: string | null;
  /** null for a forecast; a scenario's conditional forecast: `<scenario_id>:<k>:<outcomes>`. */
  condition: string | null;
}

/** A raw `model_calls` row (column names of `RAW_TABLES.model_calls`): one per (task, model). */
export interface ModelCallRow {
  run_id: string;
  question_id: string;
  model: string;
  mode: ForecastTask['mode'];
  /** Wall-clock time the call left the queue (for a skipped call: when it was skipped). */
  started_at: Date;
  /** From leaving the queue to the final outcome, retries included (0 when skipped). */
  latency_ms: number;
  /** ok: a validated reply; failed: no usable reply; skipped: never sent (budget spent). */
  status: 'ok' | 'failed' | 'skipped';
  error_kind: ErrorKind | null;
  error_message: string | null;
  /** HTTP requests sent for this call: the SDK's retries plus our one content retry (0 when skipped). */
  attempts: number;
  /** Summed over every response received (null when none reported usage). */
  tokens_in: number | null;
  tokens_out: number | null;
  /**
   * From the tokens and the model's prices, summed over every response received (null when none
   * was); a response that reports no usage is costed from its text length (tokens stay null).
   */
  cost_usd: number | null;
  provider: string;
  /** null for a forecast call; a scenario's conditional call: `<scenario_id>:<k>:<outcomes>`. */
  condition: string | null;
}

// Compile-time guard: the row types carry exactly the warehouse's columns.
type Columns<T extends keyof typeof RAW_TABLES> = keyof (typeof RAW_TABLES)[T]['columns'];
type SameKeys<A, B> = [Exclude<A, B>, Exclude<B, A>] extends [never, never] ? true : false;
const _forecastColumns: SameKeys<keyof ForecastRow, Columns<'forecasts'>> = true;
const _callColumns: SameKeys<keyof ModelCallRow, Columns<'model_calls'>> = true;
void _forecastColumns;
void _callColumns;

/** Default total deadline per call (ms), unless the model config or the run sets one. */
export const DEFAULT_CALL_TIMEOUT_MS = 90_000;
/** Longest Retry-After the SDK may obey, whatever the deadline (ms). */
export const MAX_RETRY_AFTER_MS = 60_000;
const CALL_HEADER = 'x-quorum-call';

interface CallState {
  deadlineAt: number;
  requests: number;
  /** Responses with a success status: each is a reply the provider generated, and bills. */
  successes: number;
}

/** A model's client and queue; share one across runs to share its limits. */
export interface ModelClient {
  model: ResolvedModel;
  client: OpenAI;
  queue: PQueue;
  /** In-flight calls, keyed by the id carried in the CALL_HEADER request header. */
  calls: Map<string, CallState>;
  /** The model's own connection pool (absent when a fetch was injected); see pipeline/net/pool.ts. */
  pool?: ResettablePool;
}

/** Creates one openai client and one p-queue per model. */
export function createModelClients(
  models: ResolvedModel[],
  opts: { fetch?: typeof fetch } = {},
): Map<string, ModelClient> {
  const out = new Map<string, ModelClient>();
  for (const model of models) {
    if (out.has(model.id)) throw new Error(`duplicate model id "${model.id}"`);
    const calls = new Map<string, CallState>();
    // Without an injected fetch, the model's own pool: undici leaves a spare connection open after
    // a call stopped at its deadline, and the pool is renewed once no call is in flight.
    // fetch follows redirects itself: the pool is a plain keep-alive agent.
    const pool = opts.fetch ? undefined : createResettablePool(() => new Agent({ keepAliveTimeout: 10_000 }));
    const inner: typeof fetch =
      opts.fetch ?? ((input, init) => fetch(input, { ...init, dispatcher: pool!.dispatcher } as RequestInit));
    const client = new OpenAI({
      baseURL: model.base_url,
      apiKey: model.apiKey,
      maxRetries: 2,
      timeout: model.timeout_ms ?? DEFAULT_CALL_TIMEOUT_MS,
      fetch: boundedFetch(calls, inner),
    });
    const queue = new PQueue({
      concurrency: model.max_concurrency,
      intervalCap: model.requests_per_minute,
      interval: 60_000,
      strict: true,
    });
    out.set(model.id, { model, client, queue, calls, ...(pool ? { pool } : {}) });
  }
  return out;
}

/**
 * A fetch for the SDK that (1) counts the HTTP requests of each call, (2) tells the SDK not to
 * retry (`x-should-retry: false`) when the server's Retry-After would outlast the call's deadline
 * or MAX_RETRY_AFTER_MS (the SDK otherwise sleeps whatever the server asks, unabortably), or when
 * the 429 says the account has no quota left (`insufficient_quota`: no wait makes it pass), and
 * (3) hands the SDK an error body it can read (errorBody).
 */
function boundedFetch(calls: Map<string, CallState>, inner: typeof fetch): typeof fetch {
  return async (input, init) => {
    const headers = new Headers(init?.headers);
    const id = headers.get(CALL_HEADER);
    headers.delete(CALL_HEADER);
    const state = id ? calls.get(id) : undefined;
    if (state) state.requests++;
    const res = await inner(input, { ...init, headers });
    if (res.ok && state) state.successes++;
    if (res.ok || !state) return res;
    // An error body is small; read once (within the call's deadline, which aborts the read).
    const body = errorBody(await res.text().catch(() => ''));
    const h = new Headers(res.headers);
    h.delete('content-length'); // the body handed on is decoded, maybe rewritten
    h.delete('content-encoding');
    const reset = res.status === 429 && retryAfterMs(h) === null ? rateLimitResetMs(h) : null;
    if (reset !== null) h.set('retry-after-ms', String(reset));
    if ((res.status === 429 && isQuotaExhausted(body)) || !retryFits(h, state)) h.set('x-should-retry', 'false');
    return new Response(body, { status: res.status, statusText: res.statusText, headers: h });
  };
}

/**
 * The error body as the SDK reads it (`{"error": {...}}`, whose `error.message` becomes the
 * error's message). Two shapes of OpenAI-compatible servers carry no such member, and the SDK
 * recorded every such failure as "400 status code (no body)", the provider's reason lost (QA):
 * - Google's endpoint wraps it in an array (`[{"error": {"code": 400, "message": "...", "status":
 *   "INVALID_ARGUMENT"}}]`): the array's first element is handed on;
 * - vLLM's ErrorResponse before its `{"error": …}` wrapper, FastChat's and TensorRT-LLM's to this
 *   day, is flat (`{"object": "error", "message": "This model's maximum context length is 4096
 *   tokens. ...", "type": "BadRequestError", "param": null, "code": 400}`): handed on wrapped;
 * - FastAPI's own errors (`{"detail": "Not Found"}`: vLLM's answer to a path it does not serve, as
 *   when the base URL lacks /v1): its text handed on as the message.
 * Anything else as is.
 */
function errorBody(text: string): string {
  const start = text.trimStart()[0];
  if (start !== '[' && start !== '{') return text;
  try {
    const v: unknown = JSON.parse(text);
    if (Array.isArray(v)) {
      const first = v[0] as { error?: unknown } | undefined;
      return first && typeof first === 'object' && first.error ? JSON.stringify(first) : text;
    }
    const flat = v as { error?: unknown; object?: unknown; message?: unknown } | null;
    if (flat && flat.error === undefined && flat.object === 'error' && typeof flat.message === 'string') {
      const { object: _object, ...error } = flat;
      return JSON.stringify({ error });
    }
    const detail = (v as { detail?: unknown } | null)?.detail;
    if (flat && flat.error === undefined && typeof detail === 'string') return JSON.stringify({ error: { message: detail } });
    return text;
  } catch {
    return text;
  }
}

/** True unless the server's Retry-After outlasts what is left of the call's deadline (or MAX_RETRY_AFTER_MS). */
function retryFits(h: Headers, state: CallState): boolean {
  const waitMs = retryAfterMs(h);
  if (waitMs === null) return true;
  return waitMs <= Math.min(state.deadlineAt - Date.now() - 50, MAX_RETRY_AFTER_MS);
}

/**
 * OpenAI's 429 for an account out of credit (`{"error": {"code": "insufficient_quota", "type":
 * "insufficient_quota", ...}}`): not a rate limit, retrying cannot succeed (QA: every call of such
 * a model was sent three times, backed off, and recorded as `rate_limited`).
 */
function isQuotaExhausted(body: unknown): boolean {
  let e: unknown = body;
  if (typeof body === 'string') {
    try {
      e = JSON.parse(body);
    } catch {
      return false;
    }
  }
  const err = (e as { error?: { code?: unknown; type?: unknown } } | null)?.error;
  return err?.code === 'insufficient_quota' || err?.type === 'insufficient_quota';
}

/**
 * When a 429 without Retry-After says its limit resets (OpenAI's `x-ratelimit-reset-requests` and
 * `-tokens`, Go durations such as `1s`, `6m0s`, `20ms`): the reset of the limit spent (its
 * `x-ratelimit-remaining-*` is 0), else of the one with the smallest share left (remaining over
 * `x-ratelimit-limit-*`), else the later; null when neither is given. Handed to the SDK as
 * `retry-after-ms`, so a sustained rate limit slows the calls down to the provider's pace (the
 * SDK's own backoff, 0.5-8 s, ends them `rate_limited` first; QA). A tokens-per-minute 429 leaves
 * tokens, fewer than the call needs: the nearest reset was the requests' (milliseconds), and the
 * retries came back 429 at once (QA review).
 */
function rateLimitResetMs(h: Headers): number | null {
  const share = (kind: string): number | null => {
    const left = Number(h.get(`x-ratelimit-remaining-${kind}`) ?? NaN);
    const limit = Number(h.get(`x-ratelimit-limit-${kind}`) ?? NaN);
    return Number.isFinite(left) && Number.isFinite(limit) && limit > 0 ? left / limit : null;
  };
  const resets = (['requests', 'tokens'] as const)
    .map((kind) => ({ ms: goDurationMs(h.get(`x-ratelimit-reset-${kind}`)), spent: h.get(`x-ratelimit-remaining-${kind}`) === '0', share: share(kind) }))
    .filter((r): r is { ms: number; spent: boolean; share: number | null } => r.ms !== null);
  if (resets.length === 0) return null;
  const spent = resets.filter((r) => r.spent);
  if (spent.length > 0) return Math.max(...spent.map((r) => r.ms));
  const shared = resets.filter((r): r is typeof r & { share: number } => r.share !== null);
  if (shared.length === resets.length) return shared.reduce((a, b) => (b.share < a.share ? b : a)).ms;
  return Math.max(...resets.map((r) => r.ms));
}

/** A Go duration (`1h2m3.5s`, `6m0s`, `20ms`) in ms; null when it is not one. */
function goDurationMs(text: string | null): number | null {
  const m = text === null ? null : /^(?:(\d+(?:\.\d+)?)h)?(?:(\d+(?:\.\d+)?)m(?!s))?(?:(\d+(?:\.\d+)?)s)?(?:(\d+(?:\.\d+)?)ms)?$/.exec(text.trim());
  if (!m || m.slice(1).every((g) => g === undefined)) return null;
  const [h, min, s, ms] = m.slice(1).map((g) => Number(g ?? 0)) as [number, number, number, number];
  return ((h * 60 + min) * 60 + s) * 1000 + ms;
}

function retryAfterMs(h: Headers): number | null {
  const ms = h.get('retry-after-ms');
  if (ms !== null && Number.isFinite(parseFloat(ms))) return parseFloat(ms);
  const ra = h.get('retry-after');
  if (ra === null) return null;
  const s = parseFloat(ra);
  if (Number.isFinite(s)) return s * 1000;
  const at = Date.parse(ra);
  return Number.isFinite(at) ? at - Date.now() : null;
}

export interface RunForecastsOptions {
  models: ResolvedModel[];
  tasks: ForecastTask[];
  runId: string;
  /** The run's as-of time: stamped on every forecast and shown to the models as "today". */
  asOf: Date;
  /** Language of the reasoning (BCP 47). Default "en". Shorthand for `langs: [lang]`. */
  lang?: string;
  /** Reasoning languages: the first is the main one, the others come as translations in the same reply. */
  langs?: readonly string[];
  /** Aborting stops the run hard: queued calls are dropped, in-flight ones cancelled, the promise rejects. */
  signal?: AbortSignal;
  /** Aborting stops the run gracefully: no new call starts, in-flight calls finish, the promise resolves. */
  stopSignal?: AbortSignal;
  /**
   * Total deadline per call (ms), retries included, for a model without its own `timeout_ms` (the
   * run's QUORUM_CALL_TIMEOUT_MS; else 90 s). A model's `timeout_ms` wins: a reasoning model is
   * given minutes on purpose (docs/models.md; QA: every call was cut at the global 60 s).
   */
  callTimeoutMs?: number;
  /** An upper bound on every call's deadline whatever the model's (the probability endpoint's time left). */
  maxCallTimeoutMs?: number;
  /**
   * An instant (epoch ms) by which every call ends, however long it waited in its model's queue
   * (the probability endpoint's answer deadline): a call's deadline is the earlier of its own and
   * this, and a call still queued then is not sent (a failed row, error_kind `timeout`, attempts 0).
   * The queue is shared with other requests, so the wait before a call starts can be anything.
   */
  deadlineAt?: number;
  /** Once the cost reaches this many USD, no new call starts (the rest are `skipped` rows). */
  budgetUsd?: number | null;
  /** Cost already spent by this run in earlier sessions (counts toward the budget). */
  spentUsd?: number;
  /** (task index, model id) pairs already done in an earlier session: not called, no row. */
  skip?: (taskIndex: number, modelId: string) => boolean;
  /** Called as each call ends (journal, progress, logging), with the forecasts it produced. */
  onCall?: (call: ModelCallRow, forecasts: ForecastRow[]) => void;
  /**
   * Called for each call in flight when `signal` (or an unexpected error) aborted the run: a failed
   * row (error_kind `other`) with what the responses it had received cost, tokens and attempts. A
   * first reply asked again and cut short during the second ask was paid: the rejected promise
   * returns no row, so a caller that counts spending takes it from here.
   */
  onCancelled?: (call: ModelCallRow) => void;
  /** Called once when the budget is found spent. */
  onBudgetExhausted?: (spentUsd: number) => void;
  /** Reuse clients and queues (e.g. the API's probability endpoint shares limits across requests). */
  clients?: Map<string, ModelClient>;
  /** Directory of the prompt templates (default `data/prompts/`). */
  templatesDir?: string;
}

export interface RunForecastsResult {
  forecasts: ForecastRow[];
  calls: ModelCallRow[];
  /** True when `stopSignal` ended the run before every (task, model) was done. */
  stopped: boolean;
  /** True when the budget was spent (some calls were skipped). */
  budgetExhausted: boolean;
  /** Cost of the calls of this session (USD). */
  spentUsd: number;
}

/** Runs every (task × model) call and returns the forecast rows and the call rows. */
export async function runForecasts(opts: RunForecastsOptions): Promise<RunForecastsResult> {
  const langs = opts.langs && opts.langs.length > 0 ? [...opts.langs] : [opts.lang ?? 'en'];
  const clients = opts.clients ?? createModelClients(opts.models);
  const nModels = opts.models.length;
  const modelClients = opts.models.map((m) => {
    const mc = clients.get(m.id);
    if (!mc) throw new Error(`no client for model "${m.id}"`);
    return mc;
  });
  // Rendered lazily (once per task, shared by its models): a resumed run renders only what it sends.
  const prompts: (RenderedPrompt | undefined)[] = new Array(opts.tasks.length);
  const promptOf = (ti: number): RenderedPrompt =>
    (prompts[ti] ??= renderPrompt(opts.tasks[ti]!, { asOf: opts.asOf, langs, templatesDir: opts.templatesDir }));
  const results: ({ call: ModelCallRow; forecasts: ForecastRow[] } | undefined)[] = new Array(
    opts.tasks.length * nModels,
  );
  opts.signal?.throwIfAborted();
  // One internal signal per run, aborted by the caller's signal or by an unexpected error.
  const run = new AbortController();
  setMaxListeners(0, run.signal);
  const forward = () => run.abort(opts.signal?.reason);
  opts.signal?.addEventListener('abort', forward, { once: true });
  const stop = opts.stopSignal;
  if (stop) setMaxListeners(0, stop); // one listener per queued task (queuedSignal), removed as each ends
  let unexpected: { error: unknown } | null = null;
  const budget = opts.budgetUsd ?? null;
  const spentBefore = opts.spentUsd ?? 0;
  let spent = 0;
  let budgetExhausted = budget !== null && spentBefore >= budget;
  const checkBudget = () => {
    if (!budgetExhausted && budget !== null && spentBefore + spent >= budget) {
      budgetExhausted = true;
      opts.onBudgetExhausted?.(spentBefore + spent);
    }
    return budgetExhausted;
  };
  if (budgetExhausted) opts.onBudgetExhausted?.(spentBefore);
  // The calls' common end (deadlineAt): aborts the tasks still queued at that instant.
  const runStart = performance.now();
  const late = opts.deadlineAt === undefined ? undefined : startDeadline(Math.max(0, opts.deadlineAt - Date.now()), undefined, 'answer deadline');
  if (late) setMaxListeners(0, late.signal); // one listener per queued task (queuedSignal), as `stop`
  const finish = (i: number, r: { call: ModelCallRow; forecasts: ForecastRow[] }) => {
    results[i] = r;
    spent += r.call.cost_usd ?? 0;
    checkBudget();
    opts.onCall?.(r.call, r.forecasts);
  };

  const inFlight = new Set<Promise<unknown>>();
  // Per model, a few feeders each keep one task in the model's queue: the queue never holds more
  // than ~2 × max_concurrency of this run's tasks (cheap for 10k-task runs, fair when the queue is
  // shared with other runs, and a stop leaves nothing behind to drain through the rate cap).
  const feeders: Promise<void>[] = [];
  opts.models.forEach((model, mi) => {
    const mc = modelClients[mi]!;
    let next = 0;
    const own = model.timeout_ms ?? opts.callTimeoutMs ?? DEFAULT_CALL_TIMEOUT_MS;
    const timeoutMs = opts.maxCallTimeoutMs === undefined ? own : Math.min(own, opts.maxCallTimeoutMs);
    const feed = async () => {
      while (next < opts.tasks.length && !run.signal.aborted && !stop?.aborted) {
        const ti = next++;
        if (opts.skip?.(ti, model.id)) continue;
        if (budgetExhausted) {
          finish(ti * nModels + mi, { call: skippedCall(opts.runId, opts.tasks[ti]!, model), forecasts: [] });
          continue;
        }
        const waiting = queuedSignal(run.signal, stop, late?.signal);
        const lateRow = () => finish(ti * nModels + mi, { call: lateCall(opts.runId, opts.tasks[ti]!, model, performance.now() - runStart), forecasts: [] });
        try {
          await mc.queue.add(
            async () => {
              waiting.started();
              if (stop?.aborted) return; // not started: left for a resumed run
              if (budgetExhausted) {
                finish(ti * nModels + mi, { call: skippedCall(opts.runId, opts.tasks[ti]!, model), forecasts: [] });
                return;
              }
              if (late?.expired) return lateRow();
              const call = callModel(mc, opts.tasks[ti]!, promptOf(ti), {
                runId: opts.runId,
                asOf: opts.asOf,
                timeoutMs: late ? Math.min(timeoutMs, Math.max(1, late.remaining())) : timeoutMs,
                signal: run.signal,
                onCancelled: opts.onCancelled,
              });
              inFlight.add(call);
              try {
                finish(ti * nModels + mi, await call);
              } finally {
                inFlight.delete(call);
              }
            },
            { signal: waiting.signal },
          );
        } catch (error) {
          // A task still queued at the calls' common deadline is not sent: a failed row says so.
          if (error instanceof LateWhileQueued && !run.signal.aborted) {
            lateRow();
            continue;
          }
          // A task still queued when the stop came is dropped (left for a resumed run).
          if (!run.signal.aborted && !(error instanceof StoppedWhileQueued)) {
            unexpected ??= { error };
            run.abort(error);
          }
        } finally {
          waiting.clear();
        }
      }
    };
    const n = Math.min(opts.tasks.length, 2 * model.max_concurrency);
    for (let i = 0; i < n; i++) feeders.push(feed());
  });
  await Promise.all(feeders);
  // An abort rejects a running task's queue.add at once: its call is still settling (onCancelled).
  await Promise.allSettled([...inFlight]);
  late?.clear();
  opts.signal?.removeEventListener('abort', forward);
  if (unexpected) throw (unexpected as { error: unknown }).error;
  if (run.signal.aborted) throw opts.signal?.reason ?? new Error('run aborted');

  const forecasts: ForecastRow[] = [];
  const calls: ModelCallRow[] = [];
  let missing = 0;
  for (let i = 0; i < results.length; i++) {
    const r = results[i];
    if (!r) {
      if (!opts.skip?.(Math.floor(i / nModels), opts.models[i % nModels]!.id)) missing++;
      continue;
    }
    calls.push(r.call);
    forecasts.push(...r.forecasts);
  }
  const stopped = missing > 0;
  if (stopped && !stop?.aborted) throw new Error('internal: a call produced no row');
  return { forecasts, calls, stopped, budgetExhausted, spentUsd: spent };
}

class StoppedWhileQueued extends Error {}
class LateWhileQueued extends Error {}

/**
 * The signal a task is queued with: aborted by the run's hard abort at any time, and by the
 * graceful stop while the task still waits in the queue (not once it runs: a call in flight
 * finishes). Without the latter a stopped run waited for the queued tasks to pass the rate cap
 * one window at a time, only for each to return at once: with `requests_per_minute` binding
 * (50 a minute, 8 in flight) a SIGTERM took a minute with no call in flight (QA).
 */
function queuedSignal(runSignal: AbortSignal, stop: AbortSignal | undefined, late?: AbortSignal) {
  const ac = new AbortController();
  let running = false;
  const onRun = () => ac.abort(runSignal.reason);
  const onStop = () => {
    if (!running) ac.abort(new StoppedWhileQueued('stopped while queued'));
  };
  // The calls' common deadline (deadlineAt) passed while the task waited: it is not sent.
  const onLate = () => {
    if (!running) ac.abort(new LateWhileQueued('still queued at the answer deadline'));
  };
  if (runSignal.aborted) onRun();
  else runSignal.addEventListener('abort', onRun, { once: true });
  if (stop?.aborted) onStop();
  else stop?.addEventListener('abort', onStop, { once: true });
  if (late?.aborted) onLate();
  else late?.addEventListener('abort', onLate, { once: true });
  return {
    signal: ac.signal,
    started: () => {
      running = true;
    },
    clear: () => {
      runSignal.removeEventListener('abort', onRun);
      stop?.removeEventListener('abort', onStop);
      late?.removeEventListener('abort', onLate);
    },
  };
}

/** The row of a call never sent because the run's budget was spent. */
function skippedCall(runId: string, task: ForecastTask, model: ResolvedModel): ModelCallRow {
  return {
    run_id: runId,
    question_id: task.question.question_id,
    model: model.id,
    mode: task.mode,
    started_at: new Date(),
    latency_ms: 0,
    status: 'skipped',
    error_kind: 'budget_exhausted',
    error_message: 'not sent: the run budget was spent',
    attempts: 0,
    tokens_in: null,
    tokens_out: null,
    cost_usd: 0,
    provider: model.provider,
    condition: task.condition?.code ?? null,
  };
}

/** The row of a call never sent because it was still queued at the calls' common deadline (deadlineAt). */
function lateCall(runId: string, task: ForecastTask, model: ResolvedModel, waitedMs: number): ModelCallRow {
  return {
    ...skippedCall(runId, task, model),
    latency_ms: Math.round(waitedMs * 10) / 10,
    status: 'failed',
    error_kind: 'timeout',
    error_message: 'not sent: still waiting in the model\'s queue (max_concurrency, requests_per_minute) at the answer deadline',
  };
}

class RunAborted extends Error {}

interface CallContext {
  runId: string;
  asOf: Date;
  timeoutMs: number;
  signal: AbortSignal | undefined;
  onCancelled?: (call: ModelCallRow) => void;
}

/**
 * `partial`: a schema violation only in the translations (the probability, the main reasoning and
 * its key factors valid), with the translations that were valid. See callModel.
 */
type Outcome =
  | { ok: true; reply: ForecastReply; missing?: string }
  | { ok: false; kind: ErrorKind; message: string; partial?: ForecastReply };

/** One (task, model) call: at most two content attempts, all within one total deadline. */
async function callModel(
  mc: ModelClient,
  task: ForecastTask,
  prompt: RenderedPrompt,
  ctx: CallContext,
): Promise<{ call: ModelCallRow; forecasts: ForecastRow[] }> {
  const { model } = mc;
  const startedAt = new Date();
  const t0 = performance.now();
  const { schema, format } = replyFormat(prompt.langs);
  // One deadline per call (a real timer, pipeline/net/deadline.ts), also aborted by the run's signal.
  const deadline = startDeadline(ctx.timeoutMs, ctx.signal, 'call deadline');
  const signal = deadline.signal;
  const callId = randomUUID();
  const state: CallState = { deadlineAt: deadline.at, requests: 0, successes: 0 };
  mc.calls.set(callId, state);
  mc.pool?.begin();
  let tokensIn: number | null = null;
  let tokensOut: number | null = null;
  // USD of every response received: from its usage, else estimated from its text (usageCost).
  let cost: number | null = null;
  // Success responses whose body was read (a completion, or an empty body), for unreadCost.
  let read = 0;
  let outcome: Outcome = { ok: false, kind: 'other', message: 'no attempt made' };
  // The latest reply whose forecast was valid but a translation was not (missing, blank, malformed),
  // with what was wrong with it.
  let partial: { reply: ForecastReply; message: string } | null = null;
  const callRow = (o: Outcome): ModelCallRow => ({
    run_id: ctx.runId,
    question_id: task.question.question_id,
    model: model.id,
    mode: task.mode,
    started_at: startedAt,
    latency_ms: Math.round((performance.now() - t0) * 10) / 10,
    status: o.ok ? 'ok' : 'failed',
    error_kind: o.ok ? null : o.kind,
    error_message: (o.ok ? (o.missing ?? null) : o.message)?.slice(0, 500) ?? null,
    attempts: Math.max(1, state.requests),
    tokens_in: tokensIn,
    tokens_out: tokensOut,
    cost_usd: nullableUsd(unreadCost(model, prompt, state.successes - read, cost)),
    provider: model.provider,
    condition: task.condition?.code ?? null,
  });

  try {
    for (let attempt = 1; attempt <= 2; attempt++) {
      const remaining = Math.max(1, Math.ceil(state.deadlineAt - Date.now()));
      let completion: OpenAI.Chat.Completions.ChatCompletion | undefined | null;
      try {
        completion = await untilAborted(
          mc.client.chat.completions.create(
            {
              model: model.model,
              messages: [
                { role: 'system', content: prompt.system },
                { role: 'user', content: prompt.user },
              ],
              response_format: model.response_format === 'json_object' ? { type: 'json_object' } : format,
              ...(model.max_output_tokens ? { max_completion_tokens: model.max_output_tokens } : {}),
            },
            { signal, timeout: remaining, headers: { [CALL_HEADER]: callId } },
          ),
          signal,
        );
      } catch (err) {
        // A 200 whose body is not JSON or is cut off mid-way: the SDK does not retry those; it
        // is a bad reply like any other, asked once more.
        const body = signal.aborted ? null : bodyFault(err);
        if (!body) throw err;
        outcome = body;
        continue;
      }
      // A body the SDK did not parse, its content-type not JSON: read here (textBody).
      if (typeof completion === 'string') {
        const body = textBody(completion);
        if (!body.ok) {
          outcome = body;
          continue;
        }
        completion = body.completion;
      }
      // A 200 with no body (the SDK's undefined for `content-length: 0`, null for a 204) is a bad
      // reply like any other, asked once more (QA: it failed as "other", "Cannot read properties of
      // undefined (reading 'usage')", and was not asked again).
      read++;
      if (completion === undefined || completion === null) {
        outcome = { ok: false, kind: 'invalid_json', message: 'reply body is empty (a success status with no content)' };
        continue;
      }
      const used = usageTokens(completion.usage);
      if (used.in !== null) tokensIn = (tokensIn ?? 0) + used.in;
      if (used.out !== null) tokensOut = (tokensOut ?? 0) + used.out;
      const c = usageCost(model, prompt, completion, used);
      if (c !== null) cost = (cost ?? 0) + c;
      outcome = interpret(completion, schema, prompt.langs);
      if (!outcome.ok && outcome.partial) partial = { reply: outcome.partial, message: outcome.message };
      // A refusal is the model's (or the provider's filter's) decision on this prompt: asking the
      // same prompt again pays twice for the same answer. No credit left is not passed by asking again.
      if (outcome.ok || outcome.kind === 'refused' || outcome.kind === 'quota_exhausted') break;
    }
  } catch (err) {
    if (ctx.signal?.aborted && !deadline.expired) {
      // Cut short by the run's abort: the responses it had received were paid all the same.
      ctx.onCancelled?.(callRow({ ok: false, kind: 'other', message: 'cancelled: the run was aborted' }));
      throw new RunAborted('run aborted', { cause: err });
    }
    outcome = classify(err, deadline.expired, ctx.timeoutMs);
  } finally {
    mc.pool?.end(signal.aborted);
    deadline.clear();
    mc.calls.delete(callId);
  }

  // A forecast whose translations were still bad when asked again is kept, in the languages it
  // came in; the missing translations are named in the call's error_message. It was a failed call
  // and no forecast: a model counted in the consensus of an English-only service dropped out of it
  // once other languages were configured, for a bad translation of a valid answer (QA). So is one
  // whose reply asked again failed otherwise (cut at the token limit, which a reply in several
  // languages reaches sooner, not JSON, a timeout): the valid forecast of the first reply was lost
  // with it, the call failed as the second reply's fault (QA). The error_message then says both.
  if (!outcome.ok && partial) {
    const kept = partial;
    const missing = prompt.langs.slice(1).filter((l) => !kept.reply.translations?.[l]);
    const why = outcome.partial ? kept.message : `asked again: ${outcome.message}; ${kept.message}`;
    outcome = { ok: true, reply: kept.reply, missing: `translations missing: ${missing.join(', ')} (${why})` };
  }
  const call = callRow(outcome);
  if (!outcome.ok) return { call, forecasts: [] };
  const reply = outcome.reply;
  const forecasts = prompt.langs.flatMap((lang, i): ForecastRow[] => {
    const text = i === 0 ? reply : reply.translations?.[lang];
    if (!text) return [];
    return [{
      run_id: ctx.runId,
      question_id: task.question.question_id,
      model: model.id,
      mode: task.mode,
      created_at: ctx.asOf,
      probability: reply.probability,
      reasoning: text.reasoning,
      lang,
      key_factors: text.key_factors,
      evidence_ids: prompt.evidence_ids,
      provider: model.provider,
      prompt_hash: prompt.hash,
      translation_of: i === 0 ? null : prompt.langs[0]!,
      condition: task.condition?.code ?? null,
    }];
  });
  return { call, forecasts };
}

/** Characters per token assumed when a reply reports no usage (English prose; the simulator's rule too). */
const CHARS_PER_TOKEN = 4;

/**
 * The tokens one response's `usage` reports, each null where it is not a number (absent, null, a
 * string: `(tokensIn ?? 0) + "1000"` concatenated). Output is `completion_tokens`, or `total_tokens`
 * less `prompt_tokens` when the total is larger: OpenAI counts a reasoning model's thinking in
 * `completion_tokens` (total = prompt + completion), but OpenAI-compatible relays of Gemini have
 * reported it only in `completion_tokens_details.reasoning_tokens` and the total
 * (`{"prompt_tokens": 21, "completion_tokens": 0, "total_tokens": 81, "completion_tokens_details":
 * {"reasoning_tokens": 60}}`, router-for-me/CLIProxyAPI#5733): the 60 thinking tokens, billed as
 * output, were costed as none (QA).
 */
/**
 * A token count as stored: a whole number of tokens. A fractional one (Hugging Face's
 * completion_tokens 37.25, philschmid/easyllm#42; GLM's once its cache is hit,
 * QuantumNous/new-api#1545) is rounded up, as billed; one past 2^53, negative or not a number is no
 * count. Stored as it came, the BIGINT tokens columns refused the row: the run's raw write failed,
 * and so did every --resume of its journal (QA).
 */
export function tokenCount(v: unknown): number | null {
  return typeof v === 'number' && Number.isFinite(v) && v >= 0 && v <= Number.MAX_SAFE_INTEGER ? Math.ceil(v) : null;
}

function usageTokens(usage: unknown): { in: number | null; out: number | null } {
  const u = (usage ?? {}) as { prompt_tokens?: unknown; completion_tokens?: unknown; total_tokens?: unknown };
  const tin = tokenCount(u.prompt_tokens);
  const tout = tokenCount(u.completion_tokens);
  const total = tokenCount(u.total_tokens);
  if (tin !== null && tout !== null && total !== null && total > tin + tout) return { in: tin, out: total - tin };
  return { in: tin, out: tout };
}

/**
 * The cost of one response (USD): from the tokens its `usage` reports (usageTokens), and where it
 * reports none (some OpenAI-compatible servers and proxies omit it, or a part of it) from the text
 * sent and received at CHARS_PER_TOKEN. Unknown was counted as free: the run budget never stopped a
 * model whose replies carry no usage, and the run reported a cost of 0 (QA). `tokens_in`/`tokens_out`
 * stay what the server reported (null when nothing), so an estimated cost is told by its null tokens.
 */
function usageCost(
  model: ResolvedModel,
  prompt: RenderedPrompt,
  completion: OpenAI.Chat.Completions.ChatCompletion,
  used: { in: number | null; out: number | null },
): number | null {
  const reply = completion.choices?.[0]?.message;
  // Not a completion (a proxy's error object or page with status 200): no cost known.
  if (!completion.usage && !reply) return null;
  const chars = (s: string | null | undefined) => Math.ceil((s?.length ?? 0) / CHARS_PER_TOKEN);
  const tin = used.in ?? chars(prompt.system) + chars(prompt.user);
  const tout = used.out ?? chars(replyText(reply)) + chars(reply?.refusal);
  return (tin * model.price_in_per_mtok + tout * model.price_out_per_mtok) / 1e6;
}

/** A call's cost to 9 decimals (roundUsd); unknown stays null. */
function nullableUsd(cost: number | null): number | null {
  return cost === null ? null : roundUsd(cost);
}

/**
 * `cost` plus the replies whose body never arrived whole: a success status whose body was cut off
 * (truncated_body), stalled past the deadline (timeout) or was no JSON. The provider generated and
 * bills each; their usage is lost, so each is costed at its prompt's input tokens (CHARS_PER_TOKEN):
 * a lower bound, its output unknown. They were costed as nothing: a model whose replies a proxy or
 * link kept cutting was paid twice a call while the run's cost and budget counted 0 (QA).
 */
function unreadCost(model: ResolvedModel, prompt: RenderedPrompt, unread: number, cost: number | null): number | null {
  if (unread <= 0) return cost;
  const tokens = Math.ceil(prompt.system.length / CHARS_PER_TOKEN) + Math.ceil(prompt.user.length / CHARS_PER_TOKEN);
  return (cost ?? 0) + (unread * tokens * model.price_in_per_mtok) / 1e6;
}

/**
 * A success body whose content-type is not JSON, which the SDK hands back as text: local servers
 * send their completions so (mistral.rs `text/plain; charset=utf-8`, EricLBuehler/mistral.rs#79;
 * cortex.cpp `text/html; charset=utf-8`, janhq/cortex.cpp#465), and a proxy its HTML page. Read as
 * it was, every such reply was invalid_json "reply has no choices", asked twice and costed as
 * nothing, a generated forecast lost (QA). Its JSON is the completion, whatever the header; empty,
 * it is the empty body (undefined); anything else is a body that is not JSON, as when the header
 * says JSON (bodyFault): invalid_json quoting its start, costed as unread (unreadCost).
 */
function textBody(text: string): { ok: true; completion: OpenAI.Chat.Completions.ChatCompletion | undefined } | (Outcome & { ok: false }) {
  if (text.trim() === '') return { ok: true, completion: undefined };
  try {
    const v: unknown = JSON.parse(text);
    if (v !== null && typeof v === 'object') return { ok: true, completion: v as OpenAI.Chat.Completions.ChatCompletion };
  } catch {
    // not JSON: below
  }
  const head = text.length > 120 ? `${text.slice(0, 120)}…` : text;
  return { ok: false, kind: 'invalid_json', message: `reply body is not JSON: ${JSON.stringify(head)}` };
}

/** A reply body that is not JSON (SyntaxError) or was cut off by the connection (undici "terminated"). */
function bodyFault(err: unknown): (Outcome & { ok: false }) | null {
  if (err instanceof OpenAI.APIError) return null;
  if (err instanceof SyntaxError) return { ok: false, kind: 'invalid_json', message: `reply body is not JSON: ${err.message}` };
  if (err instanceof TypeError && /terminated|other side closed|premature close/i.test(`${err.message} ${(err.cause as Error | undefined)?.message ?? ''}`)) {
    const cause = err.cause instanceof Error ? `: ${err.cause.message}` : '';
    return { ok: false, kind: 'truncated_body', message: `reply body cut off (${err.message}${cause})` };
  }
  return null;
}

/** Checks one completion: truncation, JSON, then the schema. */
/**
 * The reply with each asked translation found under its language's code in another case or form
 * (`pt-BR` for the `pt-br` asked, `zh-Hant` for `zh-hant`: languageKey) moved to the code asked.
 * A model in JSON mode writes a code as it writes it; the same language was a schema violation,
 * asked again and the forecast lost (QA). A key the run asked for is never moved.
 */
function translationsAsAsked(json: unknown, langs: readonly string[]): unknown {
  const t = (json as { translations?: unknown } | null)?.translations;
  if (langs.length < 2 || t === null || typeof t !== 'object' || Array.isArray(t)) return json;
  const tr: Record<string, unknown> = { ...(t as Record<string, unknown>) };
  for (const lang of langs.slice(1)) {
    if (Object.hasOwn(tr, lang)) continue;
    const key = Object.keys(tr).find((k) => !langs.includes(k) && languageKey(k) === languageKey(lang));
    if (key === undefined) continue;
    tr[lang] = tr[key];
    delete tr[key];
  }
  return { ...(json as object), translations: tr };
}

function interpret(completion: OpenAI.Chat.Completions.ChatCompletion, schema: z.ZodType<ForecastReply>, langs: readonly string[]): Outcome {

  const choice = completion.choices?.[0];
  if (!choice) return errorInBody(completion) ?? { ok: false, kind: 'invalid_json', message: 'reply has no choices' };
  // OpenRouter also puts the error in the choice (`error`, finish_reason "error": the model finished
  // the request with an error): recorded as invalid_json "empty reply", its code and reason lost (QA review).
  const inChoice = errorInBody(choice);
  if (inChoice) return inChoice;
  // Mistral's "model_length" is the model's context length reached (its ChatCompletionChoice enum;
  // the Vercel AI SDK maps it to length): the same cut reply (QA: it was invalid_json).
  const finish = choice.finish_reason as string | null;
  if (finish === 'length' || finish === 'model_length') {
    return { ok: false, kind: 'truncated', message: `reply stopped at the token limit (finish_reason "${finish}")` };
  }
  // DeepSeek's "insufficient_system_resource": the provider interrupted the generation (its API
  // reference: "insufficient resource of the inference system"), a server fault, not the model's
  // reply. Its cut content was invalid_json "reply is not JSON" (QA); asked once more like any other.
  if (finish === 'insufficient_system_resource') {
    return { ok: false, kind: 'server_error', message: `reply interrupted by the provider (finish_reason "${finish}")` };
  }
  const refusal = choice.message?.refusal;
  if (refusal) return { ok: false, kind: 'refused', message: `model refused: ${refusal}` };
  if (choice.finish_reason === 'content_filter') {
    return { ok: false, kind: 'refused', message: 'reply withheld by the provider\'s content filter (finish_reason "content_filter")' };
  }
  const content = replyText(choice.message);
  if (!content) {
    return { ok: false, kind: 'invalid_json', message: `empty reply (finish_reason "${choice.finish_reason}")` };
  }
  let json: unknown;
  try {
    json = JSON.parse(stripFences(content));
  } catch (err) {
    json = embeddedObject(content);
    if (json === undefined) return { ok: false, kind: 'invalid_json', message: `reply is not JSON: ${(err as Error).message}` };
  }
  const parsed = schema.safeParse(translationsAsAsked(json, langs));
  if (!parsed.success) {
    const issues = parsed.error.issues.map((i) => `${i.path.join('.') || '(root)'}: ${i.message}`);
    const message = `reply violates the schema: ${issues.join('; ')}`;
    const main = langs.length > 1 ? forecastReplySchema.safeParse(json) : null;
    if (!main?.success) return { ok: false, kind: 'schema_violation', message };
    const tr = (translationsAsAsked(json, langs) as { translations?: unknown }).translations;
    const translations: Record<string, { reasoning: string; key_factors: string[] }> = {};
    for (const l of langs.slice(1)) {
      const t = textSchema.safeParse(tr !== null && typeof tr === 'object' ? (tr as Record<string, unknown>)[l] : undefined);
      if (t.success) translations[l] = t.data;
    }
    return { ok: false, kind: 'schema_violation', message, partial: { ...main.data, translations } };
  }
  return { ok: true, reply: parsed.data };
}

/**
 * The error object of a reply sent with status 200, as an outcome (null when there is none).
 * OpenRouter answers so once the model has started: "the returned HTTP response status will be 200
 * and any error occurred while the LLM is producing the output will be emitted in the response
 * body" (openrouter.ai/docs/errors: `{"error": {"code": 502, "message": "Provider returned error",
 * "metadata": {"provider_name": ..., "raw": ...}}}`). It was recorded as invalid_json "reply has no
 * choices": the provider's code and reason were lost (QA). Its code gives the kind, as for an HTTP
 * error (classify); the message keeps the provider's reason and the upstream body. The same object
 * in a choice (`choices[0].error`, finish_reason "error": OpenRouter's NonStreamingChoice) is read too.
 */
function errorInBody(completion: unknown): (Outcome & { ok: false }) | null {
  const e = (completion as { error?: unknown } | null)?.error;
  // Ollama's error shape is a bare string ({"error": "model \"x\" not found"}): its text is the reason
  // (QA: recorded as "reply has no choices").
  if (typeof e === 'string' && e.trim() !== '') return { ok: false, kind: kindOfStatus(undefined), message: `error in a status-200 reply: ${e.trim()}` };
  if (!e || typeof e !== 'object') return null;
  const { code, message, metadata } = e as { code?: unknown; message?: unknown; metadata?: { provider_name?: unknown; raw?: unknown } };
  const status = typeof code === 'number' ? code : typeof code === 'string' ? Number(code) : NaN;
  const kind = kindOfStatus(Number.isFinite(status) ? status : undefined);
  const from = [metadata?.provider_name, metadata?.raw].filter((x): x is string => typeof x === 'string' && x !== '');
  const text = typeof message === 'string' ? message : JSON.stringify(e);
  return {
    ok: false,
    kind,
    message: `error in a status-200 reply: ${Number.isFinite(status) ? `${status} ` : ''}${text}${from.length > 0 ? ` (${from.join(': ')})` : ''}`,
  };
}

/**
 * A reply's text. `content` is a string in the OpenAI protocol, but Mistral's reasoning models
 * (Magistral) send a list of chunks, `[{"type": "thinking", "thinking": [...]}, {"type": "text",
 * "text": "..."}]`: its text chunks, joined (the thinking is not the answer). Taken as a string, the
 * list was no JSON and its reading failed with "content.replace is not a function" (QA).
 */
function contentText(content: unknown): string | null {
  if (typeof content === 'string') return content;
  if (!Array.isArray(content)) return null;
  return content
    .map((part) => {
      const p = part as { type?: unknown; text?: unknown } | null;
      return p && p.type === 'text' && typeof p.text === 'string' ? p.text : '';
    })
    .join('');
}

/**
 * What a reply says: its content's text, else the arguments of the one function tool call it made.
 * No tools are sent, but a proxy may enforce the response format with a forced tool of its own and
 * hand the answer back as that tool's call: LiteLLM in front of Claude does (its tool
 * `json_tool_call`, litellm constants.py RESPONSE_FORMAT_TOOL_NAME), the reply's content null and
 * the JSON in `tool_calls[0].function.arguments` (BerriAI/litellm#6741). Read as content only, such
 * a reply was invalid_json "empty reply (finish_reason "tool_calls")", asked twice, paid twice and
 * its forecast lost (QA). Several tool calls are not one answer: nothing is read from them.
 */
function replyText(message: unknown): string | null {
  const m = message as { content?: unknown; tool_calls?: unknown } | null | undefined;
  const content = contentText(m?.content);
  if (content) return content;
  const calls = Array.isArray(m?.tool_calls) ? (m.tool_calls as { type?: unknown; function?: { arguments?: unknown } }[]) : [];
  const args = calls.length === 1 ? calls[0]?.function?.arguments : undefined;
  return typeof args === 'string' && args.trim() !== '' ? args : content;
}

/** JSON-mode endpoints sometimes wrap the object in a ```json fence. */
function stripFences(s: string): string {
  const m = /^\s*```(?:json)?\s*\n([\s\S]*?)\n?```\s*$/.exec(s);
  return m ? m[1]! : s;
}

/**
 * The JSON object a reply carries inside other text, or undefined. Endpoints that do not enforce
 * `response_format` (Anthropic's compatibility layer ignores it; local servers in JSON-object mode)
 * answer with a sentence before the object ("Here is my forecast:"), a fenced block after one, or a
 * reasoning model's `<think>…</think>` first (QA: every such reply was a failed call, asked twice
 * and paid twice). In order: the reply after its thinking (afterThinking), its first fenced block, the
 * text from its first `{` to its last `}`. Only an object counts; the schema is checked after.
 */
function embeddedObject(content: string): unknown {
  const text = afterThinking(content);
  const fenced = /```(?:json)?[ \t]*\n([\s\S]*?)\n?```/.exec(text)?.[1];
  const first = text.indexOf('{');
  const last = text.lastIndexOf('}');
  const candidates = [text, fenced, first >= 0 && last > first ? text.slice(first, last + 1) : undefined];
  for (const c of candidates) {
    if (c === undefined) continue;
    try {
      const v: unknown = JSON.parse(c);
      if (v !== null && typeof v === 'object' && !Array.isArray(v)) return v;
    } catch {
      // the next candidate
    }
  }
  return undefined;
}

/**
 * A reply without its thinking: the text after its last `</think>`. A reasoning model's leading
 * `<think>…</think>` block, and the same without its opening tag: DeepSeek-R1's distilled models
 * served by vLLM or Ollama begin their output inside the thinking (the chat template opened it), so
 * the reply reads "reasoning…</think>\n\n{…}" (vllm-project/vllm#13125, deepseek-ai/DeepSeek-R1#352).
 * Only the leading block was dropped before (QA): a JSON draft in such thinking was taken for the
 * answer (a forecast recorded from a reply whose answer declined), or, followed by the answer, made
 * the reply unreadable (asked again and paid twice).
 */
function afterThinking(content: string): string {
  const end = content.lastIndexOf('</think>');
  return end < 0 ? content : content.slice(end + '</think>'.length);
}

/**
 * A provider's content filter refusing the prompt itself, an HTTP error rather than a reply:
 * Azure OpenAI's 400 `{"error": {"code": "content_filter", "message": "The response was filtered due
 * to the prompt triggering Azure OpenAI's content management policy. ...", "innererror": {"code":
 * "ResponsibleAIPolicyViolation", ...}}}` (openai/openai-agents-python#806), and OpenRouter's 403
 * for a model that requires moderation, whose metadata names the `flagged_input`
 * (openrouter.ai/docs/errors), and OpenAI's own 400 `{"error": {"message": "Invalid prompt: your prompt
 * was flagged as potentially violating our usage policy. ...", "type": "invalid_request_error",
 * "code": "invalid_prompt"}}` (alan-turing-institute/t0-1#69; QA: it was `other`). The same decision as a filtered reply (finish_reason
 * "content_filter"): `refused`, where it was `other` (QA: a question about a war or an attack is
 * what such filters stop, and the refusals of a model were not counted as such).
 */
function isPromptFiltered(err: InstanceType<typeof OpenAI.APIError>): boolean {
  if (err.status !== 400 && err.status !== 403) return false;
  const body = err.error as { code?: unknown; metadata?: { flagged_input?: unknown } } | undefined;
  return (
    err.code === 'content_filter' ||
    body?.code === 'content_filter' ||
    (err.status === 400 && err.code === 'invalid_prompt') ||
    (err.status === 403 && body?.metadata?.flagged_input !== undefined)
  );
}

/** Maps an SDK or transport error to an error kind. */
function classify(err: unknown, deadlineHit: boolean, timeoutMs: number): Outcome & { ok: false } {
  const msg = err instanceof Error ? err.message : String(err);
  if (deadlineHit) return { ok: false, kind: 'timeout', message: `no valid reply within the ${timeoutMs} ms deadline` };
  if (err instanceof OpenAI.APIConnectionTimeoutError) return { ok: false, kind: 'timeout', message: msg };
  if (err instanceof OpenAI.APIConnectionError) {
    const cause = err.cause instanceof Error ? `: ${err.cause.message}` : '';
    return { ok: false, kind: 'network', message: `${msg}${cause}` };
  }
  if (err instanceof OpenAI.APIError) {
    const status = err.status;
    if (status === 429 && isQuotaExhausted({ error: { code: err.code, type: err.type } })) return { ok: false, kind: 'quota_exhausted', message: msg };
    if (isPromptFiltered(err)) return { ok: false, kind: 'refused', message: msg };
    return { ok: false, kind: kindOfStatus(status), message: msg };
  }
  return { ok: false, kind: 'other', message: msg };
}

/** The kind of an HTTP error status, sent as the status or as an error object's code (errorInBody). */
function kindOfStatus(status: number | undefined): ErrorKind {
  // 402 Payment Required: DeepSeek's "Insufficient Balance" (an account out of credit, as OpenAI's insufficient_quota)
  if (status === 402) return 'quota_exhausted';
  if (status === 429) return 'rate_limited';
  if (status === 408) return 'timeout';
  if (status !== undefined && status >= 500) return 'server_error';
  return 'other';
}
