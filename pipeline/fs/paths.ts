/**
 * Where Quorum's directories are. The bundled data's defaults (the warehouse, the sample, the
 * questions, evidence and structure directories) are this checkout's `data/...`, whatever the
 * current directory: QA ran `quorum start` from another directory and got a warehouse there and
 * "questions_market.jsonl: required ForecastBench file is missing", naming no variable. A path an
 * operator sets resolves against the current directory, as a shell's does.
 */
import { accessSync, constants, existsSync, lstatSync, readlinkSync, statfsSync, statSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

/** The checkout (installation) root. */
export const CHECKOUT_DIR = resolve(dirname(fileURLToPath(import.meta.url)), '..', '..');

/** `data/<parts>` of this checkout. */
export function bundledPath(...parts: string[]): string {
  return resolve(CHECKOUT_DIR, 'data', ...parts);
}

/** The nearest part of `path` that exists (the path itself when it does), resolved. */
export function nearestExisting(path: string): string {
  let existing = resolve(path);
  while (!existsSync(existing) && dirname(existing) !== existing) existing = dirname(existing);
  return existing;
}

/**
 * Whether this process may write `path`, or make it: null when it may, else the nearest part of it
 * that exists (the one it would be made in) and the error code of the write check. Callers say
 * which setting names the path (QUORUM_DATA_DIR) and what to do.
 */
export function unwritable(path: string): { existing: string; code: string } | null {
  const existing = nearestExisting(path);
  // procfs passes the write check for root, but no file or directory can be made in it: mkdir
  // answers ENOENT, which sends Node's recursive mkdir round for ever (QA: QUORUM_DATA_DIR=/proc/x
  // quorum run spun at full CPU, never exiting). Answered as mkdir answers.
  if (onProcfs(existing)) return { existing, code: 'ENOENT' };
  try {
    accessSync(existing, constants.W_OK);
    return null;
  } catch (err) {
    return { existing, code: (err as NodeJS.ErrnoException).code ?? 'error' };
  }
}

/**
 * The part of `path` that is a symbolic link to nothing (its target, or a part of it, does not
 * exist), or null. existsSync follows links, so nearestExisting walks past such a link to its
 * parent, where the directory looks makeable; making it then fails with ENOENT (a data directory
 * symlinked to a volume that is not mounted: QA, every command stopped with "ENOENT: no such file
 * or directory, mkdir '<dir>'", naming no variable).
 */
function danglingLink(path: string): string | null {
  for (let part = resolve(path); !existsSync(part) && dirname(part) !== part; part = dirname(part)) {
    let link = false;
    try {
      link = lstatSync(part, { throwIfNoEntry: false })?.isSymbolicLink() ?? false;
    } catch {
      // ENOTDIR: a file on the way, which directoryProblem names
    }
    if (link) return part;
  }
  return null;
}

/** The magic number statfs(2) gives for procfs (linux/magic.h PROC_SUPER_MAGIC). */
const PROC_SUPER_MAGIC = 0x9fa0;

/** Whether `existing` (a path that exists) is on procfs. */
function onProcfs(existing: string): boolean {
  try {
    return statfsSync(existing).type === PROC_SUPER_MAGIC;
  } catch {
    return false; // statfs unsupported here: the write check decides
  }
}

/**
 * Why `path` cannot be used as a directory (it, or the nearest part of it that exists, is not
 * one, or a part of it is a symbolic link to nothing), or null when it is one or can be made. A
 * missing directory is not a problem here.
 */
export function directoryProblem(path: string): string | null {
  const link = danglingLink(path);
  if (link) {
    const to = `a symbolic link to ${readlinkSync(link)}, which does not exist`;
    return link === resolve(path) ? `${path} is ${to}` : `${link} is ${to}, so ${path} cannot be made`;
  }
  const existing = nearestExisting(path);
  if (statSync(existing, { throwIfNoEntry: false })?.isDirectory() ?? true) return null;
  return existing === resolve(path) ? `${path} is a file, not a directory` : `${existing} is a file, so ${path} cannot be a directory`;
}

/** Why `path` is no existing directory (missing, or not a directory), or null. */
export function existingDirectoryProblem(path: string): string | null {
  const st = statSync(path, { throwIfNoEntry: false });
  if (!st) return `${path} does not exist`;
  return st.isDirectory() ? null : `${path} is a file, not a directory`;
}
