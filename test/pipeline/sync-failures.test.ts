/**
 * `quorum sync` reports what failed, through the real CLI against loopback replays: FRED rejecting
 * the key (its HTTP 400), answering malformed JSON, or down (HTTP 500) fails FRED, and with every
 * venue down too the sync failed (exit 1); one series failing among others that worked is a
 * warning, not a failure. A venue's pagination loop fails that venue (once per skipped item), and
 * a discovery stopped at the page cap is a warning of an ok venue.
 *
 * The tests run concurrently (each its own data and questions directories, the replay servers
 * answer alike whoever asks): most of their time is the CLIs' FRED client backing off between its
 * retries, and those waits overlap instead of adding up. They retry once (QUORUM_FRED_RETRIES=1, as
 * QUORUM_VENUE_RETRIES=1), but for the test of the setting's default.
 */
import { afterAll, beforeAll, describe, it } from 'vitest';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { quorumAsync } from '../helpers/cli.ts';
import { tempDir } from '../helpers/temp-dir.ts';
import { json, startReplayServer, type ReplayServer } from '../helpers/replay-server.ts';
import { startFredReplay, type FredReplay } from '../fixtures/fred/replay-server.ts';
import type { SourceReport, SyncReport } from '../../pipeline/sync.ts';

const FRED_KEY = 'abcdef0123456789abcdef0123456789';
const OTHER_KEY = '0123456789abcdef0123456789abcdef';
const tmp = tempDir('quorum-sync-failures-');
let fred: FredReplay;
let down: ReplayServer;
let garbled: ReplayServer;
let manifold: ReplayServer;
let kalshiLoop: ReplayServer;
let n = 0;

/** A question file asking FRED about `series` (observation periods long published). */
function questionsDir(...series: string[]): string {
  const dir = join(tmp.dir, `q${n++}`);
  mkdirSync(dir);
  const entries = series.map((s) => [
    `  - id: ${s.toLowerCase()}-level-sep-2026`,
    `    title: ${s} at or above 4.5 in September 2026`,
    `    resolution_criteria: YES if FRED series ${s} is 4.5 or higher for September 2026.`,
    '    created_at: 2026-01-15',
    '    close_time: 2026-10-01T00:00:00Z',
    '    resolution:',
    '      source: fred',
    `      series_id: ${s}`,
    '      observation_date: 2026-09-01',
    '      transform: level',
    '      operator: ">="',
    '      threshold: 4.5',
  ].join('\n'));
  if (entries.length > 0) writeFileSync(join(dir, 'questions.yaml'), `questions:\n${entries.join('\n')}\n`);
  return dir;
}

function env(extra: Record<string, string>): Record<string, string> {
  return { QUORUM_DATA_DIR: join(tmp.dir, `d${n++}`), QUORUM_VENUES: 'none', QUORUM_VENUE_RETRIES: '1', QUORUM_FRED_RETRIES: '1', LOG_LEVEL: 'warn', ...extra };
}

function reportOf(stdout: string): SyncReport {
  return JSON.parse(stdout.trim().split('\n').pop()!) as SyncReport;
}
const source = (r: SyncReport, name: string): SourceReport => r.sources.find((s) => s.source === name)!;

beforeAll(async () => {
  fred = await startFredReplay({ apiKey: FRED_KEY, today: '2026-11-21' });
  down = await startReplayServer([{ path: /.*/, responses: [{ status: 500, body: { error: 'internal' } }] }]);
  garbled = await startReplayServer([{ path: /.*/, responses: [{ status: 200, headers: { 'content-type': 'application/json' }, body: '{"observations": [' }] }]);
  const manifoldPage = JSON.parse(readFileSync(new URL('../fixtures/venues/manifold/markets-page-1.json', import.meta.url), 'utf8'));
  manifold = await startReplayServer([
    { path: '/v0/markets', query: { before: null }, responses: [json(manifoldPage)] },
    { path: '/v0/markets', responses: [json([])] },
  ]);
  // Kalshi answering its first page, with the same cursor, however it is asked.
  const kalshiPage = JSON.parse(readFileSync(new URL('../fixtures/venues/kalshi/markets-page-1.json', import.meta.url), 'utf8'));
  // Open markets close ahead of the sync (the real clock's): one listed open past its close is no new question.
  const ahead = new Date(Date.now() + 30 * 86_400_000).toISOString();
  kalshiPage.markets = kalshiPage.markets.map((m: object) => ({ ...m, close_time: ahead }));
  kalshiLoop = await startReplayServer([{ path: '/trade-api/v2/markets', responses: [json(kalshiPage)] }]);
});

