/**
 * `npm run bench -- claims [claims=1000000] [--regen]`
 *
 * One million synthetic claims (a third each probability, direction and value; 90% resolved) from
 * 10,000 sources in the generic CSV format: `quorum import claims csv` (pipeline/claims/import.ts:
 * DuckDB read, validation, slugs, idempotent append) followed by the whole sql/derive (every track
 * record: 90-94, on top of the other files on an otherwise empty warehouse) and its Parquet export,
 * against one DuckDB COPY of the same claims as a raw-claims Parquet file into a new Parquet file,
 * on the same DuckDB instance. ratio = (import_s + derive_s) / copy_s (requirement: <= 3);
 * peak_rss_mb must stay under 2 GiB.
 *
 * floor_ratio = floor_s / copy_s, floor_s the least any import of the CSV pays: DuckDB reading the
 * file (every field as text: no type checked, nothing validated, no slug, no id) and writing it
 * once as Parquet, as the import writes its part, with no track record computed. It tells how much
 * of `ratio` is left to the project once the bound's own reading and writing is paid.
 *
 * The data is generated with DuckDB SQL in a CHILD process (maxRSS is a high-water mark, so
 * generation must not count), under os.tmpdir()/quorum-bench-claims/<n>/, reused unless --regen.
 */
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { importClaims } from '../pipeline/claims/import.ts';
import { duckdb, openUtcInstance, sqlPath } from '../pipeline/warehouse/duckdb.ts';
import { createRawViews } from '../pipeline/warehouse/raw-views.ts';
import { deriveTables, exportTables } from '../pipeline/warehouse/derive.ts';

const here = dirname(fileURLToPath(import.meta.url));
const SOURCES = 10_000;
const GEN_VERSION = 1;

/** The synthetic claims as generic-format CSV columns (text), from range(n). */
function claimsSelect(n: number): string {
  const day = (expr: string) => `strftime(DATE '2010-01-01' + (${expr})::INTEGER, '%Y-%m-%d')`;
  return `SELECT
    'c' || i AS claim_id,
    'Source ' || (i % ${SOURCES}) AS source,
    CASE (i % ${SOURCES}) % 4 WHEN 0 THEN 'pollster' WHEN 1 THEN 'forecaster' WHEN 2 THEN 'institution' ELSE 'media' END AS source_kind,
    ${day('i % 4000')} AS made_at,
    CASE i % 3 WHEN 0 THEN 'probability' WHEN 1 THEN 'direction' ELSE 'value' END AS kind,
    'Subject ' || (i % 50000) AS subject,
    'race-' || (i % 50000) AS subject_key,
    CASE i % 2 WHEN 0 THEN 'politics' ELSE 'economics' END AS category,
    CASE WHEN i % 3 = 0 THEN ((hash(i) % 1001) / 1000.0)::VARCHAR END AS probability,
    CASE WHEN i % 3 = 1 THEN 'X' END AS side,
    CASE WHEN i % 3 <> 0 THEN ((hash(i * 7) % 4001) / 100.0 - 20)::VARCHAR END AS value,
    CASE WHEN i % 3 <> 0 THEN 'points' END AS unit,
    CASE WHEN i % 3 <> 0 THEN '5' END AS tolerance,
    (i % 700)::VARCHAR AS horizon_days,
    CASE WHEN i % 10 <> 0 AND i % 3 <> 2 THEN (hash(i * 3) % 2)::VARCHAR END AS outcome,
    CASE WHEN i % 10 <> 0 AND i % 3 <> 0 THEN ((hash(i * 5) % 4001) / 100.0 - 20)::VARCHAR END AS realized_value,
    CASE WHEN i % 10 <> 0 THEN ${day('i % 4000 + i % 700')} END AS resolved_at
  FROM range(${n}) AS t(i)`;
}

/** Generates in/claims.csv and claims.parquet (the raw claims schema) under dir (child process). */
async function generate(dir: string, n: number): Promise<void> {
  rmSync(dir, { recursive: true, force: true });
  mkdirSync(join(dir, 'in'), { recursive: true });
  const db = await openUtcInstance({ threads: '2', memory_limit: '2GB' });
  const conn = await db.connect();
  await conn.run(`COPY (${claimsSelect(n)}) TO ${sqlPath(join(dir, 'in', 'claims.csv'))} (HEADER, DELIMITER ',')`);
  // The same claims as raw-claims rows (the warehouse's schema), for the baseline COPY.
  await conn.run(
    `COPY (SELECT claim_id, replace(lower(source), ' ', '-') AS source_slug, NULL::VARCHAR AS question_id,
       made_at::TIMESTAMP AS claimed_at, subject AS claim_text, coalesce(probability, value, side) AS probability_or_direction,
       subject, subject_key, category, kind, probability::DOUBLE AS probability, side, value::DOUBLE AS value, unit,
       NULL::DOUBLE AS threshold, tolerance::DOUBLE AS tolerance, horizon_days::DOUBLE AS horizon_days,
       outcome::DOUBLE AS outcome, realized_value::DOUBLE AS realized_value, resolved_at::TIMESTAMP AS resolved_at,
       'csv:in' AS provenance_dataset, 'claims.csv' AS provenance_file, NULL::BIGINT AS provenance_line,
       TIMESTAMP '2026-01-01' AS ingested_at
     FROM read_csv(${sqlPath(join(dir, 'in', 'claims.csv'))}, header = true, all_varchar = true))
     TO ${sqlPath(join(dir, 'claims.parquet'))} (FORMAT parquet, COMPRESSION zstd)`,
  );
  conn.closeSync();
  db.closeSync();
  writeFileSync(join(dir, 'ok'), String(GEN_VERSION));
}

