/**
 * `npm run bench -- structure [sizes=5000,10000,20000]`
 *
 * The structure stage (issue 12) on synthetic questions: links (TF-IDF cosine blocked by
 * category, same_event), theses (the bundled curated ones and computed clusters) and vintages,
 * i.e. `prepareStructure` + sql/derive/96_question_links.sql, 97_theses.sql and
 * 98_thesis_vintages.sql, and the factors (`prepareFactors` with the bundled anchor factors, whose
 * rules attach synthetic questions, + 99_factor_1_tree.sql and 99_factor_2_health.sql over a run
 * of four models' forecasts and a previous consensus of every question), timed at each size on a
 * fresh DuckDB instance. Link computation must not
 * grow with the square of the questions: the fitted log-log slope of time against size is the
 * `exponent` (requirement: <= 1.3), 20,000 questions in under 60 s, peak RSS under 2 GiB.
 *
 * Titles are realistic from the taxonomy's words (data/taxonomy.json): per category, a subject
 * (a taxonomy phrase plus a made-up proper name: events recur across several markets, and there are
 * more of them as the corpus grows, as in a real one), a verb, an object phrase, a deadline; the
 * description repeats the subject with the category's other words. A fraction of questions are
 * restated on another venue (same_event pairs), some negated.
 *
 * Per size a line `{"size":n,"ms":t,"links":k,"theses":m}`; the last line (bench/main.ts) is
 * `{"bench":"structure","exponent":<slope>,"ms_20k":<n>,"peak_rss_mb":<n>}`.
 */