afterAll(async () => {
  for (const s of [fred, down, garbled, manifold, kalshiLoop]) await s?.close();
  tmp.cleanup();
});

describe.concurrent('FRED failures are failures', () => {
  it('a key FRED rejects (HTTP 400): FRED failed, and with no venue the sync failed (exit 1)', async ({ expect }) => {
    const r = await quorumAsync(['sync', '--json'], env({ QUORUM_QUESTIONS_DIR: questionsDir('UNRATE'), QUORUM_FRED_URL: fred.url, QUORUM_FRED_API_KEY: OTHER_KEY }));
    expect(r.status, r.stderr).toBe(1);
    const report = reportOf(r.stdout);
    expect(report).toMatchObject({ status: 'failed', failed: ['fred'] });
    expect(source(report, 'fred')).toMatchObject({ ok: false, skipped: 1 });
    expect(source(report, 'fred').error).toMatch(/^every FRED request failed \(1 of 1\): FRED UNRATE: request failed: client_error: HTTP 400/);
    expect(r.stdout + r.stderr).not.toContain(OTHER_KEY);
  });

  it('malformed JSON from FRED: FRED failed (exit 1)', async ({ expect }) => {
    const r = await quorumAsync(['sync', '--json'], env({ QUORUM_QUESTIONS_DIR: questionsDir('UNRATE'), QUORUM_FRED_URL: garbled.url, QUORUM_FRED_API_KEY: FRED_KEY }));
    expect(r.status, r.stderr).toBe(1);
    const report = reportOf(r.stdout);
    expect(report).toMatchObject({ status: 'failed', failed: ['fred'] });
    expect(source(report, 'fred').error).toMatch(/every FRED request failed \(1 of 1\).*not JSON/);
  });

  it('every venue and FRED answering 500: the sync failed (exit 1), each of them named', async ({ expect }) => {
    const r = await quorumAsync(
      ['sync', '--json'],
      env({
        QUORUM_VENUES: 'polymarket,kalshi,manifold,metaculus',
        QUORUM_POLYMARKET_GAMMA_URL: down.url,
        QUORUM_KALSHI_URL: down.url,
        QUORUM_MANIFOLD_URL: down.url,
        QUORUM_METACULUS_URL: down.url,
        QUORUM_POLYMARKET_RPS: '1000',
        QUORUM_KALSHI_RPS: '1000',
        QUORUM_MANIFOLD_RPS: '1000',
        QUORUM_METACULUS_RPS: '1000',
        QUORUM_QUESTIONS_DIR: questionsDir('UNRATE'),
        QUORUM_FRED_URL: down.url,
        QUORUM_FRED_API_KEY: FRED_KEY,
      }),
    );
    expect(r.status, r.stderr).toBe(1);
    const report = reportOf(r.stdout);
    expect(report.status).toBe('failed');
    expect(report.failed).toEqual(['venue:polymarket', 'venue:kalshi', 'venue:manifold', 'venue:metaculus', 'fred']);
    expect(source(report, 'fred').error).toMatch(/every FRED request failed \(1 of 1\).*HTTP 500/);
  });

  it('one series failing among others that worked: FRED ok with a warning naming it (exit 0)', async ({ expect }) => {
    const r = await quorumAsync(['sync', '--json'], env({ QUORUM_QUESTIONS_DIR: questionsDir('UNRATE', 'NOSUCHSERIES'), QUORUM_FRED_URL: fred.url, QUORUM_FRED_API_KEY: FRED_KEY }));
    expect(r.status, r.stderr).toBe(0);
    const report = reportOf(r.stdout);
    expect(report.status).toBe('ok');
    const f = source(report, 'fred');
    expect(f).toMatchObject({ ok: true, error: null, written: { resolutions: 1 }, skipped: 1 });
    expect(f.warnings).toEqual([expect.stringMatching(/^1 of 2 FRED requests failed \(NOSUCHSERIES\): FRED NOSUCHSERIES: request failed: client_error: HTTP 400/)]);
  });

  it('QUORUM_FRED_RETRIES sets how often a FRED answering 500 is asked again: 0 once, unset (4) five times (QA: no setting)', async ({ expect }) => {
    const servers = await Promise.all([0, 1].map(() => startReplayServer([{ path: /.*/, responses: [{ status: 500, body: { error: 'internal' } }] }])));
    try {
      const [none, byDefault] = await Promise.all([
        quorumAsync(['sync', '--json'], env({ QUORUM_QUESTIONS_DIR: questionsDir('UNRATE'), QUORUM_FRED_URL: servers[0]!.url, QUORUM_FRED_API_KEY: FRED_KEY, QUORUM_FRED_RETRIES: '0' })),
        quorumAsync(['sync', '--json'], env({ QUORUM_QUESTIONS_DIR: questionsDir('UNRATE'), QUORUM_FRED_URL: servers[1]!.url, QUORUM_FRED_API_KEY: FRED_KEY, QUORUM_FRED_RETRIES: '' })),
      ]);
      for (const r of [none, byDefault]) {
        expect(r.status, r.stderr).toBe(1);
        expect(source(reportOf(r.stdout), 'fred').error).toMatch(/every FRED request failed \(1 of 1\).*HTTP 500/);
      }
      expect(servers.map((s) => s.hits(0))).toEqual([1, 5]);
    } finally {
      for (const s of servers) await s.close();
    }
  });
});

