/**
 * `POST /api/probability/` (the partner endpoint: a key with the `probability` scope) and
 * `GET /api/probability/{request_id}` (a stored request, to the key that asked; 404 to anyone else).
 * The work is api/probability/service.ts; this file is HTTP: validation (400 naming the field),
 * Idempotency-Key (24 h; same key and body: the stored answer, no model call; another body: 422),
 * the per-key limits (in flight, daily budget, the scope's daily quota), the private record of
 * every request and answer, and cancelling the model calls when the client disconnects.
 */
import { z } from 'zod';
import type { Request, Response } from 'express';
import { authOf } from '../auth/middleware.ts';
import { ApiError, toApiError } from '../errors/problem.ts';
import { ProblemSchema, rawRoute, type ApiServices } from '../http/registry.ts';
import { shown as quoted } from '../http/params.ts';
import { noStore } from '../http/respond.ts';
import { isoTime, published } from '../openapi/common.ts';
import { ProbabilityAnswer, ProbabilityRequest } from '../probability/schemas.ts';
import { ForecastFailed, ProbabilityService } from '../probability/service.ts';
import type { StoredRequest } from '../probability/store.ts';
import { bodyHash, idempotencyKeyHeader, idempotencyKeyOf } from '../http/idempotency.ts';
import { bodyError, jsonBody } from '../http/json-body.ts';

/** Idempotency-Key records in progress (a concurrent retry waits for the first one). */
const pending = new Map<string, Promise<void>>();

export const probabilityRoute = rawRoute({
  id: 'probability',
  method: 'post',
  path: '/api/probability/',
  summary: 'A calibrated probability for any forward-looking question, from the four models live',
  description:
    'Asks every configured model (the pipeline\'s runner, prompts and structured output) in parallel, ' +
    'recalibrates each answer with the snapshot\'s Platt fits, pools them in log-odds and extremizes the pool ' +
    '(`calibration` reports the method, the fit and its out-of-sample Brier against the raw consensus; a fit that loses ' +
    'to the raw consensus out of sample is not applied: `calibration.applied` is `raw_mean`). `mode` is what the models ' +
    'were shown (default: augmented with evidence found, else informed with a market price, else blind); an asked mode ' +
    'that cannot be honoured is a 400. ' +
    'Answers within QUORUM_PROBABILITY_TIMEOUT_MS (default 30 s) with the models that answered; fewer than two: ' +
    '503 `models_unavailable`. Header `Idempotency-Key` (24 h): the same key and body return the stored answer ' +
    '(`Idempotent-Replayed: true`) without a model call; another body is a 422. Limits per key: the scope\'s daily ' +
    'quota, 4 requests in flight, a daily USD budget (429). Requests and answers are stored privately.',
  tags: ['probability'],
  body: ProbabilityRequest,
  headers: z.object({
    'Idempotency-Key': idempotencyKeyHeader.optional().meta({ description: '1-200 visible ASCII characters, 24 h: the same key and body return the stored answer (Idempotent-Replayed: true) without a model call; another body is a 422.' }),
  }),
  errors: [400, 413, 422, 503],
  responseHeaders: {
    'X-Probability-Request-Id': 'The request id (GET /api/probability/{request_id}); the original one on an idempotent replay.',
    'Idempotent-Replayed': '`true` when the answer is the stored one of an earlier request with the same Idempotency-Key.',
  },
  responses: { 'application/json': { schema: ProbabilityAnswer } },
  errorHeaders: {
    503: {
      'X-Probability-Request-Id':
        'models_unavailable: the request id (GET /api/probability/{request_id} shows the stored problem, with what the models did).',
    },
  },
  handle: async (req, res, ctx) => {
    const svc = ctx.services.probability;
    if (!svc) throw ApiError.notReady('The probability endpoint is not configured on this server.');
    // The server's shutdown waits for this request's bookkeeping (svc.close): cut at the shutdown
    // deadline, its paid calls are still logged, counted against the key's cap and recorded (QA:
    // the process exited first, and the calls that had answered were in no log, record nor spend).
    const end = svc.begin();
    try {
      await answer(req, res, ctx.services, svc);
    } finally {
      end();
    }
  },
});

