/**
 * Fixture snapshots for the API tests: small derived tables with known values, written as real
 * Parquet by DuckDB with the columns of sql/README.md, plus manifest.json and CURRENT.
 */
import { mkdir, mkdtemp, rename, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { DuckDBInstance, type DuckDBPreparedStatement } from '@duckdb/node-api';

type ColType = 'VARCHAR' | 'DOUBLE' | 'BIGINT' | 'INTEGER' | 'TIMESTAMP' | 'BOOLEAN';
type Row = Record<string, string | number | boolean | null>;

const V = 'VARCHAR';
const D = 'DOUBLE';
const B = 'BIGINT';
const TS = 'TIMESTAMP';

export const SCHEMAS: Record<string, Record<string, ColType>> = {
  accuracy: {
    scope: V, forecaster: V, mode: V, dimension: V, key: V, n: B, brier: D, log_loss: D,
    n_directional: B, n_correct: B, n_no_direction: B, accuracy_pct: D,
  },
  ai_vs_market: {
    scope: V, n: B, ai_brier: D, market_brier: D, skill: D, diff_mean: D, diff_sd: D,
    diff_ci95_lo: D, diff_ci95_hi: D, ai_log_loss: D, market_log_loss: D,
  },
  calibration: {
    forecaster: V, mode: V, bin: 'INTEGER', bin_lo: D, bin_hi: D, n: B, mean_p: D, observed: D,
    wilson_lo: D, wilson_hi: D,
  },
  calibration_summary: {
    forecaster: V, mode: V, n: B, brier: D, log_loss: D, accuracy_pct: D, ece: D, reliability: D,
    resolution: D, uncertainty: D, base_rate: D,
  },
  resolved_predictions: {
    question_id: V, venue: V, venue_market_id: V, title: V, category: V, domain: V, mode: V,
    consensus: D, consensus_median: D, consensus_logit_mean: D, n_models: B, disagreement_sd: D,
    disagreement_range: D, market_probability: D, outcome: D, ai_error: D, market_error: D,
    forecast_at: TS, resolved_at: TS, horizon_bucket: V, source_slug: V, source_name: V,
    source_url: V, evidence_excerpt: V, retrieved_at: TS, providers: V,
  },
};

export type FixtureData = Record<keyof typeof SCHEMAS, Row[]>;

function acc(
  scope: string, forecaster: string, mode: string, dimension: string, key: string,
  n: number, brier: number, correct: number, noDir = 0,
): Row {
  const directional = n - noDir;
  return {
    scope, forecaster, mode, dimension, key, n, brier, log_loss: brier * 3,
    n_directional: directional, n_correct: correct, n_no_direction: noDir,
    accuracy_pct: directional > 0 ? (100 * correct) / directional : null,
  };
}

/**
 * The data of one fixture snapshot. `scale` changes the figures so that swapping snapshots is
 * visible (variant 1: total_resolved 20; variant 2: total_resolved 40).
 */
export function fixtureData(variant: 1 | 2 = 1): FixtureData {
  const k = variant; // multiplies counts
  const b = variant === 1 ? 0 : -0.05; // shifts Briers
  const accuracy: Row[] = [
    // AI headline consensus, scope all
    acc('all', 'consensus', 'headline', 'overall', 'all', 20 * k, 0.18 + b, 14 * k, 1 * k),
    acc('all', 'consensus', 'headline', 'category', 'crypto', 8 * k, 0.15 + b, 6 * k),
    acc('all', 'consensus', 'headline', 'category', 'politics', 12 * k, 0.2 + b, 8 * k, 1 * k),
    acc('all', 'consensus', 'headline', 'domain', 'policy', 12 * k, 0.2 + b, 8 * k, 1 * k),
    acc('all', 'consensus', 'headline', 'domain', 'crypto', 8 * k, 0.15 + b, 6 * k),
    acc('all', 'consensus', 'headline', 'horizon', '8-30', 5 * k, 0.3 + b, 3 * k),
    acc('all', 'consensus', 'headline', 'horizon', '0-7', 15 * k, 0.14 + b, 11 * k, 1 * k),
    acc('all', 'consensus', 'headline', 'tier', 'medium', 6 * k, 0.2 + b, 4 * k),
    acc('all', 'consensus', 'headline', 'tier', 'high', 6 * k, 0.08 + b, 6 * k),
    acc('all', 'consensus', 'headline', 'tier', 'low', 8 * k, 0.24 + b, 4 * k, 1 * k),
    acc('all', 'consensus', 'headline', 'model', 'model-b', 20 * k, 0.2 + b, 13 * k),
    acc('all', 'consensus', 'headline', 'model', 'model-a', 20 * k, 0.19 + b, 14 * k),
    acc('all', 'consensus', 'headline', 'mode', 'augmented', 20 * k, 0.18 + b, 14 * k),
    acc('all', 'consensus', 'headline', 'mode', 'blind', 20 * k, 0.23 + b, 12 * k),
    acc('all', 'consensus', 'headline', 'mode', 'informed', 20 * k, 0.2 + b, 13 * k),
    // market comparators of the headline consensus, scope all
    acc('all', 'market', 'headline', 'overall', 'all', 18 * k, 0.21, 12 * k),
    acc('all', 'market', 'headline', 'category', 'crypto', 7 * k, 0.19, 5 * k),
    acc('all', 'market', 'headline', 'category', 'politics', 11 * k, 0.22, 7 * k),
    acc('all', 'market', 'headline', 'domain', 'policy', 11 * k, 0.22, 7 * k),
    acc('all', 'market', 'headline', 'domain', 'crypto', 7 * k, 0.19, 5 * k),
    acc('all', 'market', 'headline', 'horizon', '0-7', 13 * k, 0.17, 9 * k),
    acc('all', 'market', 'headline', 'horizon', '8-30', 5 * k, 0.31, 3 * k),
    acc('all', 'market', 'headline', 'tier', 'low', 9 * k, 0.25, 4 * k),
    acc('all', 'market', 'blind', 'overall', 'all', 18 * k, 0.215, 12 * k),
    acc('all', 'market', 'informed', 'overall', 'all', 18 * k, 0.212, 12 * k),
    acc('all', 'market', 'augmented', 'overall', 'all', 18 * k, 0.21, 12 * k),
    acc('all', 'market', 'augmented', 'tier', 'low', 9 * k, 0.25, 4 * k),
    // a model, per mode
    acc('all', 'model-a', 'augmented', 'overall', 'all', 20 * k, 0.19 + b, 14 * k),
    acc('all', 'model-a', 'augmented', 'tier', 'high', 10 * k, 0.1 + b, 9 * k),
    acc('all', 'model-a', 'augmented', 'tier', 'low', 10 * k, 0.28 + b, 5 * k),
    acc('all', 'model-a', 'augmented', 'domain', 'policy', 12 * k, 0.2 + b, 8 * k),
    acc('all', 'model-a', 'augmented', 'domain', 'crypto', 8 * k, 0.17 + b, 6 * k),
    acc('all', 'model-a', 'blind', 'overall', 'all', 20 * k, 0.24 + b, 11 * k),
    // the consensus per mode, scope all (non-headline rows must not leak into the summary)
    acc('all', 'consensus', 'augmented', 'overall', 'all', 20 * k, 0.18 + b, 14 * k),
    acc('all', 'consensus', 'augmented', 'category', 'politics', 99, 0.99, 1),
    // scope politics
    acc('politics', 'consensus', 'headline', 'overall', 'all', 12 * k, 0.2 + b, 8 * k, 1 * k),
    acc('politics', 'consensus', 'headline', 'category', 'politics', 12 * k, 0.2 + b, 8 * k, 1 * k),
    acc('politics', 'consensus', 'headline', 'domain', 'policy', 12 * k, 0.2 + b, 8 * k, 1 * k),
    acc('politics', 'consensus', 'headline', 'mode', 'augmented', 12 * k, 0.2 + b, 8 * k, 1 * k),
    acc('politics', 'market', 'headline', 'overall', 'all', 11 * k, 0.22, 7 * k),
    acc('politics', 'market', 'headline', 'category', 'politics', 11 * k, 0.22, 7 * k),
    // scope crypto
    acc('crypto', 'consensus', 'headline', 'overall', 'all', 8 * k, 0.15 + b, 6 * k),
  ];

  const ai_vs_market: Row[] = [
    {
      scope: 'all', n: 18 * k, ai_brier: 0.17 + b, market_brier: 0.21, skill: 1 - (0.17 + b) / 0.21,
      diff_mean: 0.17 + b - 0.21, diff_sd: 0.1, diff_ci95_lo: 0.17 + b - 0.21 - 0.05,
      diff_ci95_hi: 0.17 + b - 0.21 + 0.05, ai_log_loss: 0.5, market_log_loss: 0.6,
    },
    {
      scope: 'politics', n: 1, ai_brier: 0.2, market_brier: 0.22, skill: 1 - 0.2 / 0.22,
      diff_mean: -0.02, diff_sd: null, diff_ci95_lo: null, diff_ci95_hi: null, ai_log_loss: 0.55, market_log_loss: 0.61,
    },
  ];

  const calibration: Row[] = [];
  const calibration_summary: Row[] = [];
  for (const [forecaster, mode, base] of [
    ['consensus', 'headline', 0.18 + b],
    ['market', 'headline', 0.21],
    ['model-a', 'augmented', 0.19 + b],
  ] as const) {
    for (let bin = 0; bin < 10; bin++) {
      const empty = bin === 3;
      calibration.push({
        forecaster, mode, bin, bin_lo: bin / 10, bin_hi: (bin + 1) / 10, n: empty ? 0 : 2 * k,
        mean_p: empty ? null : bin / 10 + 0.05, observed: empty ? null : bin / 10,
        wilson_lo: empty ? null : Math.max(0, bin / 10 - 0.2), wilson_hi: empty ? null : Math.min(1, bin / 10 + 0.2),
      });
    }
    calibration_summary.push({
      forecaster, mode, n: 18 * k, brier: base, log_loss: base * 3, accuracy_pct: 70, ece: 0.05,
      reliability: 0.01, resolution: 0.08, uncertainty: 0.25, base_rate: 0.5,
    });
  }

  return { accuracy, ai_vs_market, calibration, calibration_summary, resolved_predictions: resolvedRows(variant) };
}

const VENUES = ['polymarket', 'kalshi', 'manifold'] as const;

/** 23 resolved predictions (variant 2 adds 2), with tied resolved_at and one NULL resolved_at. */
export function resolvedRows(variant: 1 | 2 = 1): Row[] {
  const rows: Row[] = [];
  const n = variant === 1 ? 23 : 25;
  for (let i = 0; i < n; i++) {
    // Groups of three share a resolved_at: ties are ordered by question_id ascending.
    const day = 1 + Math.floor(i / 3);
    const resolvedAt =
      i === 22 ? null : i === 21 ? '2025-03-28 12:00:00.000123' : `2025-03-${String(day).padStart(2, '0')} 12:00:00`;
    const category = i % 2 === 0 ? 'politics' : 'crypto';
    rows.push({
      question_id: `q:${i}`,
      venue: VENUES[i % 3]!,
      venue_market_id: `m-${i}`,
      title: i === 5 ? 'Will "quotes" and ünïcødé — survive?' : `Question ${i}`,
      category,
      domain: category === 'politics' ? 'policy' : 'crypto',
      mode: 'augmented',
      consensus: 0.6,
      consensus_median: 0.62,
      consensus_logit_mean: 0.61,
      n_models: 4,
      disagreement_sd: 0.05,
      disagreement_range: 0.12,
      market_probability: i === 7 ? null : 0.55,
      outcome: i % 4 === 0 ? 0 : 1,
      ai_error: i % 4 === 0 ? 0.36 : 0.16,
      market_error: i === 7 ? null : i % 4 === 0 ? 0.3025 : 0.2025,
      forecast_at: '2025-02-01 00:00:00',
      resolved_at: resolvedAt,
      horizon_bucket: '31-90',
      source_slug: 'fred',
      source_name: 'FRED',
      source_url: 'https://fred.stlouisfed.org/',
      evidence_excerpt: `excerpt ${i}`,
      retrieved_at: '2025-04-01 00:00:00',
      providers: i === 3 ? 'openai,simulated' : 'simulated',
    });
  }
  return rows;
}

function bindCell(stmt: DuckDBPreparedStatement, index: number, value: Row[string]): void {
  if (value === null) stmt.bindNull(index);
  else if (typeof value === 'string') stmt.bindVarchar(index, value);
  else if (typeof value === 'boolean') stmt.bindBoolean(index, value);
  else stmt.bindDouble(index, value);
}

/** Writes `<dataDir>/snapshots/<id>/` with every table of `data` as Parquet plus manifest.json. */
export async function writeSnapshot(
  dataDir: string,
  id: string,
  data: FixtureData,
  opts: { asOf?: string; createdAt?: string; omitTables?: string[] } = {},
): Promise<string> {
  const dir = path.join(dataDir, 'snapshots', id);
  await mkdir(dir, { recursive: true });
  const instance = await DuckDBInstance.create(':memory:');
  const conn = await instance.connect();
  const tables: string[] = [];
  try {
    for (const [table, columns] of Object.entries(SCHEMAS)) {
      if (opts.omitTables?.includes(table)) continue;
      const names = Object.keys(columns);
      await conn.run(`CREATE TABLE "${table}" (${names.map((c) => `"${c}" ${columns[c]}`).join(', ')})`);
      const stmt = await conn.prepare(
        `INSERT INTO "${table}" SELECT ${names.map((c, i) => `CAST($${i + 1} AS ${columns[c]})`).join(', ')}`,
      );
      for (const row of data[table as keyof FixtureData] ?? []) {
        names.forEach((c, i) => bindCell(stmt, i + 1, row[c] ?? null));
        await stmt.run();
      }
      stmt.destroySync();
      const file = path.join(dir, `${table}.parquet`).replaceAll("'", "''");
      await conn.run(`COPY "${table}" TO '${file}' (FORMAT parquet)`);
      tables.push(table);
    }
  } finally {
    conn.closeSync();
    instance.closeSync();
  }
  const asOf = opts.asOf ?? '2025-04-02T00:00:00.000Z';
  await writeFile(
    path.join(dir, 'manifest.json'),
    JSON.stringify({
      run_id: id,
      as_of: asOf,
      created_at: opts.createdAt ?? '2025-04-02T00:05:00.000Z',
      tables,
      headline_modes: ['augmented', 'informed', 'blind'],
    }),
  );
  return dir;
}

/** Points CURRENT at `id` the way the pipeline does: write a temp file, then rename. */
export async function publish(dataDir: string, id: string): Promise<void> {
  const tmp = path.join(dataDir, `.CURRENT.${process.pid}.${Date.now()}`);
  await writeFile(tmp, `${id}\n`);
  await rename(tmp, path.join(dataDir, 'CURRENT'));
}

export async function tempDataDir(): Promise<{ dir: string; cleanup: () => Promise<void> }> {
  const dir = await mkdtemp(path.join(tmpdir(), 'quorum-api-'));
  return { dir, cleanup: () => rm(dir, { recursive: true, force: true }) };
}
