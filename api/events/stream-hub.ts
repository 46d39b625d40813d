/**
 * The SSE side of the events (issue 15 point 2): every open `GET /api/stream/` response is a
 * client of this hub. Frames are `id: <seq>`, `event: <type>`, `data: <JSON>`.
 *
 * Resume: a client asking for events after seq N is registered first (live events queue up), then
 * the retained events after N are replayed from the warehouse, then the queue is flushed; events
 * are deduplicated by seq, so a resume skips nothing and repeats nothing.
 *
 * Memory is bounded per client: an event that would take the response's unsent buffer beyond
 * `maxBufferBytes` is not written; the client gets a final `stream.overflow` event naming the last
 * id it was sent (resume with `Last-Event-ID` or `?since=`) and is disconnected. A heartbeat
 * comment every `heartbeatMs` keeps proxies from closing idle streams. A resume point older than
 * the retained events gets a `stream.gap` event naming the sequence numbers that cannot be replayed.
 * A stream lives only as long as its caller may open one: `allowed` (the route's check of the key:
 * not revoked, still on the plan) is asked before every write of live events, every replayed page
 * and every heartbeat, and a stream whose key lost it is ended with a comment saying so (its
 * EventSource reconnects and gets the 401 or 403 a new request gets).
 * A resume point beyond the newest event is refused by the route (400) before `serve` is called:
 * live events would never be "after" it, so such a stream would stay silent forever.
 */
import type { Request, Response } from 'express';
import type { Logger } from 'pino';
import type { EventFeed, FeedEvent } from './feed.ts';

export interface StreamFilter {
  types: ReadonlySet<string> | null;
  category: string | null;
  questionId: string | null;
}

export interface StreamHubOptions {
  heartbeatMs: number;
  maxBufferBytes: number;
  maxClients: number;
  /** Streams one key may have open (default: no cap beyond maxClients). */
  maxPerKey?: number;
  logger: Logger;
}

/** How long a response that is being ended may keep its unsent bytes before its socket is destroyed. */
const END_GRACE_MS = 10_000;
/** How long a replay waits for a full buffer to drain before treating the client as too slow. */
const REPLAY_DRAIN_MS = 10_000;

/** The SSE frame of one event. */
export function sseFrame(e: FeedEvent): string {
  const body = JSON.stringify({ id: e.id, seq: e.seq, type: e.type, timestamp: e.timestamp, data: e.data });
  return `id: ${e.seq}\nevent: ${e.type}\ndata: ${body}\n\n`;
}

function matches(f: StreamFilter, e: FeedEvent): boolean {
  if (f.types && !f.types.has(e.type)) return false;
  if (f.category !== null && e.category !== f.category) return false;
  if (f.questionId !== null && e.questionId !== f.questionId) return false;
  return true;
}

class Client {
  /** Every event up to this seq has been written or skipped by the filter. */
  lastSeq: number;
  /** The last seq actually written to this client (what its Last-Event-ID will be). */
  lastSent: number;
  live = false;
  closed = false;
  readonly #queue: FeedEvent[] = [];
  #queuedBytes = 0;
  /** Live events were dropped from a full queue: the replay reads the feed again before going live. */
  #dropped = false;

  constructor(
    readonly res: Response,
    readonly filter: StreamFilter,
    after: number,
    readonly maxBufferBytes: number,
    readonly onGone: (c: Client) => void,
    readonly allowed: () => boolean = () => true,
    /** The key it was opened with (null: none, a public stream). */
    readonly keyId: string | null = null,
  ) {
    this.lastSeq = after;
    this.lastSent = after;
  }

