/**
 * Durable per-key usage: one JSON file per UTC day, `<dataDir>/state/usage/YYYY-MM-DD.json` =
 * `{ version: 1, date, keys: { <keyId>: { requests, rejected, probability, routes: { <routeId>: n } } } }`.
 *
 * Counters live in memory and are flushed atomically (temp + fsync + rename) every `flushMs`
 * (default 1 s) when they changed, at a day change and on close(). Today's file is loaded at
 * start, so a restart continues the day's quotas. A crash (no close()) loses at most the last
 * ~1 s of counts. One server process per data directory is assumed (a second one would overwrite
 * the file with its own counts).
 */
import { readFile, readdir } from 'node:fs/promises';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import type { Logger } from 'pino';
import { z } from 'zod';
import { writeFileAtomic, writeFileAtomicSync } from '../../pipeline/fs/durable.ts';

export interface KeyUsage {
  /** Requests counted against the plan's quota. */
  requests: number;
  /** Requests refused with 429. */
  rejected: number;
  /** Requests to the probability endpoint (its own quota). */
  probability: number;
  /** Requests per route id. */
  routes: Record<string, number>;
}

const keyUsageSchema = z.object({
  requests: z.number().int().min(0),
  rejected: z.number().int().min(0).default(0),
  probability: z.number().int().min(0).default(0),
  routes: z.record(z.string(), z.number().int().min(0)).default({}),
});
const dayFileSchema = z.object({
  version: z.literal(1),
  date: z.string(),
  keys: z.record(z.string(), keyUsageSchema),
});

const DAY_FILE = /^(\d{4}-\d{2}-\d{2})\.json$/;
const DAY_MS = 86_400_000;

/** A key's totals of one day, as the usage history lists them. */
type DayTotals = Omit<KeyUsage, 'routes'>;

/** The closed days whose totals are kept in memory at most (the history reads 90 at most). */
const MAX_CACHED_DAYS = 100;

function dayTotals(entries: Iterable<[string, KeyUsage]>): Map<string, DayTotals> {
  const out = new Map<string, DayTotals>();
  for (const [id, u] of entries) out.set(id, { requests: u.requests, rejected: u.rejected, probability: u.probability });
  return out;
}

export function utcDay(ms: number): string {
  return new Date(ms).toISOString().slice(0, 10);
}

export class UsageStore {
  readonly dir: string;
  readonly #logger: Logger;
  readonly #now: () => number;
  #day: string;
  #dayEndsAt: number;
  #keys = new Map<string, KeyUsage>();
  #dirty = false;
  #timer: NodeJS.Timeout | null = null;
  #closed = false;

  constructor(dataDir: string, opts: { logger: Logger; flushMs?: number; now?: () => number }) {
    this.dir = path.join(dataDir, 'state', 'usage');
    this.#logger = opts.logger;
    this.#now = opts.now ?? Date.now;
    const now = this.#now();
    this.#day = utcDay(now);
    this.#dayEndsAt = (Math.floor(now / DAY_MS) + 1) * DAY_MS;
    this.#keys = this.#load(this.#day);
    const flushMs = opts.flushMs ?? 1000;
    if (flushMs > 0) {
      this.#timer = setInterval(() => void this.flushAsync(), flushMs);
      this.#timer.unref();
    }
  }

  /** Epoch ms at which the current UTC day ends (the keyed quotas reset). */
  get dayEndsAt(): number {
    this.#roll();
    return this.#dayEndsAt;
  }

  get day(): string {
    this.#roll();
    return this.#day;
  }

  /** Today's usage of `keyId` (a live object: do not mutate). */
  get(keyId: string): KeyUsage {
    this.#roll();
    return this.#keys.get(keyId) ?? { requests: 0, rejected: 0, probability: 0, routes: {} };
  }

