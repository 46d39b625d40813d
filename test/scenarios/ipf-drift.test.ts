/**
 * The maximum-entropy fit on a book of contradictory constraints (issue 13): 100 three-component
 * scenarios whose four models gave random direct forecasts and random conditionals, some of them
 * missing (so every such model is fitted by IPF). Cyclic projections onto contradictory
 * constraints drive some worlds to 0 sweep after sweep; within the default 200 sweeps a plan step
 * then took ln(0) and failed the whole derive, so no snapshot was published. Every joint must come
 * out finite, non-negative and summing to 1.
 */
import { mkdtempSync, rmSync, symlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DuckDBInstance } from '@duckdb/node-api';
import { expect, it } from 'vitest';
import { prepareScenarios } from '../../pipeline/scenarios/stage.ts';
import { DEFAULT_SQL_DIR, deriveTables, rawTableDdl } from '../../pipeline/warehouse/derive.ts';

const FILES = ['99_scenario_0_conditionals.sql', '99_scenario_1_joint.sql', '99_scenario_2_records.sql'];
const N = 100;

it('IPF fits that drive worlds to 0 still give finite joints that sum to 1, and the derive publishes', async () => {
  const sqlDir = mkdtempSync(join(tmpdir(), 'quorum-ipf-drift-'));
  for (const f of FILES) symlinkSync(join(DEFAULT_SQL_DIR, f), join(sqlDir, f));
  const db = await DuckDBInstance.create(':memory:');
  const conn = await db.connect();
  try {
    await conn.run(
      `CREATE TABLE questions AS
       SELECT 'drift:' || s || '-' || k AS question_id, 'drift' AS venue, 'Component ' || k || ' of ' || s AS title, NULL::VARCHAR AS url,
              'tech' AS category, 'open' AS status, NULL::DOUBLE AS outcome, NULL::TIMESTAMP AS resolved_at
       FROM range(${N}) AS a(s), range(1, 4) AS b(k)`,
    );
    for (const t of ['forecasts', 'scenario_records', 'scenario_archive'] as const) await conn.run(rawTableDdl(t));
    // direct forecasts 0.05..0.94, conditionals of components 2 and 3 under every full condition,
    // a seventh of them missing
    await conn.run(
      `INSERT INTO raw_forecasts (run_id, question_id, model, mode, created_at, probability, lang, provider, condition)
       SELECT 'r-drift', question_id, 'm' || m, 'augmented', TIMESTAMP '2026-01-01', 0.05 + (hash(question_id, m) % 90) / 100.0, 'en', 'simulated', NULL
       FROM questions, range(4) AS c(m)`,
    );
    await conn.run(
      `INSERT INTO raw_forecasts (run_id, question_id, model, mode, created_at, probability, lang, provider, condition)
       SELECT 'r-drift', 'drift:' || s || '-' || k, 'm' || m, 'augmented', TIMESTAMP '2026-01-01', 0.05 + (hash(s, k, m, i) % 90) / 100.0,
              'en', 'simulated', 'drift-' || s || ':' || k || ':' || lpad(bin(i), (k - 1)::INTEGER, '0')
       FROM range(${N}) AS a(s), range(2, 4) AS b(k), range(4) AS c(m), range(4) AS d(i)
       WHERE i < (1 << (k - 1)) AND hash(s, k, m, i, 'drop') % 7 <> 0`,
    );
    const scenarios = Array.from({ length: N }, (_, s) => ({
      id: `drift-${s}`, title: `Drift ${s}`, description: 'synthetic', file: 'test',
      components: [1, 2, 3].map((k) => ({ question: `drift:${s}-${k}` })),
    }));
    await prepareScenarios(conn, { scenarios, runId: 'r-drift-now' });
    await deriveTables(conn, { asOf: new Date('2026-07-01T00:00:00Z'), sqlDir });
    const [check] = (await conn.runAndReadAll(
      `SELECT count(DISTINCT (scenario_id, model)) FILTER (WHERE method = 'max_entropy_ipf')::INTEGER AS ipf_joints,
              count(*) FILTER (WHERE NOT isfinite(probability) OR probability < 0)::INTEGER AS bad_worlds,
              count(*) FILTER (WHERE source = 'consensus' AND NOT isfinite(disagreement_sd))::INTEGER AS bad_sd,
              count(*) FILTER (WHERE method = 'max_entropy_ipf' AND probability = 0)::INTEGER AS zero_worlds
       FROM scenario_worlds`,
    )).getRowObjectsJS();
    const [sums] = (await conn.runAndReadAll(
      `SELECT max(abs(s - 1)) AS worst FROM (SELECT sum(probability) AS s FROM scenario_worlds GROUP BY scenario_id, source, model)`,
    )).getRowObjectsJS();
    expect(check).toMatchObject({ bad_worlds: 0, bad_sd: 0 });
    expect(check!.ipf_joints).toBeGreaterThan(200);
    expect(check!.zero_worlds).toBeGreaterThan(0); // the drift the guard is for
    expect(sums!.worst as number).toBeLessThan(1e-12);
  } finally {
    conn.closeSync();
    db.closeSync();
    rmSync(sqlDir, { recursive: true, force: true });
  }
});
