/**
 * Webhook subscriptions (issue 15 points 3 and 4, enterprise keys): create (the `whsec_` secret is
 * shown once), list, read, delete, rotate the secret (the old one signs for 24 h more), the
 * deliveries with their attempts, and a replay. A key sees only its own subscriptions (another
 * key's id is a 404). Delivery: api/events/webhooks/dispatcher.ts.
 */
import type { Request, Response } from 'express';
import { z } from 'zod';
import { EVENT_TYPES } from '../../pipeline/events/event-types.ts';
import { UNPRINTABLE } from '../../pipeline/text/unprintable.ts';
import { authOf } from '../auth/middleware.ts';
import type { WebhookDispatcher } from '../events/webhooks/dispatcher.ts';
import { publicView, type Subscription } from '../events/webhooks/store.ts';
import { checkWebhookUrl, WebhookUrlError } from '../events/webhooks/url-policy.ts';
import { ApiError } from '../errors/problem.ts';
import { rawRoute } from '../http/registry.ts';
import { noStore } from '../http/respond.ts';
import { parseInteger, queryInt, queryString } from '../http/params.ts';
import { decodeKeyset, encodeKeyset } from '../http/cursor.ts';
import { bodyError, jsonBody } from '../http/json-body.ts';
import { bodyHash, idempotencyKeyHeader, idempotencyKeyOf } from '../http/idempotency.ts';

/** The dispatcher, set on `app.locals.webhooks` by createApp (absent: webhooks disabled). */
function dispatcherOf(req: Request): WebhookDispatcher {
  const d = (req.app.locals as { webhooks?: WebhookDispatcher }).webhooks;
  if (!d) throw ApiError.notReady('Webhooks are not enabled on this server.');
  return d;
}

/**
 * The dispatcher, for a change of its subscriptions: none is written while the operator's
 * subscriptions file cannot be read (api/events/webhooks/store.ts), and the caller is told so with
 * a 503 to retry, not a bare 500 (outside review).
 */
function changeable(req: Request): WebhookDispatcher {
  const d = dispatcherOf(req);
  if (d.store.unreadable) {
    throw ApiError.notReady('Webhook subscriptions cannot be changed now: this server cannot read its subscriptions file (the operator is told in its log); nothing was changed. Retry later.');
  }
  return d;
}

/** What the OpenAPI document says of a change while the subscriptions file cannot be read (changeable). */
const UNREADABLE_FILE_NOTE =
  'While this server cannot read its subscriptions file (an operator\'s hand edit gone wrong), a create, deletion or rotation is a 503 `not_ready`: nothing was changed; retry.';

function keyOf(res: Response): string {
  const keyId = authOf(res).keyId;
  if (keyId === null) throw ApiError.unauthorized('Webhooks need an API key.');
  return keyId;
}

const ID = /^wh_[0-9a-f]{16}$/;

function ownSubscription(req: Request, res: Response): Subscription {
  const id = String(req.params.id ?? '');
  const sub = ID.test(id) ? dispatcherOf(req).store.get(id, keyOf(res)) : null;
  if (!sub) throw ApiError.notFound(`No webhook subscription ${JSON.stringify(id.slice(0, 64))} for this key.`, { parameter: 'id' });
  return sub;
}

/**
 * The 409 for what a disabled subscription cannot do (a replay: the dispatcher would end every
 * delivery as `disabled`), saying why it is disabled and how to get deliveries again.
 */
function disabledProblem(sub: Subscription): ApiError {
  return ApiError.subscriptionDisabled(
    `Webhook subscription ${sub.id} is disabled (${sub.disabled_reason ?? 'no reason recorded'}); nothing would be sent. ` +
      `An operator can enable it again with \`quorum webhooks enable ${sub.id}\` (its key must be an active enterprise key), then replay; or create a new subscription.`,
    { id: sub.id, disabled_reason: sub.disabled_reason, disabled_at: sub.disabled_at },
  );
}

/** The longest `types` list taken (repeats included). */
const MAX_TYPES_GIVEN = 100;

