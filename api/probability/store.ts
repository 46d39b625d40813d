/**
 * The probability endpoint's private store, under `<dataDir>/state/probability/` (the state
 * directory is never served, exported or snapshotted):
 *
 *   requests/<request_id>.json        every request and its answer (or its problem), with the key id
 *   idempotency/<sha256(key id, Idempotency-Key)>.json   { request_id, body_hash, created_at } (24 h)
 *   model_calls/<YYYY-MM-DD>.jsonl    every live model call, one `model_calls` row (the columns of
 *                                     the raw table, run_id `probability-<date>`) per line, appended
 *   spend/<YYYY-MM-DD>.json           { <key id>: USD } spent today (the daily budget)
 *
 * Files are replaced atomically (temp + rename; the idempotency and spend files also fsynced); the
 * call log is appended. The raw
 * `model_calls` table of the warehouse stays the pipeline's: partners' questions are private, and
 * run statistics stay those of the scheduled runs.
 */
import { createHash, randomBytes } from 'node:crypto';
import { appendFile, mkdir, readFile, rename, writeFile } from 'node:fs/promises';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import type { ModelCallRow } from '../../pipeline/models/runner.ts';
import { writeFileAtomic } from '../../pipeline/fs/durable.ts';
import { roundUsd } from '../../pipeline/models/config.ts';
import { IDEMPOTENCY_TTL_MS } from '../http/idempotency.ts';


export interface StoredRequest {
  request_id: string;
  key_id: string;
  created_at: string;
  idempotency_key: string | null;
  body_hash: string;
  request: unknown;
  status: number;
  /** The answer (200) or the problem body (an error). */
  body: unknown;
}

interface IdempotencyRecord {
  request_id: string;
  body_hash: string;
  created_at: string;
}

const REQUEST_ID = /^prq_[a-f0-9]{32}$/;

/**
 * A stored answer (or 503 problem) as the OpenAPI document describes it today: each `failed[]`
 * entry has `cost_usd`, null when unknown. Answers stored before entries carried it (2026-11-29)
 * are replayed by their Idempotency-Key and read again by id: they read with null, not without
 * the field the document marks required.
 */
function withFailedCosts(r: StoredRequest): StoredRequest {
  const failed = (r.body as { failed?: unknown } | null)?.failed;
  if (Array.isArray(failed)) for (const f of failed) if (f && typeof f === 'object' && !('cost_usd' in f)) (f as Record<string, unknown>).cost_usd = null;
  return r;
}

export function utcDate(ms: number): string {
  return new Date(ms).toISOString().slice(0, 10);
}

export class ProbabilityStore {
  readonly dir: string;
  #spendDay = '';
  #spend = new Map<string, number>();
  #spendTimer: NodeJS.Timeout | null = null;
  /** Days that ended with spend not yet written (flush() writes them). */
  #endedDays: { day: string; data: string }[] = [];
  /** Directories already created: a recursive mkdir per request cost ~2 ms of the event loop each. */
  #made = new Set<string>();

  constructor(dataDir: string, private readonly now: () => number = Date.now) {
    this.dir = path.join(dataDir, 'state', 'probability');
  }

