/**
 * `npm run bench -- scenarios [scenarios=1000] [records=100]`
 *
 * Scenarios (issue 13): computing the distributions of 1,000 scenarios of 5 components (32 worlds
 * each) from stored conditional forecasts (four models, every condition: 31 per scenario and
 * model, the chain rule), and scoring 100 archived records of each (100,000 records of 32 worlds,
 * every component resolved), i.e. `prepareScenarios` + sql/derive/99_scenario_0_conditionals.sql,
 * 99_scenario_1_joint.sql and 99_scenario_2_records.sql on the pipeline's own derive, against one
 * DuckDB `COPY` of those conditional forecasts to Parquet, both on the same in-memory instance
 * (best of three each; a shared machine's other load only ever adds time). Requirement: ratio ≤ 3.
 *
 * Last line: `{"bench":"scenarios","ratio":<x>,"scenarios":<n>,"peak_rss_mb":<n>}`.
 */
import { mkdtempSync, rmSync, symlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DuckDBInstance, type DuckDBConnection } from '@duckdb/node-api';
import type { ScenarioDefinition } from '../pipeline/scenarios/definitions.ts';
import { prepareScenarios } from '../pipeline/scenarios/stage.ts';
import { DEFAULT_SQL_DIR, deriveTables, rawTableDdl } from '../pipeline/warehouse/derive.ts';

const SCENARIO_FILES = ['99_scenario_0_conditionals.sql', '99_scenario_1_joint.sql', '99_scenario_2_records.sql'];
const COMPONENTS = 5;
const MODELS = 4;
const AS_OF = '2026-07-01 00:00:00';

/** Synthetic scenarios: scenario s has the questions bench:s-1 … bench:s-5 in pathway order. */
function scenarios(n: number): ScenarioDefinition[] {
  return Array.from({ length: n }, (_, s) => ({
    id: `bench-${s}`,
    title: `Benchmark scenario ${s}`,
    description: 'A synthetic five-step pathway',
    components: Array.from({ length: COMPONENTS }, (_, k) => ({ question: `bench:${s}-${k + 1}` })),
    file: 'bench',
  }));
}

/**
 * The warehouse the scenario files read (not timed): the questions, every one resolved; each
 * model's direct forecast of every component and its conditional forecast of every component
 * k ≥ 2 under each of the 2^(k−1) conditions; `records` archived records per scenario.
 */
async function load(conn: DuckDBConnection, n: number, records: number): Promise<void> {
  await conn.run(
    `CREATE OR REPLACE TABLE questions AS
     SELECT 'bench:' || s || '-' || k AS question_id, 'bench' AS venue, 'Synthetic component ' || k || ' of ' || s AS title,
            NULL::VARCHAR AS url, 'tech' AS category, 'resolved' AS status,
            (hash(s, k) % 2)::DOUBLE AS outcome, TIMESTAMP '2026-06-01' AS resolved_at
     FROM range(${n}) AS a(s), range(1, ${COMPONENTS + 1}) AS b(k)`,
  );
  await conn.run(rawTableDdl('forecasts'));
  await conn.run(rawTableDdl('scenario_records'));
  await conn.run(rawTableDdl('scenario_archive'));
  await conn.run(
    `INSERT INTO raw_forecasts (run_id, question_id, model, mode, created_at, probability, lang, provider, condition)
     SELECT 'r-bench', q.question_id, 'm' || m, 'augmented', TIMESTAMP '2026-01-01', 0.05 + (hash(q.question_id, m) % 90) / 100.0,
            'en', 'simulated', NULL
     FROM questions AS q, range(${MODELS}) AS c(m)`,
  );
  // Conditionals: component k under each of the 2^(k−1) outcome strings of the earlier ones.
  await conn.run(
    `INSERT INTO raw_forecasts (run_id, question_id, model, mode, created_at, probability, lang, provider, condition)
     SELECT 'r-bench', 'bench:' || s || '-' || k, 'm' || m, 'augmented', TIMESTAMP '2026-01-01',
            0.05 + (hash(s, k, m, i) % 90) / 100.0, 'en', 'simulated',
            'bench-' || s || ':' || k || ':' || lpad(bin(i), (k - 1)::INTEGER, '0')
     FROM range(${n}) AS a(s), range(2, ${COMPONENTS + 1}) AS b(k), range(${MODELS}) AS c(m), range(16) AS d(i)
     WHERE i < (1 << (k - 1))`,
  );
  // Archived records: `records` runs per scenario, each a joint over the 32 worlds (normalized)
  // with its implied marginals, one row per record as the pipeline archives them.
  await conn.run(
    `INSERT INTO raw_scenario_archive
     WITH w AS (
       SELECT s, r, x, (1 + hash(s, r, x) % 1000)::DOUBLE AS weight
       FROM range(${n}) AS a(s), range(${records}) AS b(r), range(${1 << COMPONENTS}) AS c(x)
     ),
     p AS (
       SELECT s, r, x, weight / sum(weight) OVER (PARTITION BY s, r) AS probability FROM w
     ),
     l AS (
       SELECT s, r, list(probability ORDER BY x) AS probabilities,
              [${Array.from({ length: COMPONENTS }, (_, k) => `sum(probability) FILTER (WHERE (x >> ${COMPONENTS - 1 - k}) & 1 = 1)`).join(', ')}] AS marginals
       FROM p GROUP BY s, r
     )
     SELECT 'bench-' || s, 'r-' || r, TIMESTAMP '2026-01-01' + to_days(r::INTEGER), 'Benchmark scenario ' || s,
            (SELECT string_agg('bench:' || s || '-' || k, ',' ORDER BY k) FROM range(1, ${COMPONENTS + 1}) AS t(k)),
            probabilities, list_transform(probabilities, lambda v: 0.0), marginals, ${MODELS}, 'chain_rule', 'h' || s || '-' || r,
            TIMESTAMP '2026-06-30'
     FROM l`,
  );
}

