/**
 * The run lock: never two pipeline runs (or syncs) at once, also across processes and across
 * containers that share a data dir.
 *
 * `run.lock` is created exclusively and holds the owner's pid, host, pid namespace, start time,
 * run id and a random token. While it holds the lock, the owner touches the file every
 * LOCK_HEARTBEAT_MS: the file's mtime is the lock's heartbeat.
 *
 * A lock found in place is stale, and taken over, when:
 *  - its heartbeat stopped: the file was not touched for LOCK_STALE_MS, whoever wrote it. This is
 *    the one test that works for a lock written on another host (a data dir shared by containers
 *    with other hostnames, or the lock of a container that was recreated), whose pid means
 *    nothing here. Except a lock with no token, written
 *    in this pid space by a version before heartbeats (which never touches it): only the next
 *    test judges it, so an older version's run still going during an upgrade keeps its lock;
 *  - it is empty or unreadable and was not touched for UNWRITTEN_LOCK_STALE_MS: its holder writes
 *    it right after creating it, so it is one killed in between (QA: a SIGKILL there blocked every
 *    run for 3 minutes, "another run is in progress (pid -1, since unknown)");
 *  - it was written in this pid space (same hostname and pid namespace) by a process that no
 *    longer exists; for a lock with no token, also when its pid now names a process started after
 *    the lock was written (the pid reused after a container restart or a reboot);
 *  - it names this very process, which does not hold it: a container killed mid-run and restarted
 *    gets the same pid again (PID 1, typically), and its own pid is always "alive". A process
 *    knows which locks it holds (the token), so one run still excludes another in the same
 *    process (the scheduler of `quorum start`).
 * Takeover moves the stale file aside and checks it was the one judged stale, so two processes
 * taking over the same stale lock cannot both win.
 *
 * `server.lock` follows the same rules for the API server: one `quorum serve`/`start` per data dir,
 * and `import.lock` for the imports: one at a time per data dir.
 */
import { randomUUID } from 'node:crypto';
import { closeSync, linkSync, mkdirSync, openSync, readFileSync, readlinkSync, renameSync, rmSync, statSync, utimesSync } from 'node:fs';
import { hostname } from 'node:os';
import { writeAllSync } from '../fs/durable.ts';
import { CLOCK_TICKS_PER_S, procStatFields } from '../fs/proc-stat.ts';
import { importLockFile, lockFile, serverLockFile } from './layout.ts';

/** How often the holder touches the lock file (its heartbeat). */
export const LOCK_HEARTBEAT_MS = 15_000;
/**
 * A lock untouched for this long has lost its holder: twelve missed heartbeats, far more than a
 * busy event loop delays a timer. Hosts sharing a data dir need clocks within this of each other.
 */
export const LOCK_STALE_MS = 180_000;
/** A lock naming our own pid from another pid namespace is stale after three missed heartbeats. */
export const SAME_PID_STALE_MS = 3 * LOCK_HEARTBEAT_MS;
/**
 * An empty or unreadable lock untouched for this long is stale: its holder writes it in the same
 * breath as it creates it (tryCreate), so one still empty after a heartbeat's time lost its holder
 * in between (a kill, a crash).
 */
export const UNWRITTEN_LOCK_STALE_MS = LOCK_HEARTBEAT_MS;

/** What a lock file records about its holder (older locks lack the optional fields). */
export interface LockHolder {
  pid: number;
  started_at: string;
  run_id?: string;
  host?: string;
  /** The holder's pid namespace (Linux `/proc/self/ns/pid`): pids compare only within one. */
  pid_ns?: string | null;
  /** Random per acquisition: tells this process's own locks from a previous incarnation's. */
  token?: string;
}

