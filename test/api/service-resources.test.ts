/**
 * A long-lived `quorum serve` (a process of its own, on port 0) across real publishes (`quorum run`
 * of the bundled sample, then score-only runs) while clients read: lists, exports in CSV, JSON and
 * Parquet, an export the client aborts mid-stream, the event stream opened and closed. Its open
 * file descriptors (/proc/<pid>/fd) do not grow with the publishes, and nothing is left in the
 * export temp directory (no `quorum-export-*` COPY file, no file in DuckDB's spill directory) nor
 * in DuckDB's temp directory under its working directory. Linux only (/proc).
 */
import { type ChildProcess } from 'node:child_process';
import { existsSync, mkdirSync, readdirSync, readlinkSync } from 'node:fs';
import { request } from 'node:http';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createKey } from '../../api/auth/keys.ts';
import { quorum, quorumAsync, quorumProcess, REPO, serveOutcome } from '../helpers/cli.ts';
import { memTempDir } from '../helpers/mem-temp-dir.ts';

/** In memory: the runs' and the key store's fsyncs are nothing this file checks (mem-temp-dir.ts). */
const tmp = memTempDir('quorum-service-resources-');
const dataDir = join(tmp.dir, 'warehouse');
/** The server's TMPDIR: where its exports write their COPY files and DuckDB spills. */
const exportTemp = join(tmp.dir, 'tmp');
const env = { QUORUM_DATA_DIR: dataDir, QUORUM_VENUES: 'none', QUORUM_DUCKDB_THREADS: '1' };
let server: { url: string; child: ChildProcess; closed: Promise<unknown> } | undefined;
let key = '';

/** The open descriptors of process `pid`, by kind (socket, pipe, anon_inode:…, or the file's directory). */
function openFds(pid: number): { total: number; sockets: number; other: string[] } {
  const other: string[] = [];
  let sockets = 0;
  let total = 0;
  for (const fd of readdirSync(`/proc/${pid}/fd`)) {
    let target: string;
    try {
      target = readlinkSync(`/proc/${pid}/fd/${fd}`);
    } catch {
      continue; // closed meanwhile
    }
    total++;
    if (target.startsWith('socket:')) sockets++;
    else other.push(target.startsWith('pipe:') ? 'pipe' : target);
  }
  return { total, sockets, other: other.sort() };
}

/** Every file (not directory) below `dir`, but tsx's compile cache (the test's own loader). */
function filesBelow(dir: string): string[] {
  if (!existsSync(dir)) return [];
  return readdirSync(dir, { recursive: true, withFileTypes: true })
    .filter((e) => e.isFile() && !join(e.parentPath, e.name).includes(`${exportTemp}/tsx-`))
    .map((e) => join(e.parentPath, e.name));
}

/**
 * One GET on a connection of its own (closed at the end, so that the server's socket count says
 * what it holds for requests, not for idle keep-alive connections). `abortAfter`: bytes after which
 * the client destroys the connection (a download cancelled mid-stream).
 */
function getOnce(path: string, abortAfter?: number): Promise<{ status: number; bytes: number; length: number | null; snapshot: string | null; body: string }> {
  return new Promise((resolve, reject) => {
    const req = request(`${server!.url}${path}`, { agent: false, headers: { 'X-API-Key': key } }, (res) => {
      const chunks: Buffer[] = [];
      let bytes = 0;
      const length = res.headers['content-length'] === undefined ? null : Number(res.headers['content-length']);
      const done = () => resolve({ status: res.statusCode!, bytes, length, snapshot: (res.headers['x-snapshot'] as string) ?? null, body: Buffer.concat(chunks).toString('utf8') });
      res.on('data', (c: Buffer) => {
        bytes += c.length;
        if (bytes < 4096) chunks.push(c);
        if (abortAfter !== undefined && bytes >= abortAfter) {
          req.destroy();
          done();
        }
      });
      res.on('end', done);
      res.on('error', () => done());
    });
    req.on('error', (err) => (abortAfter !== undefined ? undefined : reject(err)));
    req.end();
  });
}

/** The event stream opened, its first bytes read, then closed by the client. */
async function streamOpenedAndClosed(): Promise<number> {
  const got = await getOnce('/api/stream/', 1);
  return got.status;
}

