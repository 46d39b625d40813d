/**
 * Issue 9 point 1 end to end: `quorum sync` (the real CLI, in its own process) with Kalshi's base
 * URL on a listener that accepts the connection and never answers, and a short venue deadline
 * (QUORUM_VENUE_TIMEOUT_MS). Kalshi must be given up within the deadline + 5 s of that request
 * and the process end right after, Kalshi reported failed with a timeout (Manifold, answering
 * from a loopback replay, is synced), the run lock released. The process runs with a full garbage collection every 300 ms
 * (test/net/gc-preload.mjs), so a deadline that can be collected before it fires
 * (AbortSignal.timeout inside AbortSignal.any, nodejs/node#57736) is collected here, not by chance.
 */
import { spawn } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CLI, REPO } from '../helpers/cli.ts';
import { json, startReplayServer, type ReplayServer } from '../helpers/replay-server.ts';
import { tempDir } from '../helpers/temp-dir.ts';
import { lockFile } from '../../pipeline/warehouse/layout.ts';
import { startBadServer, type BadServer } from './bad-servers.ts';

const VENUE_DEADLINE_MS = 1500;
const fixture = JSON.parse(readFileSync(new URL('../fixtures/venues/manifold/markets-page-1.json', import.meta.url), 'utf8'));
const tmp = tempDir('quorum-sync-deadline-');
const questionsDir = tempDir('quorum-sync-deadline-questions-');
let silent: BadServer;
let manifold: ReplayServer;

beforeAll(async () => {
  silent = await startBadServer('silent');
  manifold = await startReplayServer([
    { path: '/v0/markets', query: { before: null }, responses: [json([{ ...fixture[0], id: 'DeadlineOpen01', closeTime: Date.now() + 365 * 86_400_000 }])] },
    { path: '/v0/markets', responses: [json([])] },
  ]);
});
afterAll(async () => {
  await silent?.close();
  await manifold?.close();
  tmp.cleanup();
  questionsDir.cleanup();
});