const CreateBody = z
  .object({
    url: z.string().min(1).max(2048),
    // A type named twice is stored once (the README): the bound is on the list as sent, past what
    // every type, each repeated, needs (outside test: `.max(EVENT_TYPES.length)` refused the seven
    // types with one named twice, a list the README says is taken).
    // null as the answers show it (every type; no description): a subscription read back can be sent again (outside test)
    types: z.array(z.enum(EVENT_TYPES)).min(1).max(MAX_TYPES_GIVEN).nullable().optional(),
    // printed by `quorum webhooks list --json`, which escapes C0 but not C1 or the bidirectional overrides
    description: z.string().max(500).refine((d) => !UNPRINTABLE.test(d), 'no control character or bidirectional override (a newline, a tab, an escape, U+202E)').nullable().optional(),
  })
  .strict()
  .meta({ id: 'WebhookCreate' });

const Subscription = z
  .object({
    id: z.string().meta({ description: 'The subscription id (`wh_` + 16 hex digits).' }),
    url: z.string().meta({ description: 'The https address deliveries are POSTed to.' }),
    types: z.array(z.string()).nullable().meta({ description: 'The event types delivered; null: every type.' }),
    description: z.string().nullable().meta({ description: 'The description given at creation (null: none).' }),
    created_at: z.string().meta({ format: 'date-time', description: 'When the subscription was created (ISO 8601 UTC).' }),
    status: z.enum(['enabled', 'disabled']).meta({
      description: 'disabled: nothing is delivered (the receiver answered 410, the retry window ran out, or the owning key lost webhooks); an operator can enable it again.',
    }),
    disabled_reason: z.string().nullable().meta({ description: 'Why it was disabled (null while enabled).' }),
    disabled_at: z.string().nullable().meta({ format: 'date-time', description: 'When it was disabled, ISO 8601 UTC (null while enabled).' }),
  })
  .meta({ id: 'WebhookSubscription', description: 'A webhook subscription of the calling key (its secret is never shown here).' });

const IdParams = z.object({ id: z.string().meta({ description: 'The subscription id (`wh_…`).' }) });
const json = (schema: z.ZodType) => ({ 'application/json': { schema } });

/** The answer to a create: the subscription with its current secret. */
function created(res: Response, sub: Subscription): void {
  noStore(res);
  res.status(201).json({ ...publicView(sub), secret: sub.secrets[0]!.secret });
}

/**
 * Answers a retried create from the subscription its Idempotency-Key made (true), or a 422 when
 * that key came with another body; false when the key made none (or none still there).
 */
function replayedCreate(d: WebhookDispatcher, res: Response, keyId: string, idem: { key: string; body_hash: string } | undefined): boolean {
  const earlier = idem === undefined ? null : d.store.byIdempotencyKey(keyId, idem.key);
  if (!earlier) return false;
  if (earlier.idempotency!.body_hash !== idem!.body_hash) throw ApiError.idempotencyConflict();
  res.setHeader('Idempotent-Replayed', 'true');
  created(res, earlier);
  return true;
}

/**
 * What decides a create before anything is made: a retry answered from its Idempotency-Key (true),
 * else a 409 subscription_limit when the key has QUORUM_WEBHOOKS_MAX_PER_KEY subscriptions. Asked
 * before the URL's address lookup and again after it: a concurrent retry may have created the
 * subscription meanwhile, and creates sent together each passed the cap while the others were
 * looked up, and all were made (QA review: 8 at once with a cap of 3).
 */
function answeredBeforeCreate(d: WebhookDispatcher, res: Response, keyId: string, idem: { key: string; body_hash: string } | undefined): boolean {
  if (replayedCreate(d, res, keyId, idem)) return true;
  if (d.store.list(keyId).length >= d.maxPerKey) throw ApiError.subscriptionLimit(d.maxPerKey);
  return false;
}