  /**
   * Live events: written now, or queued while the replay runs. The queue is bounded like the
   * buffer; a full one is dropped, not taken for a slow client: a pushed event is already stored,
   * so the replay reads it from the feed again (QA: events written just before a resume were both
   * pushed and replayed, and two of ~0.5 kB filled a 1 kB queue, cutting off a client that kept up).
   */
  push(events: readonly FeedEvent[]): void {
    if (!this.stillAllowed()) return;
    for (const e of events) {
      if (this.closed) return;
      if (!this.live) {
        if (e.seq <= this.lastSeq || !matches(this.filter, e)) continue;
        const bytes = 256 + JSON.stringify(e.data).length;
        if (this.tooFull(bytes, this.#queuedBytes)) {
          this.#queue.length = 0;
          this.#queuedBytes = 0;
          this.#dropped = true;
          continue;
        }
        this.#queue.push(e);
        this.#queuedBytes += bytes;
        continue;
      }
      this.write(e);
    }
  }

  /** Writes one event if it is new and matches; false when the client was disconnected as too slow. */
  write(e: FeedEvent): boolean {
    if (this.closed) return false;
    if (e.seq <= this.lastSeq) return true;
    if (!matches(this.filter, e)) {
      this.lastSeq = e.seq;
      return true;
    }
    const frame = sseFrame(e);
    if (this.tooFull(Buffer.byteLength(frame))) {
      this.overflow();
      return false;
    }
    this.res.write(frame);
    this.lastSeq = e.seq;
    this.lastSent = e.seq;
    return true;
  }

  /**
   * Whether a frame of `bytes` would take the unsent buffer past maxBufferBytes with the buffer
   * already over half full. A frame larger than half the cap is written when the buffer is at most
   * half full (the replay waits for that): an event larger than the cap was refused whatever the
   * buffer held, so it was never sent (QA: with QUORUM_STREAM_MAX_BUFFER_BYTES=1024, a 1.7 kB
   * question.resolved overflowed every stream, and every resume overflowed again at the same id).
   * The buffer stays within the cap plus one event. `unsent`: the live events queued during a replay.
   */
  tooFull(bytes: number, unsent = this.res.writableLength): boolean {
    return unsent + bytes > this.maxBufferBytes && unsent > this.maxBufferBytes / 2;
  }

  /**
   * After the replay: the queued live events, then live. False when queued events were dropped
   * (push): the replay must read the feed again first (nothing is written then).
   */
  goLive(): boolean {
    if (this.#dropped) {
      this.#dropped = false;
      this.#queue.length = 0;
      this.#queuedBytes = 0;
      return false;
    }
    const queued = this.#queue.splice(0);
    this.#queuedBytes = 0;
    for (const e of queued) if (!this.write(e)) return true;
    this.live = true;
    return true;
  }

  heartbeat(): void {
    if (this.closed || !this.stillAllowed() || this.res.writableLength > this.maxBufferBytes) return;
    this.res.write(': heartbeat\n\n');
  }

  /**
   * False, after ending the stream with a comment saying why, once the caller may no longer have it
   * (QA: a key revoked while its stream was open kept receiving every event).
   */
  stillAllowed(): boolean {
    if (this.closed) return false;
    if (this.allowed()) return true;
    this.res.write(': the API key of this stream was revoked or no longer has its plan; the stream ends\n\n');
    this.end();
    return false;
  }

  /** Too slow: a final event saying how to resume, then the end (the socket goes after a grace period). */
  overflow(): void {
    if (this.closed) return;
    const resume = {
      reason: 'slow_client',
      detail: `The client did not read fast enough; reconnect with the header Last-Event-ID: ${this.lastSent} (or ?since=${this.lastSent}) to resume without a gap.`,
      last_event_id: String(this.lastSent),
      since: this.lastSent,
    };
    this.res.write(`event: stream.overflow\ndata: ${JSON.stringify(resume)}\n\n`);
    this.end();
  }

  end(): void {
    if (this.closed) return;
    this.closed = true;
    this.#queue.length = 0;
    this.onGone(this);
    this.res.end();
    setTimeout(() => this.res.destroy(), END_GRACE_MS).unref();
  }
}

export class StreamHub {
  readonly #feed: EventFeed;
  readonly #opts: StreamHubOptions;
  readonly #clients = new Set<Client>();
  readonly #timer: NodeJS.Timeout;
  readonly #unsubscribe: () => void;