/** Runs `quorum sync` in its own process; resolves with its output, exit time and status. */
function sync(env: Record<string, string>, killAfterMs: number, onStart: (child: ReturnType<typeof spawn>) => void = () => {}) {
  const preload = new URL('./gc-preload.mjs', import.meta.url).href;
  const child = spawn(process.execPath, ['--expose-gc', '--import', preload, CLI, 'sync'], {
    cwd: REPO,
    env: { ...process.env, LOG_LEVEL: 'warn', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (d) => (stdout += d));
  child.stderr.on('data', (d) => (stderr += d));
  const killer = setTimeout(() => child.kill('SIGKILL'), killAfterMs);
  onStart(child);
  return new Promise<{ status: number | null; signal: NodeJS.Signals | null; stdout: string; stderr: string; endedAt: number }>((resolve) => {
    child.on('close', (status, signal) => {
      clearTimeout(killer);
      resolve({ status, signal, stdout, stderr, endedAt: Date.now() });
    });
  });
}

/** Manifold from its replay, Kalshi on the listener that never answers, with a venue deadline. */
function venuesEnv(dataDir: string, venueTimeoutMs: number): Record<string, string> {
  return {
    QUORUM_DATA_DIR: dataDir,
    QUORUM_VENUES: 'manifold,kalshi',
    QUORUM_MANIFOLD_URL: `${manifold.url}/v0`,
    QUORUM_KALSHI_URL: `${silent.url}/trade-api/v2`,
    QUORUM_MANIFOLD_RPS: '1000',
    QUORUM_KALSHI_RPS: '1000',
    QUORUM_VENUE_TIMEOUT_MS: String(venueTimeoutMs),
    // No question files: nothing after the venues but their writes.
    QUORUM_QUESTIONS_DIR: questionsDir.dir,
  };
}

describe('quorum sync against a venue that never answers', () => {
  it('ends within the venue deadline + 5 s, reports the venue failed (timeout), keeps the other venue, releases the lock', async () => {
    let firstAccept = 0;
    const poll = setInterval(() => {
      if (!firstAccept && silent.accepted() > 0) firstAccept = Date.now();
    }, 5);
    const r = await sync(
      venuesEnv(tmp.dir, VENUE_DEADLINE_MS),
      // A hang is cut here (undici alone would wait 300 s), far past what the assertions allow.
      90_000,
    );
    clearInterval(poll);
    expect(r.signal, `killed: the sync hung\n${r.stderr}`).toBeNull();
    expect(firstAccept, 'Kalshi was asked').toBeGreaterThan(0);
    // The venue gave up within its deadline + 5 s of its request reaching the listener: the time
    // of the process's own log line saying Kalshi failed (pino's epoch ms, same clock).
    const failedAt = r.stderr
      .split('\n')
      .filter((l) => l.startsWith('{'))
      .map((l) => JSON.parse(l) as { time: number; level: number; venue?: string; msg?: string })
      .find((l) => l.level >= 40 && l.venue === 'kalshi' && /fail/.test(l.msg ?? ''))?.time;
    expect(failedAt, r.stderr).toBeDefined();
    expect(failedAt! - firstAccept).toBeLessThanOrEqual(VENUE_DEADLINE_MS + 5000);
    // And the whole process ended soon after (the rest is writing the other venue's rows and
    // closing DuckDB; the slack is for a CPU shared with other test workers, not for any wait).
    expect(r.endedAt - firstAccept).toBeLessThanOrEqual(VENUE_DEADLINE_MS + 10_000);

    const report = JSON.parse(r.stdout.trim().split('\n').pop()!) as { sources: { source: string; ok: boolean; error: string | null; written: Record<string, number> }[] };
    const by = Object.fromEntries(report.sources.map((s) => [s.source, s]));
    expect(by['venue:kalshi'], r.stderr).toMatchObject({ ok: false });
    expect(by['venue:kalshi']!.error).toMatch(/timeout/);
    expect(by['venue:manifold']).toMatchObject({ ok: true });
    expect(by['venue:manifold']!.written.questions).toBe(1);
    expect(existsSync(lockFile(tmp.dir)), 'run lock released').toBe(false);
    // The process closed its connection to the listener before exiting (or by exiting).
    expect(await silent.drained(5000)).toBe(true);
  });
});

describe('quorum sync stopped by Ctrl-C', () => {
  it('says so at once, cancels the request in flight, writes and reports what came before, releases the lock (QA: not acknowledged)', async () => {
    const dir = tempDir('quorum-sync-sigint-');
    const acceptedBefore = silent.accepted();
    const manifoldDoneBefore = manifold.hits(0);
    let signalledAt = 0;
    try {
      const r = await sync(
        venuesEnv(dir.dir, 120_000), // only the signal ends Kalshi's request
        90_000,
        (child) => {
          // Once Kalshi's request hangs and Manifold has had its page (one market: its only one; its rows are then in
          // memory, to be written): Ctrl-C.
          const poll = setInterval(() => {
            if (silent.accepted() > acceptedBefore && manifold.hits(0) > manifoldDoneBefore) {
              clearInterval(poll);
              setTimeout(() => {
                signalledAt = Date.now();
                child.kill('SIGINT');
              }, 300);
            }
          }, 5);
          child.on('close', () => clearInterval(poll));
        },
      );
      expect(signalledAt, 'Kalshi was asked').toBeGreaterThan(0);
      expect(r.signal, `killed: the sync did not stop\n${r.stderr}`).toBeNull();
      expect(r.endedAt - signalledAt).toBeLessThanOrEqual(15_000);
      const lines = r.stderr.split('\n').filter((l) => l.startsWith('{')).map((l) => JSON.parse(l) as { msg?: string; signal?: string });
      expect(lines.find((l) => /^stopping the sync/.test(l.msg ?? ''))?.signal, r.stderr).toBe('SIGINT');
      const report = JSON.parse(r.stdout.trim().split('\n').pop()!) as { status: string; sources: { source: string; ok: boolean; error: string | null; written: Record<string, number> }[] };
      const by = Object.fromEntries(report.sources.map((s) => [s.source, s]));
      expect(by['venue:kalshi']).toMatchObject({ ok: false });
      expect(by['venue:kalshi']!.error).toMatch(/stopped by SIGINT/);
      expect(by['venue:manifold']).toMatchObject({ ok: true });
      expect(by['venue:manifold']!.written.questions).toBe(1);
      expect(r.status).toBe(3); // some sources failed, the rest is written
      expect(existsSync(lockFile(dir.dir)), 'run lock released').toBe(false);
    } finally {
      dir.cleanup();
    }
  });
});