/** The holder of a lock, described for a message: pid, host, since when, its last heartbeat. */
function describeHolder(holder: LockHolder, heartbeatAgeS: number | null): string {
  if (holder.pid === UNKNOWN_HOLDER.pid) {
    const age = heartbeatAgeS === null ? '' : `, made ${heartbeatAgeS}s ago`;
    return `the lock file is empty or unreadable${age}: a process killed as it took the lock leaves it so; taken over ${UNWRITTEN_LOCK_STALE_MS / 1000}s after it was made`;
  }
  const where = holder.host && holder.host !== hostname() ? ` on host ${holder.host}` : '';
  const beat =
    holder.token === undefined && samePidSpace(holder)
      ? '; written by an older version, which keeps no heartbeat: held while that process lives'
      : heartbeatAgeS === null
        ? ''
        : `; last heartbeat ${heartbeatAgeS}s ago, taken over after ${LOCK_STALE_MS / 1000}s without one`;
  return `pid ${holder.pid}${where}, since ${holder.started_at}${beat}`;
}

/** A lock another process holds (the CLI exits 75, "try again later"). */
export class LockHeldError extends Error {
  constructor(
    message: string,
    readonly holder: LockHolder,
    /** Seconds since the holder's last heartbeat (the lock file's mtime), when known. */
    readonly heartbeatAgeS: number | null,
  ) {
    super(message);
    this.name = 'LockHeldError';
  }
}

export class RunLockedError extends LockHeldError {
  constructor(holder: LockHolder, heartbeatAgeS: number | null = null) {
    super(`another run is in progress (${describeHolder(holder, heartbeatAgeS)})`, holder, heartbeatAgeS);
    this.name = 'RunLockedError';
  }
}

/**
 * Another API server has the data directory open (`server.lock`). Two would both replay and deliver
 * the webhook queue, append to one journal (one's compaction renames a new file over the one the
 * other keeps appending to) and keep usage counters and the probability spend apart.
 */
export class ServerLockedError extends LockHeldError {
  constructor(holder: LockHolder, heartbeatAgeS: number | null = null, url: string | null = null) {
    super(
      `another server has this data directory open (${describeHolder(holder, heartbeatAgeS)}${url ? `, at ${url}` : ''}): ` +
        'run one server per data directory (two would both deliver every webhook and count usage apart); stop it first, or serve another directory',
      holder,
      heartbeatAgeS,
    );
    this.name = 'ServerLockedError';
  }
}

/** Another import is writing into the data directory (`import.lock`). */
export class ImportLockedError extends LockHeldError {
  constructor(holder: LockHolder, heartbeatAgeS: number | null = null) {
    super(`another import is in progress (${describeHolder(holder, heartbeatAgeS)}): run one import at a time per data directory, then this one again`, holder, heartbeatAgeS);
    this.name = 'ImportLockedError';
  }
}

/**
 * The run lock was taken over while this run was still going: its process was paused past
 * LOCK_STALE_MS (Ctrl-Z, a paused container, a suspended VM on a shared data dir) and another
 * process judged the lock stale. The run must not publish: the new holder's run publishes.
 */
export class RunLockLostError extends Error {
  /** `consequence`: what the holder does now (a run does not publish; a sync writes nothing more). */
  constructor(
    readonly runId: string,
    consequence = 'not publishing (its forecasts are in the warehouse, and the next run scores them)',
    holder = 'run',
  ) {
    super(
      `${holder} ${runId} lost the run lock: the lock file no longer names it (taken over by another process while this one was paused or ` +
        `stalled for more than ${LOCK_STALE_MS / 1000}s without a heartbeat, or removed); ${consequence}`,
    );
    this.name = 'RunLockLostError';
  }

  /** A sync's: it stops before its next write (what it wrote before stays; the next sync brings the rest). */
  static forSync(runId: string): RunLockLostError {
    return new RunLockLostError(runId, 'writing nothing more (the rows it wrote before stay; the next sync brings the rest)', 'sync');
  }
}

/** A lock's release function; `held()`: whether the lock file is still this acquisition's (not released, not taken over). */
export type LockRelease = (() => void) & { held(): boolean };

/** The holder of a lock file that names none (empty or unreadable). */
const UNKNOWN_HOLDER: LockHolder = { pid: -1, started_at: 'unknown' };