/** POST /api/probability/'s work, once the service is known to be configured (see the route). */
async function answer(req: Request, res: Response, services: ApiServices, svc: ProbabilityService): Promise<void> {
  const auth = authOf(res);
  const keyId = auth.keyId!;
  const body = jsonBody(req);
  const parsed = ProbabilityRequest.safeParse(body);
  if (!parsed.success) throw bodyError(parsed.error, body);
  const idem = idempotencyKeyOf(req);
  const hash = bodyHash(req.body);
  noStore(res);
  // Before the Idempotency-Key slot is taken: nothing between taking it and the try below may throw,
  // or the slot stays taken and every retry with that key waits forever.
  const units = svc.costUnits(parsed.data);
  // The client going away ends the request wherever it is, also before its calls start: a retry
  // waiting for the first request of its Idempotency-Key (QA review: when the first ended without
  // an answer, the retry of a client gone meanwhile asked the models and was charged).
  const ac = new AbortController();
  const onClose = () => {
    if (!res.writableEnded) ac.abort(new Error('client disconnected'));
  };
  res.on('close', onClose);
  const slot = idem === undefined ? null : `${keyId}\u0000${idem}`;
  let done = () => {};
  if (slot !== null) {
    // One request per (key, Idempotency-Key) at a time: a concurrent retry waits, then replays.
    while (pending.has(slot)) await pending.get(slot);
    if (ac.signal.aborted) {
      // gone while it waited: nothing asked, nothing charged
      res.off('close', onClose);
      return;
    }
    pending.set(slot, new Promise<void>((r) => (done = r)));
  }
  let release = () => {};
  try {
    if (slot !== null) {
      const rec = await svc.store.getIdempotency(keyId, idem!);
      if (rec) {
        if (rec.body_hash !== hash) throw ApiError.idempotencyConflict();
        const stored = await svc.store.getRequest(rec.request_id);
        if (stored) {
          // The replay carries the headers of the original answer, not only its body.
          res.setHeader('X-Probability-Request-Id', stored.request_id);
          res.setHeader('Idempotent-Replayed', 'true');
          res.status(stored.status).json(stored.body);
          return;
        }
      }
    }
    // After the replay: a stored answer is replayed whatever has changed since (its close_date
    // passed, its market no longer tracked); QA: such a retry was a 400 instead of the answer.
    const prepared = await svc.prepare(parsed.data);
    // The scope's quota before the evidence retrieval (charged after it, below); its 429 is recorded as rejected.
    services.quotas.checkProbability(res, auth);
    try {
      release = svc.acquire(keyId, units);
      svc.checkBudget(keyId, services.usage.dayEndsAt, units);
    } catch (err) {
      // A refusal (429: requests in flight, spending cap) is not charged to the plan, only
      // recorded as rejected, as the scope's own quota refuses (QA: each such 429 counted
      // against the key's daily plan quota, and /api/usage/ said rejected 0).
      if (err instanceof ApiError && err.status === 429) services.quotas.refuseCharged(res, auth);
      throw err;
    }
    const requestId = ProbabilityService.newRequestId();
    let shown;
    try {
      // Evidence and the mode, before the quota is charged: an asked mode that cannot be honoured
      // is a 400 that costs nothing, like the other 400s.
      shown = await svc.show(prepared, requestId, ac.signal);
    } catch (err) {
      if (ac.signal.aborted) return; // the client went away during evidence retrieval: nothing charged, nothing asked
      throw err;
    }
    services.quotas.chargeProbability(res, auth);
    res.setHeader('X-Probability-Request-Id', requestId);
    const record = (status: number, body: unknown): StoredRequest => ({
      request_id: requestId,
      key_id: keyId,
      created_at: new Date().toISOString(),
      idempotency_key: idem ?? null,
      body_hash: hash,
      request: parsed.data,
      status,
      body,
    });
    let answer;
    try {
      answer = await svc.forecast(shown, ac.signal);
    } catch (err) {
      // The calls that had answered were paid for, whatever ended the request (the client going
      // away, too few answers, a call log that could not be written): they count against the budget.
      const cost = err instanceof ForecastFailed ? err.costUsd : 0;
      if (cost > 0) svc.recordSpend(keyId, cost, units, { answered: false });
      if (ac.signal.aborted) {
        services.logger.info({ request_id: requestId }, 'probability: client disconnected; model calls cancelled');
        await svc.store.saveRequest(record(499, { request_id: requestId, cancelled: 'client disconnected', cost_usd: cost }));
        return;
      }
      const cause = err instanceof ForecastFailed ? err.cause : err;
      const problem = toApiError(cause);
      await svc.store.saveRequest(record(problem.status, { request_id: requestId, ...problem.toProblem(req.path) }));
      throw cause;
    }
    const body = published(ProbabilityAnswer, answer);
    svc.recordSpend(keyId, answer.cost_usd, units, { answered: true });
    await svc.store.saveRequest(record(200, body));
    if (slot !== null) {
      await svc.store.putIdempotency(keyId, idem!, { request_id: requestId, body_hash: hash, created_at: new Date().toISOString() });
    }
    res.status(200).json(body);
  } finally {
    res.off('close', onClose);
    release();
    if (slot !== null) {
      pending.delete(slot);
      done();
    }
  }
}

