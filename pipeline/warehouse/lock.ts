/**
 * The run lock: never two pipeline runs at once, also across processes. The lock file is created
 * exclusively and holds the owner's pid; a lock whose owner no longer exists is stale and taken over.
 */
import { closeSync, mkdirSync, openSync, readFileSync, rmSync, writeSync } from 'node:fs';
import { hostname } from 'node:os';
import { lockFile } from './layout.ts';

export class RunLockedError extends Error {
  constructor(readonly holder: { pid: number; started_at: string; run_id?: string }) {
    super(`another run is in progress (pid ${holder.pid}, since ${holder.started_at})`);
    this.name = 'RunLockedError';
  }
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
}

function readHolder(file: string): { pid: number; started_at: string; host?: string } | null {
  try {
    return JSON.parse(readFileSync(file, 'utf8'));
  } catch {
    return null;
  }
}

/** Takes the run lock or throws RunLockedError. Returns the release function. */
export function acquireRunLock(root: string, runId?: string): () => void {
  mkdirSync(root, { recursive: true });
  const file = lockFile(root);
  for (let attempt = 0; attempt < 2; attempt++) {
    try {
      const fd = openSync(file, 'wx');
      const body = { pid: process.pid, host: hostname(), started_at: new Date().toISOString(), run_id: runId };
      writeSync(fd, JSON.stringify(body));
      closeSync(fd);
      let released = false;
      return () => {
        if (released) return;
        released = true;
        const holder = readHolder(file);
        if (holder?.pid === process.pid) rmSync(file, { force: true });
      };
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
      const holder = readHolder(file);
      // A lock from a dead process on this host (or an unreadable, half-written one) is stale.
      if (holder && (holder.host !== hostname() || alive(holder.pid))) throw new RunLockedError(holder);
      rmSync(file, { force: true });
    }
  }
  throw new RunLockedError(readHolder(file) ?? { pid: -1, started_at: 'unknown' });
}