describe.concurrent('venue pagination in the report', () => {
  it('a pagination loop fails the venue, what it read is written and each skipped item counted once (exit 3)', async ({ expect }) => {
    const r = await quorumAsync(
      ['sync', '--json'],
      env({
        QUORUM_VENUES: 'manifold,kalshi',
        QUORUM_MANIFOLD_URL: `${manifold.url}/v0`,
        QUORUM_KALSHI_URL: `${kalshiLoop.url}/trade-api/v2`,
        QUORUM_MANIFOLD_RPS: '1000',
        QUORUM_KALSHI_RPS: '1000',
        QUORUM_QUESTIONS_DIR: questionsDir(),
      }),
    );
    expect(r.status, r.stderr).toBe(3);
    const report = reportOf(r.stdout);
    expect(report).toMatchObject({ status: 'partial', failed: ['venue:kalshi'] });
    const k = source(report, 'venue:kalshi');
    expect(k.error).toMatch(/pagination loop: Kalshi's next page .* discovery stopped after 2 pages/);
    expect(k).toMatchObject({ ok: false, markets: 4, skipped: 2, written: { questions: 2 } });
    expect(k.skipped_reasons.map((x) => x.count)).toEqual([1, 1]);
  });

  it('a discovery stopped at the page cap: the venue is ok, with a warning (exit 0)', async ({ expect }) => {
    const r = await quorumAsync(
      ['sync', '--json'],
      env({
        QUORUM_VENUES: 'kalshi',
        QUORUM_KALSHI_URL: `${kalshiLoop.url}/trade-api/v2`,
        QUORUM_KALSHI_RPS: '1000',
        QUORUM_VENUE_MAX_PAGES: '1',
        QUORUM_QUESTIONS_DIR: questionsDir(),
      }),
    );
    expect(r.status, r.stderr).toBe(0);
    const k = source(reportOf(r.stdout), 'venue:kalshi');
    expect(k).toMatchObject({ ok: true, skipped: 2 });
    expect(k.warnings).toEqual([expect.stringMatching(/^discovery stopped at the page cap \(1 page, QUORUM_VENUE_MAX_PAGES\)/)]);
  });
});
