/**
 * The probability endpoint's work (DESIGN §7, §10; issue 14): one live question through the
 * pipeline's model runner (pipeline/models/runner.ts: the same prompts, structured output,
 * deadlines and fault handling; one shared client and queue per model, so concurrent requests share
 * each model's limits), the snapshot's recalibration applied, every call logged privately.
 *
 * Three steps, so that nothing is charged for a request that cannot be answered as asked:
 * `prepare` (checks beyond the schema), `show` (evidence retrieval and the mode: what the models
 * are shown decides the mode reported and the calibration applied), then, once charged, `forecast`.
 *
 * Limits, per key, beside the scope's daily quota (api/limits/quota.ts): at most `maxInFlightPerKey`
 * requests at once (429 beyond) and a daily spending cap in USD (429 once today's spend reaches it;
 * calls already in flight may exceed it by their own cost). A client that goes away aborts its
 * calls in flight (the runner's hard `signal`).
 */
import { randomBytes } from 'node:crypto';
import type { Logger } from 'pino';
import type { EvidenceProvider, EvidenceRow } from '../../pipeline/evidence/index.ts';
import { gatherEvidence } from '../../pipeline/evidence/index.ts';
import { startDeadline } from '../../pipeline/net/deadline.ts';
import { roundUsd, type ResolvedModel } from '../../pipeline/models/config.ts';
import type { TaskQuestion } from '../../pipeline/models/prompts.ts';
import { createModelClients, runForecasts, type ForecastTask, type ModelCallRow, type ModelClient } from '../../pipeline/models/runner.ts';
import type { Mode } from '../../pipeline/warehouse/tables.ts';
import { ApiError } from '../errors/problem.ts';
import { parseTimestampValue } from '../http/params.ts';
import { DEFAULT_MAX_PRICE_AGE_HOURS, type SnapshotReader } from '../snapshot/reader.ts';
import { calibrateAnswers, calibrationsFromRows, fitFor, identityCalibration, logit, sigmoid, type ModeCalibration } from './calibration.ts';
import type { ProbabilityAnswer, ProbabilityRequest } from './schemas.ts';
import { ProbabilityStore, utcDate } from './store.ts';

export const DEFAULT_PROBABILITY_TIMEOUT_MS = 30_000;
export const DEFAULT_MAX_IN_FLIGHT_PER_KEY = 4;
/**
 * Characters of a prompt besides the question and its resolution criteria (the template's
 * instructions, dates, a market price): a lower bound (a short question's informed prompt is about
 * 1,200 characters), so the cost units of a long question are counted high rather than low.
 */
export const PROMPT_OVERHEAD_CHARS = 1000;
/** How long close() waits for the requests in flight to end (their calls cancelled, their cost booked). */
export const CLOSE_WAIT_MS = 5_000;
/** Seconds a client is told to wait after a 503 models_unavailable. */
export const MODELS_UNAVAILABLE_RETRY_S = 30;

export interface ProbabilityOptions {
  /** The models (or a lazy loader, e.g. one that starts the bundled simulator on first use). */
  models: ResolvedModel[] | (() => Promise<ResolvedModel[]>);
  /** Whole-request deadline (QUORUM_PROBABILITY_TIMEOUT_MS, default 30 s). */
  timeoutMs?: number;
  /** Per-call deadline (QUORUM_CALL_TIMEOUT_MS); capped by the request's deadline. */
  callTimeoutMs?: number;
  /** Daily USD cap per key (QUORUM_PROBABILITY_BUDGET_USD_PER_DAY); null: none. */
  budgetUsdPerDay?: number | null;
  maxInFlightPerKey?: number;
  /** Default reasoning languages. */
  langs?: string[];
  /** Evidence for the augmented mode (none: the mode is informed or blind; see `shownMode`). */
  evidenceProviders?: EvidenceProvider[];
  evidenceMax?: number;
  /** Called on close (e.g. stops a simulator the loader started). */
  close?: () => Promise<void>;
}