async function timed<T>(f: () => Promise<T>): Promise<[number, T]> {
  const t0 = performance.now();
  const v = await f();
  return [performance.now() - t0, v];
}

export default async function scenariosBench(args: string[]): Promise<Record<string, unknown>> {
  const n = Number(args[0] ?? 1000);
  const records = Number(args[1] ?? 100);
  const sqlDir = mkdtempSync(join(tmpdir(), 'quorum-bench-scenarios-'));
  for (const f of SCENARIO_FILES) symlinkSync(join(DEFAULT_SQL_DIR, f), join(sqlDir, f));
  const out = join(sqlDir, 'conditionals.parquet');
  const db = await DuckDBInstance.create(':memory:');
  const conn = await db.connect();
  const defs = scenarios(n);
  try {
    await load(conn, n, records);
    const [conditionals] = (await conn.runAndReadAll('SELECT count(*)::INTEGER AS n FROM raw_forecasts WHERE condition IS NOT NULL')).getRows()[0] as [number];
    let project = Infinity;
    let copy = Infinity;
    let counts: Record<string, unknown> = {};
    for (let rep = 0; rep < 3; rep++) {
      const [c] = await timed(() => conn.run(`COPY (SELECT * FROM raw_forecasts WHERE condition IS NOT NULL) TO '${out}' (FORMAT parquet)`));
      copy = Math.min(copy, c);
      const [p] = await timed(async () => {
        await prepareScenarios(conn, { scenarios: defs, runId: 'r-bench-now' });
        await deriveTables(conn, { asOf: new Date(`${AS_OF.replace(' ', 'T')}Z`), sqlDir });
      });
      project = Math.min(project, p);
      counts = (await conn.runAndReadAll(
        `SELECT (SELECT count(*) FROM scenario_worlds WHERE source = 'consensus')::INTEGER AS consensus_worlds,
                (SELECT count(*) FROM scenario_worlds WHERE method = 'chain_rule')::INTEGER AS chain_rule_worlds,
                (SELECT count(*) FROM scenario_record_scores WHERE brier IS NOT NULL)::INTEGER AS scored_records`,
      )).getRowObjectsJS()[0]!;
    }
    console.log(JSON.stringify({ conditionals, copy_ms: Math.round(copy), project_ms: Math.round(project), ...counts }));
    const ratio = Math.round((project / copy) * 100) / 100;
    return { ratio, scenarios: n, peak_rss_mb: Math.round(process.resourceUsage().maxRSS / 1024), copy_ms: Math.round(copy), project_ms: Math.round(project) };
  } finally {
    conn.closeSync();
    db.closeSync();
    rmSync(sqlDir, { recursive: true, force: true });
  }
}
