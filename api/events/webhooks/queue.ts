/**
 * The durable delivery queue: an append-only journal `<data dir>/webhooks/queue.jsonl`, fsynced
 * after every batch of records, replayed on start. A delivery is pending from its `enq` record
 * until its `done` record, so a process killed at any point (SIGKILL included) re-sends what was
 * not acknowledged, under the same message id (at least once; duplicates share `webhook-id`).
 * `cursor` records the last event sequence handed to the queue. A torn last line is ignored.
 * On open the journal is compacted: pending deliveries, the last finished ones per subscription
 * (for the deliveries listing) and the cursor.
 */
import { appendFileSync, closeSync, existsSync, fsyncSync, mkdirSync, openSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
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
  /** null while pending; else delivered | failed | disabled | deleted. */
  outcome: string | null;
}

type Rec =
  | { op: 'enq'; d: Omit<Delivery, 'attempts' | 'next_at' | 'outcome'> }
  | { op: 'att'; id: string; a: Attempt; next_at: number }
  | { op: 'done'; id: string; outcome: string }
  | { op: 'cursor'; seq: number };

const KEEP_FINISHED = 100;

export class DeliveryQueue {
  readonly file: string;
  readonly #all = new Map<string, Delivery>();
  cursor = 0;
  #buffer: string[] = [];

  constructor(dataDir: string) {
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
    if (rec.op === 'enq') {
      const prev = this.#all.get(rec.d.id);
      this.#all.set(rec.d.id, { ...rec.d, attempts: prev?.attempts ?? [], next_at: Date.parse(rec.d.enqueued_at), outcome: null });
    } else if (rec.op === 'att') {
      const d = this.#all.get(rec.id);
      if (d) {
        d.attempts.push(rec.a);
        d.next_at = rec.next_at;
      }
    } else if (rec.op === 'done') {
      const d = this.#all.get(rec.id);
      if (d) d.outcome = rec.outcome;
    } else if (rec.op === 'cursor') this.cursor = Math.max(this.cursor, rec.seq);
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
    const lines: string[] = [JSON.stringify({ op: 'cursor', seq: this.cursor })];
    for (const d of this.#all.values()) {
      const { attempts, next_at, outcome, ...rest } = d;
      lines.push(JSON.stringify({ op: 'enq', d: rest }));
      for (const a of attempts) lines.push(JSON.stringify({ op: 'att', id: d.id, a, next_at }));
      if (outcome !== null) lines.push(JSON.stringify({ op: 'done', id: d.id, outcome }));
    }
    const tmp = `${this.file}.tmp`;
    writeFileSync(tmp, `${lines.join('\n')}\n`);
    fsync(tmp);
    renameSync(tmp, this.file);
  }

  #record(rec: Rec): void {
    this.#apply(rec);
    this.#buffer.push(JSON.stringify(rec));
  }

  /** Writes the records of this batch and fsyncs: from here they survive a kill. */
  flush(): void {
    if (this.#buffer.length === 0) return;
    appendFileSync(this.file, `${this.#buffer.join('\n')}\n`);
    this.#buffer = [];
    fsync(this.file);
  }

  has(id: string): boolean {
    return this.#all.has(id);
  }

  /** Queues a delivery (again, when `force`: a replay of a finished one). */
  enqueue(d: Omit<Delivery, 'attempts' | 'next_at' | 'outcome' | 'enqueued_at'>, force = false): boolean {
    const prev = this.#all.get(d.id);
    if (prev && (prev.outcome === null || !force)) return false;
    this.#record({ op: 'enq', d: { ...d, enqueued_at: new Date().toISOString() } });
    return true;
  }

  attempt(id: string, a: Attempt, nextAt: number): void {
    this.#record({ op: 'att', id, a, next_at: nextAt });
  }

  finish(id: string, outcome: string): void {
    this.#record({ op: 'done', id, outcome });
  }

  setCursor(seq: number): void {
    if (seq > this.cursor) this.#record({ op: 'cursor', seq });
  }

  /** Pending deliveries, oldest event first. */
  pending(): Delivery[] {
    return [...this.#all.values()].filter((d) => d.outcome === null).sort((a, b) => a.seq - b.seq || a.id.localeCompare(b.id));
  }

  /** Every known delivery of one subscription, newest event first. */
  ofSubscription(sub: string): Delivery[] {
    return [...this.#all.values()].filter((d) => d.sub === sub).sort((a, b) => b.seq - a.seq);
  }

  get(id: string): Delivery | undefined {
    return this.#all.get(id);
  }
}

function fsync(path: string): void {
  const fd = openSync(path, 'r');
  try {
    fsyncSync(fd);
  } finally {
    closeSync(fd);
  }
}