export const webhooksCreateRoute = rawRoute({
  id: 'webhooks.create',
  status: 201,
  method: 'post',
  path: '/api/webhooks/',
  summary: 'Create a webhook subscription',
  description:
    'Returns the subscription with its `whsec_` signing secret, shown only here. The URL must be https and must not resolve to a ' +
    'private, loopback or link-local address. Each create makes a new subscription (each gets every event, under its own ' +
    '`webhook-id`s), so a client that retries after a lost answer should send an `Idempotency-Key`: within 24 h the same key ' +
    'and body return the subscription it created (`Idempotent-Replayed: true`, its current secret) instead of a second one; ' +
    'another body is a 422 `idempotency_conflict`. ' + UNREADABLE_FILE_NOTE,
  tags: ['webhooks'],
  body: CreateBody,
  headers: z.object({
    'Idempotency-Key': idempotencyKeyHeader.optional().meta({
      description: '1-200 visible ASCII characters, 24 h: the same key and body return the subscription it created (Idempotent-Replayed: true) instead of a second one; another body is a 422.',
    }),
  }),
  errors: [400, 409, 422, 503],
  responseHeaders: {
    'Idempotent-Replayed': '`true` when the subscription is the one an earlier request with the same Idempotency-Key created.',
  },
  responses: json(Subscription.extend({ secret: z.string() })),
  handle: async (req, res) => {
    const d = dispatcherOf(req);
    const keyId = keyOf(res);
    const body = jsonBody(req);
    const parsed = CreateBody.safeParse(body);
    if (!parsed.success) throw bodyError(parsed.error, body);
    const key = idempotencyKeyOf(req);
    const idem = key === undefined ? undefined : { key, body_hash: bodyHash(req.body) };
    if (answeredBeforeCreate(d, res, keyId, idem)) return;
    let url: URL;
    try {
      url = await checkWebhookUrl(parsed.data.url, d.allowPrivate);
    } catch (err) {
      if (err instanceof WebhookUrlError) throw ApiError.invalidParameter('url', err.message);
      throw err;
    }
    // again after the address check's wait (from here to the create nothing waits, so no third
    // request can come between)
    if (answeredBeforeCreate(d, res, keyId, idem)) return;
    // The URL as parsed (what deliveries go to), not as sent: a control character sent in it came
    // back raw in every listing and reached the operator's terminal through `quorum webhooks list` (QA).
    created(res, changeable(req).store.create({ keyId, url: url.href, types: parsed.data.types ?? null, description: parsed.data.description ?? null, idempotency: idem }));
  },
});

export const webhooksListRoute = rawRoute({
  id: 'webhooks',
  path: '/api/webhooks/',
  summary: 'This key\'s webhook subscriptions',
  tags: ['webhooks'],
  errors: [503],
  responses: json(z.object({
    webhooks: z.array(Subscription).meta({ description: 'Every subscription of the calling key.' }),
    count: z.number().int().meta({ description: 'Entries in `webhooks`.' }),
  })),
  handle: (req, res) => {
    const list = dispatcherOf(req).store.list(keyOf(res)).map(publicView);
    res.status(200).json({ webhooks: list, count: list.length });
  },
});

export const webhooksGetRoute = rawRoute({
  id: 'webhooks.get',
  path: '/api/webhooks/{id}/',
  summary: 'One webhook subscription',
  tags: ['webhooks'],
  params: IdParams,
  errors: [404, 503],
  responses: json(Subscription),
  handle: (req, res) => {
    res.status(200).json(publicView(ownSubscription(req, res)));
  },
});

export const webhooksDeleteRoute = rawRoute({
  id: 'webhooks.delete',
  status: 204,
  method: 'delete',
  path: '/api/webhooks/{id}/',
  summary: 'Delete a webhook subscription (its pending deliveries are dropped)',
  description: UNREADABLE_FILE_NOTE,
  tags: ['webhooks'],
  params: IdParams,
  errors: [404, 503],
  responses: {},
  handle: (req, res) => {
    const sub = ownSubscription(req, res);
    changeable(req).remove(sub.id);
    res.status(204).end();
  },
});

export const webhooksRotateRoute = rawRoute({
  id: 'webhooks.rotate_secret',
  method: 'post',
  path: '/api/webhooks/{id}/rotate-secret',
  summary: 'Rotate the signing secret (the old one keeps signing for 24 h)',
  description: UNREADABLE_FILE_NOTE,
  tags: ['webhooks'],
  params: IdParams,
  errors: [404, 503],
  responses: json(z.object({
    id: z.string().meta({ description: 'The subscription id.' }),
    secret: z.string().meta({ description: 'The new `whsec_` signing secret, shown only here: it signs every delivery from now on.' }),
    previous_secret_expires_at: z.string().meta({
      format: 'date-time', description: 'Until when (ISO 8601 UTC, 24 h from now) the previous secret also signs: deliveries carry both signatures until then.',
    }),
  })),
  handle: (req, res) => {
    const sub = ownSubscription(req, res);
    const r = changeable(req).store.rotate(sub.id)!;
    noStore(res);
    res.status(200).json({ id: sub.id, secret: r.secret, previous_secret_expires_at: r.previous_expires_at });
  },
});