/** Tokens of the locks this process holds now. */
const heldTokens = new Set<string>();

/**
 * Whether a process of this pid space runs `pid`. A zombie (exited, not yet reaped by a parent
 * that does not reap, e.g. a shell as a container's PID 1) still answers signal 0 but holds
 * nothing: Linux's /proc/<pid>/stat says so (state Z, or X while being reaped).
 */
export function processAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM'; // exists, owned by someone else
  }
  const stat = procStatFields(pid);
  // no /proc to ask (or it exited this instant): signal 0 said it exists
  return stat === null || !/^[ZX]/.test(stat[0]!);
}

/** This process's pid namespace (Linux), or null where there is none to read. */
function pidNamespace(): string | null {
  try {
    return readlinkSync('/proc/self/ns/pid');
  } catch {
    return null;
  }
}

/**
 * Whether the holder's pid names a process we can check: same hostname and the same pid
 * namespace (a lock that does not record its namespace, or a system without them, is taken as
 * the same, as before namespaces were recorded).
 */
function samePidSpace(holder: LockHolder): boolean {
  if (holder.host !== hostname()) return false;
  const ours = pidNamespace();
  return holder.pid_ns == null || ours === null || holder.pid_ns === ours;
}

function parseHolder(raw: string): LockHolder | null {
  try {
    const h = JSON.parse(raw) as LockHolder;
    return h && typeof h === 'object' && Number.isInteger(h.pid) ? h : null;
  } catch {
    return null;
  }
}

/** The lock file as found: its exact text, the holder it names (null: unreadable) and its heartbeat. */
function inspect(file: string): { raw: string; holder: LockHolder | null; mtimeMs: number } | null {
  try {
    const mtimeMs = statSync(file).mtimeMs;
    const raw = readFileSync(file, 'utf8');
    return { raw, holder: parseHolder(raw), mtimeMs };
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return null;
    throw err;
  }
}

/** Whether the lock found is stale (see the module doc); `now` in ms. */
function isStale(found: { holder: LockHolder | null; mtimeMs: number }, now: number): boolean {
  const holder = found.holder;
  // A lock without a token was written by a version before heartbeats, which never touches it:
  // its age says nothing about its holder. In our pid space its pid does (QA upgrade: during a
  // rolling upgrade an older version's run, still going after 3 minutes, had its lock taken over,
  // and the two ran at once); written elsewhere, the age is all there is, as for any lock.
  const unbeating = holder !== null && holder.token === undefined && samePidSpace(holder);
  // A heartbeat in the future (clocks apart) counts as fresh.
  if (!unbeating && now - found.mtimeMs > LOCK_STALE_MS) return true;
  // Unreadable: being written this instant, or its holder was killed between creating and writing
  // it (tryCreate does both at once): stale once it stayed so for a heartbeat's time.
  if (!holder) return now - found.mtimeMs > UNWRITTEN_LOCK_STALE_MS;
  if (!samePidSpace(holder)) {
    // Our own pid and host in another pid namespace: a container restarted mid-run (PID 1 again,
    // in a new namespace), or another live container on the host network. A live holder beats
    // every 15 s, so three missed beats decide, not twelve (QA: a killed server's restart in a
    // container was refused for 3 minutes).
    return holder.host === hostname() && holder.pid === process.pid && now - found.mtimeMs > SAME_PID_STALE_MS;
  }
  if (holder.pid === process.pid) return !(holder.token !== undefined && heldTokens.has(holder.token));
  if (!processAlive(holder.pid)) return true;
  // An older version's lock (no heartbeat to go stale) whose pid now names a process started
  // after the lock was written: the pid was reused (a container restarted, or a host rebooted,
  // after that version was killed mid-run), and its holder is gone.
  return unbeating && pidReusedSince(holder.pid, Date.parse(holder.started_at) || found.mtimeMs);
}

