/**
 * A small real warehouse for the event tests: raw rows written with appendRaw, then real
 * pipeline runs (score-only: sql/derive, publish, events). Two rounds of forecasts make every
 * event type appear once the second run is compared with the first.
 */
import { appendRaw } from '../../pipeline/warehouse/raw-writer.ts';
import { withConnection } from '../../pipeline/warehouse/duckdb.ts';
import { loadConfig } from '../../pipeline/config.ts';
import { silentLogger } from '../../pipeline/log.ts';
import { runPipeline, type RunSummary } from '../../pipeline/run.ts';

export const T1 = new Date('2025-01-10T00:00:00Z');
export const T2 = new Date('2025-01-20T00:00:00Z');
const MODELS = ['m1', 'm2', 'm3', 'm4'];
const P = { runId: 'r20250101T000000Z-fixture1', runDate: '2025-01-01' };

/** question → [category, round-1 consensus, round-2 consensus, market at round 1, market at round 2] */
export const PLAN: Record<string, [string, number, number, number, number]> = {
  'manifold:q1': ['politics', 0.3, 0.4, 0.3, 0.4], // consensus.updated (+0.10), no edge either time
  'manifold:q2': ['finance', 0.52, 0.7, 0.5, 0.5], // consensus.updated, edge.opened (0.20)
  'manifold:q3': ['science', 0.8, 0.8, 0.8, 0.8], // resolves YES between the runs: question.resolved + score.posted
  'manifold:q4': ['sports', 0.4, 0.4, 0.4, 0.4], // annulled between the runs
  'manifold:q5': ['crypto', 0.8, 0.52, 0.5, 0.5], // edge opened in run 1 (0.30), closed in run 2; consensus.updated
  'manifold:q6': ['tech', 0.6, 0.62, 0.6, 0.6], // moved 0.02: nothing
};

function question(id: string, category: string) {
  return {
    question_id: id, venue: 'manifold', venue_market_id: id.split(':')[1]!, title: `Question ${id}`,
    description: 'd', resolution_criteria: 'r', url: `https://example.test/${id}`, category, domain: 'other',
    tags: [], created_at: new Date('2025-01-01T00:00:00Z'), close_time: new Date('2025-03-01T00:00:00Z'),
    status: 'active', lang: 'en', origin: 'test', ingested_at: new Date('2025-01-01T00:00:00Z'),
  };
}

function price(id: string, at: Date, probability: number) {
  return { question_id: id, venue: 'manifold', observed_at: at, probability, best_bid: null, best_ask: null, volume: null, liquidity: null, origin: 'test', ingested_at: at };
}

/** Four model forecasts whose mean is `mean` (spread ±0.01 around it). */
function forecasts(runId: string, id: string, at: Date, mean: number) {
  const offsets = [-0.01, 0.01, -0.005, 0.005];
  return MODELS.map((model, i) => ({
    run_id: runId, question_id: id, model, mode: 'informed', created_at: at, probability: mean + offsets[i]!,
    reasoning: 'r', lang: 'en', key_factors: [], evidence_ids: [], provider: 'simulated', prompt_hash: 'h', translation_of: null,
  }));
}

/** Writes round 1 (questions, prices, forecasts at T1). */
export async function writeRound1(root: string): Promise<void> {
  await withConnection(async (conn) => {
    await appendRaw(conn, root, 'questions', Object.entries(PLAN).map(([id, [cat]]) => question(id, cat)), P);
    const day = 86_400_000;
    await appendRaw(conn, root, 'market_prices', Object.entries(PLAN).map(([id, p]) => price(id, new Date(T1.getTime() - day), p[3])), P);
    await appendRaw(conn, root, 'forecasts', Object.entries(PLAN).flatMap(([id, p]) => forecasts('r20250110T000000Z-round001', id, T1, p[1])), P);
  });
}

/** Writes round 2 (prices and forecasts at T2, q3 resolved YES and q4 annulled in between). */
export async function writeRound2(root: string): Promise<void> {
  await withConnection(async (conn) => {
    const day = 86_400_000;
    await appendRaw(conn, root, 'market_prices', Object.entries(PLAN).map(([id, p]) => price(id, new Date(T2.getTime() - day), p[4])), P);
    const open = Object.entries(PLAN).filter(([id]) => id !== 'manifold:q3' && id !== 'manifold:q4');
    await appendRaw(conn, root, 'forecasts', open.flatMap(([id, p]) => forecasts('r20250120T000000Z-round002', id, T2, p[2])), P);
    const resolvedAt = new Date('2025-01-15T00:00:00Z');
    const base = { resolved_at: resolvedAt, source_url: 'https://example.test/source', evidence_excerpt: 'it happened', retrieved_at: resolvedAt, method: 'test' };
    await appendRaw(conn, root, 'resolutions', [
      { ...base, question_id: 'manifold:q3', outcome: 1, source_slug: 'manifold', annulled_reason: null },
      { ...base, question_id: 'manifold:q4', outcome: null, source_slug: 'manifold', annulled_reason: 'market cancelled' },
    ], P);
  });
}

/** One real score-only pipeline run dated `asOf` over `root`. */
export function run(root: string, asOf: Date, thresholds = { consensusThreshold: 0.05, edgeThreshold: 0.05 }): Promise<RunSummary> {
  const config = loadConfig({ QUORUM_DATA_DIR: root, LOG_LEVEL: 'silent' });
  return runPipeline({ config, logger: silentLogger(), asOf, scoreOnly: true, resume: false, events: thresholds });
}
