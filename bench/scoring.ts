/**
 * `npm run bench -- scoring [forecasts=10000000] [--regen]`
 *
 * A full rescore of a synthetic warehouse (default 10 M forecasts: 4 models × 3 modes, many runs,
 * with prices and resolutions) by the project's own sql/derive, against one DuckDB COPY of the same
 * forecasts Parquet into a new Parquet file, measured in the same process with the same settings.
 * ratio = scoring_s / copy_s (requirement: ≤ 2 with the issue-10 tables: leaderboard, disagreement,
 * information value, anchoring, resolution sources and every bootstrap; 1.35 before them);
 * peak_rss_mb must stay under 4 GiB. The bootstraps aggregate per question group first, so their
 * cost does not grow with forecasts × replicates.
 *
 * The synthetic data is generated with DuckDB SQL in a CHILD process (maxRSS is a high-water mark,
 * so generation must not count), under os.tmpdir()/quorum-bench-scoring/<n>/, and reused by later
 * runs with the same size unless --regen is given.
 */
import { spawnSync } from 'node:child_process';
import { openUtcInstance } from '../pipeline/warehouse/duckdb.ts';
import { createRawViews } from '../pipeline/warehouse/raw-views.ts';
import { existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { DuckDBConnection } from '@duckdb/node-api';
import { deriveTables, exportTables } from '../pipeline/warehouse/derive.ts';

const here = dirname(fileURLToPath(import.meta.url));
const GEN_VERSION = 4;
/** Share of model calls that fail (no forecast row); the question count compensates for it. */
const FAILED_CALL_SHARE = 1 / 50;
const MODELS = 4;
const MODES = 3;
const RUNS_PER_QUESTION = 4;

/** Same settings for the baseline and the rescore. */
async function configure(conn: DuckDBConnection, dir: string): Promise<void> {
  const tmp = join(dir, 'duckdb_tmp').replaceAll("'", "''");
  await conn.run(`SET threads = 2`);
  await conn.run(`SET memory_limit = '3GB'`);
  await conn.run(`SET temp_directory = '${tmp}'`);
  await conn.run(`SET preserve_insertion_order = false`);
}

function q(path: string): string {
  return `'${path.replaceAll("'", "''")}'`;
}

/** Generates the raw Parquet files (child process). */
async function generate(dir: string, forecasts: number): Promise<void> {
  rmSync(dir, { recursive: true, force: true });
  mkdirSync(join(dir, 'raw'), { recursive: true });
  const nq = Math.ceil(forecasts / (MODELS * MODES * RUNS_PER_QUESTION * (1 - FAILED_CALL_SHARE)));
  const db = await openUtcInstance();
  const conn = await db.connect();
  await configure(conn, dir);
  // The warehouse's own layout (raw/<table>/run_date=…/run_id=…/part-*.parquet), so the rescore
  // reads it through the pipeline's raw views.
  const raw = (t: string) => {
    mkdirSync(join(dir, 'raw', t, 'run_date=2024-01-01', 'run_id=rbench'), { recursive: true });
    return q(join(dir, 'raw', t, 'run_date=2024-01-01', 'run_id=rbench', 'part-0.parquet'));
  };
  // A question i lives from created_at for 20..420 days; it is forecast by 4 global runs (every
  // 4 hours since 2024-01-01) spread over its life; ~10% of its runs fall after its close time.
  // hash(x) % m gives the pseudo-random draws.
  await conn.run(`
    CREATE TABLE qs AS
    SELECT i,
           'synth:' || i AS question_id,
           ['polymarket','kalshi','manifold','metaculus'][1 + i % 4] AS venue,
           ['politics','world','finance','economics','crypto','tech','science','sports','climate'][1 + (hash(i, 1) % 9)::INTEGER] AS category,
           ['earnings','macro','rates','crypto','commodities','trade','central-banks','policy','other'][1 + (hash(i, 2) % 9)::INTEGER] AS domain,
           (hash(i, 3) % 1200)::INTEGER AS start_run,
           (20 + hash(i, 4) % 400)::INTEGER AS life_days,
           hash(i, 5) % 100 AS fate
    FROM range(${nq}) AS t(i)`);
  await conn.run(`
    COPY (
      SELECT question_id, venue, 'm' || i AS venue_market_id,
             'Will synthetic event ' || i || ' happen before its close date?' AS title,
             'Background of synthetic question ' || i || ': ' || md5(i::VARCHAR) AS description,
             'Resolves YES if the event ' || i || ' is reported by the named source.' AS resolution_criteria,
             'https://example.org/q/' || i AS url, category, domain, ['synthetic', category] AS tags,
             TIMESTAMP '2024-01-01' + to_hours(start_run * 4) - INTERVAL 1 DAY AS created_at,
             TIMESTAMP '2024-01-01' + to_hours(start_run * 4) + to_days(life_days) AS close_time,
             'active' AS status, 'en' AS lang, 'bench' AS origin,
             TIMESTAMP '2026-01-01' + to_seconds(v) AS ingested_at
      FROM qs, range(CASE WHEN hash(i, 6) % 20 = 0 THEN 2 ELSE 1 END) AS r(v)
    ) TO ${raw('questions')} (FORMAT parquet, COMPRESSION zstd)`);
  // Runs of question i: start_run + k * step, step so that the 4 runs span ~110% of its life.
  await conn.run(`
    CREATE TABLE qruns AS
    SELECT i, question_id, k, start_run + k * greatest(1, (life_days * 6 * 11 // 10) // 3) AS run_idx, fate
    FROM qs, range(${RUNS_PER_QUESTION}) AS r(k)`);
  await conn.run(`
    COPY (
      SELECT question_id, venue, TIMESTAMP '2024-01-01' + to_hours(run_idx * 4) - INTERVAL 10 MINUTE AS observed_at,
             ((hash(i, k, 7) % 980) + 10) / 1000.0 AS probability, NULL::DOUBLE AS best_bid,
             NULL::DOUBLE AS best_ask, (hash(i, k, 8) % 100000)::DOUBLE AS volume,
             NULL::DOUBLE AS liquidity, 'bench' AS origin, TIMESTAMP '2026-01-01' AS ingested_at
      FROM qruns JOIN qs USING (i, question_id, fate)
    ) TO ${raw('market_prices')} (FORMAT parquet, COMPRESSION zstd)`);
  // fate < 85: resolved (outcome from the hash), 85..87: annulled, else unresolved.
  await conn.run(`
    COPY (
      SELECT question_id,
             CASE WHEN fate < 85 THEN (hash(i, 9) % 2)::DOUBLE END AS outcome,
             TIMESTAMP '2024-01-01' + to_hours(start_run * 4) + to_days(life_days) + to_hours((hash(i, 10) % 240)::BIGINT) AS resolved_at,
             'fred' AS source_slug, 'https://example.org/source/' || i AS source_url,
             'Excerpt ' || i AS evidence_excerpt, TIMESTAMP '2026-01-01' AS retrieved_at,
             'api' AS method, CASE WHEN fate >= 85 THEN 'market voided' END AS annulled_reason
      FROM qs WHERE fate < 88
    ) TO ${raw('resolutions')} (FORMAT parquet, COMPRESSION zstd)`);
  // Forecasts: 4 models × 3 modes per run of each question; ~2% of calls fail (no row).
  await conn.run(`
    COPY (
      SELECT 'r' || lpad(run_idx::VARCHAR, 6, '0') AS run_id, question_id,
             ['gpt','claude','gemini','deepseek'][1 + m] AS model,
             ['blind','informed','augmented'][1 + d] AS mode,
             TIMESTAMP '2024-01-01' + to_hours(run_idx * 4) AS created_at,
             ((hash(i, k, m, d) % 990) + 5) / 1000.0 AS probability,
             'Reasoning ' || md5((i * 1000 + k * 100 + m * 10 + d)::VARCHAR) || ' weighs base rates, recent news and the market; '
               || md5((i * 1000 + k * 100 + m * 10 + d + 7)::VARCHAR) AS reasoning,
             'en' AS lang,
             ['base rate', 'recent news ' || (hash(i, k) % 50)] AS key_factors,
             CASE WHEN d = 2 THEN ['ev:' || i || ':1', 'ev:' || i || ':2'] ELSE []::VARCHAR[] END AS evidence_ids,
             ['openai','anthropic','google','deepseek'][1 + m] AS provider,
             md5((i * 100 + d)::VARCHAR) AS prompt_hash
      FROM qruns, range(${MODELS}) AS mm(m), range(${MODES}) AS dd(d)
      WHERE hash(i, k, m, d, 11) % 50 <> 0
    ) TO ${raw('forecasts')} (FORMAT parquet, COMPRESSION zstd, ROW_GROUP_SIZE 122880)`);
  await conn.run(`COPY (SELECT 'fred' AS source_slug, 'FRED' AS name, 'government' AS kind,
                   'https://fred.stlouisfed.org' AS url) TO ${raw('sources')} (FORMAT parquet)`);
  const n = await conn.runAndReadAll(`SELECT count(*)::BIGINT FROM read_parquet(${raw('forecasts')})`);
  conn.closeSync();
  db.closeSync();
  writeFileSync(
    join(dir, 'manifest.json'),
    JSON.stringify({ version: GEN_VERSION, requested: forecasts, forecasts: Number(n.getRows()[0]![0]) }),
  );
}

function ensureData(dir: string, forecasts: number, regen: boolean): { forecasts: number } {
  const manifest = join(dir, 'manifest.json');
  const ok = () => {
    if (!existsSync(manifest)) return false;
    const m = JSON.parse(readFileSync(manifest, 'utf8')) as { version: number; requested: number };
    return m.version === GEN_VERSION && m.requested === forecasts;
  };
  if (regen || !ok()) {
    const t0 = performance.now();
    const child = spawnSync(
      process.execPath,
      [...process.execArgv, join(here, 'main.ts'), 'scoring', '--generate', dir, String(forecasts)],
      { stdio: ['ignore', 'ignore', 'inherit'] },
    );
    if (child.status !== 0 || !ok()) throw new Error(`bench scoring: data generation failed (${child.status})`);
    console.error(`generated ${forecasts} forecasts in ${((performance.now() - t0) / 1000).toFixed(1)} s`);
  }
  return JSON.parse(readFileSync(manifest, 'utf8')) as { forecasts: number };
}

export default async function scoringBench(args: string[]): Promise<Record<string, unknown>> {
  if (args[0] === '--generate') {
    await generate(args[1]!, Number(args[2]));
    return { generated: true };
  }
  const regen = args.includes('--regen');
  const forecasts = Number(args.find((a) => /^\d[\d_]*$/.test(a))?.replaceAll('_', '') ?? 10_000_000);
  const dir = join(tmpdir(), 'quorum-bench-scoring', `v2-${forecasts}`);
  const { forecasts: rows } = ensureData(dir, forecasts, regen);
  const raw = (t: string) => join(dir, 'raw', t, 'run_date=2024-01-01', 'run_id=rbench', 'part-0.parquet');
  const out = join(dir, 'out');
  rmSync(out, { recursive: true, force: true });
  mkdirSync(join(out, 'snapshot'), { recursive: true });

  const db = await openUtcInstance();
  const conn = await db.connect();
  await configure(conn, dir);

  // Baseline: one read and one write of every forecast row.
  let t0 = performance.now();
  let c0 = process.cpuUsage();
  await conn.run(
    `COPY (SELECT * FROM read_parquet(${q(raw('forecasts'))})) TO ${q(join(out, 'copy.parquet'))} (FORMAT parquet, COMPRESSION zstd)`,
  );
  const copy_s = (performance.now() - t0) / 1000;
  const copy_cpu = process.cpuUsage(c0);

  // The pipeline's own raw_<table> views over the warehouse (empty typed views for the others).
  await createRawViews(conn, dir);

  t0 = performance.now();
  c0 = process.cpuUsage();
  const tables = await deriveTables(conn, { asOf: new Date('2027-01-01T00:00:00Z') });
  const derive_s = (performance.now() - t0) / 1000;
  const t1 = performance.now();
  await exportTables(conn, tables, join(out, 'snapshot'));
  const export_s = (performance.now() - t1) / 1000;
  const scoring_s = derive_s + export_s;
  const scoring_cpu = process.cpuUsage(c0);
  const cpuSeconds = (u: NodeJS.CpuUsage) => (u.user + u.system) / 1e6;

  const counts: Record<string, number> = {};
  for (const t of ['consensus', 'scored_forecasts', 'scored_consensus', 'accuracy', 'leaderboard', 'disagreement', 'information_value']) {
    const r = await conn.runAndReadAll(`SELECT count(*)::BIGINT FROM ${t}`);
    counts[t] = Number(r.getRows()[0]![0]);
  }
  conn.closeSync();
  db.closeSync();
  const peak_rss_mb = Math.round(process.resourceUsage().maxRSS / 1024);
  return {
    ratio: Number((scoring_s / copy_s).toFixed(3)),
    peak_rss_mb,
    rows,
    scoring_s: Number(scoring_s.toFixed(3)),
    derive_s: Number(derive_s.toFixed(3)),
    export_s: Number(export_s.toFixed(3)),
    copy_s: Number(copy_s.toFixed(3)),
    // CPU time (all DuckDB threads) of the same two phases: steadier than wall time on a busy host.
    cpu_ratio: Number((cpuSeconds(scoring_cpu) / cpuSeconds(copy_cpu)).toFixed(3)),
    scoring_cpu_s: Number(cpuSeconds(scoring_cpu).toFixed(3)),
    copy_cpu_s: Number(cpuSeconds(copy_cpu).toFixed(3)),
    tables: tables.length,
    derived_rows: counts,
  };
}