/**
 * Whether a holder recorded by a version that takes no lock (no token, no heartbeat: the
 * `server.json` of a server older than `server.lock`) still runs: in this pid space, its process
 * lives and did not start after the record was written (its pid reused). This process, or one
 * recorded in another pid space (its pid cannot be checked from here), is not such a holder.
 */
export function unlockedHolderAlive(holder: LockHolder): boolean {
  if (!samePidSpace(holder) || holder.pid === process.pid || !processAlive(holder.pid)) return false;
  const since = Date.parse(holder.started_at);
  return Number.isFinite(since) && !pidReusedSince(holder.pid, since);
}

/**
 * Whether the process now running `pid` started after `sinceMs` (more than 2 s after: the boot
 * time is read to the second), by its start time in /proc/<pid>/stat and the boot time in
 * /proc/stat; false where either cannot be read.
 */
function pidReusedSince(pid: number, sinceMs: number): boolean {
  try {
    const startTicks = Number(procStatFields(pid)?.[19]);
    const btime = Number(/^btime (\d+)$/m.exec(readFileSync('/proc/stat', 'utf8'))?.[1]);
    if (!Number.isFinite(startTicks) || !Number.isFinite(btime) || btime <= 0) return false;
    return btime * 1000 + (startTicks * 1000) / CLOCK_TICKS_PER_S > sinceMs + 2000;
  } catch {
    return false;
  }
}

/**
 * Removes the stale lock whose text was `judged`, unless another process replaced it meanwhile.
 * Returns false when the file in place is no longer the stale one (left in place, or put back when
 * it was replaced between the reading and the move).
 */
export function takeOver(file: string, judged: string): boolean {
  // Read again first: a lock written since (another process took the stale one over first) is
  // left in place, never moved: moved aside and back, the path was free meanwhile, a third process
  // took it, the link back failed and the live lock was removed (QA review, as in fs/file-lock.ts).
  try {
    if (readFileSync(file, 'utf8') !== judged) return false;
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return true; // already removed: just try again
    throw err;
  }
  const aside = `${file}.stale-${process.pid}-${randomUUID()}`;
  try {
    renameSync(file, aside);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return true; // already removed: just try again
    throw err;
  }
  let moved: string | null = null;
  try {
    moved = readFileSync(aside, 'utf8');
  } catch {
    // unreadable now: treat as not the one judged
  }
  if (moved !== judged) {
    // Someone took the stale lock over first and wrote a live one: restore it (never overwriting).
    try {
      linkSync(aside, file);
    } catch {
      // a third lock is already in place: that one stands
    }
  }
  rmSync(aside, { force: true });
  return moved === judged;
}

/** Touches the lock every `everyMs` while this acquisition still owns it. */
function startHeartbeat(file: string, token: string, everyMs: number): NodeJS.Timeout {
  const timer = setInterval(() => {
    try {
      if (parseHolder(readFileSync(file, 'utf8'))?.token !== token) {
        clearInterval(timer); // taken over (we were stalled for minutes): no longer ours to refresh
        return;
      }
      const now = new Date();
      utimesSync(file, now, now);
    } catch {
      // a missed beat; the next one tries again
    }
  }, everyMs);
  timer.unref();
  return timer;
}

/** Creates the lock file exclusively; null when one exists. */
function tryCreate(file: string, runId: string | undefined, heartbeatMs: number): LockRelease | null {
  let fd: number;
  try {
    fd = openSync(file, 'wx');
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'EEXIST') return null;
    throw err;
  }
  const token = randomUUID();
  const body: LockHolder = {
    pid: process.pid,
    host: hostname(),
    pid_ns: pidNamespace(),
    started_at: new Date().toISOString(),
    run_id: runId,
    token,
  };
  try {
    writeAllSync(fd, JSON.stringify(body));
  } catch (err) {
    // Ours, made this instant (O_EXCL) and never held: removed, so a write that failed (ENOSPC on a
    // full disk) does not leave an empty lock that refuses the next run (QA review: for 15 s, saying
    // a process was killed as it took the lock).
    closeSync(fd);
    rmSync(file, { force: true });
    throw err;
  }
  closeSync(fd);
  heldTokens.add(token);
  const heartbeat = startHeartbeat(file, token, heartbeatMs);
  let released = false;
  const release = () => {
    if (released) return;
    released = true;
    clearInterval(heartbeat);
    heldTokens.delete(token);
    // Only our own lock: one taken over from us belongs to its new holder.
    if (inspect(file)?.holder?.token === token) rmSync(file, { force: true });
  };
  return Object.assign(release, { held: () => !released && inspect(file)?.holder?.token === token });
}