export default async function claimsBench(args: string[]): Promise<Record<string, unknown>> {
  if (args[0] === '--generate') {
    await generate(args[1]!, Number(args[2]));
    return { generated: true };
  }
  const n = Number(args.find((a) => /^\d+$/.test(a)) ?? 1_000_000);
  const dir = join(tmpdir(), 'quorum-bench-claims', String(n));
  if (args.includes('--regen') || !existsSync(join(dir, 'ok'))) {
    const t0 = performance.now();
    const child = spawnSync(process.execPath, [...process.execArgv, join(here, 'main.ts'), 'claims', '--generate', dir, String(n)], {
      stdio: ['ignore', 'ignore', 'inherit'],
    });
    if (child.status !== 0 || !existsSync(join(dir, 'ok'))) throw new Error(`bench claims: data generation failed (${child.status})`);
    console.error(`generated ${n} claims in ${((performance.now() - t0) / 1000).toFixed(1)} s`);
  }
  const work = mkdtempSync(join(tmpdir(), 'quorum-bench-claims-run-'));
  const db = await duckdb({ threads: 2, memoryLimit: '1500MB', tempDirectory: join(work, 'duckdb_tmp') });
  const conn = await db.connect();
  try {
    // Baseline: one COPY of the claims Parquet.
    let t = performance.now();
    await conn.run(`COPY (SELECT * FROM read_parquet(${sqlPath(join(dir, 'claims.parquet'))})) TO ${sqlPath(join(work, 'copy.parquet'))} (FORMAT parquet, COMPRESSION zstd)`);
    const copy_s = (performance.now() - t) / 1000;

    const root = join(work, 'warehouse');
    t = performance.now();
    const imported = await importClaims(conn, root, 'csv', join(dir, 'in'));
    const import_s = (performance.now() - t) / 1000;
    if (imported.claims.written !== n) throw new Error(`bench claims: imported ${imported.claims.written} of ${n}`);

    t = performance.now();
    await createRawViews(conn, root, { pinned: true }); // as the pipeline scores
    const tables = await deriveTables(conn, { asOf: new Date('2026-01-01T00:00:00Z') });
    const out = join(work, 'snapshot');
    mkdirSync(out);
    await exportTables(conn, tables, out);
    const derive_s = (performance.now() - t) / 1000;
    const sources = Number((await conn.runAndReadAll('SELECT count(*)::BIGINT AS n FROM track_records')).getRowObjectsJS()[0]!.n);
    if (sources < SOURCES) throw new Error(`bench claims: ${sources} track records, expected ${SOURCES}+`);
    const peak_rss_mb = Math.round(process.resourceUsage().maxRSS / 1024);

    t = performance.now();
    await conn.run(`CREATE TEMP TABLE _floor_claims AS SELECT * FROM read_csv(${sqlPath(join(dir, 'in', 'claims.csv'))}, header = true, all_varchar = true)`);
    await conn.run(`COPY _floor_claims TO ${sqlPath(join(work, 'floor.parquet'))} (FORMAT parquet, COMPRESSION zstd)`);
    const floor_s = (performance.now() - t) / 1000;
    console.error(`copy ${copy_s.toFixed(2)} s, import ${import_s.toFixed(2)} s, derive+export ${derive_s.toFixed(2)} s, ${sources} track records; floor (read the CSV, write it as Parquet) ${floor_s.toFixed(2)} s`);
    return {
      ratio: Number(((import_s + derive_s) / copy_s).toFixed(3)),
      peak_rss_mb,
      claims: n,
      floor_ratio: Number((floor_s / copy_s).toFixed(3)),
      copy_s: Number(copy_s.toFixed(3)),
      import_s: Number(import_s.toFixed(3)),
      derive_s: Number(derive_s.toFixed(3)),
      floor_s: Number(floor_s.toFixed(3)),
    };
  } finally {
    conn.closeSync();
    rmSync(work, { recursive: true, force: true });
  }
}
