/**
 * A tracked venue market from discovery to its resolution, through the real CLI (`quorum sync`
 * twice, then `quorum run --score-only`) against a loopback replay of Manifold's API: what the
 * venue said must be what the published snapshot shows.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { DuckDBInstance } from '@duckdb/node-api';
import { quorumAsync } from '../helpers/cli.ts';
import { tempDir } from '../helpers/temp-dir.ts';
import { json, startReplayServer, type ReplayServer } from '../helpers/replay-server.ts';
import { rawGlob } from '../../pipeline/warehouse/layout.ts';

// The fixture's open BINARY market (Manifold's LiteMarket shape) under other ids.
const fixture = JSON.parse(readFileSync(new URL('../fixtures/venues/manifold/markets-page-1.json', import.meta.url), 'utf8'))[0];
const tmp = tempDir('quorum-sync-res-');
const questionsDir = tempDir('quorum-sync-res-q-');
let phase: 'open' | 'resolved' = 'open';
let manifold: ReplayServer;
let env: Record<string, string>;

const open = (id: string) => ({ ...fixture, id, isResolved: false, closeTime: Date.now() + 30 * 86_400_000 });
/**
 * Resolved YES. Manifold's LiteMarket documents `resolutionTime` as optional (`resolutionTime?:
 * number`); here it is absent.
 */
function resolvedWithoutTime(id: string) {
  const { resolutionTime: _omitted, ...m } = { ...open(id), isResolved: true, resolution: 'YES', closeTime: Date.now() - 60_000, resolutionTime: 0 };
  return m;
}

async function query(sql: string): Promise<Record<string, unknown>[]> {
  const db = await DuckDBInstance.create(':memory:');
  const conn = await db.connect();
  try {
    return (await conn.runAndReadAll(sql)).getRowObjectsJS();
  } finally {
    conn.closeSync();
    db.closeSync();
  }
}

beforeAll(async () => {
  manifold = await startReplayServer([
    { path: '/v0/markets', query: { before: null }, responses: () => json(phase === 'open' ? [open('NoTimeYes01')] : []) },
    { path: '/v0/markets', responses: [json([])] },
    { path: /^\/v0\/market\/[^/]+$/, responses: (req) => json(phase === 'open' ? open(req.path.split('/').pop()!) : resolvedWithoutTime(req.path.split('/').pop()!)) },
  ]);
  env = {
    QUORUM_DATA_DIR: tmp.dir,
    QUORUM_QUESTIONS_DIR: questionsDir.dir,
    QUORUM_VENUES: 'manifold',
    QUORUM_MANIFOLD_URL: `${manifold.url}/v0`,
    QUORUM_MANIFOLD_RPS: '1000',
    QUORUM_VENUE_RETRIES: '0',
    QUORUM_FRED_API_KEY: '',
  };
});

afterAll(async () => {
  await manifold?.close();
  tmp.cleanup();
  questionsDir.cleanup();
});

describe('venue resolutions reach the snapshot', () => {
  it('a resolution the venue gives no time for is dated by the sync that saw it, and published', async () => {
    expect((await quorumAsync(['sync'], env)).status).toBe(0);
    phase = 'resolved';
    const before = Date.now();
    const second = await quorumAsync(['sync'], env);
    expect(second.status, second.stderr).toBe(0);

    const res = await query(`SELECT outcome, resolved_at FROM read_parquet('${rawGlob(tmp.dir, 'resolutions')}', hive_partitioning = false)`);
    expect(res).toHaveLength(1);
    expect(res[0]!.outcome).toBe(1);
    // Not NULL: a NULL resolved_at is never visible, and the market is no longer tracked.
    expect(res[0]!.resolved_at).toBeInstanceOf(Date);
    expect((res[0]!.resolved_at as Date).getTime()).toBeGreaterThanOrEqual(before - 1000);

    const run = await quorumAsync(['run', '--score-only'], env);
    expect(run.status, run.stderr).toBe(0);
    const current = readFileSync(join(tmp.dir, 'CURRENT'), 'utf8').trim();
    const [q] = await query(`SELECT status, outcome FROM read_parquet('${join(tmp.dir, 'snapshots', current, 'questions.parquet')}') WHERE question_id = 'manifold:NoTimeYes01'`);
    expect(q).toMatchObject({ status: 'resolved', outcome: 1 });
  });
});