/** A request checked beyond its schema, with its market resolved (nothing charged yet). */
export interface Prepared {
  req: ProbabilityRequest;
  closeAt: Date;
  market: Market | null;
}

/** What the models will be shown (`show`): the mode that describes it and the evidence found. */
export interface Shown extends Prepared {
  requestId: string;
  question: TaskQuestion;
  mode: Mode;
  evidence: EvidenceRow[];
  /** The evidence providers that failed for the question (an empty `evidence` then says nothing). */
  evidenceErrors: EvidenceError[];
  /** The request's time (the models' as-of) and its start on the performance clock (its deadline). */
  now: Date;
  t0: number;
}

/** An evidence provider that failed for the question: its name and the kind of failure. */
export interface EvidenceError {
  provider: string;
  kind: string;
}

/** Seconds a client is told to wait after a 503 evidence_unavailable. */
export const EVIDENCE_UNAVAILABLE_RETRY_S = 30;

interface Market {
  probability: number;
  observed_at: Date | null;
  question_id: string | null;
  /** QUORUM_MAX_PRICE_AGE_HOURS of the snapshot reader: the staleness bound of a tracked price. */
  max_age_hours: number;
}

const INFORMED_NEEDS_MARKET = 'informed needs a market price: give market or market_probability';

/**
 * What `forecast` rejects with once model calls were made and the request ends without an answer:
 * the calls that had finished were paid for, and `costUsd` says how much, so the route counts it
 * against the key's daily budget whatever happened next. `cause` is the error that ended it (the
 * route answers that one). QA review: a call log that could not be written (a full disk) made each
 * request a 500 after its paid calls, never counted, so a key spent past its cap without limit.
 */
export class ForecastFailed extends Error {
  constructor(readonly costUsd: number, options: ErrorOptions & { cause: unknown }, message = 'probability request failed after its model calls') {
    super(message, options);
  }
}

/**
 * What `forecast` rejects with when its signal aborts (the client went away), with the cost of the
 * calls finished by then (QA: a client that hung up once some models had answered spent without limit).
 */
export class ForecastCancelled extends ForecastFailed {
  constructor(costUsd: number, options: ErrorOptions & { cause: unknown }) {
    super(costUsd, options, 'probability request cancelled: the client disconnected');
  }
}

/** What calls cost in USD (a call without a cost, failed or never sent, costs nothing). */
function callsCost(calls: readonly ModelCallRow[]): number {
  return roundUsd(calls.reduce((sum, c) => sum + (c.cost_usd ?? 0), 0));
}

/** The 400 for an asked mode that cannot be honoured, saying why and what to do instead. */
function modeUnavailable(why: string): ApiError {
  return ApiError.invalidParameter('mode', `mode ${why}; leave mode out to get the mode of what the models can be shown.`);
}

/**
 * The mode that describes what the models are shown, so that the calibration applied is the one
 * fitted on forecasts that saw the same. Asked: honoured, or a 400 naming `mode` (informed without a
 * market price; augmented without evidence). Not asked: augmented when evidence was found, else
 * informed with a market price, else blind — never a rung the models did not get.
 */
export function shownMode(asked: Mode | undefined, hasMarket: boolean, hasEvidence: boolean): Mode {
  if (asked === 'informed' && !hasMarket) throw modeUnavailable(INFORMED_NEEDS_MARKET);
  if (asked === 'augmented' && !hasEvidence) throw modeUnavailable('augmented needs evidence, and none was found for this question');
  if (asked) return asked;
  if (hasEvidence) return 'augmented';
  return hasMarket ? 'informed' : 'blind';
}

/** Whether a dated price is older than `maxAgeHours` at `at` (null: no date, e.g. a price given in the request). */
export function priceStale(observedAt: Date | null, at: Date, maxAgeHours: number): boolean | null {
  return observedAt === null ? null : at.getTime() - observedAt.getTime() > maxAgeHours * 3_600_000;
}