/** One round of client load; fails on any 5xx or a failed download. */
async function clientLoad(): Promise<void> {
  const answers = await Promise.all([
    getOnce('/api/predictions/resolved?limit=50'),
    getOnce('/api/predictions/accuracy'),
    getOnce('/api/leaderboard/'),
    getOnce('/api/export/resolved/?output=csv'),
    getOnce('/api/export/scores/?output=json'),
    getOnce('/api/export/predictions/?output=parquet'),
  ]);
  for (const a of answers) expect(a.status, a.body).toBe(200);
  // two exports at a time per key at most: the aborted one and the stream after the others
  const aborted = await getOnce('/api/export/forecasts/?output=jsonl', 64 * 1024);
  expect(aborted.status).toBe(200);
  expect(aborted.length, 'the export is cut mid-stream, not read whole').toBeGreaterThan(aborted.bytes);
  expect(await streamOpenedAndClosed()).toBe(200);
}

/** Waits until the server serves snapshot `id`. */
async function served(id: string): Promise<void> {
  const end = Date.now() + 20_000;
  while (Date.now() < end) {
    const ready = await getOnce('/readyz');
    if (ready.status === 200 && JSON.parse(ready.body).snapshot === id) return;
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error(`the server never served ${id}`);
}

/** Waits for the server to settle after a round (a cancelled export's clean-up, sockets closing), then samples. */
async function settled(pid: number): Promise<ReturnType<typeof openFds>> {
  let last = openFds(pid);
  for (let i = 0; i < 40; i++) {
    await new Promise((r) => setTimeout(r, 100));
    const now = openFds(pid);
    if (now.total === last.total && filesBelow(exportTemp).length === 0) return now;
    last = now;
  }
  return last;
}

beforeAll(async () => {
  mkdirSync(exportTemp, { recursive: true });
  const imported = quorum(['import', 'forecastbench', join(REPO, 'data', 'sample', 'forecastbench')], env);
  expect(imported.status, imported.stderr).toBe(0);
  // forecasts and resolutions after them: resolved predictions and scores to list and export
  const run = quorum(['run', '--as-of', '2025-10-16T00:00:00Z'], env);
  expect(run.status, run.stderr).toBe(0);
  key = createKey(dataDir, { name: 'resources', plan: 'enterprise', scopes: [] }).key;
  const child = quorumProcess(['serve'], { ...env, HOST: '127.0.0.1', PORT: '0', TMPDIR: exportTemp, LOG_LEVEL: 'info' });
  const closed = new Promise((resolve) => child.on('close', resolve));
  const { url, stderr } = await serveOutcome(child);
  if (!url) throw new Error(`quorum serve exited: ${stderr}`);
  server = { url, child, closed };
}, 120_000);

afterAll(async () => {
  if (server) {
    server.child.kill('SIGTERM');
    await server.closed;
  }
  tmp.cleanup();
});

describe.runIf(process.platform === 'linux')('a long-lived server across publishes', () => {
  it('holds no more descriptors and leaves no temp file after four publishes under client load', async () => {
    const pid = server!.child.pid!;
    const duckdbTemp = join(REPO, '.tmp'); // the reader's in-memory DuckDB spills under its working directory
    const duckdbTempBefore = filesBelow(duckdbTemp);
    // One round first: the export instances, the pool's connections and the stream hub open once.
    await clientLoad();
    const before = await settled(pid);
    for (let day = 17; day <= 20; day++) {
      const publish = quorumAsync(['run', '--score-only', '--as-of', `2025-10-${day}T00:00:00Z`], env);
      await clientLoad(); // while the run derives and publishes
      const done = await publish;
      expect(done.status, done.stderr).toBe(0);
      await served(JSON.parse(done.stdout).snapshot as string);
      await clientLoad();
    }
    const after = await settled(pid);
    expect(filesBelow(exportTemp)).toEqual([]);
    expect(filesBelow(duckdbTemp)).toEqual(duckdbTempBefore);
    // the same files and pipes open (log, webhooks store, DuckDB's none); sockets only as many as
    // the listening one and a connection or two still closing
    expect(after.other).toEqual(before.other);
    expect(after.sockets).toBeLessThanOrEqual(before.sockets + 2);
  }, 120_000);
});
