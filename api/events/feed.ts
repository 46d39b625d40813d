/**
 * The API's view of the raw `events` table (issue 15): polls `raw/events/` for new Parquet parts
 * (the pipeline writes them atomically, in this or another process), reads the events after the
 * last one seen, and hands them to listeners (the SSE hub) in sequence order. Also answers
 * "events after seq N" for resumes, from the retained events only.
 *
 * Reads go through the pipeline's shared DuckDB instance (one per process), on a short-lived
 * connection per read.
 */
import { readdir } from 'node:fs/promises';
import { join } from 'node:path';
import type { Logger } from 'pino';
import type { DuckDBConnection } from '@duckdb/node-api';
import { withConnection } from '../../pipeline/warehouse/duckdb.ts';
import { rawTableDir } from '../../pipeline/warehouse/layout.ts';
import { rawRelation } from '../../pipeline/warehouse/raw-views.ts';
import { sqlFile } from '../../pipeline/warehouse/sql-files.ts';
import { runQuery } from '../db/query.ts';

/** One event as the stream and webhooks send it. */
export interface FeedEvent {
  seq: number;
  id: string;
  type: string;
  questionId: string | null;
  category: string | null;
  /** ISO 8601 UTC: when the pipeline wrote it. */
  timestamp: string;
  /** The payload, parsed. */
  data: unknown;
}

export interface EventFeedOptions {
  dataDir: string;
  logger: Logger;
  /** How often raw/events is checked for new parts, in ms (0: only poll() on demand). */
  pollMs: number;
  /** Events older than this (ms) are not replayed. */
  retentionMs: number;
}

const PAGE = 500;

/**
 * Names of every committed part below raw/events (sorted): changes when a run writes events. Read
 * off the event loop, each level's directories at once: the walk runs every QUORUM_EVENTS_POLL_MS
 * in the server, over a tree that grows by a directory per run (QA soak: a year of 4-hourly runs,
 * 2,190 parts, took 17-30 ms a walk, 85-120 ms cold, blocking every request four times a second).
 */
export async function partsSignature(dir: string): Promise<string> {
  const walk = async (d: string): Promise<string[]> => {
    let entries;
    try {
      entries = await readdir(d, { withFileTypes: true });
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === 'ENOENT') return []; // no events yet, or a part moved meanwhile
      throw err;
    }
    const below = await Promise.all(entries.filter((e) => e.isDirectory()).map((e) => walk(join(d, e.name))));
    return [...entries.filter((e) => !e.isDirectory() && e.name.endsWith('.parquet')).map((e) => join(d, e.name)), ...below.flat()];
  };
  return (await walk(dir)).sort().join('\n');
}

export class EventFeed {
  readonly #opts: EventFeedOptions;
  readonly #listeners = new Set<(events: readonly FeedEvent[]) => void>();
  #lastSeq = 0;
  #signature = '';
  #timer: NodeJS.Timeout | null = null;
  #polling: Promise<void> | null = null;
  #closed = false;

  private constructor(opts: EventFeedOptions) {
    this.#opts = opts;
  }

  /** Opens the feed at the newest stored event (live listeners get what comes after) and starts polling. */
  static async open(opts: EventFeedOptions): Promise<EventFeed> {
    const feed = new EventFeed(opts);
    feed.#signature = await partsSignature(rawTableDir(opts.dataDir, 'events'));
    feed.#lastSeq = await feed.#withEvents(async (conn) => Number((await runQuery(conn, sqlFile('events/max-seq.sql')))[0]!.seq));
    if (opts.pollMs > 0) {
      feed.#timer = setInterval(() => void feed.poll(), opts.pollMs);
      feed.#timer.unref();
    }
    return feed;
  }

  /** The newest sequence number this feed has handed out. */
  get lastSeq(): number {
    return this.#lastSeq;
  }

  /** Calls `fn` with every batch of new events, in order. Returns the unsubscribe function. */
  subscribe(fn: (events: readonly FeedEvent[]) => void): () => void {
    this.#listeners.add(fn);
    return () => this.#listeners.delete(fn);
  }

  /** Retained events with seq > after, oldest first, at most `limit` (stream resumes, replays, live polling). */
  after(after: number, limit = PAGE): Promise<FeedEvent[]> {
    return this.#read(after, limit, new Date(Date.now() - this.#opts.retentionMs));
  }

  /**
   * Every stored event with seq > after, retained or not, oldest first, at most `limit`: the
   * webhook queue catching up on what was written while no server ran (the retention bounds
   * replays, not deliveries owed).
   */
  owedAfter(after: number, limit = PAGE): Promise<FeedEvent[]> {
    return this.#read(after, limit, new Date(0));
  }

  /** Stored events with seq > after written at or after `from`, oldest first, at most `limit`. */
  async #read(after: number, limit: number, from: Date): Promise<FeedEvent[]> {
    const retainedFrom = from.toISOString();
    return this.#withEvents(async (conn) => {
      const rows = await runQuery(conn, sqlFile('events/read-since.sql'), { after, retained_from: retainedFrom, limit });
      return rows.map((r) => ({
        seq: Number(r.seq),
        id: String(r.event_id),
        type: String(r.type),
        questionId: (r.question_id as string | null) ?? null,
        category: (r.category as string | null) ?? null,
        timestamp: new Date(String(r.created_at)).toISOString(),
        data: JSON.parse(String(r.data)) as unknown,
      }));
    });
  }

  /**
   * The newest event seq once the feed has caught up with the warehouse: a run (here or in another
   * process) may have appended events the periodic poll has not read yet, and a client may have been
   * sent them by another server. Polls (twice: a poll already under way may have looked before the
   * newest part landed) only when `atLeast` is beyond what the feed has seen. The stream's resume
   * point and a webhook replay's `since` are judged by it.
   */
  async newestSeq(atLeast = 0): Promise<number> {
    for (let i = 0; i < 2 && this.#lastSeq < atLeast; i++) await this.poll();
    return this.#lastSeq;
  }

  /** Checks for new parts now and delivers their events (serialised; cheap when nothing changed). */
  poll(): Promise<void> {
    this.#polling ??= this.#pollOnce()
      .catch((err: unknown) => this.#opts.logger.error({ err }, 'event feed: reading new events failed'))
      .finally(() => {
        this.#polling = null;
      });
    return this.#polling;
  }

  async #pollOnce(): Promise<void> {
    if (this.#closed) return;
    const sig = await partsSignature(rawTableDir(this.#opts.dataDir, 'events'));
    if (sig === this.#signature) return;
    for (;;) {
      const batch = await this.after(this.#lastSeq);
      if (batch.length === 0) break;
      this.#lastSeq = batch[batch.length - 1]!.seq;
      for (const fn of this.#listeners) fn(batch);
      if (batch.length < PAGE) break;
    }
    this.#signature = sig;
  }

  async #withEvents<T>(work: (conn: DuckDBConnection) => Promise<T>): Promise<T> {
    return withConnection(async (conn) => {
      await conn.run(`CREATE OR REPLACE TEMP VIEW raw_events AS ${rawRelation(this.#opts.dataDir, 'events')}`);
      return work(conn);
    });
  }

  async close(): Promise<void> {
    this.#closed = true;
    if (this.#timer) clearInterval(this.#timer);
    this.#listeners.clear();
    await this.#polling;
  }
}
