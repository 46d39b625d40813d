/**
 * The export temp-file lifecycle: names, deletion, and the startup sweep of what a crashed process
 * left behind.
 *
 * A whole-file export writes one file `<tempDir>/quorum-export-<pid>-<uuid>.<ext>` (`<pid>`: the
 * process that created it), a sliced export one such file per slice (a few at a time); each is
 * deleted in a `finally` whatever happens (success, failed COPY, client disconnect during COPY or
 * streaming). The export engine's DuckDB spill directory is `<tempDir>/quorum-duckdb-spill-<pid>-<rand>/`
 * (api/export/engine.ts), removed when the engine closes.
 *
 * Only a process that dies mid-export (kill -9, OOM) leaves them behind. The sweep at startup
 * removes, at once, export files (and DuckDB `tmp_quorum-export-*` siblings) and spill directories
 * whose pid is not a live process on this machine (`process.kill(pid, 0)` fails with ESRCH);
 * nothing of this process's pid or of a live one goes that way. Export files last modified more
 * than an hour ago are removed whatever their pid (or none: `quorum-export-<uuid>.<ext>` of older
 * versions), which also catches a dead process's files whose pid has since been reused. Nothing
 * that does not match these names is touched.
 */
import { randomUUID } from 'node:crypto';
import { lstat, readdir, rm } from 'node:fs/promises';
import path from 'node:path';
import type { Logger } from 'pino';

export const EXPORT_FILE_PREFIX = 'quorum-export-';
const UUID = '[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}';
/** An export file (or DuckDB's `tmp_` sibling): group 1 is the creating pid (absent in old names). */
const EXPORT_FILE_PATTERN = new RegExp(`^(?:tmp_)?quorum-export-(?:([1-9][0-9]{0,9})-)?${UUID}\\.[a-z]{1,10}$`);
/** The export engine's DuckDB spill directory (api/export/engine.ts): group 1 is the creating pid. */
const SPILL_DIR_PATTERN = /^quorum-duckdb-spill-([1-9][0-9]{0,9})-[0-9a-z]*$/;

/** Stale files are those last modified more than this long ago (1 hour). */
export const STALE_AFTER_MS = 60 * 60 * 1000;

/** A fresh export file path in `dir` with extension `ext` (from the encoder table, not input). */
export function newExportFile(dir: string, ext: string): string {
  if (!/^[a-z]{1,10}$/.test(ext)) throw new Error(`invalid export extension ${JSON.stringify(ext)}`);
  return path.join(dir, `${EXPORT_FILE_PREFIX}${process.pid}-${randomUUID()}.${ext}`);
}

/**
 * Whether `pid` is a running process on this machine: signal 0 checks without sending anything.
 * ESRCH: no such process; EPERM: it exists but belongs to another user. Any other failure counts as
 * alive (nothing is removed on a doubt).
 */
export function isProcessAlive(pid: number): boolean {
  if (!Number.isSafeInteger(pid) || pid <= 0) return true; // 0 and negatives name process groups
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code !== 'ESRCH';
  }
}

/** Deletes `file` if it exists; never throws (a failure is logged). */
export async function removeExportFile(file: string, logger?: Logger): Promise<void> {
  try {
    await rm(file, { force: true });
  } catch (err) {
    logger?.warn({ err, file }, 'could not delete an export temp file');
  }
}

/** Removes the directory `dir` and its contents; never throws (a failure is logged). */
async function removeSpillDir(dir: string, logger?: Logger): Promise<boolean> {
  try {
    await rm(dir, { recursive: true, force: true });
    return true;
  } catch (err) {
    logger?.warn({ err, dir }, 'could not delete a stale export spill directory');
    return false;
  }
}

/**
 * The startup sweep of `dir` (see the top of this file): removes export files and spill directories
 * of dead processes, and export files older than `maxAgeMs` (default one hour). Resolves to the
 * number of entries removed; a missing directory removes nothing.
 */
export async function sweepStaleExports(
  dir: string,
  opts: { maxAgeMs?: number; now?: number; logger?: Logger } = {},
): Promise<number> {
  const maxAge = opts.maxAgeMs ?? STALE_AFTER_MS;
  const now = opts.now ?? Date.now();
  const known = new Map<number, boolean>();
  /** Whether `pid` is a process that has died: never true of ours or of a live one. */
  const dead = (pid: number): boolean => {
    if (pid === process.pid) return false;
    let alive = known.get(pid);
    if (alive === undefined) known.set(pid, (alive = isProcessAlive(pid)));
    return !alive;
  };
  let names: string[];
  try {
    names = await readdir(dir);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return 0;
    throw err;
  }
  let files = 0;
  let spillDirs = 0;
  for (const name of names) {
    const file = EXPORT_FILE_PATTERN.exec(name);
    const spill = file ? null : SPILL_DIR_PATTERN.exec(name);
    if (!file && !spill) continue;
    const entry = path.join(dir, name);
    const st = await lstat(entry).catch(() => null);
    if (file) {
      if (!st?.isFile()) continue;
      const pid = file[1] === undefined ? null : Number(file[1]);
      if (now - st.mtimeMs <= maxAge && (pid === null || !dead(pid))) continue;
      await removeExportFile(entry, opts.logger);
      files++;
    } else if (spill && st?.isDirectory() && dead(Number(spill[1]))) {
      if (await removeSpillDir(entry, opts.logger)) spillDirs++;
    }
  }
  if (files + spillDirs > 0) opts.logger?.info({ dir, files, spillDirs }, 'removed stale export temp files');
  return files + spillDirs;
}
