/**
 * The per-run journal: `<dataDir>/journal/<run_id>.jsonl`, one JSON line per finished unit of work,
 * appended as it finishes (a write per line; fsync at most every `fsyncMs` and on close), so a
 * killed run loses at most the calls in flight.
 *
 * Lines: `{"t":"run",...}` header (run id, as-of, modes, languages, models), then
 * `{"t":"evidence","question_id","items":[...]}` per question whose evidence was gathered and
 * `{"t":"call","call":{model_calls row},"forecasts":[forecasts rows]}` per finished call (ok,
 * failed or skipped). A kill mid-write leaves a torn last line: readers ignore it and the writer
 * cuts it off before appending again (otherwise the next line would be glued to it).
 */
import {
  closeSync,
  existsSync,
  fdatasyncSync,
  fstatSync,
  ftruncateSync,
  mkdirSync,
  openSync,
  readFileSync,
  readSync,
  rmSync,
} from 'node:fs';
import { join } from 'node:path';
import { fsyncPath, writeAllSync } from '../fs/durable.ts';
import type { EvidenceRow } from '../evidence/types.ts';
import type { ForecastRow, ModelCallRow } from '../models/runner.ts';

export interface JournalHeader {
  t: 'run';
  v: 1;
  run_id: string;
  as_of: string;
  created_at: string;
  modes: string[];
  langs: string[];
  models: string[];
}
export interface JournalEvidence {
  t: 'evidence';
  question_id: string;
  items: EvidenceRow[];
}
export interface JournalCall {
  t: 'call';
  call: ModelCallRow;
  forecasts: ForecastRow[];
}
export type JournalEntry = JournalHeader | JournalEvidence | JournalCall;

export function journalDir(dataDir: string): string {
  return join(dataDir, 'journal');
}

export function journalPath(dataDir: string, runId: string): string {
  return join(journalDir(dataDir), `${runId}.jsonl`);
}

const DATE_KEYS = new Set(['started_at', 'created_at', 'retrieved_at', 'published_at']);

/** JSON reviver: the row timestamps come back as Dates (the header keeps its strings). */
function revive(this: unknown, key: string, value: unknown): unknown {
  if (DATE_KEYS.has(key) && typeof value === 'string' && !(this as { t?: unknown })?.t) {
    const d = new Date(value);
    return Number.isNaN(d.getTime()) ? value : d;
  }
  return value;
}

export interface JournalContents {
  header: JournalHeader | null;
  evidence: JournalEvidence[];
  calls: JournalCall[];
  /** Lines that could not be read (a torn last line after a kill). */
  torn: number;
}

/** Reads a journal; a missing file reads as empty. Unreadable lines are counted, not fatal. */
export function readJournal(path: string): JournalContents {
  const out: JournalContents = { header: null, evidence: [], calls: [], torn: 0 };
  if (!existsSync(path)) return out;
  for (const line of readFileSync(path, 'utf8').split('\n')) {
    if (line.trim() === '') continue;
    let e: JournalEntry;
    try {
      e = JSON.parse(line, revive) as JournalEntry;
    } catch {
      out.torn++;
      continue;
    }
    if (e?.t === 'run') out.header ??= e;
    else if (e?.t === 'evidence') out.evidence.push(e);
    else if (e?.t === 'call' && e.call) out.calls.push(e);
    else out.torn++;
  }
  return out;
}

/** An open journal, appending. */
export class JournalWriter {
  private fd: number;
  private dirty = false;
  private timer: NodeJS.Timeout | null = null;
  private lastSync = Date.now();
  lines = 0;

  private constructor(
    readonly path: string,
    private readonly fsyncMs: number,
  ) {
    mkdirSync(join(path, '..'), { recursive: true });
    this.fd = openSync(path, 'a+');
    cutTornTail(this.fd);
  }

  /** Opens (creating) the journal of a run for appending. `fsyncMs` 0: fsync every line. */
  static open(path: string, opts: { fsyncMs: number }): JournalWriter {
    return new JournalWriter(path, opts.fsyncMs);
  }

  append(entry: JournalEntry): void {
    writeAllSync(this.fd, `${JSON.stringify(entry)}\n`);
    this.lines++;
    this.dirty = true;
    if (this.fsyncMs === 0) return this.sync();
    if (Date.now() - this.lastSync >= this.fsyncMs) this.sync();
    else if (!this.timer) {
      this.timer = setTimeout(() => {
        this.timer = null;
        this.sync();
      }, this.fsyncMs);
      this.timer.unref();
    }
  }

  /** Flushes to disk now (no-op when nothing was written since the last sync). */
  sync(): void {
    if (!this.dirty || this.fd < 0) return;
    fdatasyncSync(this.fd);
    this.dirty = false;
    this.lastSync = Date.now();
  }

  close(): void {
    if (this.fd < 0) return;
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
    this.sync();
    closeSync(this.fd);
    this.fd = -1;
  }

  /** Closes and removes the journal (its rows are in the raw tables). */
  remove(): void {
    this.close();
    rmSync(this.path, { force: true });
  }
}

/**
 * Makes a journal's lines durable, whichever session wrote them (a killed session's last lines may
 * still be only in the page cache): called before rows derived from them are committed elsewhere.
 * A missing journal is nothing to sync.
 */
export function syncJournal(path: string): void {
  if (existsSync(path)) fsyncPath(path);
}

/** Truncates a file after its last newline (a torn line left by a kill). */
function cutTornTail(fd: number): void {
  const size = fstatSync(fd).size;
  if (size === 0) return;
  const chunk = Buffer.alloc(Math.min(size, 1 << 16));
  let end = size;
  while (end > 0) {
    const start = Math.max(0, end - chunk.length);
    const n = readSync(fd, chunk, 0, end - start, start);
    const i = chunk.subarray(0, n).lastIndexOf(0x0a);
    if (i >= 0) {
      const keep = start + i + 1;
      if (keep < size) ftruncateSync(fd, keep);
      return;
    }
    end = start;
  }
  ftruncateSync(fd, 0);
}
