/**
 * The export temp-file lifecycle: names, deletion, and the startup sweep of files a crashed process
 * left behind.
 *
 * A whole-file export writes one file `<tempDir>/quorum-export-<uuid>.<ext>`, a sliced export one
 * such file per slice (a few at a time); each is deleted in a `finally` whatever happens (success,
 * failed COPY, client disconnect during COPY or streaming).
 * Only a process that dies mid-export leaves one behind: the sweep at startup removes
 * `quorum-export-*` files (and DuckDB `tmp_quorum-export-*` siblings) older than an hour.
 */
import { randomUUID } from 'node:crypto';
import { readdir, rm, stat } from 'node:fs/promises';
import path from 'node:path';
import type { Logger } from 'pino';

export const EXPORT_FILE_PREFIX = 'quorum-export-';
const STALE_PATTERN = /^(?:tmp_)?quorum-export-[0-9a-f-]{36}\.[a-z]{1,10}$/;

/** Stale files are those last modified more than this long ago (1 hour). */
export const STALE_AFTER_MS = 60 * 60 * 1000;

/** A fresh export file path in `dir` with extension `ext` (from the encoder table, not input). */
export function newExportFile(dir: string, ext: string): string {
  if (!/^[a-z]{1,10}$/.test(ext)) throw new Error(`invalid export extension ${JSON.stringify(ext)}`);
  return path.join(dir, `${EXPORT_FILE_PREFIX}${randomUUID()}.${ext}`);
}

/** Deletes `file` if it exists; never throws (a failure is logged). */
export async function removeExportFile(file: string, logger?: Logger): Promise<void> {
  try {
    await rm(file, { force: true });
  } catch (err) {
    logger?.warn({ err, file }, 'could not delete an export temp file');
  }
}

/**
 * Removes export files in `dir` older than `maxAgeMs` (default one hour). Resolves to the number
 * removed; a missing directory removes nothing. Files of running exports are younger than that.
 */
export async function sweepStaleExports(
  dir: string,
  opts: { maxAgeMs?: number; now?: number; logger?: Logger } = {},
): Promise<number> {
  const maxAge = opts.maxAgeMs ?? STALE_AFTER_MS;
  const now = opts.now ?? Date.now();
  let names: string[];
  try {
    names = await readdir(dir);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return 0;
    throw err;
  }
  let removed = 0;
  for (const name of names) {
    if (!STALE_PATTERN.test(name)) continue;
    const file = path.join(dir, name);
    const st = await stat(file).catch(() => null);
    if (!st?.isFile() || now - st.mtimeMs <= maxAge) continue;
    await removeExportFile(file, opts.logger);
    removed++;
  }
  if (removed > 0) opts.logger?.info({ dir, removed }, 'removed stale export temp files');
  return removed;
}
