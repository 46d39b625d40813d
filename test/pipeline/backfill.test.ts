/**
 * Gap backfill end to end through `quorum sync`: a Polymarket market the warehouse has tracked,
 * last observed 30 hours ago (a day of missed syncs), gets its gap filled from a loopback replay
 * of the CLOB prices-history endpoint, next to the sync's own Gamma observation.
 */
import { readFileSync } from 'node:fs';
import { DuckDBInstance } from '@duckdb/node-api';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { appendRaw } from '../../pipeline/warehouse/raw-writer.ts';
import { createRawViews } from '../../pipeline/warehouse/raw-views.ts';
import { newRunId, rawGlob, runDate } from '../../pipeline/warehouse/layout.ts';
import { quorumAsync } from '../helpers/cli.ts';
import { json, startReplayServer, type ReplayServer } from '../helpers/replay-server.ts';
import { tempDir } from '../helpers/temp-dir.ts';

const HOUR = 3_600_000;
const page0 = JSON.parse(readFileSync(new URL('../fixtures/venues/polymarket/markets-offset-0.json', import.meta.url), 'utf8')) as Record<string, string>[];
const market = page0[0]!;
const yesToken = (JSON.parse(market.clobTokenIds!) as string[])[0]!;
const qid = `polymarket:${market.conditionId}`;
const tmp = tempDir('quorum-backfill-');
let venue: ReplayServer;
const lastObserved = new Date(Math.floor((Date.now() - 30 * HOUR) / 1000) * 1000);

async function withDb<T>(work: (conn: Awaited<ReturnType<DuckDBInstance['connect']>>) => Promise<T>): Promise<T> {
  const db = await DuckDBInstance.create(':memory:');
  const conn = await db.connect();
  try {
    return await work(conn);
  } finally {
    conn.closeSync();
    db.closeSync();
  }
}

beforeAll(async () => {
  venue = await startReplayServer([
    { path: '/markets', query: { offset: '0' }, responses: [json(page0)] },
    { path: '/markets', responses: [json([])] },
    {
      path: '/prices-history',
      responses: (req) => {
        const [start, end] = [Number(req.query.get('startTs')), Number(req.query.get('endTs'))];
        const history = [];
        for (let t = start - 3600; t <= end; t += 1800) history.push({ t, p: 0.8 });
        return json({ history });
      },
    },
  ]);
  // The warehouse as an earlier sync left it: the question and its last observation.
  const seededAt = lastObserved;
  const partition = { runId: newRunId(seededAt), runDate: runDate(seededAt) };
  await withDb(async (conn) => {
    await createRawViews(conn, tmp.dir);
    await appendRaw(
      conn,
      tmp.dir,
      'questions',
      [
        {
          question_id: qid,
          venue: 'polymarket',
          venue_market_id: market.conditionId,
          title: market.question,
          description: null,
          resolution_criteria: null,
          url: 'https://polymarket.com/event/x',
          category: 'economics',
          domain: 'central-banks',
          tags: ['fed'],
          created_at: null,
          close_time: null,
          status: 'active',
          lang: 'en',
          origin: 'test-seed',
          ingested_at: seededAt,
        },
      ],
      partition,
    );
    await appendRaw(
      conn,
      tmp.dir,
      'market_prices',
      [{ question_id: qid, venue: 'polymarket', observed_at: lastObserved, probability: 0.8, best_bid: null, best_ask: null, volume: null, liquidity: null, origin: 'test-seed', ingested_at: seededAt }],
      partition,
    );
  });
});

afterAll(async () => {
  await venue?.close();
  tmp.cleanup();
});

describe('quorum sync gap backfill', () => {
  it('fills the hours since the last stored observation from the CLOB, one per hour, beside the Gamma observation', async () => {
    const t0 = Date.now();
    const r = await quorumAsync(['sync'], {
      QUORUM_DATA_DIR: tmp.dir,
      QUORUM_VENUES: 'polymarket',
      QUORUM_POLYMARKET_GAMMA_URL: venue.url,
      QUORUM_POLYMARKET_CLOB_URL: venue.url,
      QUORUM_POLYMARKET_RPS: '1000',
      QUORUM_POLYMARKET_CLOB_RPS: '1000',
      QUORUM_VENUE_RETRIES: '1',
    });
    expect(r.status, r.stderr).toBe(0);
    // The report is the stdout line with `sources` (logs are on stderr; stdout holds only the report).
    const report = r.stdout
      .trim()
      .split('\n')
      .map((line) => JSON.parse(line) as { sources?: { source: string; ok: boolean; written: Record<string, number> }[] })
      .find((x) => x.sources)!;
    expect(report.sources!.find((s) => s.source === 'venue:polymarket')).toMatchObject({ ok: true });

    // The CLOB was asked for the YES token, from the stored observation on.
    const clob = venue.log.filter((e) => e.path === '/prices-history');
    expect(clob).toHaveLength(1);
    expect(clob[0]!.query.get('market')).toBe(yesToken);
    expect(Number(clob[0]!.query.get('startTs'))).toBe(lastObserved.getTime() / 1000);

    const prices = await withDb(async (conn) => {
      const read = await conn.runAndReadAll(
        'SELECT observed_at, probability, origin FROM read_parquet($1, hive_partitioning = false) WHERE question_id = $2 ORDER BY observed_at',
        [rawGlob(tmp.dir, 'market_prices'), qid],
      );
      return read.getRowObjectsJS() as { observed_at: Date; probability: number; origin: string }[];
    });
    const filled = prices.filter((p) => p.origin.endsWith('/prices-history'));
    // Hourly inside the 30-hour gap: 29 points (30 if the sync straddled a second boundary late).
    expect(filled.length).toBeGreaterThanOrEqual(29);
    expect(filled.length).toBeLessThanOrEqual(30);
    expect(filled[0]!.observed_at.getTime()).toBe(lastObserved.getTime() + HOUR);
    for (let k = 1; k < filled.length; k++) expect(filled[k]!.observed_at.getTime() - filled[k - 1]!.observed_at.getTime()).toBe(HOUR);
    expect(filled.at(-1)!.observed_at.getTime()).toBeLessThan(t0 + 60_000);
    // Before them the seeded observation, after them the sync's own Gamma one.
    expect(prices[0]!.origin).toBe('test-seed');
    expect(prices.at(-1)!.origin).toBe(`polymarket:${venue.url}/markets`);
    expect(prices).toHaveLength(filled.length + 2);
  });
});
