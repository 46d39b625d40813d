/**
 * A short exclusive lock beside a file that several processes read, change and write back whole
 * (the key file, the webhook subscriptions: the CLI and the server): `withFileLock(file, fn)` runs
 * `fn` holding `<file>.lock`, created exclusively. Another holder is waited for (up to
 * FILE_LOCK_WAIT_MS, polling); a lock older than FILE_LOCK_STALE_MS was left by a killed process and
 * is taken over. Synchronous: the critical sections are a read and an atomic write of a small file.
 */
import { randomBytes } from 'node:crypto';
import { closeSync, mkdirSync, openSync, renameSync, rmSync, statSync } from 'node:fs';
import { dirname } from 'node:path';

/** How long a process waits for another one's lock. */
export const FILE_LOCK_WAIT_MS = 10_000;
/** A lock untouched for this long was left by a killed process. */
export const FILE_LOCK_STALE_MS = 30_000;

function sleepSync(ms: number): void {
  Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, ms);
}

/** Runs `fn` holding `<file>.lock` (see above); throws when another process holds it for too long. */
export function withFileLock<T>(file: string, fn: () => T): T {
  const lock = `${file}.lock`;
  mkdirSync(dirname(file), { recursive: true, mode: 0o700 });
  const deadline = Date.now() + FILE_LOCK_WAIT_MS;
  for (;;) {
    try {
      closeSync(openSync(lock, 'wx', 0o600));
      break;
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
    }
    let age: number;
    try {
      age = Date.now() - statSync(lock).mtimeMs;
    } catch {
      continue; // released meanwhile
    }
    if (age > FILE_LOCK_STALE_MS) {
      // moved aside first: of two processes taking over one stale lock, one rename fails
      const aside = `${lock}.stale-${process.pid}-${randomBytes(4).toString('hex')}`;
      try {
        renameSync(lock, aside);
        rmSync(aside, { force: true });
      } catch {
        // taken over by the other one
      }
      continue;
    }
    if (Date.now() > deadline) {
      throw new Error(`another process holds ${lock}; retry (a lock left by a killed process is taken over after ${FILE_LOCK_STALE_MS / 1000} s)`);
    }
    sleepSync(10);
  }
  try {
    return fn();
  } finally {
    rmSync(lock, { force: true });
  }
}
