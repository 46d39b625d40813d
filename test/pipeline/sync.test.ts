/**
 * `quorum sync` end to end through the real CLI: the sources registry, the bundled question files,
 * a venue answering from a loopback replay of its API, a venue that keeps failing (it is reported,
 * and does not fail the sync), and FRED resolving question-file questions from a loopback replay.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { readFileSync } from 'node:fs';
import { DuckDBInstance } from '@duckdb/node-api';
import { quorumAsync } from '../helpers/cli.ts';
import { tempDir } from '../helpers/temp-dir.ts';
import { json, startReplayServer, type ReplayServer } from '../helpers/replay-server.ts';
import { startFredReplay, type FredReplay } from '../fixtures/fred/replay-server.ts';
import { rawGlob } from '../../pipeline/warehouse/layout.ts';

const FRED_KEY = 'abcdef0123456789abcdef0123456789';
const fixture = JSON.parse(readFileSync(new URL('../fixtures/venues/manifold/markets-page-1.json', import.meta.url), 'utf8'));
// The fixture's open binary market, closing a year from now, twice under other ids, plus its
// multiple-choice neighbour (skipped as non-binary).
const open = (id: string) => ({ ...fixture[0], id, closeTime: Date.now() + 365 * 86_400_000 });
const page1 = [open('SyncOpen01'), fixture[1], open('SyncOpen02')];
const tmp = tempDir('quorum-sync-');
let manifold: ReplayServer;
let kalshi: ReplayServer;
let fred: FredReplay;
let env: Record<string, string>;

async function rows(table: 'questions' | 'market_prices' | 'resolutions' | 'lifecycle_events' | 'sources', where = 'true') {
  const db = await DuckDBInstance.create(':memory:');
  const conn = await db.connect();
  try {
    const r = await conn.runAndReadAll(`SELECT * FROM read_parquet($1, hive_partitioning = false) WHERE ${where}`, [rawGlob(tmp.dir, table)]);
    return r.getRowObjectsJS();
  } finally {
    conn.closeSync();
    db.closeSync();
  }
}

beforeAll(async () => {
  manifold = await startReplayServer([
    { path: '/v0/markets', query: { before: null }, responses: [json(page1)] },
    { path: '/v0/markets', responses: [json([])] },
    { path: /^\/v0\/market\/[^/]+$/, responses: [json({ message: 'Contract not found' }, 404)] },
  ]);
  kalshi = await startReplayServer([{ path: /.*/, responses: [{ status: 500, body: { error: 'internal' } }] }]);
  fred = await startFredReplay({ apiKey: FRED_KEY, today: '2026-11-21' });
  env = {
    QUORUM_DATA_DIR: tmp.dir,
    QUORUM_VENUES: 'manifold,kalshi',
    QUORUM_MANIFOLD_URL: `${manifold.url}/v0`,
    QUORUM_KALSHI_URL: `${kalshi.url}/trade-api/v2`,
    QUORUM_MANIFOLD_RPS: '1000',
    QUORUM_KALSHI_RPS: '1000',
    QUORUM_VENUE_RETRIES: '1',
    QUORUM_FRED_URL: fred.url,
    QUORUM_FRED_API_KEY: FRED_KEY,
  };
});

afterAll(async () => {
  await manifold?.close();
  await kalshi?.close();
  await fred?.close();
  tmp.cleanup();
});

describe('quorum sync', () => {
  it('brings in venues, question files and FRED resolutions; a failing venue is reported, not fatal', async () => {
    const r = await quorumAsync(['sync'], env);
    expect(r.status, r.stderr).toBe(3); // some failed, the rest is written (test/pipeline/sync-outcome.test.ts)
    const report = JSON.parse(r.stdout.trim().split('\n').pop()!) as { sources: { source: string; ok: boolean; error: string | null; written: Record<string, number> }[] };
    const by = Object.fromEntries(report.sources.map((s) => [s.source, s]));
    expect(by['registry']!.written.sources).toBeGreaterThanOrEqual(15);
    expect(by['question-files']!.written.questions).toBe(3);
    expect(by['venue:manifold']).toMatchObject({ ok: true });
    expect(by['venue:manifold']!.written.questions).toBe(2); // the two open BINARY markets; the multiple-choice one is skipped
    expect(by['venue:kalshi']).toMatchObject({ ok: false });
    expect(by['venue:kalshi']!.error).toMatch(/500|server_error/);
    expect(by['fred']).toMatchObject({ ok: true });

    const resolved = await rows('resolutions', "source_slug = 'fred'");
    expect(resolved.map((x) => x.question_id).sort()).toEqual(['quorum:cpi-yoy-above-3-oct-2026', 'quorum:unrate-at-or-above-4-5-sep-2026']);
    for (const x of resolved) {
      expect(String(x.source_url)).toMatch(/^https:\/\/fred\.stlouisfed\.org\/series\//);
      expect(String(x.source_url)).not.toContain(FRED_KEY);
      expect(x.evidence_excerpt).toBeTruthy();
    }
    expect(r.stdout + r.stderr).not.toContain(FRED_KEY);
    const prices = await rows('market_prices', "venue = 'manifold'");
    expect(prices).toHaveLength(2);
  });

  it('is idempotent: a second sync adds a new price observation per market and nothing else twice', async () => {
    const before = await rows('lifecycle_events');
    const r = await quorumAsync(['sync'], env);
    expect(r.status, r.stderr).toBe(3);
    expect(await rows('questions')).toHaveLength(5);
    expect(await rows('resolutions', "source_slug = 'fred'")).toHaveLength(2);
    expect(await rows('market_prices', "venue = 'manifold'")).toHaveLength(4);
    const after = await rows('lifecycle_events');
    const firstSeen = after.filter((e) => e.state === 'active' || e.state === 'proposed');
    expect(firstSeen.length).toBe(before.filter((e) => e.state === 'active' || e.state === 'proposed').length);
  });
});
