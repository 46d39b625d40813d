/**
 * `quorum sync`'s outcome through the real CLI against loopback replays of the venues: the exit
 * code (0 all ok, 3 some failed, 1 all failed), the JSON report alone on stdout (logs on stderr),
 * one log line per failure with no key repeated, and the table on a terminal (run under
 * util-linux `script`, which gives the CLI a pseudo-terminal as stdout).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { spawn, spawnSync } from 'node:child_process';
import { mkdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { CLI, REPO, quorumAsync } from '../helpers/cli.ts';
import { tempDir } from '../helpers/temp-dir.ts';
import { json, startReplayServer, type ReplayServer } from '../helpers/replay-server.ts';
import type { SyncReport } from '../../pipeline/sync.ts';
import { parseLogLines, repeatedKeys } from './log-lines.ts';

const fixture = JSON.parse(readFileSync(new URL('../fixtures/venues/manifold/markets-page-1.json', import.meta.url), 'utf8'));
const open = (id: string) => ({ ...fixture[0], id, closeTime: Date.now() + 365 * 86_400_000 });
const tmp = tempDir('quorum-sync-outcome-');
let manifold: ReplayServer;
let failing: ReplayServer;
let n = 0;

/** Env for one sync into a fresh data dir; `venues` maps a venue to the replay it talks to. */
function env(venues: Partial<Record<'manifold' | 'kalshi', ReplayServer>>, extra: Record<string, string> = {}): Record<string, string> {
  const e: Record<string, string> = { QUORUM_DATA_DIR: join(tmp.dir, `d${n++}`), QUORUM_VENUES: Object.keys(venues).join(','), QUORUM_VENUE_RETRIES: '1', ...extra };
  if (venues.manifold) Object.assign(e, { QUORUM_MANIFOLD_URL: `${venues.manifold.url}/v0`, QUORUM_MANIFOLD_RPS: '1000' });
  if (venues.kalshi) Object.assign(e, { QUORUM_KALSHI_URL: `${venues.kalshi.url}/trade-api/v2`, QUORUM_KALSHI_RPS: '1000' });
  return e;
}

function reportOf(stdout: string): SyncReport {
  const lines = stdout.split('\n').filter((l) => l.trim() !== '');
  expect(lines, stdout).toHaveLength(1); // the report alone: no log line shares stdout
  return JSON.parse(lines[0]!) as SyncReport;
}

beforeAll(async () => {
  manifold = await startReplayServer([
    { path: '/v0/markets', query: { before: null }, responses: [json([open('OutcomeOpen01'), fixture[1], open('OutcomeOpen02')])] },
    { path: '/v0/markets', responses: [json([])] },
    { path: /^\/v0\/market\/[^/]+$/, responses: [json({ message: 'Contract not found' }, 404)] },
  ]);
  failing = await startReplayServer([{ path: /.*/, responses: [{ status: 500, body: { error: 'internal' } }] }]);
});

afterAll(async () => {
  await manifold?.close();
  await failing?.close();
  tmp.cleanup();
});

describe('quorum sync outcome', () => {
  it('one venue ok, one failing: exit 3, the JSON report on stdout, one log line for the failure, no key twice', async () => {
    // No question files: FRED's "no API key" warning is not a failure and would blur the count.
    const questions = join(tmp.dir, 'no-questions');
    mkdirSync(questions);
    const r = await quorumAsync(['sync'], env({ manifold, kalshi: failing }, { LOG_LEVEL: 'info', QUORUM_QUESTIONS_DIR: questions }));
    expect(r.status, r.stderr).toBe(3);
    const report = reportOf(r.stdout);
    expect(report).toMatchObject({ status: 'partial', failed: ['venue:kalshi'] });
    const by = Object.fromEntries(report.sources.map((s) => [s.source, s]));
    expect(by['venue:manifold']).toMatchObject({ ok: true, markets: 3, written: { questions: 2, market_prices: 2 }, skipped: 1 });
    expect(by['venue:manifold']!.skipped_reasons).toHaveLength(1);
    expect(by['venue:kalshi']).toMatchObject({ ok: false, markets: 0 });

    const logs = parseLogLines(r.stderr);
    for (const line of r.stderr.split('\n').filter((l) => l.trim())) expect(repeatedKeys(line), line).toEqual([]);
    const problems = logs.filter((l) => l.level >= 40);
    const kalshi = problems.filter((l) => l.venue === 'kalshi' || JSON.stringify(l).includes('kalshi'));
    expect(kalshi, JSON.stringify(problems)).toHaveLength(1);
    expect(problems, JSON.stringify(problems)).toHaveLength(1);
    // The venue that worked logs its own lines, bound to its venue once.
    expect(logs.some((l) => l.venue === 'manifold' && l.msg === 'venue synced')).toBe(true);
  });

  it('every venue failing: exit 1', async () => {
    const r = await quorumAsync(['sync'], env({ manifold: failing, kalshi: failing }));
    expect(r.status, r.stderr).toBe(1);
    const report = reportOf(r.stdout);
    expect(report.status).toBe('failed');
    expect(report.failed).toEqual(['venue:manifold', 'venue:kalshi']);
    // The local steps still ran and are reported ok.
    expect(report.sources.find((s) => s.source === 'registry')).toMatchObject({ ok: true });
  });

  it('every venue ok: exit 0, and --json prints the same parseable report', async () => {
    const r = await quorumAsync(['sync', '--json'], env({ manifold }));
    expect(r.status, r.stderr).toBe(0);
    const report = reportOf(r.stdout);
    expect(report).toMatchObject({ status: 'ok', failed: [] });
    expect(report.sources.every((s) => s.ok)).toBe(true);
  });

  it('on a terminal: the table with a row per venue and source, and the same exit code', async () => {
    const hasScript = spawnSync('script', ['--version']).status === 0;
    if (!hasScript) throw new Error('util-linux `script` is needed to give the CLI a terminal');
    const e = { ...process.env, LOG_LEVEL: 'silent', ...env({ manifold, kalshi: failing }) };
    // script -e: exit with the child's code; -q: no banner; output file /dev/null (we read the pty copy on stdout).
    const child = spawn('script', ['-qec', `${JSON.stringify(process.execPath)} ${JSON.stringify(CLI)} sync`, '/dev/null'], { cwd: REPO, env: e, stdio: ['pipe', 'pipe', 'pipe'] });
    let out = '';
    child.stdout.on('data', (d) => (out += String(d)));
    child.stderr.on('data', (d) => (out += String(d)));
    const code = await new Promise<number | null>((resolve) => child.on('close', resolve));
    const text = out.replace(/\r/g, '');
    expect(code, text).toBe(3);
    expect(text).toMatch(/^source\s+markets\s+new\s+priced\s+resolved\s+skipped\s+error$/m);
    expect(text).toMatch(/^venue:manifold\s+3\s+2\s+2\s+0\s+1$/m);
    expect(text).toMatch(/^venue:kalshi\s+0\s+0\s+0\s+0\s+0\s+\S.*500/m);
    expect(text).toMatch(/^venue:manifold: skipped 1× /m);
    expect(text).toContain('sync partial: 1 of');
    expect(text).not.toContain('"sources"'); // not the JSON report
  });
});
