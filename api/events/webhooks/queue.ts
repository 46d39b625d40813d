/**
 * The durable delivery queue: an append-only journal `<data dir>/webhooks/queue.jsonl`, fsynced
 * after every batch of records, replayed on start. A delivery is pending from its `enq` record
 * until its `done` record, so a process killed at any point (SIGKILL included) re-sends what was
 * not acknowledged, under the same message id (at least once; duplicates share `webhook-id`).
 * `cursor` records the last event sequence handed to the queue. A torn last line is ignored.
 * On open the journal is compacted: pending deliveries, the last finished ones per subscription
 * (for the deliveries listing) and the cursor, each event's deliveries in one record (its data
 * once). While running, only the last {@link KEEP_FINISHED} finished deliveries of each
 * subscription stay in memory, and the journal is compacted the same way once it has grown past
 * twice what the last compaction wrote (and at least {@link COMPACT_MIN_RECORDS} records), so
 * neither a long-running server's memory nor its journal grows with every delivery it ever made;
 * each record is rewritten a bounded number of times on average.
 */
import { closeSync, existsSync, fstatSync, fsyncSync, ftruncateSync, mkdirSync, openSync, readFileSync } from 'node:fs';
import { writeAllSync, writeFileAtomicSync } from '../../../pipeline/fs/durable.ts';
import { join } from 'node:path';

export interface Attempt {
  at: string;
  status: number | null;
  error: string | null;
  duration_ms: number;
}

export interface Delivery {
  id: string; // the webhook-id
  sub: string;
  seq: number;
  event_id: string;
  type: string;
  timestamp: string;
  data: unknown;
  enqueued_at: string;
  attempts: Attempt[];
  /** ms epoch of the next attempt. */
  next_at: number;
  /**
   * null while pending; else delivered | failed | disabled | deleted, or key_revoked |
   * plan_required (not attempted: the owning key lost webhooks, dispatcher.ts).
   */
  outcome: string | null;
  /**
   * The request body `{type, timestamp, data}` when the queue was handed it (one string shared by
   * every delivery of an event; not journaled: after a restart it is built again from `data`).
   */
  body?: string;
}

/** What a delivery is queued with. */
export type DeliveryInput = Omit<Delivery, 'attempts' | 'next_at' | 'outcome' | 'enqueued_at' | 'body'>;

/** The event an {@link DeliveryQueue.enqueueEvent} queues, `data` serialized once (`dataJson`) with its request `body`. */
export interface QueuedEvent {
  seq: number;
  event_id: string;
  type: string;
  timestamp: string;
  data: unknown;
  dataJson: string;
  body: string;
}

type Rec =
  | { op: 'enq'; d: Omit<Delivery, 'attempts' | 'next_at' | 'outcome' | 'body'> }
  // One event's deliveries in one record: the event once, then [message id, subscription] pairs.
  | { op: 'enqs'; e: Omit<Delivery, 'id' | 'sub' | 'attempts' | 'next_at' | 'outcome' | 'body'>; to: [string, string][] }
  | { op: 'att'; id: string; a: Attempt; next_at: number }
  | { op: 'done'; id: string; outcome: string }
  // A last attempt and the outcome in one record (what most deliveries end with: one line, not two).
  | { op: 'fin'; id: string; a: Attempt; outcome: string }
  | { op: 'cursor'; seq: number };

/** A message id that needs no JSON escaping (the dispatcher's `msg_` + hex). */
const SAFE_ID = /^[A-Za-z0-9_-]+$/;

/** Finished deliveries kept per subscription (the deliveries listing shows them). */
export const KEEP_FINISHED = 100;

/** The journal is compacted while running once this many records were appended since the last compaction (and twice its size). */
export const COMPACT_MIN_RECORDS = 50_000;

export class DeliveryQueue {
  readonly file: string;
  readonly #all = new Map<string, Delivery>();
  /** Pending deliveries per subscription, in event order (the head is the next to attempt). */
  readonly #pendingBySub = new Map<string, Delivery[]>();
  /** Finished deliveries per subscription, in the order they finished (oldest first). */
  readonly #finishedBySub = new Map<string, Delivery[]>();
  cursor = 0;
  #buffer: string[] = [];
  #fd: number | null = null;
  #unsynced = false;
  #scheduled: NodeJS.Immediate | null = null;
  /** Records appended since the last compaction, and how many that compaction wrote. */
  #appended = 0;
  #compacted = 0;
  readonly #minRecords: number;
  readonly #onWriteError: (err: unknown) => void;

