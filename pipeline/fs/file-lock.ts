/**
 * A short exclusive lock beside a file that several processes read, change and write back whole
 * (the key file, the webhook subscriptions: the CLI and the server): `withFileLock(file, fn)` runs
 * `fn` holding `<file>.lock`, created exclusively, with its holder in it (`<pid> <host> <token>`). Another
 * holder is waited for (up to FILE_LOCK_WAIT_MS, polling); a lock whose holder on this host has
 * exited (processAlive), or one older than FILE_LOCK_STALE_MS (a holder on another host, or a lock
 * left before its holder was written), was left by a killed process and is taken over. Synchronous:
 * the critical sections are a read and an atomic write of a small file. The wait blocks the thread,
 * the server's event loop included: QA review, a `quorum webhooks` killed holding the lock made every
 * webhook change of the server hold its event loop 10 s, then fail, until the lock was 30 s old.
 */
import { randomBytes } from 'node:crypto';
import { closeSync, mkdirSync, openSync, readFileSync, rmSync, statSync, writeSync } from 'node:fs';
import { hostname } from 'node:os';
import { dirname } from 'node:path';
import { processAlive, takeOver } from '../warehouse/lock.ts';

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
  // The holder's text is unique to this acquisition (its token), so a takeover can tell the lock it
  // judged from one written since, and the release removes only its own.
  const mine = `${process.pid} ${hostname()} ${randomBytes(8).toString('hex')}\n`;
  const deadline = Date.now() + FILE_LOCK_WAIT_MS;
  for (;;) {
    try {
      const fd = openSync(lock, 'wx', 0o600);
      try {
        writeSync(fd, mine);
      } finally {
        closeSync(fd);
      }
      break;
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
    }
    let age: number;
    let judged: string;
    try {
      judged = readFileSync(lock, 'utf8');
      age = Date.now() - statSync(lock).mtimeMs;
    } catch {
      continue; // released meanwhile
    }
    if (age > FILE_LOCK_STALE_MS || holderGone(judged)) {
      // (warehouse/lock.ts: read again, moved aside, compared and put back when another's)
      takeOver(lock, judged);
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
    releaseFileLock(lock, mine);
  }
}

/** Removes `lock` if it still holds `mine` (a lock taken over as stale is another holder's now). */
function releaseFileLock(lock: string, mine: string): void {
  try {
    if (readFileSync(lock, 'utf8') !== mine) return;
  } catch {
    return;
  }
  rmSync(lock, { force: true });
}

/**
 * True when the lock's text names a holder on this host that no longer runs: an exited process, or
 * this very process (the lock is not reentrant, so one naming it was left by an earlier process that
 * had the same pid). An empty lock, or one of another host, says nothing (the age rule). Locks
 * written before the token (`<pid> <host>`) are read too.
 */
function holderGone(text: string): boolean {
  const m = /^(\d+) (\S+)(?: [0-9a-f]+)?\n$/.exec(text);
  if (!m || m[2] !== hostname()) return false;
  const pid = Number(m[1]);
  return pid === process.pid || !processAlive(pid);
}