export class ProbabilityService {
  readonly store: ProbabilityStore;
  readonly timeoutMs: number;
  readonly maxInFlightPerKey: number;
  readonly budgetUsdPerDay: number | null;
  readonly #opts: ProbabilityOptions;
  readonly #snapshots: SnapshotReader;
  readonly #logger: Logger;
  #models: Promise<{ models: ResolvedModel[]; clients: Map<string, ModelClient> }> | null = null;
  /** Per key: how many requests are in flight and the sum of their cost units (`costUnits`: languages times prompt size). */
  #inFlight = new Map<string, { n: number; units: number }>();
  /**
   * The dearest cost unit of any request so far (USD: a request's cost over its costUnits), the
   * estimate of what one may spend once a request was answered (#anyAnswered); before that there is
   * none. A request that ended without an answer (the client went away, fewer than two answers)
   * paid for part of its calls: a lower bound, never an estimate on its own (QA review: a first
   * request cancelled after two of four models let four requests in at half a request's cost each,
   * over the cap by more than one).
   */
  #dearestUnitUsd = 0;
  #anyAnswered = false;
  #calibration: { snapshot: string; byMode: Map<string, ModeCalibration>; asOf: string } | null = null;
  /** The requests begun and not yet ended (`begin`): close() waits for them. */
  #working = new Set<Promise<void>>();

  constructor(dataDir: string, snapshots: SnapshotReader, logger: Logger, opts: ProbabilityOptions) {
    this.store = new ProbabilityStore(dataDir);
    this.#opts = opts;
    this.#snapshots = snapshots;
    this.#logger = logger;
    this.timeoutMs = opts.timeoutMs ?? DEFAULT_PROBABILITY_TIMEOUT_MS;
    this.maxInFlightPerKey = opts.maxInFlightPerKey ?? DEFAULT_MAX_IN_FLIGHT_PER_KEY;
    this.budgetUsdPerDay = opts.budgetUsdPerDay ?? null;
  }