  /**
   * `compactMinRecords`: see COMPACT_MIN_RECORDS (tests lower it). `onWriteError`: told when a
   * coalesced write (flush(false)) fails, a full disk say; its records stay buffered and go with
   * the next write (a synced flush throws its own error to its caller).
   */
  constructor(dataDir: string, opts: { compactMinRecords?: number; onWriteError?: (err: unknown) => void } = {}) {
    this.#minRecords = opts.compactMinRecords ?? COMPACT_MIN_RECORDS;
    this.#onWriteError = opts.onWriteError ?? (() => undefined);
    const dir = join(dataDir, 'webhooks');
    mkdirSync(dir, { recursive: true });
    this.file = join(dir, 'queue.jsonl');
    if (existsSync(this.file)) {
      for (const line of readFileSync(this.file, 'utf8').split('\n')) {
        if (!line) continue;
        let rec: Rec;
        try {
          rec = JSON.parse(line) as Rec;
        } catch {
          continue; // a line torn by a kill mid-write: its record never counted as written
        }
        this.#apply(rec);
      }
    }
    this.#compact();
  }

  #apply(rec: Rec): void {
    if (rec.op === 'enq') this.#add({ ...rec.d, attempts: [], next_at: Date.parse(rec.d.enqueued_at), outcome: null });
    else if (rec.op === 'enqs') {
      const next_at = Date.parse(rec.e.enqueued_at);
      for (const [id, sub] of rec.to) this.#add({ id, sub, ...rec.e, attempts: [], next_at, outcome: null });
    }
    else if (rec.op === 'att') {
      const d = this.#all.get(rec.id);
      if (d) {
        d.attempts.push(rec.a);
        d.next_at = rec.next_at;
      }
    } else if (rec.op === 'done') this.#finish(rec.id, rec.outcome);
    else if (rec.op === 'fin') {
      this.#all.get(rec.id)?.attempts.push(rec.a);
      this.#finish(rec.id, rec.outcome);
    } else if (rec.op === 'cursor') this.cursor = Math.max(this.cursor, rec.seq);
  }

  /** A delivery becomes pending (again, for a replay: it keeps its earlier attempts). */
  #add(d: Delivery): void {
    const prev = this.#all.get(d.id);
    if (prev) {
      if (prev.outcome === null) this.#unpend(prev);
      d.attempts = prev.attempts;
    }
    this.#all.set(d.id, d);
    let list = this.#pendingBySub.get(d.sub);
    if (!list) this.#pendingBySub.set(d.sub, (list = []));
    // Usually appended in event order; a replay of older events is inserted in place.
    let i = list.length;
    while (i > 0 && list[i - 1]!.seq > d.seq) i--;
    list.splice(i, 0, d);
  }

  /** Ends a pending delivery; the subscription's oldest finished one beyond KEEP_FINISHED is forgotten. */
  #finish(id: string, outcome: string): void {
    const d = this.#all.get(id);
    if (!d || d.outcome !== null) return;
    this.#unpend(d);
    d.outcome = outcome;
    d.body = undefined;
    let done = this.#finishedBySub.get(d.sub);
    if (!done) this.#finishedBySub.set(d.sub, (done = []));
    done.push(d);
    if (done.length >= KEEP_FINISHED + 64) {
      // Trimmed in batches (one splice per 64 finishes); a replayed delivery's id may now name a
      // newer object, which stays.
      for (const old of done.splice(0, done.length - KEEP_FINISHED)) if (this.#all.get(old.id) === old) this.#all.delete(old.id);
    }
  }

  #unpend(d: Delivery): void {
    const list = this.#pendingBySub.get(d.sub);
    if (!list) return;
    if (list[0] === d) list.shift(); // the usual case: the head was attempted
    else {
      const i = list.indexOf(d);
      if (i >= 0) list.splice(i, 1);
    }
    if (list.length === 0) this.#pendingBySub.delete(d.sub);
  }

  #compact(): void {
    const finishedBySub = new Map<string, Delivery[]>();
    for (const d of this.#all.values()) {
      if (d.outcome === null) continue;
      const list = finishedBySub.get(d.sub) ?? [];
      list.push(d);
      finishedBySub.set(d.sub, list);
    }
    for (const list of finishedBySub.values()) {
      list.sort((a, b) => b.seq - a.seq);
      for (const d of list.slice(KEEP_FINISHED)) this.#all.delete(d.id);
    }
    this.#finishedBySub.clear();
    for (const list of finishedBySub.values()) this.#finishedBySub.set(list[0]!.sub, list.slice(0, KEEP_FINISHED).reverse());
    // Deliveries queued together (one event, the same data object, the same enqueue time) share
    // one enqs record, as the dispatcher wrote them: the event's data once, not once per delivery.
    const groups = new Map<string, { e: Extract<Rec, { op: 'enqs' }>['e']; to: [string, string][] }>();
    const dataIds = new Map<unknown, number>();
    const after: string[] = [];
    for (const d of this.#all.values()) {
      const { id, sub, attempts, next_at, outcome, body: _body, seq, event_id, type, timestamp, enqueued_at, data } = d;
      let dataId = dataIds.get(data);
      if (dataId === undefined) dataIds.set(data, (dataId = dataIds.size));
      const key = JSON.stringify([seq, event_id, type, timestamp, enqueued_at, dataId]);
      let g = groups.get(key);
      if (!g) groups.set(key, (g = { e: { seq, event_id, type, timestamp, enqueued_at, data }, to: [] }));
      g.to.push([id, sub]);
      for (const a of attempts) after.push(JSON.stringify({ op: 'att', id, a, next_at }));
      if (outcome !== null) after.push(JSON.stringify({ op: 'done', id, outcome }));
    }
    const lines: string[] = [JSON.stringify({ op: 'cursor', seq: this.cursor })];
    for (const g of groups.values()) lines.push(JSON.stringify({ op: 'enqs', e: g.e, to: g.to }));
    for (const line of after) lines.push(line); // not push(...after): a spread of a million lines overflows the stack
    writeFileAtomicSync(this.file, `${lines.join('\n')}\n`);
    this.#compacted = lines.length;
    this.#appended = 0;
  }

  /** Compacts the journal once it has grown enough (see the file's doc); called with nothing buffered. */
  #compactIfGrown(): void {
    if (this.#appended < this.#minRecords || this.#appended < 2 * this.#compacted) return;
    if (this.#fd !== null) closeSync(this.#fd);
    this.#fd = null; // the next write appends to the compacted file
    this.#compact(); // written whole and fsynced before it replaces the journal
    this.#unsynced = false;
  }

  #record(rec: Rec): void {
    this.#apply(rec);
    this.#buffer.push(JSON.stringify(rec));
  }

  /**
   * Writes the records of this batch. With `sync` (new deliveries and the cursor) it fsyncs
   * before returning: from here they survive a crash of the machine. Attempt and outcome records
   * are written without (a kill leaves them in the page cache; a lost one only means a re-send,
   * which at-least-once allows) and fsynced with the next synced batch.
   */
  flush(sync = true): void {
    if (!sync) {
      // Coalesced: the records of every delivery finished in this turn of the event loop, one write.
      this.#scheduled ??= setImmediate(() => {
        this.#scheduled = null;
        // Thrown here it would be an uncaught exception: QA, the API server died when the disk
        // filled while it recorded delivery attempts.
        try {
          this.#write();
        } catch (err) {
          this.#onWriteError(err);
        }
      });
      return;
    }
    if (this.#scheduled) clearImmediate(this.#scheduled);
    this.#scheduled = null;
    this.#write();
    if (this.#unsynced && this.#fd !== null) {
      fsyncSync(this.#fd);
      this.#unsynced = false;
    }
    this.#compactIfGrown();
  }

  /**
   * Appends the buffered records. On a failure (a full disk) the journal is cut back to where it
   * was, so no torn line is left for the next records to be glued to (the first of them would be
   * unreadable on replay: a delivery lost), and the records stay buffered for the next write.
   */
  #write(): void {
    if (this.#buffer.length > 0) {
      this.#fd ??= openSync(this.file, 'a');
      const size = fstatSync(this.#fd).size;
      try {
        writeAllSync(this.#fd, `${this.#buffer.join('\n')}\n`);
      } catch (err) {
        try {
          ftruncateSync(this.#fd, size);
        } catch {
          // the torn line is skipped on replay
        }
        throw err;
      }
      this.#appended += this.#buffer.length;
      this.#buffer = [];
      this.#unsynced = true;
    }
  }

  close(): void {
    this.flush(true);
    if (this.#fd !== null) closeSync(this.#fd);
    this.#fd = null;
  }

  /** The next delivery of one subscription (its oldest pending), if any. */
  headOf(sub: string): Delivery | undefined {
    return this.#pendingBySub.get(sub)?.[0];
  }

  /** How many deliveries are pending, and when the oldest of them was queued (ms since the epoch; null: none). */
  backlog(): { pending: number; oldestQueuedAt: number | null } {
    let pending = 0;
    let oldestQueuedAt: number | null = null;
    for (const list of this.#pendingBySub.values()) {
      pending += list.length;
      const head = list[0]; // a subscription's pending deliveries are in event order: its head is its oldest
      if (head) {
        const t = Date.parse(head.enqueued_at);
        if (oldestQueuedAt === null || t < oldestQueuedAt) oldestQueuedAt = t;
      }
    }
    return { pending, oldestQueuedAt };
  }

  /** Subscriptions with pending deliveries. */
  subsWithPending(): string[] {
    return [...this.#pendingBySub.keys()];
  }

  has(id: string): boolean {
    return this.#all.has(id);
  }

  /** Queues a delivery (again, when `force`: a replay of a finished one). */
  enqueue(input: DeliveryInput, force = false): boolean {
    const prev = this.#all.get(input.id);
    if (prev && (prev.outcome === null || !force)) return false;
    const enqueued_at = new Date().toISOString();
    this.#record({ op: 'enq', d: { ...input, enqueued_at } });
    return true;
  }

  /**
   * Queues one event's deliveries, `targets` being [message id, subscription] pairs, skipping
   * those already queued; one journal record for all of them, the event's data written once.
   * Returns how many were queued.
   */
  enqueueEvent(e: QueuedEvent, targets: readonly [string, string][]): number {
    const now = Date.now();
    const enqueued_at = new Date(now).toISOString();
    const { seq, event_id, type, timestamp, data, body } = e;
    const to: [string, string][] = [];
    for (const [id, sub] of targets) {
      if (this.#all.has(id)) continue;
      this.#add({ id, sub, seq, event_id, type, timestamp, data, enqueued_at, attempts: [], next_at: now, outcome: null, body });
      to.push([id, sub]);
    }
    if (to.length > 0) {
      this.#buffer.push(
        `{"op":"enqs","e":{"seq":${JSON.stringify(seq)},"event_id":${JSON.stringify(event_id)},"type":${JSON.stringify(type)},` +
          `"timestamp":${JSON.stringify(timestamp)},"enqueued_at":"${enqueued_at}","data":${e.dataJson}},"to":${JSON.stringify(to)}}`,
      );
    }
    return to.length;
  }

  attempt(id: string, a: Attempt, nextAt: number): void {
    this.#record({ op: 'att', id, a, next_at: nextAt });
  }

  finish(id: string, outcome: string): void {
    this.#record({ op: 'done', id, outcome });
  }

  /** A last attempt and the delivery's outcome (one journal record). */
  complete(id: string, a: Attempt, outcome: 'delivered' | 'failed'): void {
    if (!SAFE_ID.test(id) || !Number.isFinite(a.duration_ms) || !(a.status === null || Number.isInteger(a.status))) {
      this.#record({ op: 'fin', id, a, outcome }); // never the case for the dispatcher's own values
      return;
    }
    this.#all.get(id)?.attempts.push(a);
    this.#finish(id, outcome);
    // The record most deliveries end with, assembled by hand: the id (msg_ + hex), the numbers and
    // the outcome need no escaping; the strings are serialized.
    this.#buffer.push(
      `{"op":"fin","id":"${id}","a":{"at":${JSON.stringify(a.at)},"status":${a.status === null ? 'null' : a.status},"error":${a.error === null ? 'null' : JSON.stringify(a.error)},` +
        `"duration_ms":${a.duration_ms}},"outcome":"${outcome}"}`,
    );
  }

  setCursor(seq: number): void {
    if (seq > this.cursor) this.#record({ op: 'cursor', seq });
  }

  /** Pending deliveries, oldest event first. */
  pending(): Delivery[] {
    return [...this.#pendingBySub.values()].flat().sort((a, b) => a.seq - b.seq || a.id.localeCompare(b.id));
  }

  /** The pending deliveries of one subscription, in order. */
  pendingOf(sub: string): Delivery[] {
    return [...(this.#pendingBySub.get(sub) ?? [])];
  }

  /** The pending and the last KEEP_FINISHED finished deliveries of one subscription, newest event first. */
  ofSubscription(sub: string): Delivery[] {
    const finished = (this.#finishedBySub.get(sub) ?? []).filter((d) => this.#all.get(d.id) === d).slice(-KEEP_FINISHED);
    return [...(this.#pendingBySub.get(sub) ?? []), ...finished].sort((a, b) => b.seq - a.seq);
  }

  get(id: string): Delivery | undefined {
    return this.#all.get(id);
  }
}