import { mkdtempSync, readFileSync, rmSync, symlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { DuckDBConnection } from '@duckdb/node-api';
import { openUtcInstance } from '../pipeline/warehouse/duckdb.ts';
import { prepareFactors } from '../pipeline/factors/stage.ts';
import { prepareStructure } from '../pipeline/structure/stage.ts';
import { DEFAULT_SQL_DIR, deriveTables, rawTableDdl } from '../pipeline/warehouse/derive.ts';

const here = dirname(fileURLToPath(import.meta.url));
// 25: the shared macros (logit) the thesis and factor files use.
const STRUCTURE_FILES = ['25_score_functions.sql', '96_question_links.sql', '97_theses.sql', '98_thesis_vintages.sql', '99_factor_1_tree.sql', '99_factor_2_health.sql'];
const VENUES = ['polymarket', 'kalshi', 'manifold', 'metaculus'];
const VERBS = ['win', 'reach', 'announce', 'approve', 'ban', 'launch', 'exceed', 'lose', 'join', 'sign', 'cut', 'raise', 'hold', 'leave', 'pass', 'fall below', 'rise above', 'complete', 'cancel', 'confirm'];
const MONTHS = ['January', 'February', 'March', 'April', 'May', 'June', 'July', 'August', 'September', 'October', 'November', 'December'];
const SYLLABLES = ['ka', 'lo', 'mer', 'dan', 'vi', 'tor', 'sel', 'ra', 'bin', 'gu', 'ost', 'el', 'pra', 'zen', 'hol', 'mi', 'tas', 'cor', 'nu', 'ven'];

/** Plain words of the taxonomy's patterns, per category (regex sources with only letters/spaces). */
function taxonomyWords(): Map<string, string[]> {
  const tax = JSON.parse(readFileSync(join(here, '..', 'data', 'taxonomy.json'), 'utf8')) as {
    rules: { category: string; patterns: string[] }[];
  };
  const out = new Map<string, string[]>();
  for (const r of tax.rules) {
    const plain = r.patterns.map((p) => p.replace(/s\?$/, 's')).filter((p) => /^[A-Za-z][A-Za-z' .-]*$/.test(p));
    out.set(r.category, [...(out.get(r.category) ?? []), ...plain]);
  }
  return out;
}

/** Deterministic pseudo-random integer in [0, m) from (i, salt). */
function pick(i: number, salt: number, m: number): number {
  let x = (i * 2654435761 + salt * 40503 + 12345) >>> 0;
  x ^= x >>> 15;
  x = Math.imul(x, 2246822519) >>> 0;
  x ^= x >>> 13;
  return (x >>> 0) % m;
}

/** A made-up proper name (the events' subjects): the pool grows with the corpus. */
function properName(k: number): string {
  const a = SYLLABLES[k % SYLLABLES.length]!;
  const b = SYLLABLES[Math.floor(k / SYLLABLES.length) % SYLLABLES.length]!;
  const c = SYLLABLES[Math.floor(k / SYLLABLES.length ** 2) % SYLLABLES.length]!;
  return (a + b + c).replace(/^./, (s) => s.toUpperCase()) + (k >= SYLLABLES.length ** 3 ? String(k) : '');
}

interface Synthetic {
  question_id: string;
  venue: string;
  title: string;
  description: string;
  category: string;
}

/** n synthetic questions; about one in eight restates another on a different venue (one in four of those negated). */
export function syntheticQuestions(n: number): Synthetic[] {
  const words = taxonomyWords();
  const categories = [...words.keys()];
  const subjects = Math.max(50, Math.floor(n / 6));
  const out: Synthetic[] = [];
  for (let i = 0; i < n; i++) {
    if (i % 8 === 7) {
      const base = out[i - 1 - pick(i, 9, Math.min(i, 50))]!;
      const negate = pick(i, 10, 4) === 0;
      const venue = VENUES[(VENUES.indexOf(base.venue) + 1) % VENUES.length]!;
      out.push({
        question_id: `${venue}:s${i}`,
        venue,
        title: negate ? base.title.replace(/^Will (\S+) /, 'Will $1 not ') : base.title.replace(/^Will /, 'Will '),
        description: base.description,
        category: base.category,
      });
      continue;
    }
    const category = categories[pick(i, 1, categories.length)]!;
    const ws = words.get(category)!;
    const subject = pick(i, 2, subjects);
    const name = properName(subject);
    const topic = ws[subject % ws.length]!;
    const object = ws[pick(i, 3, ws.length)]!;
    const verb = VERBS[pick(subject, 4, VERBS.length)]!;
    const month = MONTHS[pick(i, 5, MONTHS.length)]!;
    const year = 2025 + pick(i, 6, 3);
    const level = (1 + pick(i, 7, 40)) * 5;
    const title = `Will ${name} ${topic} ${verb} ${object} ${level} by ${month} ${year}?`;
    const extra = Array.from({ length: 6 }, (_, k) => ws[pick(i, 20 + k, ws.length)]).join(', ');
    const description =
      `This question resolves YES if ${name} ${topic} does ${verb} ${object} (${level}) before the end of ${month} ${year}, ` +
      `according to the official announcement. Background: ${extra}.`;
    out.push({ question_id: `${VENUES[pick(i, 8, VENUES.length)]}:q${i}`, venue: VENUES[pick(i, 8, VENUES.length)]!, title, description, category });
  }
  return out;
}

/** The tables the structure SQL reads, filled with the synthetic questions (not timed). */
async function load(conn: DuckDBConnection, qs: Synthetic[]): Promise<void> {
  await conn.run(
    'CREATE OR REPLACE TABLE questions (question_id VARCHAR, venue VARCHAR, title VARCHAR, description VARCHAR, url VARCHAR, ' +
      'category VARCHAR, domain VARCHAR, status VARCHAR, outcome DOUBLE, resolved_at TIMESTAMP, ' +
      'latest_market_probability DOUBLE, latest_market_observed_at TIMESTAMP)',
  );
  const app = await conn.createAppender('questions');
  for (const [i, q] of qs.entries()) {
    app.appendVarchar(q.question_id);
    app.appendVarchar(q.venue);
    app.appendVarchar(q.title);
    app.appendVarchar(q.description);
    app.appendNull();
    app.appendVarchar(q.category);
    app.appendVarchar('other');
    app.appendVarchar('active');
    app.appendNull();
    app.appendNull();
    app.appendDouble(pick(i, 30, 99) / 100 + 0.005);
    app.appendNull();
    app.endRow();
  }
  app.flushSync();
  app.closeSync();
  await conn.run(
    `CREATE OR REPLACE TABLE active_predictions AS
     SELECT question_id, (hash(question_id) % 97 + 1) / 99.0 AS consensus, (hash(question_id) % 13) / 100.0 AS disagreement_sd,
            4 AS n_models, 'augmented' AS mode, 'r-bench' AS run_id, TIMESTAMP '2026-01-01' AS forecast_at
     FROM questions`,
  );
  await conn.run(rawTableDdl('thesis_vintages'));
  // What the factor files read besides: the run's forecasts (four models), a previous consensus of
  // every question, the latest run's model calls and runs rows; no resolved question.
  for (const t of ['forecasts', 'model_calls', 'runs'] as const) await conn.run(rawTableDdl(t));
  await conn.run(
    `INSERT INTO raw_forecasts (run_id, question_id, model, mode, created_at, probability)
     SELECT 'r-bench', question_id, 'm' || m, 'augmented', TIMESTAMP '2026-01-01', consensus FROM active_predictions, range(4) AS r(m)`,
  );
  await conn.run(
    `CREATE OR REPLACE TABLE consensus AS
     SELECT question_id, mode, 'r-prev' AS run_id, TIMESTAMP '2025-12-25' AS created_at, 0.5 AS mean FROM active_predictions
     UNION ALL
     SELECT question_id, mode, run_id, forecast_at, consensus FROM active_predictions`,
  );
  await conn.run(`INSERT INTO raw_runs (run_id, status, as_of) VALUES ('r-bench', 'completed', TIMESTAMP '2026-01-01')`);
  await conn.run(
    `INSERT INTO raw_model_calls (run_id, question_id, model, mode, status)
     SELECT 'r-bench', question_id, 'm' || m, 'augmented', 'ok' FROM active_predictions, range(4) AS r(m)`,
  );
  await conn.run(
    `CREATE OR REPLACE TABLE scored_consensus (question_id VARCHAR, mode VARCHAR, is_headline BOOLEAN, market_status VARCHAR,
       brier DOUBLE, market_brier DOUBLE)`,
  );
}

/** One timed structure stage over `qs` on a fresh DuckDB instance, with the resulting counts. */
async function timeStructure(qs: Synthetic[]): Promise<{ ms: number; counts: Record<string, unknown> }> {
  const db = await openUtcInstance();
  const conn = await db.connect();
  try {
    await load(conn, qs);
    const t0 = performance.now();
    await prepareStructure(conn, { runId: 'r20260101T000000Z-bench1' });
    await prepareFactors(conn);
    await deriveTables(conn, { asOf: new Date('2026-01-01T00:00:00Z'), sqlDir: currentSqlDir! });
    const ms = Math.round(performance.now() - t0);
    const counts = (await conn.runAndReadAll(
      `SELECT (SELECT count(*) FROM question_links) AS links,
              (SELECT count(*) FROM question_links WHERE kind = 'same_event') AS same_event,
              (SELECT count(*) FROM theses) AS theses,
              (SELECT count(*) FROM factor_leaves) AS factor_leaves`,
    )).getRowObjectsJS()[0]!;
    return { ms, counts };
  } finally {
    conn.closeSync();
    db.closeSync();
  }
}

/** The temp dir holding links to the structure SQL files (set by the bench). */
let currentSqlDir: string | null = null;

/** Least-squares slope of log(ms) against log(size). */
function logLogSlope(points: { size: number; ms: number }[]): number {
  const xs = points.map((p) => Math.log(p.size));
  const ys = points.map((p) => Math.log(p.ms));
  const mx = xs.reduce((a, b) => a + b, 0) / xs.length;
  const my = ys.reduce((a, b) => a + b, 0) / ys.length;
  let num = 0;
  let den = 0;
  for (let i = 0; i < xs.length; i++) {
    num += (xs[i]! - mx) * (ys[i]! - my);
    den += (xs[i]! - mx) ** 2;
  }
  return num / den;
}

export default async function structureBench(args: string[]): Promise<Record<string, unknown>> {
  const sizes = (args[0] ?? '5000,10000,20000').split(',').map(Number);
  // Only the structure files, run by the pipeline's own derive (run_params included).
  const sqlDir = mkdtempSync(join(tmpdir(), 'quorum-bench-structure-'));
  for (const f of STRUCTURE_FILES) symlinkSync(join(DEFAULT_SQL_DIR, f), join(sqlDir, f));
  currentSqlDir = sqlDir;
  const points: { size: number; ms: number }[] = [];
  try {
    // A warm-up at 1,000 questions (not reported): the first run pays DuckDB's and V8's start-up.
    for (const [k, size] of [1000, ...sizes].entries()) {
      const qs = syntheticQuestions(size);
      // Best of two runs on fresh instances: a shared machine's other load only ever adds time.
      let ms = Infinity;
      let counts: Record<string, unknown> = {};
      for (let rep = 0; rep < 2; rep++) {
        const run = await timeStructure(qs);
        if (run.ms < ms) ms = run.ms;
        counts = run.counts;
      }
      if (k === 0) continue;
      console.log(JSON.stringify({ size, ms, links: Number(counts.links), same_event: Number(counts.same_event), theses: Number(counts.theses), factor_leaves: Number(counts.factor_leaves) }));
      points.push({ size, ms });
    }
  } finally {
    rmSync(sqlDir, { recursive: true, force: true });
  }
  const exponent = Math.round(logLogSlope(points) * 1000) / 1000;
  const ms20k = points.find((p) => p.size === 20_000)?.ms ?? null;
  const peakRssMb = Math.round(process.resourceUsage().maxRSS / 1024);
  return { exponent, ms_20k: ms20k, peak_rss_mb: peakRssMb };
}
