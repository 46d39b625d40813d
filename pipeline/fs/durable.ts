/**
 * Durable file writes, in one place for the warehouse, the API's state files and the event queues:
 * what a SIGKILL or a power cut must never leave half-written is written to a temp file in the same
 * directory, fsynced, renamed over the target, and the directory fsynced (so the rename itself is
 * on disk).
 */
import { closeSync, fsyncSync, mkdirSync, openSync, renameSync, writeSync } from 'node:fs';
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

/** Writes `data` to `file` atomically: temp file in the same directory, fsync, rename, fsync dir. */
export function writeFileAtomicSync(file: string, data: string, mode = 0o600): void {
  const dir = path.dirname(file);
  mkdirSync(dir, { recursive: true, mode: 0o700 });
  const tmp = tempBeside(file);
  const fd = openSync(tmp, 'w', mode);
  try {
    writeSync(fd, data);
    fsyncSync(fd);
  } finally {
    closeSync(fd);
  }
  renameSync(tmp, file);
  fsyncDir(dir);
}

/** The async form of writeFileAtomicSync (for periodic flushes that must not block the event loop). */
export async function writeFileAtomic(file: string, data: string, mode = 0o600): Promise<void> {
  const dir = path.dirname(file);
  await fsp.mkdir(dir, { recursive: true, mode: 0o700 });
  const tmp = tempBeside(file);
  const fh = await fsp.open(tmp, 'w', mode);
  try {
    await fh.writeFile(data);
    await fh.sync();
  } finally {
    await fh.close();
  }
  await fsp.rename(tmp, file);
}

/** Puts a fully written temp file in place durably: fsync it, rename it over `file`, fsync the directory. */
export function commitTempFile(tmp: string, file: string): void {
  fsyncPath(tmp);
  renameSync(tmp, file);
  fsyncPath(path.dirname(file));
}
