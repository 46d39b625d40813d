/**
 * Durable file writes, in one place for the warehouse, the API's state files and the event queues:
 * what a SIGKILL or a power cut must never leave half-written is written to a temp file in the same
 * directory, fsynced, renamed over the target, and the directory fsynced (so the rename itself is
 * on disk).
 */
import { closeSync, existsSync, fsyncSync, mkdirSync, openSync, readdirSync, renameSync, rmSync, statSync, writeFileSync } from 'node:fs';
import * as fsp from 'node:fs/promises';
import { randomBytes } from 'node:crypto';
import path from 'node:path';

/** fsyncs a file or a directory by path. */
export function fsyncPath(file: string): void {
  const fd = openSync(file, 'r');
  try {
    fsyncSync(fd);
  } finally {
    closeSync(fd);
  }
}

/** fsyncs a directory where the platform allows it (best effort: not supported everywhere). */
export function fsyncDir(dir: string): void {
  try {
    fsyncPath(dir);
  } catch {
    // directory fsync is best effort
  }
}

/** A temp name beside `file`, unique per process and call (concurrent writers never share one). */
function tempBeside(file: string): string {
  return path.join(path.dirname(file), `.${path.basename(file)}.${process.pid}.${randomBytes(4).toString('hex')}.tmp`);
}

/** The names tempBeside makes. */
const ATOMIC_TEMP_NAME = /^\..+\.\d+\.[0-9a-f]{8}\.tmp$/;

/**
 * Removes the temp files of atomic writes (tempBeside's `.<name>.<pid>.<hex>.tmp`) under `dir`
 * (its subdirectories too with `recursive`) last modified more than `maxAgeMs` ago: a process
 * killed between creating one and renaming it (a run writing CURRENT or FORMAT, `quorum keys`, a
 * server's usage flush) leaves it, and nothing else ever removed it (QA: SIGKILLed starts left
 * `.FORMAT.<pid>.<hex>.tmp` in the data directory). An atomic write lasts milliseconds, so by age
 * alone a file is safely abandoned, whichever host or process made it. Returns the paths removed.
 */
export function removeAbandonedAtomicTemps(dir: string, opts: { recursive?: boolean; now?: number; maxAgeMs?: number } = {}): string[] {
  if (!existsSync(dir)) return [];
  const now = opts.now ?? Date.now();
  const maxAgeMs = opts.maxAgeMs ?? 3_600_000;
  const stale = readdirSync(dir, { recursive: opts.recursive ?? false, encoding: 'utf8' })
    .filter((f) => ATOMIC_TEMP_NAME.test(path.basename(f)))
    .map((f) => path.join(dir, f))
    .filter((f) => (statSync(f, { throwIfNoEntry: false })?.mtimeMs ?? now) < now - maxAgeMs);
  for (const f of stale) rmSync(f, { force: true });
  return stale;
}

/**
 * Appends or writes all of `data` at `fd`'s position: `writeFileSync` on a descriptor loops until
 * every byte is written, or throws. A single `writeSync` may write only part of it and return the
 * count with no error (a nearly full disk: QA, a keys file cut at 4,096 bytes and renamed into
 * place), and the next write then fails or lands after a torn line.
 */
export function writeAllSync(fd: number, data: string): void {
  writeFileSync(fd, data);
}

/**
 * Writes `data` to `file` atomically: temp file in the same directory, every byte written, fsync,
 * rename, fsync dir. On any failure (ENOSPC, EROFS) the temp file is removed and `file` is as it was.
 */
export function writeFileAtomicSync(file: string, data: string, mode = 0o600): void {
  const dir = path.dirname(file);
  mkdirSync(dir, { recursive: true, mode: 0o700 });
  const tmp = tempBeside(file);
  const fd = openSync(tmp, 'w', mode);
  try {
    try {
      writeAllSync(fd, data);
      fsyncSync(fd);
    } finally {
      closeSync(fd);
    }
    renameSync(tmp, file);
  } catch (err) {
    rmSync(tmp, { force: true }); // a failed write leaves no temp file behind (QA: one per failed usage flush)
    throw err;
  }
  fsyncDir(dir);
}

/** The async form of writeFileAtomicSync (for periodic flushes that must not block the event loop). */
export async function writeFileAtomic(file: string, data: string, mode = 0o600): Promise<void> {
  const dir = path.dirname(file);
  await fsp.mkdir(dir, { recursive: true, mode: 0o700 });
  const tmp = tempBeside(file);
  const fh = await fsp.open(tmp, 'w', mode);
  try {
    try {
      await fh.writeFile(data); // loops until every byte is written, or rejects
      await fh.sync();
    } finally {
      await fh.close();
    }
    await fsp.rename(tmp, file);
  } catch (err) {
    await fsp.rm(tmp, { force: true });
    throw err;
  }
}

/** Puts a fully written temp file in place durably: fsync it, rename it over `file`, fsync the directory. */
export function commitTempFile(tmp: string, file: string): void {
  fsyncPath(tmp);
  renameSync(tmp, file);
  fsyncPath(path.dirname(file));
}