export const StoredProbability = z
  .object({
    request_id: z.string().meta({ description: 'The request id (`prq_` + 32 hex digits), as in the X-Probability-Request-Id header.' }),
    created_at: isoTime.meta({ description: 'When the answer (or the problem) was recorded.' }),
    idempotency_key: z.string().nullable().meta({ description: 'The Idempotency-Key header the request carried (null: none).' }),
    request: ProbabilityRequest.meta({ description: 'The request body as validated.' }),
    status: z.number().int().meta({ description: 'The HTTP status it was answered with (499: the client disconnected).' }),
    answer: z
      .union([
        ProbabilityAnswer,
        ProblemSchema.extend({
          request_id: z.string().meta({ description: 'The request id.' }),
          // models_unavailable (503) says what the models did
          n_models: z.number().int().optional().meta({ description: 'models_unavailable: the models that answered.' }),
          failed: ProbabilityAnswer.shape.failed.optional(),
          cost_usd: z.number().optional().meta({ description: 'models_unavailable: what the calls cost in USD.' }),
        }).meta({
          id: 'StoredProbabilityProblem',
          description: 'The problem it was answered with (status 4xx or 5xx), with its request id.',
        }),
        z
          .object({
            request_id: z.string().meta({ description: 'The request id.' }),
            cancelled: z.string().meta({ description: 'Why it was cancelled: `client disconnected`.' }),
            cost_usd: z.number().optional().meta({
              description: 'What the calls that had answered before the client went away cost in USD, counted against the key\'s daily budget (absent in records of earlier versions).',
            }),
          })
          .meta({ id: 'StoredProbabilityCancelled', description: 'Status 499: the client disconnected; the model calls were cancelled.' }),
      ])
      .meta({
        description:
          'The answer (status 200), the problem body (4xx, 5xx) or the cancellation (499), as recorded: an answer recorded by an ' +
          'earlier version lacks the members added since (`models[].translations_missing`, `models[].calibration_applied`, the fits\' `n_questions`).',
      }),
  })
  .meta({ id: 'StoredProbabilityRequest' });

export const probabilityRequestRoute = rawRoute({
  id: 'probability.request',
  path: '/api/probability/{request_id}',
  summary: 'A probability request you made, with its answer',
  tags: ['probability'],
  params: z.object({ request_id: z.string().meta({ example: 'prq_0123456789abcdef0123456789abcdef' }) }),
  errors: [404],
  responses: { 'application/json': { schema: StoredProbability } },
  handle: async (req, res, { services }) => {
    const svc = services.probability;
    const auth = authOf(res);
    const id = String(req.params.request_id ?? '');
    const stored = svc ? await svc.store.getRequest(id) : null;
    // Another key's request is indistinguishable from an unknown one. The id is quoted cut at 64
    // characters, as every detail route echoes what it was sent (QA review: whole, up to the ~16 kB a URL may hold).
    if (!stored || stored.key_id !== auth.keyId) throw ApiError.notFound(`No probability request ${quoted(id)} for this key.`, { parameter: 'request_id' });
    noStore(res);
    res.status(200).json({
      request_id: stored.request_id,
      created_at: stored.created_at,
      idempotency_key: stored.idempotency_key,
      request: stored.request,
      status: stored.status,
      answer: stored.body,
    });
  },
});