/**
 * Takes the run lock or throws RunLockedError. Returns the release function. `heartbeatMs`
 * (default LOCK_HEARTBEAT_MS) is for tests.
 */
export function acquireRunLock(root: string, runId?: string, opts: { heartbeatMs?: number } = {}): LockRelease {
  mkdirSync(root, { recursive: true });
  return acquireLock(lockFile(root), runId, opts.heartbeatMs ?? LOCK_HEARTBEAT_MS, (holder, ageS) => new RunLockedError(holder, ageS));
}

/** Takes the import lock of `root` (ImportLockedError naming the holder); returns its release. */
export function acquireImportLock(root: string, opts: { heartbeatMs?: number } = {}): () => void {
  mkdirSync(root, { recursive: true });
  return acquireLock(importLockFile(root), undefined, opts.heartbeatMs ?? LOCK_HEARTBEAT_MS, (holder, ageS) => new ImportLockedError(holder, ageS));
}

/**
 * `body` under the import lock of `root` (ImportLockedError, exit 75, while another import holds
 * it). An import's idempotence (keys already stored are skipped) holds only when no other import
 * adds the same keys between its read and its write (QA: two `quorum import claims cbo` at once
 * each wrote all 694 claims, and every track record counted them twice; two ForecastBench imports
 * wrote every question, price and outcome twice). Runs and syncs do not wait for it: an import
 * may still write while a run derives (its views are pinned: raw-views.ts).
 */
export async function withImportLock<T>(root: string, body: () => Promise<T>): Promise<T> {
  const release = acquireImportLock(root);
  try {
    return await body();
  } finally {
    release();
  }
}

/**
 * Whether `root`'s run lock is held now: a lock file in place that is not stale (by the rules
 * above; one this process holds counts). Nothing is taken or changed.
 */
export function runLockHeld(root: string): boolean {
  const found = inspect(lockFile(root));
  return found !== null && !isStale(found, Date.now());
}

/**
 * Takes the server lock of `root` (`server.lock`: one API server per data directory, the same
 * rules as the run lock) or throws ServerLockedError naming the holder (and `url()`, where it
 * listens, when known). Returns the release function.
 */
export function acquireServerLock(root: string, opts: { heartbeatMs?: number; url?: () => string | null } = {}): () => void {
  mkdirSync(root, { recursive: true });
  return acquireLock(serverLockFile(root), undefined, opts.heartbeatMs ?? LOCK_HEARTBEAT_MS, (holder, ageS) => new ServerLockedError(holder, ageS, opts.url?.() ?? null));
}

function acquireLock(file: string, runId: string | undefined, heartbeatMs: number, held: (holder: LockHolder, ageS: number | null) => LockHeldError): LockRelease {
  let found: ReturnType<typeof inspect> = null;
  for (let attempt = 0; attempt < 3; attempt++) {
    const release = tryCreate(file, runId, heartbeatMs);
    if (release) return release;
    found = inspect(file);
    if (!found) continue; // released in between
    if (!isStale(found, Date.now()) || !takeOver(file, found.raw)) break;
  }
  // The lock in place now (another process may have taken a stale one over first).
  const last = inspect(file) ?? found;
  const ageS = last ? Math.max(0, Math.round((Date.now() - last.mtimeMs) / 1000)) : null;
  throw held(last?.holder ?? UNKNOWN_HOLDER, ageS);
}
