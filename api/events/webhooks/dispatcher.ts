/**
 * Delivers events to webhook subscriptions (issue 15 point 4): each new event of the feed becomes
 * one durable delivery per matching enabled subscription (message id derived from the event and
 * the subscription, so a re-sent one carries the same `webhook-id`), written to the queue before
 * the cursor moves on. Per subscription in order: only the oldest pending delivery of a
 * subscription is attempted. An attempt is a POST of `{type, timestamp, data}` with the Standard
 * Webhooks headers, with a deadline; 2xx delivers, 410 disables the subscription, a network error,
 * 429 or 5xx is retried with exponential backoff and jitter (honouring Retry-After) until the
 * retry window since its first attempt is over, which disables the subscription; another status
 * fails that one delivery.
 *
 * Before every attempt the subscription's owning API key is checked (owner.ts, the key file
 * reread at most every {@link KEY_RECHECK_MS}): a key revoked, or no longer on the enterprise plan,
 * gets nothing more. Its subscription is disabled (`disabled_reason` says which key and why) and
 * its pending deliveries are not attempted: they end with the status `key_revoked` or
 * `plan_required`, listed with the subscription's deliveries, nothing dropped unrecorded. A
 * revocation is final (no command un-revokes a key); a key moved back to enterprise can have the
 * subscription enabled again (`quorum webhooks enable`) and the skipped events replayed. A key
 * missing from the key file holds its deliveries instead (pending, not attempted, checked again
 * every {@link HOLD_MS}): an unreadable key file must not disable every subscription.
 */
import { createHash } from 'node:crypto';
import { Agent } from 'undici';
import { postTarget, postWebhook, type PostOutcome, type PostTarget } from './post.ts';
import type { Logger } from 'pino';
import type { WebhooksConfig } from '../../../pipeline/events/config.ts';
import type { EventFeed, FeedEvent } from '../feed.ts';
import { DeliveryQueue, type Delivery } from './queue.ts';
import { DeadlineSweep } from '../../../pipeline/net/deadline.ts';
import { signatureHeader } from './signing.ts';
import { signingSecrets, SubscriptionStore, type Subscription } from './store.ts';
import { guardedLookup, refusedWithoutPrivate } from './url-policy.ts';
import { KeyStore } from '../../auth/keys.ts';
import { ownerRefusal } from './owner.ts';

/**
 * Deliveries written (and fsynced) per chunk when a batch of events is queued. Between chunks the
 * event loop runs the deliveries in flight, so a smaller chunk lets subscribers hear of a publish
 * sooner while a large run is still being queued (bench events, 1,000 subscriptions × 1,000
 * events: publish-to-first-attempt p99 2,336 ms at 2,000 → 1,144–1,260 ms at 500; deliveries/s
 * within noise; each chunk costs one fsync).
 */
const ENQUEUE_CHUNK = 500;

/** How stale the dispatcher's view of the key file may be: a revocation stops deliveries within this. */
export const KEY_RECHECK_MS = 500;

/** How long a subscription whose key is missing from the key file waits before its key is looked up again. */
const HOLD_MS = 1000;
/** A worker waiting for a retry looks at its subscription at least this often. */
const RECHECK_WAITING_MS = 1000;

/** The request body `{type, timestamp, data}`, `data` given serialized. */
function deliveryBody(type: string, timestamp: string, dataJson: string): string {
  return `{"type":${JSON.stringify(type)},"timestamp":${JSON.stringify(timestamp)},"data":${dataJson}}`;
}

export function messageId(eventId: string, subId: string): string {
  return `msg_${createHash('sha256').update(`${eventId}|${subId}`).digest('hex').slice(0, 32)}`;
}

function wants(s: Subscription, type: string): boolean {
  return s.status === 'enabled' && (s.types === null || s.types.includes(type));
}

/** Retry-After in ms (delta seconds or an HTTP date), or null. */
function retryAfterMs(value: string | string[] | undefined): number | null {
  const v = Array.isArray(value) ? value[0] : value;
  if (!v) return null;
  if (/^\d+$/.test(v.trim())) return Number(v.trim()) * 1000;
  const t = Date.parse(v);
  return Number.isNaN(t) ? null : Math.max(0, t - Date.now());
}