  #entry(keyId: string): KeyUsage {
    this.#roll();
    let u = this.#keys.get(keyId);
    if (!u) {
      u = { requests: 0, rejected: 0, probability: 0, routes: {} };
      this.#keys.set(keyId, u);
    }
    this.#dirty = true;
    return u;
  }

  count(keyId: string, field: 'requests' | 'rejected' | 'probability'): void {
    this.#entry(keyId)[field]++;
  }

  countRoute(keyId: string, routeId: string): void {
    const u = this.#entry(keyId);
    u.routes[routeId] = (u.routes[routeId] ?? 0) + 1;
  }

  /**
   * Takes back a request of `keyId` to `routeId` that was charged and counted, then refused by a
   * limit of its own (the probability scope's): refused requests are not charged, only recorded as
   * rejected, and the routes still add up to the requests charged. `chargedDay`: the UTC day the
   * request was charged on; charged before midnight and refused after it, nothing is taken back
   * from the new day, which never counted it (QA: it erased a request of the new day), only the
   * refusal recorded.
   */
  refuse(keyId: string, routeId: string, chargedDay?: string): void {
    const u = this.#entry(keyId);
    if (chargedDay !== undefined && chargedDay !== this.#day) {
      u.rejected++;
      return;
    }
    u.requests = Math.max(0, u.requests - 1);
    const n = (u.routes[routeId] ?? 0) - 1;
    if (n > 0) u.routes[routeId] = n;
    else delete u.routes[routeId];
    u.rejected++;
  }

  /**
   * The totals of every key on each closed day read so far (or closed by this process: from memory,
   * its final counts). A closed day never changes, so each day file is read and parsed once: every
   * `GET /api/usage/` (uncharged) read and parsed up to 89 files holding every key's routes (QA).
   */
  readonly #closedDays = new Map<string, Map<string, DayTotals>>();

  /** Daily totals of `keyId` for the last `days` days (today included), newest first. */
  async history(keyId: string, days: number): Promise<Array<{ date: string } & DayTotals>> {
    this.#roll();
    const out: Array<{ date: string } & DayTotals> = [];
    const today = this.get(keyId);
    out.push({ date: this.#day, requests: today.requests, rejected: today.rejected, probability: today.probability });
    let names: string[] = [];
    try {
      names = await readdir(this.dir);
    } catch {
      return out;
    }
    // The last `days` calendar days, not the last `days` day files: a day without a file (no
    // request of any key, the server down) is a day too (QA: with such gaps, ?days=2 listed a day
    // 40 days back).
    const first = utcDay(this.#dayEndsAt - Math.max(1, days) * DAY_MS);
    const dates = names
      .map((n) => DAY_FILE.exec(n)?.[1])
      .filter((d): d is string => d !== undefined && d < this.#day && d >= first)
      .sort()
      .reverse();
    for (const date of dates) {
      const u = (await this.#closedDay(date))?.get(keyId);
      if (u) out.push({ date, ...u });
    }
    return out;
  }

  /** A closed day's totals per key (cached); undefined when its file is unreadable (skipped, asked again next time). */
  async #closedDay(date: string): Promise<Map<string, DayTotals> | undefined> {
    const cached = this.#closedDays.get(date);
    if (cached) return cached;
    try {
      const parsed = dayFileSchema.safeParse(JSON.parse(await readFile(path.join(this.dir, `${date}.json`), 'utf8')));
      if (!parsed.success) return undefined;
      const totals = dayTotals(Object.entries(parsed.data.keys));
      // (the day may have closed while the file was read: its totals from memory are the final ones)
      if (!this.#closedDays.has(date) && date < this.#day) this.#closedDays.set(date, totals);
      return this.#closedDays.get(date) ?? totals;
    } catch {
      return undefined; // unreadable day: skipped
    }
  }

  #writing: Promise<void> | null = null;

  /** Writes the current day's counters if they changed. Synchronous and atomic. */
  flush(): void {
    if (!this.#dirty) return;
    this.#write(this.#day, this.#keys);
  }

  /** The periodic flush: asynchronous (never blocks the event loop on fsync), one at a time. */
  async flushAsync(): Promise<void> {
    if (!this.#dirty || this.#writing || this.#closed) return;
    this.#dirty = false;
    const day = this.#day;
    const body = JSON.stringify({ version: 1, date: day, keys: Object.fromEntries(this.#keys) });
    const writing: Promise<void> = writeFileAtomic(this.#file(day), body, 0o644)
      .catch((err: unknown) => {
        this.#dirty = true;
        this.#logger.error({ err }, 'usage flush failed');
      })
      .finally(() => {
        if (this.#writing === writing) this.#writing = null;
      });
    this.#writing = writing;
    await writing;
  }

  /** Stops the timer, waits for a running flush, then writes the final counts. */
  async close(): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    if (this.#timer) clearInterval(this.#timer);
    this.#timer = null;
    await this.#writing;
    this.#dirty = true;
    this.flush();
  }

  #roll(): void {
    const now = this.#now();
    if (now < this.#dayEndsAt) return;
    this.flush();
    // A periodic flush of the closing day still under way renames its older counts over the ones
    // just written: once it is done, the day's final counts are written again (QA).
    const inFlight = this.#writing;
    if (inFlight) {
      const [day, keys] = [this.#day, this.#keys];
      const rewrite: Promise<void> = inFlight
        .then(() => {
          this.#writeDay(day, keys);
        })
        .finally(() => {
          if (this.#writing === rewrite) this.#writing = null;
        });
      this.#writing = rewrite;
    }
    this.#closedDays.set(this.#day, dayTotals(this.#keys.entries()));
    for (const date of [...this.#closedDays.keys()].sort().slice(0, Math.max(0, this.#closedDays.size - MAX_CACHED_DAYS))) {
      this.#closedDays.delete(date);
    }
    this.#day = utcDay(now);
    this.#dayEndsAt = (Math.floor(now / DAY_MS) + 1) * DAY_MS;
    this.#keys = this.#load(this.#day);
  }

  #file(day: string): string {
    return path.join(this.dir, `${day}.json`);
  }

  #load(day: string): Map<string, KeyUsage> {
    let text: string;
    try {
      text = readFileSync(this.#file(day), 'utf8');
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'ENOENT') this.#logger.error({ err }, 'usage file unreadable');
      return new Map();
    }
    try {
      const parsed = dayFileSchema.parse(JSON.parse(text));
      return new Map(Object.entries(parsed.keys));
    } catch (err) {
      this.#logger.error({ err, file: this.#file(day) }, 'usage file invalid; starting the day from zero');
      return new Map();
    }
  }

  #write(day: string, keys: Map<string, KeyUsage>): void {
    if (this.#writeDay(day, keys)) this.#dirty = false;
  }

  /** Writes `day`'s counters (synchronous, atomic); false when it failed (logged). */
  #writeDay(day: string, keys: Map<string, KeyUsage>): boolean {
    try {
      writeFileAtomicSync(
        this.#file(day),
        JSON.stringify({ version: 1, date: day, keys: Object.fromEntries(keys) }),
        0o644,
      );
      return true;
    } catch (err) {
      this.#logger.error({ err }, 'usage flush failed');
      return false;
    }
  }
}