  constructor(feed: EventFeed, opts: StreamHubOptions) {
    this.#feed = feed;
    this.#opts = opts;
    this.#unsubscribe = feed.subscribe((events) => {
      for (const c of this.#clients) c.push(events);
    });
    this.#timer = setInterval(() => {
      for (const c of this.#clients) c.heartbeat();
    }, opts.heartbeatMs);
    this.#timer.unref();
  }

  get clients(): number {
    return this.#clients.size;
  }

  get full(): boolean {
    return this.#clients.size >= this.#opts.maxClients;
  }

  /** Whether `keyId` has as many streams open as a key may (never for a stream without a key). */
  fullFor(keyId: string | null): boolean {
    const cap = this.#opts.maxPerKey ?? Infinity;
    if (keyId === null || cap === Infinity) return false;
    let n = 0;
    for (const c of this.#clients) if (c.keyId === keyId && ++n >= cap) return true;
    return false;
  }

  /** The per-key cap (Infinity: none). */
  get maxPerKey(): number {
    return this.#opts.maxPerKey ?? Infinity;
  }

  /** The newest event seq (where a stream without a resume point starts). */
  get lastSeq(): number {
    return this.#feed.lastSeq;
  }

  /** The newest event seq once the feed has caught up with the warehouse for `atLeast` (EventFeed.newestSeq). */
  newestSeq(atLeast = 0): Promise<number> {
    return this.#feed.newestSeq(atLeast);
  }

  /**
   * Serves one stream: headers, the replay of retained events after `after` (null: live only),
   * then live events until the client goes away, is too slow, or the server shuts down.
   */
  async serve(req: Request, res: Response, filter: StreamFilter, after: number | null, allowed?: () => boolean, keyId: string | null = null): Promise<void> {
    setStreamHeaders(res);
    res.flushHeaders();
    res.write(`retry: 1000\n: stream open; last event ${this.#feed.lastSeq}\n\n`);
    const client = new Client(res, filter, after ?? this.#feed.lastSeq, this.#opts.maxBufferBytes, (c) => this.#clients.delete(c), allowed, keyId);
    this.#clients.add(client);
    const gone = () => {
      if (!client.closed) {
        client.closed = true;
        this.#clients.delete(client);
      }
    };
    req.on('close', gone);
    res.on('close', gone);
    if (after === null) {
      client.goLive();
      return;
    }
    try {
      // Sequence numbers have no holes: a first retained event beyond after + 1 means the ones in
      // between are past retention, and so are all those up to the newest when none is retained
      // (QA: a resume after a week without runs got no gap, and its next live event came as if
      // nothing had been missed). Say so rather than resume silently past them. The newest is read
      // before the query: an event written meanwhile is retained, not missing.
      const newest = this.#feed.lastSeq;
      const first = (await this.#feed.after(client.lastSeq, 1))[0];
      const missingTo = first ? first.seq - 1 : newest;
      if (missingTo > client.lastSeq && !client.closed) {
        const gap = {
          reason: 'retention',
          detail: `Events ${client.lastSeq + 1} to ${missingTo} are older than the retention period and cannot be replayed; the stream resumes at ${missingTo + 1}.`,
          missing_from: client.lastSeq + 1,
          missing_to: missingTo,
        };
        res.write(`event: stream.gap\ndata: ${JSON.stringify(gap)}\n\n`);
      }
      do {
        for (;;) {
          const page = await this.#feed.after(client.lastSeq);
          if (!client.stillAllowed()) return;
          for (const e of page) {
            if (client.closed) return;
            if (!(await drainedTo(res, this.#opts.maxBufferBytes / 2, REPLAY_DRAIN_MS))) {
              client.overflow();
              return;
            }
            if (!client.write(e)) return;
          }
          if (page.length === 0 || client.closed) break;
        }
      } while (!client.closed && !client.goLive());
    } catch (err) {
      this.#opts.logger.error({ err }, 'stream: replay failed');
      client.end();
    }
  }

  /** Ends every stream (shutdown). */
  closeAll(): void {
    for (const c of [...this.#clients]) c.end();
  }

  close(): void {
    clearInterval(this.#timer);
    this.#unsubscribe();
    this.closeAll();
  }
}

/**
 * Resolves true once at most `bytes` of `res` are unsent, false after `ms` or when it closes. Not
 * only its 'drain': below the socket's high-water mark (16 kB) no 'drain' comes, so with a cap
 * under 32 kB the replay wrote on at once and a client reading as fast as it could was cut off
 * as slow (QA: QUORUM_STREAM_MAX_BUFFER_BYTES=1024 sent one event per connection).
 */
async function drainedTo(res: Response, bytes: number, ms: number): Promise<boolean> {
  const end = Date.now() + ms;
  while (res.writableLength > bytes) {
    const left = end - Date.now();
    if (left <= 0 || res.destroyed) return false;
    if (res.writableNeedDrain) {
      if (!(await drained(res, left))) return false;
    } else await new Promise((r) => setTimeout(r, 20)); // (no event says the socket took some bytes)
  }
  return true;
}

/** Resolves true once `res` drains (or is already below its high-water mark), false after `ms`. */
function drained(res: Response, ms: number): Promise<boolean> {
  if (!res.writableNeedDrain) return Promise.resolve(true);
  return new Promise((resolve) => {
    const done = (ok: boolean) => {
      clearTimeout(timer);
      res.off('drain', onDrain);
      res.off('close', onClose);
      resolve(ok);
    };
    const onDrain = () => done(true);
    const onClose = () => done(false);
    const timer = setTimeout(() => done(false), ms);
    res.on('drain', onDrain);
    res.on('close', onClose);
  });
}

/**
 * A stream's status and headers, the GET's and the HEAD's alike (QA outside test: the HEAD answer
 * lacked `Cache-Control: no-cache, no-transform` and `X-Accel-Buffering: no`, and said `private,
 * no-cache` where the GET said otherwise). `private` stays where the front door put it (a keyed
 * request's answer, README "Caching"; the stream is one key's, its plan's and filters'): review,
 * every stream answer said `no-cache, no-transform`, as if a shared cache could keep it.
 */
export function setStreamHeaders(res: Response): void {
  res.status(200);
  res.setHeader('Content-Type', 'text/event-stream; charset=utf-8');
  const keyed = String(res.getHeader('Cache-Control') ?? '').startsWith('private');
  res.setHeader('Cache-Control', `${keyed ? 'private, ' : ''}no-cache, no-transform`);
  res.setHeader('X-Accel-Buffering', 'no');
}
