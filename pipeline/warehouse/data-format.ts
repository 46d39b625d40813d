/**
 * The data directory's format marker, `<data dir>/FORMAT` (`{"format": N}`): the newest layout of
 * raw tables, snapshots and state a version writes. A version refuses a directory marked with a
 * newer format than its own (an operator rolling back after an upgrade): it would misread what
 * it does not know and write what the newer version does not expect. Older formats, and
 * directories made before the marker existed (read as format 1), are read as they are: every
 * version reads all the older layouts (raw tables are only ever added to, snapshots are rescored
 * on `quorum start`).
 *
 * DATA_FORMAT goes up when a data directory this version writes would be misread or damaged by
 * the previous version; not for additions older versions ignore safely.
 */
import { existsSync, mkdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { writeFileAtomicSync } from '../fs/durable.ts';

export const DATA_FORMAT = 1;

export function dataFormatFile(dataDir: string): string {
  return join(dataDir, 'FORMAT');
}

/** The directory's format: its marker's, 1 for a directory without one (made before markers). */
export function readDataFormat(dataDir: string): number {
  const file = dataFormatFile(dataDir);
  if (!existsSync(file)) return 1;
  let format: unknown;
  try {
    format = (JSON.parse(readFileSync(file, 'utf8')) as { format?: unknown }).format;
  } catch {
    format = undefined;
  }
  if (!Number.isSafeInteger(format) || (format as number) < 1) {
    throw new Error(`${file} is not a Quorum data format marker (expected {"format": <a positive integer>}); nothing was changed`);
  }
  return format as number;
}

/**
 * Refuses a directory written by a newer version (an Error naming both formats; nothing is
 * touched). With `mark` (the commands that write raw tables or snapshots: import, run, sync,
 * start), a directory that will be written gets this version's marker when it has none or an
 * older one (the directory is made if missing). Every run checks again under the run lock
 * (pipeline/run.ts): a server's scheduled runs, started before a newer version marked the
 * directory, stop there.
 */
export function checkDataFormat(dataDir: string, opts: { mark?: boolean } = {}): void {
  const format = readDataFormat(dataDir);
  if (format > DATA_FORMAT) {
    throw new Error(
      `data directory ${dataDir} was written by a newer version of Quorum (data format ${format}; this version reads formats up to ${DATA_FORMAT}): run that version or a newer one; nothing was changed`,
    );
  }
  if (opts.mark && (format < DATA_FORMAT || !existsSync(dataFormatFile(dataDir)))) {
    mkdirSync(dataDir, { recursive: true }); // as the warehouse makes it (writeFileAtomicSync would make it 0700)
    writeFileAtomicSync(dataFormatFile(dataDir), `${JSON.stringify({ format: DATA_FORMAT })}\n`, 0o644);
  }
}