/** One delivery attempt. */
const DeliveryAttempt = z.object({
  at: z.string().meta({ format: 'date-time', description: 'When the attempt started (ISO 8601 UTC).' }),
  status: z.number().int().nullable().meta({ description: 'The receiver\'s HTTP status; null on a network error or timeout.' }),
  error: z.string().nullable().meta({ description: 'What went wrong: without an answer (network error, deadline; status null), or after the status line (the answer\'s body stalled or was cut off; a 2xx still counts as delivered). Null when the receiver answered cleanly.' }),
  duration_ms: z.number().meta({ description: 'How long the attempt took, in milliseconds.' }),
});

/** One delivery of an event to the subscription, as listed (newest event first). */
const DeliveryView = z.object({
  id: z.string().meta({ description: 'The delivery id, sent as the webhook-id header (the same on every attempt and replay).' }),
  event_id: z.string().meta({ description: 'The event delivered.' }),
  seq: z.number().int().meta({ description: 'The event\'s sequence number.' }),
  type: z.string().meta({ description: 'The event type.' }),
  status: z.enum(['pending', 'delivered', 'failed', 'disabled', 'deleted', 'key_revoked', 'plan_required']).meta({
    description: 'pending (an attempt is due), delivered, failed (the retry window ran out, or the receiver answered 410, a 3xx, a 4xx other than 429 or a status above 599: not retried), disabled or deleted (the subscription ' +
      'was), key_revoked or plan_required (not attempted: the owning key lost webhooks).',
  }),
  next_attempt_at: z.string().nullable().meta({ format: 'date-time', description: 'When the next attempt is due (ISO 8601 UTC), pending only; else null. Deliveries go in order per subscription: one queued behind another is due no sooner than that one\'s next attempt.' }),
  attempts: z.array(DeliveryAttempt).meta({ description: 'Every attempt so far, oldest first.' }),
});

/** Page sizes of a subscription's deliveries (each entry carries its attempts, up to dozens over the retry window). */
export const DELIVERIES_LIMIT = { min: 1, max: 500, default: 50 } as const;
const DELIVERIES_CURSOR = 'webhook_deliveries';
/** The key a deliveries page ends on: (seq, delivery id), newest event first. */
const DeliveryKey = z.tuple([z.int().min(0), z.string().min(1).max(200)]);

/** `a` before `b` in the deliveries' order: newest event first, then delivery id (descending). */
const deliveryOrder = (a: { seq: number; id: string }, b: { seq: number; id: string }) => b.seq - a.seq || (a.id < b.id ? 1 : a.id > b.id ? -1 : 0);