  /** One client and queue per model, shared by every request. */
  #clients() {
    this.#models ??= (async () => {
      const models = typeof this.#opts.models === 'function' ? await this.#opts.models() : this.#opts.models;
      return { models, clients: createModelClients(models) };
    })();
    return this.#models;
  }

  /**
   * What a request's cost scales with, in units of the smallest request: its languages (every model
   * writes its reasoning and key factors once per language, in one reply) times its prompt's size
   * (the template, about PROMPT_OVERHEAD_CHARS, plus the question and resolution criteria, up to
   * 5,000 characters). A cost a·(prompt) + b·(languages) is at most (a·overhead + b)·units, so
   * the dearest cost per unit answered so far, times a request's units, bounds what it may spend.
   */
  costUnits(req: ProbabilityRequest): number {
    const langs = this.#langs(req).length;
    const text = req.question.length + (req.resolution_criteria?.length ?? 0);
    return langs * (1 + text / PROMPT_OVERHEAD_CHARS);
  }

  /** The request's reasoning languages (the first the main one): its own, else the server's. */
  #langs(req: ProbabilityRequest): string[] {
    return req.langs ?? this.#opts.langs ?? ['en'];
  }

  /** Reserves an in-flight slot for the key (429 beyond the limit) for a request of `units` (costUnits); returns its release. */
  acquire(keyId: string, units = 1): () => void {
    const cur = this.#inFlight.get(keyId) ?? { n: 0, units: 0 };
    const n = cur.n;
    if (n >= this.maxInFlightPerKey) {
      throw ApiError.rateLimited(1, `At most ${this.maxInFlightPerKey} probability requests may be in flight per key.`, {
        limit: this.maxInFlightPerKey,
        policy: 'probability_in_flight',
      });
    }
    this.#inFlight.set(keyId, { n: n + 1, units: cur.units + units });
    let released = false;
    return () => {
      if (released) return;
      released = true;
      const now = this.#inFlight.get(keyId) ?? { n: 1, units };
      if (now.n <= 1) this.#inFlight.delete(keyId);
      else this.#inFlight.set(keyId, { n: now.n - 1, units: now.units - units });
    };
  }

  /**
   * 429 once the key's spend today reached the daily cap, or could reach it with what the key's
   * other requests in flight may still spend (each as much per cost unit, its languages times its
   * prompt's size, as the dearest unit of any request answered so far; before any was answered, a
   * key with a cap has one request in flight at a time). Call after acquire() with the same `units`.
   * QA: four concurrent requests, each checked before any had spent, took a key to 4× its cap; then
   * four concurrent requests in eight languages, or with 4,000 characters of resolution criteria,
   * each reserved at the cost of the short one-language requests answered before, took a key to
   * over 2× its cap. Now it goes over by at most about one request's cost.
   */
  checkBudget(keyId: string, dayEndsAt: number, units = 1): void {
    if (this.budgetUsdPerDay === null) return;
    const spent = this.store.spentToday(keyId);
    const budget = { policy: 'probability_budget_usd', budget_usd: this.budgetUsdPerDay, spent_usd: spent };
    if (spent >= this.budgetUsdPerDay) {
      throw ApiError.rateLimited((dayEndsAt - Date.now()) / 1000, `This key's probability budget of ${this.budgetUsdPerDay} USD per day is spent.`, budget);
    }
    const cur = this.#inFlight.get(keyId) ?? { n: 1, units };
    if (cur.n - 1 <= 0) return;
    const reserved = this.#anyAnswered ? (cur.units - units) * this.#dearestUnitUsd : null;
    if (reserved === null || spent + reserved >= this.budgetUsdPerDay) {
      throw ApiError.rateLimited(1, `This key's requests in flight may spend the rest of its probability budget of ${this.budgetUsdPerDay} USD per day; retry when they are answered.`, {
        ...budget,
        reserved_usd: reserved,
      });
    }
  }

  /**
   * Records what a request of `units` (costUnits) spent, against the key's budget and as the
   * estimate of the next ones; `answered`: it was answered (200), else its cost is only part of a
   * request's (#dearestUnitUsd).
   */
  recordSpend(keyId: string, usd: number, units: number, opts: { answered: boolean }): void {
    this.store.addSpend(keyId, usd);
    this.#dearestUnitUsd = Math.max(this.#dearestUnitUsd, usd / Math.max(1, units));
    this.#anyAnswered ||= opts.answered;
  }

  /** The current snapshot's calibrations (cached per snapshot) and its id. */
  async #calibrations(): Promise<{ snapshot: string | null; asOf: string | null; byMode: Map<string, ModeCalibration> }> {
    const current = this.#snapshots.currentId;
    if (current === null) return { snapshot: null, asOf: null, byMode: new Map() };
    if (this.#calibration?.snapshot === current) return this.#calibration;
    return this.#snapshots.withSnapshot(async (snap) => {
      const rows = snap.tables.has('calibration_models') ? await snap.query('calibration-models') : [];
      this.#calibration = { snapshot: snap.id, asOf: snap.asOf, byMode: calibrationsFromRows(rows) };
      return this.#calibration;
    });
  }

  async #market(req: ProbabilityRequest): Promise<Market | null> {
    const maxAgeHours = this.#snapshots.current?.maxPriceAgeHours ?? DEFAULT_MAX_PRICE_AGE_HOURS;
    if (req.market) {
      // The venue in any case, as every venue and question id the API takes (stored in lower case);
      // the market id keeps its case: venues' ids are case-sensitive (api/routes/prediction-params.ts).
      const m = { venue: req.market.venue.toLowerCase(), market_id: req.market.market_id };
      if (this.#snapshots.currentId === null) throw ApiError.invalidParameter('market', 'No snapshot is loaded to look the market up in.');
      const rows = await this.#snapshots.withSnapshot((snap) => snap.query('probability-market', { venue: m.venue, market_id: m.market_id }));
      const r = rows[0];
      if (!r) throw ApiError.invalidParameter('market', `No tracked market ${m.venue}/${m.market_id}.`);
      if (typeof r.latest_market_probability !== 'number') {
        throw ApiError.invalidParameter('market', `The tracked market ${m.venue}/${m.market_id} has no price yet.`);
      }
      return {
        probability: r.latest_market_probability,
        observed_at: typeof r.latest_market_observed_at === 'string' ? new Date(r.latest_market_observed_at) : null,
        question_id: String(r.question_id),
        max_age_hours: maxAgeHours,
      };
    }
    if (req.market_probability !== undefined) {
      return { probability: req.market_probability, observed_at: null, question_id: null, max_age_hours: maxAgeHours };
    }
    return null;
  }

  /** Whether evidence providers are configured (the augmented mode is possible at all). */
  get #hasEvidenceProviders(): boolean {
    return (this.#opts.evidenceProviders?.length ?? 0) > 0;
  }

  /**
   * The checks that need more than the schema (close_date in the future, the market tracked, an
   * asked mode the request itself rules out): a 400 here is raised before any quota or budget is
   * charged. Whether evidence exists is known only after retrieval (`show`).
   */
  async prepare(req: ProbabilityRequest): Promise<Prepared> {
    // An answer needs two models (fewer is a 503 models_unavailable): with fewer configured, every
    // request would be charged, the model asked and paid, and the 503's Retry-After never help (QA).
    const { models } = await this.#clients();
    if (models.length < 2) {
      throw ApiError.notReady(
        `This server has ${models.length} model${models.length === 1 ? '' : 's'} configured; the probability endpoint needs at least two (QUORUM_MODELS_FILE).`,
      );
    }
    // The schema checked the grammar (api/http/params.ts); this is the same parser's instant.
    const closeAt = new Date(Number(parseTimestampValue(req.close_date)!.epochUs / 1000n));
    if (!(closeAt.getTime() > Date.now())) throw ApiError.invalidParameter('close_date', 'close_date must be in the future.');
    const market = await this.#market(req);
    if (req.mode === 'informed' && market === null) throw modeUnavailable(INFORMED_NEEDS_MARKET);
    if (req.mode === 'augmented' && !this.#hasEvidenceProviders) {
      throw modeUnavailable('augmented needs evidence, and this server has no evidence provider configured');
    }
    return { req, closeAt, market };
  }

  /**
   * Retrieves the evidence (when the mode asked for, or left to the server, may use it) and settles
   * the mode (`shownMode`: a 400 when an asked augmented mode found no evidence). No quota is charged
   * yet and no model asked. Evidence retrieval gets at most a third of the request's deadline (the
   * models keep the rest) and stops when the client goes away (`signal`).
   */
  async show(prepared: Prepared, requestId: string, signal: AbortSignal): Promise<Shown> {
    const t0 = performance.now();
    const now = new Date();
    const { req, closeAt } = prepared;
    const question: TaskQuestion = {
      question_id: `probability:${requestId}`,
      title: req.question,
      description: null,
      resolution_criteria: req.resolution_criteria ?? null,
      url: null,
      created_at: now,
      close_time: closeAt,
      category: req.category ?? null,
      domain: null,
    };
    let evidence: EvidenceRow[] = [];
    let evidenceErrors: EvidenceError[] = [];
    const mayUseEvidence = req.mode === 'augmented' || req.mode === undefined;
    if (mayUseEvidence && this.#hasEvidenceProviders) {
      // A real timer (pipeline/net/deadline.ts), not AbortSignal.any + AbortSignal.timeout, whose
      // timeout a garbage collection can cancel (nodejs/node#57736).
      const deadline = startDeadline(Math.floor(this.timeoutMs / 3), signal, 'evidence deadline');
      try {
        const g = await gatherEvidence([question], {
          providers: this.#opts.evidenceProviders!,
          asOf: now,
          maxPerQuestion: this.#opts.evidenceMax ?? 5,
          signal: deadline.signal,
          // what the providers done by the deadline found is kept; those still running are errors
          keepPartial: true,
          // a partner waits: its GDELT request goes before a scheduled run's questions
          interactive: true,
        });
        const found = g.byQuestion.get(question.question_id);
        evidence = found ?? [];
        // Stopped by the evidence deadline before the question started: every provider's answer is unknown.
        evidenceErrors = found === undefined && g.stopped && !signal.aborted
          ? this.#opts.evidenceProviders!.map((p) => ({ provider: p.name, kind: 'timeout' }))
          : g.errors.map((e) => ({ provider: e.provider, kind: e.kind }));
      } finally {
        deadline.clear();
      }
    }
    signal.throwIfAborted();
    if (req.mode === 'augmented' && evidence.length === 0 && evidenceErrors.length > 0) {
      // Not "none was found": a provider failed, so whether there is evidence is unknown (QA: a
      // GDELT 429 was a 400 invalid_parameter saying that no evidence was found for the question).
      const failed = evidenceErrors.map((e) => `${e.provider}: ${e.kind}`).join(', ');
      throw ApiError.evidenceUnavailable(
        `mode augmented needs evidence, and the evidence providers failed (${failed}); retry later, or leave mode out.`,
        EVIDENCE_UNAVAILABLE_RETRY_S,
        { evidence_errors: evidenceErrors },
      );
    }
    const mode = shownMode(req.mode, prepared.market !== null, evidence.length > 0);
    return { ...prepared, requestId, question, mode, evidence, evidenceErrors, now, t0 };
  }

  /**
   * Asks every model what `show` settled, calibrates and pools. Throws 503 models_unavailable with
   * fewer than two answers. Once calls were made, rejects with ForecastFailed (its `cause` the error,
   * the 503 among them) carrying what they cost, ForecastCancelled when `signal` aborts (the client
   * went away: the calls finished by then).
   */
  async forecast(shown: Shown, signal: AbortSignal): Promise<ProbabilityAnswer> {
    const { req, market, mode, evidence, evidenceErrors, requestId, question, now, t0 } = shown;
    const { models, clients } = await this.#clients();
    const langs = this.#langs(req);
    const questionId = question.question_id;
    const task: ForecastTask = {
      mode,
      question,
      market: market
        ? { probability: market.probability, observed_at: market.observed_at ?? now, volume: null, liquidity: null, history: [] }
        : null,
      evidence: mode === 'augmented' ? evidence : [],
    };
    // Each call's deadline ends before the request's, so an answer (or 503) is always in time.
    const left = this.timeoutMs - (performance.now() - t0) - 200;
    const maxCallTimeoutMs = Math.max(100, left);
    const runId = `probability-${utcDate(now.getTime())}`;
    const finished: ModelCallRow[] = [];
    // Calls cut short by the disconnect, with what their responses so far cost (runner's onCancelled).
    const cutShort = new Map<string, ModelCallRow>();
    const callsAt = new Date();
    let out: Awaited<ReturnType<typeof runForecasts>>;
    try {
      out = await runForecasts({
        models,
        clients,
        tasks: [task],
        runId,
        asOf: now,
        langs,
        signal,
        callTimeoutMs: this.#opts.callTimeoutMs,
        maxCallTimeoutMs,
        // Every call ends by then, also one that waited in its model's queue behind other requests
        // (QA: a queued call got the whole time left once it started, and the answer came late).
        deadlineAt: Date.now() + maxCallTimeoutMs,
        onCall: (c) => finished.push(c),
        onCancelled: (c) => cutShort.set(c.model, c),
      });
    } catch (err) {
      if (signal.aborted) {
        // The runner drops the calls it cancels: they are logged here, so every call is in the log.
        const done = new Set(finished.map((c) => c.model));
        // A call cut short in flight keeps what it had received: a first reply asked again was paid.
        const cancelled = models
          .filter((m) => !done.has(m.id))
          .map((m): ModelCallRow => {
            const cut = cutShort.get(m.id);
            if (cut) return { ...cut, error_message: 'cancelled: the client disconnected' };
            return {
              run_id: runId,
              question_id: questionId,
              model: m.id,
              mode,
              started_at: callsAt,
              latency_ms: Math.round(Date.now() - callsAt.getTime()),
              status: 'failed',
              error_kind: 'other',
              error_message: 'cancelled: the client disconnected',
              attempts: 1,
              tokens_in: null,
              tokens_out: null,
              cost_usd: null,
              condition: null,
              provider: m.provider,
            };
          });
        const paid = callsCost([...finished, ...cancelled]);
        try {
          await this.store.appendCalls([...finished, ...cancelled]);
        } catch (logErr) {
          // The client is gone: what it spent still counts (ForecastCancelled); the log's failure is said here.
          this.#logger.error({ err: logErr, request_id: requestId }, 'probability: the calls of a cancelled request could not be logged');
        }
        throw new ForecastCancelled(paid, { cause: err });
      }
      // The runner failed (an unexpected error): the calls that had finished, and what the calls it
      // cut short had received, were paid all the same.
      throw new ForecastFailed(callsCost([...finished, ...cutShort.values()]), { cause: err });
    }
    const cost = callsCost(out.calls);
    try {
      await this.store.appendCalls(out.calls);
      return await this.#answer(req, requestId, now, mode, market, evidence, evidenceErrors, out, cost, t0);
    } catch (err) {
      // The calls were paid whatever fails now (the call log on a full disk, the answer): said with the cost.
      throw new ForecastFailed(cost, { cause: err });
    }
  }

  async #answer(
    req: ProbabilityRequest,
    requestId: string,
    now: Date,
    mode: Mode,
    market: Market | null,
    evidence: EvidenceRow[],
    evidenceErrors: EvidenceError[],
    out: Awaited<ReturnType<typeof runForecasts>>,
    cost: number,
    t0: number,
  ): Promise<ProbabilityAnswer> {
    const main = out.forecasts.filter((f) => f.translation_of === null);
    const failed = out.calls
      .filter((c) => c.status !== 'ok')
      // with what its replies cost (a reply not JSON, asked again, was paid twice): cost_usd is the
      // sum of the answering and the failed calls' costs, so a partner can reconcile what it paid
      .map((c) => ({ model: c.model, error_kind: c.error_kind ?? 'other', latency_ms: c.latency_ms, cost_usd: c.cost_usd }));
    if (main.length < 2) {
      throw ApiError.modelsUnavailable(
        `Only ${main.length} of ${out.calls.length} models answered; at least two are needed.`,
        MODELS_UNAVAILABLE_RETRY_S,
        { n_models: main.length, failed, cost_usd: cost },
      );
    }
    const cal = await this.#calibrations();
    const c = cal.byMode.get(mode) ?? identityCalibration(mode);
    const calibrated = calibrateAnswers(c, main);
    const calibratedOf = new Map(calibrated.models.map((m) => [m.model, m]));
    const ps = main.map((f) => f.probability);
    const n = ps.length;
    const mean = ps.reduce((a, b) => a + b, 0) / n;
    const sorted = [...ps].sort((a, b) => a - b);
    const median = n % 2 ? sorted[(n - 1) / 2]! : (sorted[n / 2 - 1]! + sorted[n / 2]!) / 2;
    const ls = ps.map(logit);
    const lmean = ls.reduce((a, b) => a + b, 0) / n;
    const sd = Math.sqrt(ps.reduce((a, p) => a + (p - mean) ** 2, 0) / n);
    const sdLogit = Math.sqrt(ls.reduce((a, l) => a + (l - lmean) ** 2, 0) / n);
    const callOf = new Map(out.calls.map((x) => [x.model, x]));
    const translations = (model: string) =>
      Object.fromEntries(
        out.forecasts
          .filter((f) => f.model === model && f.translation_of !== null)
          .map((f) => [f.lang, { reasoning: f.reasoning, key_factors: f.key_factors }]),
      );
    // The further languages a model gave no usable translation in, asked again (the runner keeps its
    // forecast: pipeline/models/runner.ts). QA: such a language was only absent from `translations`,
    // which the document said holds each further language of `langs`.
    const translationsMissing = (model: string) => {
      const got = new Set(out.forecasts.filter((f) => f.model === model && f.translation_of !== null).map((f) => f.lang));
      return this.#langs(req).slice(1).filter((l) => !got.has(l));
    };
    const modelsUsed = main.map((f) => f.model);
    return {
      request_id: requestId,
      created_at: now.toISOString(),
      question: req.question,
      mode,
      probability: calibrated.probability,
      consensus: { mean, median, logit_mean: sigmoid(lmean) },
      disagreement: { sd, range: sorted[n - 1]! - sorted[0]!, sd_logit: sdLogit },
      n_models: n,
      models: main.map((f) => {
        const call = callOf.get(f.model)!;
        return {
          model: f.model,
          provider: f.provider,
          probability: f.probability,
          calibrated_probability: calibratedOf.get(f.model)!.calibrated_probability,
          calibration_applied: calibratedOf.get(f.model)!.calibration_applied,
          reasoning: f.reasoning,
          key_factors: f.key_factors,
          translations: translations(f.model),
          translations_missing: translationsMissing(f.model),
          latency_ms: call.latency_ms,
          attempts: call.attempts,
          tokens_in: call.tokens_in,
          tokens_out: call.tokens_out,
          // to 9 decimals as the request's cost_usd (QA review: 0.00012502000000000002 at DeepSeek's prices)
          cost_usd: call.cost_usd,
        };
      }),
      failed,
      evidence: evidence.map((e) => ({
        evidence_id: e.evidence_id,
        title: e.title,
        url: e.url,
        published_at: e.published_at ? e.published_at.toISOString() : null,
        source_slug: e.source_slug,
      })),
      evidence_errors: evidenceErrors,
      market: market
        ? {
            probability: market.probability,
            observed_at: market.observed_at?.toISOString() ?? null,
            // At the request's time: the price's age when the models were shown it.
            stale: priceStale(market.observed_at, now, market.max_age_hours),
            question_id: market.question_id,
          }
        : null,
      calibration: {
        method: c.method === 'platt' ? 'platt_shrunk_logit_pool' : c.method,
        applied: calibrated.applied,
        fitted_on: { resolved_questions: c.n_questions, snapshot: cal.snapshot, as_of: c.as_of ?? cal.asOf, fitted_through: c.fitted_through },
        parameters: {
          extremize: c.extremize,
          extremize_method: c.extremize_method,
          pool: { intercept: c.pool.intercept, slope: c.pool.slope, method: c.pool.method, n_questions: c.pool.n_questions },
          models: Object.fromEntries(modelsUsed.map((m) => {
            const f = fitFor(c, m);
            return [m, { intercept: f.intercept, slope: f.slope, method: f.method, n_questions: f.n_questions }];
          })),
        },
        out_of_sample: c.out_of_sample,
      },
      cost_usd: cost,
      latency_ms: Math.round(performance.now() - t0),
    };
  }

  /**
   * Marks a request's work begun; call the function returned when it has ended (answered, or its
   * calls logged, spend counted and record stored). close() waits for every request begun, so a
   * shutdown that cut requests in flight (their calls cancelled) still books what they paid.
   */
  begin(): () => void {
    let end!: () => void;
    const p = new Promise<void>((resolve) => (end = resolve));
    this.#working.add(p);
    return () => {
      this.#working.delete(p);
      end();
    };
  }

  /** A fresh request id. */
  static newRequestId(): string {
    return `prq_${randomBytes(16).toString('hex')}`;
  }

  async close(): Promise<void> {
    // The requests in flight end first (the server cut their connections, which cancels their
    // calls): what they paid is counted before the spend file is written. Bounded, so that one
    // stuck request cannot hold the shutdown.
    if (this.#working.size > 0) {
      let timer: NodeJS.Timeout | undefined;
      const bounded = new Promise<'timeout'>((resolve) => (timer = setTimeout(() => resolve('timeout'), CLOSE_WAIT_MS)));
      const ended = await Promise.race([Promise.all([...this.#working]).then(() => 'ended' as const), bounded]);
      clearTimeout(timer);
      if (ended === 'timeout') this.#logger.warn({ requests: this.#working.size }, 'probability: closing with requests still in flight');
    }
    await this.store.flush();
    await this.#opts.close?.();
  }
}