  /** Runs `write` in `dir`, creating the directory first the first time (or again if it went away). */
  async #inDir<T>(dir: string, write: () => Promise<T>): Promise<T> {
    if (this.#made.has(dir)) {
      try {
        return await write();
      } catch (err) {
        if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err;
        this.#made.delete(dir);
      }
    }
    await mkdir(dir, { recursive: true });
    this.#made.add(dir);
    return write();
  }

  isRequestId(id: string): boolean {
    return REQUEST_ID.test(id);
  }

  /**
   * Stores a request and its answer: temp file + rename (a crashed process never leaves half a
   * record), without fsync: the answer is not held back by the disk; an OS crash may lose the last
   * few seconds of records, like the usage counters.
   */
  async saveRequest(r: StoredRequest): Promise<void> {
    const dir = path.join(this.dir, 'requests');
    const file = path.join(dir, `${r.request_id}.json`);
    const tmp = `${file}.${process.pid}.${randomBytes(4).toString('hex')}.tmp`;
    const data = JSON.stringify(r);
    await this.#inDir(dir, () => writeFile(tmp, data, { mode: 0o600 }));
    await rename(tmp, file);
  }

  /** The stored request, or null when unknown (or malformed id). */
  async getRequest(id: string): Promise<StoredRequest | null> {
    if (!this.isRequestId(id)) return null;
    try {
      return withFailedCosts(JSON.parse(await readFile(path.join(this.dir, 'requests', `${id}.json`), 'utf8')) as StoredRequest);
    } catch {
      return null;
    }
  }

  #idemFile(keyId: string, idemKey: string): string {
    const h = createHash('sha256').update(`${keyId}\u0000${idemKey}`).digest('hex');
    return path.join(this.dir, 'idempotency', `${h}.json`);
  }

  /** The live (under 24 h old) idempotency record of (key, Idempotency-Key), or null. */
  async getIdempotency(keyId: string, idemKey: string): Promise<IdempotencyRecord | null> {
    try {
      const r = JSON.parse(await readFile(this.#idemFile(keyId, idemKey), 'utf8')) as IdempotencyRecord;
      return this.now() - Date.parse(r.created_at) < IDEMPOTENCY_TTL_MS ? r : null;
    } catch {
      return null;
    }
  }

  async putIdempotency(keyId: string, idemKey: string, r: IdempotencyRecord): Promise<void> {
    await mkdir(path.join(this.dir, 'idempotency'), { recursive: true });
    await writeFileAtomic(this.#idemFile(keyId, idemKey), JSON.stringify(r));
  }

  /** Appends the live calls to today's call log (one model_calls row per line). */
  async appendCalls(calls: readonly ModelCallRow[]): Promise<void> {
    if (calls.length === 0) return;
    const dir = path.join(this.dir, 'model_calls');
    const lines = calls.map((c) => JSON.stringify(c)).join('\n') + '\n';
    await this.#inDir(dir, () => appendFile(path.join(dir, `${utcDate(this.now())}.jsonl`), lines, { mode: 0o600 }));
  }

  #rollSpend(): void {
    const day = utcDate(this.now());
    if (day === this.#spendDay) return;
    // The day that ends keeps what it spent since its last write (QA: a request of the new day
    // that came first dropped it, so the day's file lacked the cost of its last answers).
    if (this.#spendDay !== '' && this.#spendTimer !== null) {
      this.#endedDays.push({ day: this.#spendDay, data: JSON.stringify(Object.fromEntries(this.#spend)) });
    }
    this.#spendDay = day;
    this.#spend = new Map();
    try {
      const j = JSON.parse(readFileSync(path.join(this.dir, 'spend', `${day}.json`), 'utf8')) as Record<string, number>;
      for (const [k, v] of Object.entries(j)) if (typeof v === 'number') this.#spend.set(k, v);
    } catch {
      // no spend yet today
    }
  }

  /** USD spent today by the key. */
  spentToday(keyId: string): number {
    this.#rollSpend();
    return this.#spend.get(keyId) ?? 0;
  }

  /**
   * Adds to today's spend. The in-memory figure is what the budget checks; the day file is written
   * at most once per 200 ms (one fsync for a burst of answers, not one each) and on flush().
   */
  addSpend(keyId: string, usd: number): void {
    this.#rollSpend();
    this.#spend.set(keyId, roundUsd((this.#spend.get(keyId) ?? 0) + usd));
    this.#spendTimer ??= setTimeout(() => void this.flush().catch(() => undefined), 200);
  }

  /** Writes today's spend file now (and that of a day that ended before its spend was written). */
  async flush(): Promise<void> {
    if (this.#spendTimer) clearTimeout(this.#spendTimer);
    this.#spendTimer = null;
    for (const ended of this.#endedDays.splice(0)) {
      await mkdir(path.join(this.dir, 'spend'), { recursive: true });
      await writeFileAtomic(path.join(this.dir, 'spend', `${ended.day}.json`), ended.data);
    }
    if (this.#spendDay === '') return;
    const day = this.#spendDay;
    const data = JSON.stringify(Object.fromEntries(this.#spend));
    await mkdir(path.join(this.dir, 'spend'), { recursive: true });
    await writeFileAtomic(path.join(this.dir, 'spend', `${day}.json`), data);
  }
}