export const webhooksDeliveriesRoute = rawRoute({
  id: 'webhooks.deliveries',
  path: '/api/webhooks/{id}/deliveries',
  summary: 'The deliveries of a subscription and their attempts (newest event first)',
  description:
    'The pending deliveries and the last 100 finished ones, newest event first (then delivery id), keyset-paginated: a receiver ' +
    'down for the retry window has a pending delivery per event, each with its attempts. The list is live (deliveries finish ' +
    'and the oldest finished ones are forgotten between pages); a cursor names the last entry, so a page never repeats one.',
  tags: ['webhooks'],
  params: IdParams,
  query: z.object({
    limit: z.int().min(DELIVERIES_LIMIT.min).max(DELIVERIES_LIMIT.max).default(DELIVERIES_LIMIT.default).optional()
      .meta({ description: `Entries per page (${DELIVERIES_LIMIT.min}-${DELIVERIES_LIMIT.max}, default ${DELIVERIES_LIMIT.default}).` }),
    cursor: z.string().optional().meta({ description: 'The `next_cursor` of the previous page.' }),
  }),
  errors: [400, 404, 503],
  responses: json(z.object({
    deliveries: z.array(DeliveryView).meta({ description: 'One entry per delivery, newest event first (then delivery id).' }),
    count: z.number().int().meta({ description: 'Entries in `deliveries`.' }),
    next_cursor: z.string().nullable().meta({ description: 'Pass as `cursor` for the next page; null on the last.' }),
  })),
  handle: (req, res) => {
    const limit = queryInt(req, 'limit', DELIVERIES_LIMIT);
    const raw = queryString(req, 'cursor', 1024);
    const after = raw === undefined ? null : decodeKeyset(raw, DELIVERIES_CURSOR, DeliveryKey);
    const sub = ownSubscription(req, res);
    const queue = dispatcherOf(req).queue;
    // Deliveries go in order per subscription: one queued behind the head is attempted no sooner
    // than the head's next attempt (outside test: they showed when they were queued, a time in the
    // past, while the head waited out its backoff of up to an hour).
    const notBefore = queue.headOf(sub.id)?.next_at ?? 0;
    const all = queue.ofSubscription(sub.id).sort(deliveryOrder);
    const rest = after === null ? all : all.filter((d) => deliveryOrder({ seq: after[0], id: after[1] }, d) < 0);
    const page = rest.slice(0, limit);
    const last = page.at(-1);
    // parsed through its schema: the listed shape is the documented one, field for field
    const list = page.map((d) => DeliveryView.parse({
      id: d.id, event_id: d.event_id, seq: d.seq, type: d.type, status: d.outcome ?? 'pending',
      next_attempt_at: d.outcome === null ? new Date(Math.max(d.next_at, notBefore)).toISOString() : null, attempts: d.attempts,
    }));
    const next = rest.length > limit && last ? encodeKeyset(DELIVERIES_CURSOR, [last.seq, last.id]) : null;
    res.status(200).json({ deliveries: list, count: list.length, next_cursor: next });
  },
});

export const webhooksReplayRoute = rawRoute({
  id: 'webhooks.replay',
  status: 202,
  method: 'post',
  path: '/api/webhooks/{id}/replay',
  summary: 'Re-send the retained events after a sequence number (same webhook-id per event)',
  description: 'Only events from after the subscription was created (and still retained) are re-sent. A disabled subscription is a 409 `subscription_disabled`: its deliveries would not be attempted. A `since` after the newest event\'s sequence number is a 400 `invalid_parameter` naming the newest (as the stream answers a resume point beyond it).',
  tags: ['webhooks'],
  params: IdParams,
  query: z.object({ since: z.int().min(0).max(999_999_999_999_999).optional().meta({ description: 'Event sequence number (default 0: every retained event).' }) }),
  errors: [404, 409, 503],
  responses: json(z.object({ id: z.string(), queued: z.number().int() })),
  handle: async (req, res) => {
    const raw = queryString(req, 'since', 32);
    const since = raw === undefined ? 0 : parseInteger(raw, 'since', { min: 0, max: 999_999_999_999_999 });
    const sub = ownSubscription(req, res);
    if (sub.status !== 'enabled') throw disabledProblem(sub);
    const dispatcher = dispatcherOf(req);
    // A point after the newest event (an id from another deployment, a typo) would queue nothing
    // and say 0, as if nothing were missed: a 400 naming the newest, as the stream answers
    // (outside test: `?since=` far ahead answered 202 queued 0)
    const newest = await dispatcher.newestSeq(since);
    if (since > newest) {
      throw ApiError.invalidParameter(
        'since',
        `Query parameter 'since' is ${since}, after the newest event (${newest}): no event would be re-sent. Replay with ?since=<a sequence number up to ${newest}> (0: every retained event).`,
        { min: 0, max: newest },
      );
    }
    const queued = await dispatcher.replay(sub, since);
    res.status(202).json({ id: sub.id, queued });
  },
});

export const WEBHOOK_ROUTES = [
  webhooksListRoute, webhooksCreateRoute, webhooksGetRoute, webhooksDeleteRoute,
  webhooksRotateRoute, webhooksDeliveriesRoute, webhooksReplayRoute,
];