/**
 * How long to wait before attempt `n + 1` after `n` failed attempts: the exponential backoff
 * (backoffMs · 2^(n−1), at most maxBackoffMs) with equal jitter (half of it fixed, half random, so
 * never above maxBackoffMs), or the receiver's Retry-After when it asks for longer (the caller
 * ends the wait at the retry window's end, where the last attempt is made). QA: `Retry-After: 0`
 * was obeyed literally (about 14,000 attempts a second for the whole window), and the jitter
 * reached 1.5 × maxBackoffMs.
 */
export function retryDelayMs(n: number, retryAfter: number | null, cfg: Pick<WebhooksConfig, 'backoffMs' | 'maxBackoffMs'>, random = Math.random()): number {
  const cap = Math.min(cfg.backoffMs * 2 ** (n - 1), cfg.maxBackoffMs);
  return Math.max(retryAfter ?? 0, cap * (0.5 + random / 2));
}

export class WebhookDispatcher {
  readonly store: SubscriptionStore;
  readonly queue: DeliveryQueue;
  readonly #feed: EventFeed;
  readonly #cfg: WebhooksConfig;
  readonly #logger: Logger;
  /** The API keys, to check each subscription's owner before an attempt. */
  readonly #keys: KeyStore;
  /** Subscriptions whose deliveries are held for a missing key (logged once each). */
  readonly #held = new Set<string>();
  /** Whether deliveries are held because the subscriptions file cannot be read (said once per spell). */
  #heldUnreadable = false;
  readonly #agent: Agent;
  /** The deadline of every attempt, body included (one timer for all of them). */
  readonly #deadlines: DeadlineSweep;
  /** Parsed subscription URLs (a subscription's URL never changes; a new one is a new string). */
  readonly #urls = new Map<string, PostTarget>();
  readonly #workers = new Set<string>(); // subscriptions whose worker runs
  readonly #sleepers = new Set<() => void>();
  readonly #waiters: (() => void)[] = [];
  /** Attempts made since the server started, by what became of the delivery (the metrics read it). */
  readonly attempts = { delivered: 0, retry: 0, failed: 0 };
  #running = 0;
  #enqueuing: Promise<void> = Promise.resolve();
  #unsubscribe: (() => void) | null = null;
  /** Whether queueing the events owed fails (logged once per spell), and its retry's timer (#queueOwed). */
  #owedFailing = false;
  #owedRetry: NodeJS.Timeout | null = null;
  /** Closing: no new attempt starts. */
  #closed = false;
  /** Closed past the grace period: an attempt still in flight is cut and not recorded. */
  #aborted = false;
  /** The attempts in flight (close() lets them finish, within a grace period). */
  readonly #inFlight = new Set<Promise<boolean>>();

