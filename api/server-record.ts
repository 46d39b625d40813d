/**
 * `<data dir>/server.json`: which server has a data directory open, so `quorum keys` can say
 * whether the directory it just wrote is the one a server reads (issue: a key created in the
 * default directory while the server used another was silently refused).
 *
 * The server writes the file once it listens (temporary file, then rename: a reader never sees
 * half of it) and removes it on graceful shutdown if it still names this server (pid and port:
 * `quorum serve`/`start` hold `server.lock`, one per directory, but a server started in process by
 * startServer takes no lock and may have overwritten it; the last one to start is named). A
 * file left by a killed server is stale: its pid is gone, and readers treat it as no server.
 */
import { mkdirSync, readFileSync, rmSync } from 'node:fs';
import { writeFileAtomicSync } from '../pipeline/fs/durable.ts';
import { processAlive, unlockedHolderAlive } from '../pipeline/warehouse/lock.ts';
import { hostname } from 'node:os';
import { join, resolve } from 'node:path';

export const SERVER_FILE = 'server.json';

export interface ServerRecord {
  pid: number;
  host: string;
  port: number;
  /** Where it listens, as bound (server.address()), e.g. http://0.0.0.0:3000. */
  address: string;
  /** A URL to reach it from this host, e.g. http://127.0.0.1:3000. */
  url: string;
  data_dir: string;
  started_at: string;
}

export function serverRecordFile(dataDir: string): string {
  return join(dataDir, SERVER_FILE);
}

/** Records this process as the server of `dataDir` (atomically). */
export function writeServerRecord(dataDir: string, record: Omit<ServerRecord, 'pid' | 'host' | 'data_dir' | 'started_at'>): ServerRecord {
  const full: ServerRecord = { pid: process.pid, host: hostname(), ...record, data_dir: resolve(dataDir), started_at: new Date().toISOString() };
  mkdirSync(dataDir, { recursive: true }); // an analyst-readable data directory, not the helper's private default
  writeFileAtomicSync(serverRecordFile(dataDir), `${JSON.stringify(full, null, 2)}\n`, 0o644);
  return full;
}

function readRecord(dataDir: string): ServerRecord | null {
  try {
    const r = JSON.parse(readFileSync(serverRecordFile(dataDir), 'utf8')) as Partial<ServerRecord>;
    return Number.isInteger(r.pid) && Number.isInteger(r.port) && typeof r.host === 'string' ? (r as ServerRecord) : null;
  } catch {
    return null; // missing or unreadable: no server is recorded
  }
}

/** Removes the record if it still names this process on `port` (another server's is kept). */
export function removeServerRecord(dataDir: string, port: number): void {
  const r = readRecord(dataDir);
  if (r && r.pid === process.pid && r.port === port && r.host === hostname()) rmSync(serverRecordFile(dataDir), { force: true });
}

export type ServerLookup =
  | { state: 'running'; record: ServerRecord }
  /** Recorded by another host (a shared file system): its pid cannot be checked from here. */
  | { state: 'other-host'; record: ServerRecord }
  | { state: 'stale'; record: ServerRecord }
  | { state: 'none' };

/** Which server, if any, has `dataDir` open. */
export function findServer(dataDir: string): ServerLookup {
  const record = readRecord(dataDir);
  if (!record) return { state: 'none' };
  if (record.host !== hostname()) return { state: 'other-host', record };
  return processAlive(record.pid) ? { state: 'running', record } : { state: 'stale', record };
}

/**
 * A server of a version before `server.lock` that has `dataDir` open: its `server.json` names a
 * live process of this host, started before the record (not a reused pid), other than this one.
 * Such a server takes no lock, so `quorum serve`/`start` holding `server.lock` asks this too (QA
 * upgrade pass: during a rolling upgrade the new version started beside the older server still
 * running, and both delivered every webhook, the same webhook-id twice). null when there is none.
 */
export function unlockedServer(dataDir: string): ServerRecord | null {
  const record = readRecord(dataDir);
  return record && unlockedHolderAlive({ pid: record.pid, host: record.host, started_at: record.started_at }) ? record : null;
}
