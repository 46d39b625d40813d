/**
 * Two runs dated at the same time (`quorum run --as-of T` twice; a first start killed and started
 * again): the factors' health and the system health take the run with the greater run id as the
 * latest, as every other latest of the snapshot does (sql/derive/30_scored_forecasts.sql), so
 * `latest_run_id` names the run whose consensus the leaves show and `latest_run_models` is that
 * run's count, in whichever order the runs were written. QA review: `_factor_latest_run` and the
 * system health's model-failure check picked by as-of alone, the first run DuckDB met.
 *
 * Fixture: runs r-tie-a (four models, two calls failed) and r-tie-b (three models, none failed),
 * both dated T; one factor over one question.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { fixture, forecasts, publish, question, snapshotRows, writeRaw, type Fixture } from '../structure/helpers.ts';

const T = new Date('2026-02-01T00:00:00Z');
const A = 'r-tie-a';
const B = 'r-tie-b'; // the greater run id

const FACTORS = [
  'factors:',
  '  - id: tie',
  '    name: Tie factor',
  '    statement: Ties break the same way everywhere',
  '    drivers:',
  '      - { id: d1, name: Driver, questions: [{ question: "manifold:t1", sign: 1 }] }',
  '',
].join('\n');

const runA = {
  runs: [{ run_id: A, status: 'completed', as_of: T, started_at: T }],
  model_calls: Array.from({ length: 4 }, (_, i) => ({
    run_id: A, question_id: 'manifold:t1', model: `m${i + 1}`, mode: 'augmented', started_at: T,
    status: i < 2 ? 'failed' : 'ok', error_kind: i < 2 ? 'timeout' : null, attempts: 1,
  })),
  forecasts: forecasts(A, 'manifold:t1', T, [0.2, 0.2, 0.2, 0.2]),
};
const runB = {
  runs: [{ run_id: B, status: 'completed', as_of: T, started_at: T }],
  model_calls: Array.from({ length: 3 }, (_, i) => ({
    run_id: B, question_id: 'manifold:t1', model: `m${i + 1}`, mode: 'augmented', started_at: T,
    status: 'ok', error_kind: null, attempts: 1,
  })),
  forecasts: forecasts(B, 'manifold:t1', T, [0.8, 0.8, 0.8]),
};

describe.each([
  ['the lesser run id written first', [runA, runB]],
  ['the greater run id written first', [runB, runA]],
] as const)('factor and system health with two runs dated at the same time, %s', (_order, runs) => {
  let f: Fixture;
  let snapshot: string;
  beforeAll(async () => {
    f = fixture({ 'factors/f.yaml': FACTORS });
    await writeRaw(f.dataDir, { questions: [question('manifold:t1', 'tie widget launch')] });
    for (const r of runs) await writeRaw(f.dataDir, r, T);
    snapshot = await publish(f, T);
  });
  afterAll(() => f.cleanup());

  it('the leaf shows the greater run id\'s consensus, and the factor\'s health names that run and its model count', async () => {
    const [leaf] = await snapshotRows(f.dataDir, snapshot, `SELECT consensus_run_id, models_latest_run FROM {factor_leaves} WHERE factor_id = 'tie'`);
    expect(leaf).toMatchObject({ consensus_run_id: B, models_latest_run: 3 });
    const [h] = await snapshotRows(f.dataDir, snapshot, `SELECT latest_run_id, latest_run_models, n_covered FROM {factor_health} WHERE factor_id = 'tie'`);
    expect(h).toMatchObject({ latest_run_id: B, latest_run_models: 3, n_covered: 1 });
  });

  it('the system health\'s model failures are the greater run id\'s', async () => {
    const checks = await snapshotRows(f.dataDir, snapshot, `SELECT "check", value, detail FROM {system_health} WHERE "check" = 'model_failures'`);
    expect(checks[0]!.value).toBe(0);
    expect(checks[0]!.detail).toContain(B);
  });
});