  constructor(dataDir: string, feed: EventFeed, cfg: WebhooksConfig, logger: Logger) {
    this.store = new SubscriptionStore(dataDir);
    this.queue = new DeliveryQueue(dataDir, {
      onWriteError: (err) => logger.error({ err }, 'webhooks: writing the delivery journal failed (its records are kept and written with the next batch)'),
    });
    this.#feed = feed;
    this.#cfg = cfg;
    this.#logger = logger;
    this.#keys = new KeyStore(dataDir, {
      recheckMs: KEY_RECHECK_MS,
      onError: (err) => logger.error({ err }, 'webhooks: key file unreadable; keeping the previous keys'),
    });
    this.#agent = new Agent({ connect: { lookup: guardedLookup(cfg.allowPrivate) as never, timeout: cfg.timeoutMs } });
    this.#deadlines = new DeadlineSweep(cfg.timeoutMs, 'webhook delivery deadline');
  }

  /** Subscriptions one key may have (QUORUM_WEBHOOKS_MAX_PER_KEY). */
  get maxPerKey(): number {
    return this.#cfg.maxPerKey;
  }

  get allowPrivate(): boolean {
    return this.#cfg.allowPrivate;
  }

  /** Queues what was missed while no server ran (events after the queue's cursor), then follows the feed. */
  async start(): Promise<void> {
    // From the queue's cursor, 0 for a new queue: an event goes only to the subscriptions made
    // before it (#enqueueEvents), so a new queue need not skip the past, and events of runs made
    // before any server ran reach the subscriptions `quorum webhooks create` made before them (QA:
    // a cursor of 0 was taken for a new queue and moved to the newest event, skipping them).
    // Every event after the cursor, retained or not: a server down longer than the retention
    // (QUORUM_EVENTS_RETENTION_DAYS) while runs went on skipped their events silently (QA).
    this.queue.flush();
    // New events are read again from the queue's cursor, not taken from the feed's batch: a batch
    // that could not be queued (the subscriptions file unreadable a moment, say) was skipped for
    // good once a later batch moved the cursor past it, even by a restart (QA). Subscribed before
    // the first catch-up, and chained after it: a batch the feed hands out while it runs (a run
    // publishing as the server starts) was missed, its events queued only with the next batch,
    // the next run's, or on a restart (outside test).
    this.#unsubscribe = this.#feed.subscribe(() => this.#queueOwed());
    const first = this.#catchUp();
    this.#enqueuing = first.catch(() => {}); // start's caller gets its error
    try {
      await first;
    } catch (err) {
      this.#unsubscribe();
      this.#unsubscribe = null;
      throw err;
    }
    this.kick();
  }

  /**
   * Queues the events owed (#catchUp), after any queueing under way. One that fails (the
   * subscriptions file unreadable a while: #enqueueEvents) is tried again every HOLD_MS until it
   * succeeds, logged once: review, the events of a run published while the file could not be read
   * waited for the next batch, the next run's hours later, or a restart, though it was fixed at once.
   */
  #queueOwed(): void {
    this.#enqueuing = this.#enqueuing.then(() => this.#catchUp()).then(
      () => {
        if (this.#owedFailing) this.#logger.info('webhooks: the events owed are queued again');
        this.#owedFailing = false;
      },
      (err: unknown) => {
        if (!this.#owedFailing) this.#logger.error({ err }, 'webhooks: queueing events failed (tried again every second until they are queued)');
        this.#owedFailing = true;
        if (this.#closed || this.#owedRetry) return;
        this.#owedRetry = setTimeout(() => {
          this.#owedRetry = null;
          if (!this.#closed) this.#queueOwed();
        }, HOLD_MS);
        this.#owedRetry.unref();
      },
    );
  }

  /** Queues every stored event after the queue's cursor, retained or not (start, and each time the feed has new events). */
  async #catchUp(): Promise<void> {
    for (;;) {
      const batch = await this.#feed.owedAfter(this.queue.cursor);
      if (batch.length === 0 || this.#closed) break;
      await this.#enqueueEvents(batch);
    }
  }

  /**
   * One delivery per matching subscription for each event, written (fsynced) with the cursor in
   * chunks, deliveries starting after the first chunk: a large run does not wait for all of them.
   */
  async #enqueueEvents(events: readonly FeedEvent[]): Promise<void> {
    const subs = this.store.all();
    // Who wants an event is not known while the file cannot be read: the events wait (the cursor
    // stays), queued once it is fixed (#queueOwed tries again every second; start's catch-up)
    if (this.store.unreadable) throw this.store.unreadable;
    let queued = 0;
    for (const e of events) {
      if (this.#closed) return;
      if (e.seq <= this.queue.cursor) continue;
      const targets: [string, string][] = [];
      // Only events from after the subscription was made, as a replay sends (one made while no
      // server ran is not sent what came before it).
      for (const s of subs) if (wants(s, e.type) && Date.parse(e.timestamp) >= Date.parse(s.created_at)) targets.push([messageId(e.id, s.id), s.id]);
      if (targets.length > 0) {
        // Serialized once per event, not once per subscription.
        const dataJson = JSON.stringify(e.data);
        const body = deliveryBody(e.type, e.timestamp, dataJson);
        queued += this.queue.enqueueEvent({ seq: e.seq, event_id: e.id, type: e.type, timestamp: e.timestamp, data: e.data, dataJson, body }, targets);
      }
      this.queue.setCursor(e.seq);
      if (queued >= ENQUEUE_CHUNK) {
        this.queue.flush();
        this.kick();
        queued = 0;
        await new Promise((r) => setImmediate(r)); // let the deliveries run
      }
    }
    this.queue.flush();
    this.kick();
  }

  /** The newest event seq once the feed has caught up with the warehouse for `atLeast`, as the stream reads it (EventFeed.newestSeq). */
  newestSeq(atLeast = 0): Promise<number> {
    return this.#feed.newestSeq(atLeast);
  }

  /**
   * Re-sends the retained events after `since` that were this subscription's (same message ids).
   * Returns how many. A disabled subscription gets none (they would only end as `disabled`): the
   * API refuses that replay before asking.
   */
  async replay(sub: Subscription, since: number): Promise<number> {
    if (sub.status !== 'enabled') return 0;
    let n = 0;
    let after = since;
    for (;;) {
      const batch = await this.#feed.after(after);
      if (batch.length === 0) break;
      for (const e of batch) {
        if (e.seq > this.queue.cursor) break;
        const id = messageId(e.id, sub.id);
        // Only what was (or would have been) this subscription's: not events from before it existed.
        const its = this.queue.has(id) || Date.parse(e.timestamp) >= Date.parse(sub.created_at);
        if (its && (sub.types === null || sub.types.includes(e.type)) &&
          this.queue.enqueue({ id, sub: sub.id, seq: e.seq, event_id: e.id, type: e.type, timestamp: e.timestamp, data: e.data }, true)) n++;
      }
      after = batch[batch.length - 1]!.seq;
      if (after >= this.queue.cursor) break;
    }
    this.queue.flush();
    this.kick();
    return n;
  }

  /** Makes sure every subscription with pending deliveries has its worker running. */
  kick(): void {
    if (this.#closed) return;
    for (const sub of this.queue.subsWithPending()) this.#ensureWorker(sub);
  }

  /** One worker per subscription with pending deliveries: its deliveries one at a time, in order. */
  #ensureWorker(sub: string): void {
    if (this.#workers.has(sub) || this.#closed) return;
    this.#workers.add(sub);
    void this.#work(sub)
      .catch((err: unknown) => this.#logger.error({ err, subscription: sub }, 'webhook worker failed'))
      .finally(() => {
        this.#workers.delete(sub);
        if (!this.#closed && this.queue.headOf(sub)) setTimeout(() => this.#ensureWorker(sub), 50).unref();
      });
  }

  async #work(sub: string): Promise<void> {
    for (;;) {
      const d = this.queue.headOf(sub);
      if (!d || this.#closed) return;
      const wait = d.next_at - Date.now();
      if (wait > 0) {
        if (!this.#enabledOrEnded(sub)) return;
        // In steps of at most a second: a subscription deleted or disabled meanwhile by `quorum
        // webhooks` (another process, seen through the file) ends its deliveries within about a
        // second, not after the backoff (up to an hour) (QA: they stayed pending in the metrics).
        await this.#sleep(Math.min(wait, RECHECK_WAITING_MS));
        continue; // the head may have changed meanwhile (a replay, a deletion)
      }
      await this.#acquire();
      let held = false;
      try {
        if (this.#closed) return;
        const attempt = this.#deliver(d);
        this.#inFlight.add(attempt);
        try {
          held = await attempt;
        } finally {
          this.#inFlight.delete(attempt);
        }
      } finally {
        this.#release();
      }
      if (held) await this.#sleep(HOLD_MS);
    }
  }

  /**
   * Subscription `sub` while it is enabled (CLI changes are seen within half a second); once it is
   * deleted or disabled, its pending deliveries end ('deleted' or 'disabled') and null is returned.
   * The one check before an attempt, while waiting for a retry, and after a DELETE.
   */
  #enabledOrEnded(sub: string): Subscription | null {
    const s = this.store.get(sub, null, KEY_RECHECK_MS);
    if (s && s.status === 'enabled') return s;
    for (const p of this.queue.pendingOf(sub)) this.queue.finish(p.id, s ? 'disabled' : 'deleted');
    this.queue.flush(false);
    return null;
  }

  #sleep(ms: number): Promise<void> {
    return new Promise((resolve) => {
      const t = setTimeout(() => {
        this.#sleepers.delete(done);
        resolve();
      }, ms);
      t.unref();
      const done = () => {
        clearTimeout(t);
        resolve();
      };
      this.#sleepers.add(done);
    });
  }

  /** The concurrency limit across subscriptions. */
  #acquire(): Promise<void> {
    if (this.#running < this.#cfg.concurrency) {
      this.#running++;
      return Promise.resolve();
    }
    return new Promise((resolve) => this.#waiters.push(resolve));
  }

  #release(): void {
    const next = this.#waiters.shift();
    if (next) next();
    else this.#running--;
  }

  /**
   * One warn line per failed attempt that does not disable the subscription (a disabling logs its
   * own line): the subscription, delivery and attempt, the answer and what happens next. Never the
   * URL, which may carry the receiver's token. Bounded by the backoff: one attempt in flight per
   * subscription. (QA: a failing receiver was seen in the log only once it was disabled.)
   */
  #logFailedAttempt(sub: Subscription, d: Delivery, n: number, a: { status: number | null; error: string | null }, next: string, nextAt: number | null): void {
    this.#logger.warn(
      { subscription: sub.id, delivery: d.id, event_type: d.type, attempt: n, status: a.status, error: a.error, next_attempt_at: nextAt === null ? null : new Date(nextAt).toISOString() },
      `webhook delivery attempt failed (${a.error ?? `HTTP ${a.status}`}): ${next}`,
    );
  }

  /** Attempts delivery `d` (the head of its subscription). True when it was held, not attempted (see {@link #ownerAllows}). */
  async #deliver(d: Delivery): Promise<boolean> {
    const sub = this.#enabledOrEnded(d.sub);
    if (!sub) return false;
    // While the subscriptions file cannot be read, an attempt whose outcome disables the
    // subscription (a 410, the retry window's end, a revoked key) could not be written: the worker
    // failed and restarted every 50 ms, logging each time, and a 410 receiver was sent every
    // pending delivery (outside review). Held, as events wait to be queued, until it is fixed.
    if (this.store.unreadable) {
      if (!this.#heldUnreadable) this.#logger.error({ err: this.store.unreadable }, 'webhook deliveries held until the subscriptions file can be read');
      this.#heldUnreadable = true;
      return true;
    }
    this.#heldUnreadable = false;
    const allowed = this.#ownerAllows(sub);
    if (allowed !== true) return allowed === 'held';
    const body = d.body ?? deliveryBody(d.type, d.timestamp, JSON.stringify(d.data));
    const ts = Math.floor(Date.now() / 1000);
    const started = Date.now();
    const { status, retryAfter: retryAfterHeader, error } = await this.#post(sub, d.id, ts, body);
    const retryAfter = retryAfterMs(retryAfterHeader ?? undefined);
    if (this.#aborted) return false; // cut by the shutdown: not recorded, so re-sent (same webhook-id) on the next start
    const attempt = { at: new Date(started).toISOString(), status, error, duration_ms: Date.now() - started };
    // This enqueue's attempts: a replay re-queues a delivery with its earlier attempts kept (they
    // are listed), and judged by them it had one try before being disabled again (review).
    const since = Date.parse(d.enqueued_at);
    const current = d.attempts.filter((a) => Date.parse(a.at) >= since);
    const firstAt = current.length ? Date.parse(current[0]!.at) : started;
    if (status !== null && status >= 200 && status < 300) {
      this.attempts.delivered++;
      this.queue.complete(d.id, attempt, 'delivered');
    } else if (status === 410) {
      this.attempts.failed++;
      this.queue.complete(d.id, attempt, 'failed');
      this.#disable(sub, 'the receiver answered 410 Gone');
    } else if (status === null || status === 429 || (status >= 500 && status <= 599)) {
      // 5xx only: a status above 599 (which no HTTP status is) is "any other status", as the README
      // says, and fails this one delivery (outside test: a 600 was retried for the whole window)
      const n = current.length + 1;
      // The last attempt is made at the window's end, however long a wait the receiver asked for
      // (QA: a Retry-After past the window disabled the subscription after a single attempt).
      const windowEnd = firstAt + this.#cfg.retryWindowMs;
      const nextAt = Math.min(Date.now() + retryDelayMs(n, retryAfter, this.#cfg), windowEnd);
      if (Date.now() >= windowEnd) {
        this.attempts.failed++;
        this.queue.complete(d.id, attempt, 'failed');
        const window = Math.round(this.#cfg.retryWindowMs / 1000);
        this.#disable(sub, `deliveries failed for the whole retry window (${window} s, ${n} attempts); last: ${error ?? `HTTP ${status}`}`);
      } else {
        this.attempts.retry++;
        this.queue.attempt(d.id, attempt, nextAt);
        this.#logFailedAttempt(sub, d, n, attempt, `retried at ${new Date(nextAt).toISOString()}`, nextAt);
      }
    } else {
      this.attempts.failed++;
      this.queue.complete(d.id, attempt, 'failed'); // another 4xx: the receiver refuses this message; the next one goes on
      this.#logFailedAttempt(sub, d, current.length + 1, attempt, 'not retried (the receiver refused it; the next delivery goes on)', null);
    }
    this.queue.flush(false);
    return false;
  }

  /**
   * Whether `sub`'s owning key may still receive webhooks. If not, the subscription is disabled
   * and its pending deliveries end unattempted with the refusal's status ('refused'); a key
   * missing from the key file leaves them pending ('held').
   */
  #ownerAllows(sub: Subscription): true | 'held' | 'refused' {
    let record = this.#keys.byId(sub.key_id);
    if (!record) {
      // A key created a moment ago (after the last look at the file) is not missing: look now.
      this.#keys.refresh(true);
      record = this.#keys.byId(sub.key_id);
    }
    const refusal = ownerRefusal(sub.key_id, record);
    if (refusal === null) {
      this.#held.delete(sub.id);
      return true;
    }
    if (refusal.outcome === 'key_unknown') {
      if (!this.#held.has(sub.id)) {
        this.#held.add(sub.id);
        this.#logger.warn({ subscription: sub.id, key: sub.key_id }, `webhook deliveries held: ${refusal.reason}`);
      }
      return 'held';
    }
    this.#disable(sub, refusal.reason, refusal.outcome);
    this.queue.flush(false);
    return 'refused';
  }

  /**
   * One POST of `body` to the subscription's URL, signed, within one deadline over the whole attempt
   * (body included: a trickling receiver cannot hold it). Without QUORUM_WEBHOOKS_ALLOW_PRIVATE, an
   * http URL or a private IP literal is refused here, with no connection, as a private name is by
   * guardedLookup.
   */
  async #post(sub: Subscription, id: string, ts: number, body: string): Promise<PostOutcome> {
    const refused = this.#cfg.allowPrivate ? null : refusedWithoutPrivate(sub.url);
    if (refused !== null) return { status: null, retryAfter: null, error: refused };
    return postWebhook(
      this.#agent,
      this.#url(sub.url),
      // The Standard Webhooks headers (signing.ts) in one literal: one object per attempt.
      {
        'content-type': 'application/json',
        'user-agent': 'Quorum-Webhooks/1',
        'webhook-id': id,
        'webhook-timestamp': String(ts),
        'webhook-signature': signatureHeader(signingSecrets(sub), id, ts, body),
      },
      body,
      this.#cfg.timeoutMs,
      this.#deadlines,
    );
  }

  #url(url: string): PostTarget {
    let parsed = this.#urls.get(url);
    if (!parsed) {
      if (this.#urls.size >= 100_000) this.#urls.clear();
      this.#urls.set(url, (parsed = postTarget(url)));
    }
    return parsed;
  }

  /**
   * Deletes subscription `id`: its pending deliveries end now as 'deleted' (QA: they stayed pending,
   * counted in the backlog metrics, until the worker's backoff ended, up to an hour later).
   */
  remove(id: string): void {
    this.store.remove(id);
    this.#enabledOrEnded(id);
  }

  /** Disables `sub`; its pending deliveries end, not attempted, with `outcome`. */
  #disable(sub: Subscription, reason: string, outcome = 'disabled'): void {
    this.#logger.warn({ subscription: sub.id, reason }, 'webhook subscription disabled');
    this.store.disable(sub.id, reason);
    for (const p of this.queue.pendingOf(sub.id)) this.queue.finish(p.id, outcome);
  }

  /**
   * Stops: no new attempt starts; those in flight may finish and be recorded for up to `graceMs`
   * (default the attempt deadline, at most 5 s), then the rest are cut and stay pending, re-sent on
   * the next start. QA: every attempt in flight was cut at once, so each restart re-sent them.
   */
  async close(graceMs = Math.min(this.#cfg.timeoutMs, 5_000)): Promise<void> {
    this.#closed = true;
    this.#unsubscribe?.();
    if (this.#owedRetry) clearTimeout(this.#owedRetry);
    for (const wake of [...this.#sleepers]) wake();
    for (const w of this.#waiters.splice(0)) w();
    if (this.#inFlight.size > 0) {
      let timer: NodeJS.Timeout | undefined;
      const grace = new Promise<void>((resolve) => (timer = setTimeout(resolve, graceMs)));
      await Promise.race([Promise.allSettled([...this.#inFlight]), grace]);
      clearTimeout(timer);
    }
    this.#aborted = true;
    this.queue.close();
    await this.#agent.destroy().catch(() => undefined);
  }
}
