/**
 * Import of the bundled ForecastBench market-question extract (data/sample/forecastbench/, CC BY-SA 4.0,
 * see ATTRIBUTION.md there) into rows for the raw tables `questions`, `market_prices`,
 * `resolutions`, `sources` and `lifecycle_events` (pipeline/warehouse/tables.ts).
 *
 * Reads two files of `dir`:
 *  - `questions_market.jsonl`: one question per line and round. A question is identified by its
 *    venue-qualified id `${source}:${id}`; one that appears in several rounds is one question with
 *    one market price per round (`freeze_datetime_value` at `freeze_datetime`) and one version per
 *    round whose text differs from the round before: each version is dated (`ingested_at`) at its
 *    round's freeze time, when that text was public, so a run dated before a round's freeze is shown
 *    the text it could have known (QA: a run dated 2025-10-16 was shown resolution criteria the
 *    venue added by the 2026-03-15 round), and readers of the latest version get the latest round's.
 *  - `resolutions_market.csv`: `resolved=True` rows are outcomes (1/0); `resolved=False` rows carry
 *    the market value on the latest data date, imported as a market price. Rows for questions not
 *    in the JSONL, and repeated (agreeing) resolutions, are reported in `skipped`.
 *
 * All-or-nothing: any malformed record throws an `ImportError` naming file, line and field, and
 * nothing is returned. Pure apart from reading the two files; the output depends only on the file
 * contents and `opts.now` (deterministic).
 */
import { readFile } from 'node:fs/promises';
import { basename, join } from 'node:path';
import { z } from 'zod';
import type { RawRow, RawTableName } from '../warehouse/tables.ts';
import { classify } from '../taxonomy/classify.ts';
import { CsvSyntaxError, parseCsv } from './csv.ts';
import { ImportError } from './import-error.ts';
import { parseInstant } from '../time/instant.ts';
import { marketIdProblem } from '../questions/market-id.ts';

// ---------------------------------------------------------------------------------------------
// Row types derived from the table schemas, so a renamed column is a compile error here.

export type { RawRow };

/** An input row that was read but not imported, and why. */
export interface SkippedRow {
  file: string;
  line: number;
  reason: string;
}

export interface ImportBatch {
  /** Each question as its earliest round had it, dated at that round's freeze time. */
  questions: RawRow<'questions'>[];
  /**
   * Every round's version of a question whose text changed (its first round's included), each dated
   * at its round's freeze time (appended to raw `questions` keyed by (question_id, ingested_at), like
   * the sync's versions).
   */
  question_versions: RawRow<'questions'>[];
  market_prices: RawRow<'market_prices'>[];
  resolutions: RawRow<'resolutions'>[];
  sources: RawRow<'sources'>[];
  lifecycle_events: RawRow<'lifecycle_events'>[];
  skipped: SkippedRow[];
}

export const QUESTIONS_FILE = 'questions_market.jsonl';
export const RESOLUTIONS_FILE = 'resolutions_market.csv';

// ---------------------------------------------------------------------------------------------
// Venues

export const VENUES = ['polymarket', 'manifold', 'metaculus', 'infer'] as const;
export type Venue = (typeof VENUES)[number];

/** `sources` rows for the venues (kind 'market'). */
export const VENUE_SOURCES: Record<Venue, { name: string; url: string }> = {
  polymarket: { name: 'Polymarket', url: 'https://polymarket.com' },
  manifold: { name: 'Manifold Markets', url: 'https://manifold.markets' },
  metaculus: { name: 'Metaculus', url: 'https://www.metaculus.com' },
  infer: { name: 'INFER (RAND Forecasting Initiative)', url: 'https://www.randforecastinginitiative.org' },
};

// ---------------------------------------------------------------------------------------------
// Dates

/** `YYYY-MM-DD` or an ISO-8601 timestamp (pipeline/time/instant.ts); null when not a real instant. */
export const parseTimestamp = parseInstant;

const timestamp = z.string().refine((s) => parseTimestamp(s) !== null, { message: 'unparseable date/time' });
const date = z.string().regex(/^\d{4}-\d{2}-\d{2}$/, 'expected YYYY-MM-DD').refine((s) => parseTimestamp(s) !== null, {
  message: 'not a calendar date',
});
const commit = z.string().regex(/^[0-9a-f]{7,40}$/i, 'expected a git commit hash');
const venue = z.enum(VENUES, { message: `unknown source (expected one of ${VENUES.join(', ')})` });
const probability = z
  .number({ message: 'expected a number' })
  .refine(Number.isFinite, 'expected a finite number')
  .refine((p) => p >= 0 && p <= 1, 'probability outside [0, 1]');

// ---------------------------------------------------------------------------------------------
// Record schemas (one per input file)

/**
 * The venue's id of a question (`<source>:` is put before it): the grammar of ../questions/
 * market-id.ts, which the API's paths, filters and cursors take. ForecastBench's ids are short
 * (numbers, slugs, tickers).
 */
const marketId = z.string().superRefine((id, ctx) => {
  const problem = marketIdProblem(id);
  if (problem !== null) ctx.addIssue({ code: 'custom', message: problem });
});

/** One line of questions_market.jsonl (extra keys are ignored). */
const QuestionRecord = z.object({
  forecast_due_date: date,
  question_set: z.string().min(1),
  id: marketId,
  source: venue,
  question: z.string().trim().min(1, 'empty question text'),
  background: z.string(),
  resolution_criteria: z.string(),
  market_info_resolution_criteria: z.string(),
  market_info_open_datetime: timestamp,
  market_info_close_datetime: timestamp,
  url: z.string(),
  freeze_datetime: timestamp,
  freeze_datetime_value: probability,
  source_path: z.string().min(1),
  source_commit: commit,
});
type QuestionRecord = z.infer<typeof QuestionRecord>;

const BOOL_TEXT = z.enum(['True', 'False'], { message: 'expected True or False' });
const numberText = z
  .string()
  .regex(/^-?(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][-+]?\d+)?$/, 'expected a number')
  .transform(Number)
  .pipe(probability);

/** One data row of resolutions_market.csv (columns by header name; extra columns are ignored). */
const ResolutionRecord = z.object({
  forecast_due_date: date,
  question_set: z.string().min(1),
  id: marketId,
  source: venue,
  resolution_date: date,
  resolved_to: numberText,
  resolved: BOOL_TEXT,
  source_path: z.string().min(1),
  source_commit: commit,
});
type ResolutionRecord = z.infer<typeof ResolutionRecord>;
const RESOLUTION_COLUMNS = Object.keys(ResolutionRecord.shape);

// ---------------------------------------------------------------------------------------------
// Reading and validation helpers

/** Reads a required input file; a missing one is an ImportError naming it. */
async function readRequired(path: string): Promise<string> {
  try {
    return await readFile(path, 'utf8');
  } catch (e) {
    const code = (e as NodeJS.ErrnoException).code;
    const why = code === 'ENOENT' ? 'required ForecastBench file is missing' : `cannot read: ${(e as Error).message}`;
    throw new ImportError(path, null, null, why);
  }
}

/** Validates `value` with `schema`, turning the first zod issue into an ImportError at file:line. */
function validate<T>(schema: z.ZodType<T>, value: unknown, file: string, line: number): T {
  const r = schema.safeParse(value);
  if (r.success) return r.data;
  const issue = r.error.issues[0]!;
  const key = issue.path[0];
  const field = key === undefined ? null : String(key);
  const missing =
    field !== null && typeof value === 'object' && value !== null && !Object.hasOwn(value, field);
  throw new ImportError(file, line, field, missing ? 'missing required field' : issue.message);
}

/** `forecastbench:<file>@<7-char commit>`: the origin of rows derived from one input record. */
function origin(fileName: string, sourceCommit: string): string {
  return `forecastbench:${fileName}@${sourceCommit.slice(0, 7).toLowerCase()}`;
}

function qualifiedId(source: Venue, id: string): string {
  return `${source}:${id}`;
}

/** Parses questions_market.jsonl: every non-final line must be a valid JSON question record. */
export function parseQuestionsJsonl(text: string, file: string): { line: number; record: QuestionRecord }[] {
  if (text.charCodeAt(0) === 0xfeff) text = text.slice(1); // a BOM, as the CSV reader (csv.ts) allows
  const lines = text.split('\n');
  if (lines.at(-1) === '') lines.pop(); // final line break
  const out: { line: number; record: QuestionRecord }[] = [];
  lines.forEach((raw, i) => {
    const line = i + 1;
    const content = raw.endsWith('\r') ? raw.slice(0, -1) : raw;
    if (content.trim() === '') throw new ImportError(file, line, null, 'empty line');
    let json: unknown;
    try {
      json = JSON.parse(content);
    } catch (e) {
      throw new ImportError(file, line, null, `invalid JSON (truncated file?): ${(e as Error).message}`);
    }
    if (typeof json !== 'object' || json === null || Array.isArray(json)) {
      throw new ImportError(file, line, null, 'expected a JSON object');
    }
    out.push({ line, record: validate(QuestionRecord, json, file, line) });
  });
  if (out.length === 0) throw new ImportError(file, null, null, 'no questions in file');
  return out;
}

/** Parses resolutions_market.csv: header with the required columns, then same-width rows. */
export function parseResolutionsCsv(text: string, file: string): { line: number; record: ResolutionRecord }[] {
  let records;
  try {
    records = parseCsv(text);
  } catch (e) {
    if (e instanceof CsvSyntaxError) throw new ImportError(file, e.line, null, e.message);
    throw e;
  }
  const header = records[0];
  if (!header) throw new ImportError(file, 1, null, 'empty file (expected a CSV header)');
  for (const col of RESOLUTION_COLUMNS) {
    if (!header.fields.includes(col)) throw new ImportError(file, 1, col, 'missing required column in header');
  }
  return records.slice(1).map(({ line, fields }) => {
    if (fields.length !== header.fields.length) {
      const field = fields.length < header.fields.length ? header.fields[fields.length]! : '(extra)';
      throw new ImportError(
        file,
        line,
        field,
        `expected ${header.fields.length} fields, got ${fields.length} (truncated or malformed row)`,
      );
    }
    const obj = Object.fromEntries(header.fields.map((name, j) => [name, fields[j]]));
    return { line, record: validate(ResolutionRecord, obj, file, line) };
  });
}

// ---------------------------------------------------------------------------------------------
// Assembly

/** The platform resolution criteria, appended when the platform gave any ("N/A" = none). */
function resolutionCriteria(r: QuestionRecord): string | null {
  const parts = [r.resolution_criteria.trim()];
  const platform = r.market_info_resolution_criteria.trim();
  if (platform !== '' && platform !== 'N/A') parts.push(`Platform resolution criteria: ${platform}`);
  const text = parts.filter((p) => p !== '').join('\n\n');
  return text === '' ? null : text;
}

function nullIfBlank(s: string): string | null {
  return s.trim() === '' ? null : s;
}

interface QuestionEntry {
  /** The latest round's version (its lifecycle and the resolutions' source_url come from it). */
  row: RawRow<'questions'>;
  /** Every round's version, earliest round first. */
  rounds: { row: RawRow<'questions'>; round: string }[];
  venue: Venue;
}

/**
 * When a round's text of a question was known: its freeze time (the question set was public then),
 * or the import time when that is earlier (a freeze in the future of this import's clock).
 */
function knownAt(r: QuestionRecord, now: Date): Date {
  const freeze = parseTimestamp(r.freeze_datetime)!;
  return freeze.getTime() < now.getTime() ? freeze : now;
}

/** The fields a round may change: a round repeating the text before it is no new version. */
const VERSION_FIELDS = ['title', 'description', 'resolution_criteria', 'url', 'category', 'domain', 'tags', 'created_at', 'close_time'] as const;

function sameVersion(a: RawRow<'questions'>, b: RawRow<'questions'>): boolean {
  return VERSION_FIELDS.every((k) => JSON.stringify(a[k]) === JSON.stringify(b[k]));
}

/** Builds the questions row for one record (text of that round, dated when it was known). */
function questionRow(r: QuestionRecord, now: Date): RawRow<'questions'> {
  const description = nullIfBlank(r.background);
  const criteria = resolutionCriteria(r);
  const url = nullIfBlank(r.url);
  const { category, domain, tags } = classify({
    title: r.question,
    description,
    resolution_criteria: criteria,
    venue: r.source,
    url,
  });
  return {
    question_id: qualifiedId(r.source, r.id),
    venue: r.source,
    venue_market_id: r.id,
    title: r.question.trim(),
    description,
    resolution_criteria: criteria,
    url,
    category,
    domain,
    tags,
    created_at: parseTimestamp(r.market_info_open_datetime),
    close_time: parseTimestamp(r.market_info_close_datetime),
    status: 'active',
    lang: 'en',
    origin: origin(r.question_set, r.source_commit),
    ingested_at: knownAt(r, now),
  };
}

function priceRow(questionId: string, v: Venue, at: Date, p: number, from: string, now: Date): RawRow<'market_prices'> {
  return {
    question_id: questionId,
    venue: v,
    observed_at: at,
    probability: p,
    best_bid: null,
    best_ask: null,
    volume: null,
    liquidity: null,
    origin: from,
    ingested_at: now,
  };
}

/** Keeps the first price per (question_id, observed_at); sorts by question then time. */
function dedupePrices(rows: RawRow<'market_prices'>[]): RawRow<'market_prices'>[] {
  const seen = new Map<string, RawRow<'market_prices'>>();
  for (const r of rows) {
    const key = `${r.question_id}\u0000${r.observed_at!.getTime()}`;
    if (!seen.has(key)) seen.set(key, r);
  }
  return [...seen.values()].sort(
    (a, b) =>
      (a.question_id! < b.question_id! ? -1 : a.question_id! > b.question_id! ? 1 : 0) ||
      a.observed_at!.getTime() - b.observed_at!.getTime(),
  );
}

/** Lifecycle: active at listing, closed at close_time (if ≤ now), resolved at resolved_at. */
function lifecycleRows(
  questions: QuestionEntry[],
  resolutions: Map<string, RawRow<'resolutions'>>,
  now: Date,
): RawRow<'lifecycle_events'>[] {
  const out: RawRow<'lifecycle_events'>[] = [];
  for (const { row, venue: v } of questions) {
    const name = VENUE_SOURCES[v].name;
    out.push({ question_id: row.question_id, state: 'active', at: row.created_at, reason: `listed on ${name}` });
    if (row.close_time && row.close_time.getTime() <= now.getTime()) {
      out.push({ question_id: row.question_id, state: 'closed', at: row.close_time, reason: `market closed on ${name}` });
    }
    const res = resolutions.get(row.question_id!);
    if (res) {
      out.push({
        question_id: row.question_id,
        state: 'resolved',
        at: res.resolved_at,
        reason: `resolved ${res.outcome === 1 ? 'YES' : 'NO'} on ${name} (per ForecastBench resolution set)`,
      });
    }
  }
  return out;
}

/**
 * Parses the ForecastBench extract in `dir` into rows for the raw tables.
 * Throws ImportError (file, line, field) on any malformed input; returns nothing partial.
 * `opts.now` stamps ingested_at / retrieved_at and decides which markets count as closed.
 */
export async function parseForecastBench(dir: string, opts: { now: Date }): Promise<ImportBatch> {
  const { now } = opts;
  const qFile = join(dir, QUESTIONS_FILE);
  const rFile = join(dir, RESOLUTIONS_FILE);
  const [qText, rText] = await Promise.all([readRequired(qFile), readRequired(rFile)]);
  const qRecords = parseQuestionsJsonl(qText, qFile);
  const rRecords = parseResolutionsCsv(rText, rFile);

  // Questions: one per venue-qualified id, a version per round (the latest round's is `row`); one
  // price per round.
  const questions = new Map<string, QuestionEntry>();
  const prices: RawRow<'market_prices'>[] = [];
  for (const { record: r } of qRecords) {
    const id = qualifiedId(r.source, r.id);
    const entry = questions.get(id) ?? { row: questionRow(r, now), rounds: [], venue: r.source };
    entry.rounds.push({ row: questionRow(r, now), round: r.forecast_due_date });
    // earliest round first; one round twice in the file: its later line wins, as before
    entry.rounds.sort((a, b) => (a.round < b.round ? -1 : a.round > b.round ? 1 : 0));
    entry.rounds = entry.rounds.filter((x, i, all) => i === all.length - 1 || all[i + 1]!.round !== x.round);
    entry.row = entry.rounds[entry.rounds.length - 1]!.row;
    questions.set(id, entry);
    prices.push(
      priceRow(id, r.source, parseTimestamp(r.freeze_datetime)!, r.freeze_datetime_value, origin(r.question_set, r.source_commit), now),
    );
  }

  // Resolutions: True → outcome (one per question, must agree); False → a later market price.
  const resolutions = new Map<string, RawRow<'resolutions'>>();
  const resolutionLine = new Map<string, number>();
  const skipped: SkippedRow[] = [];
  for (const { line, record: r } of rRecords) {
    const id = qualifiedId(r.source, r.id);
    const q = questions.get(id);
    if (!q) {
      skipped.push({ file: rFile, line, reason: `question ${id} is not in ${QUESTIONS_FILE}` });
      continue;
    }
    const at = parseTimestamp(r.resolution_date)!;
    const setName = basename(r.source_path);
    if (r.resolved === 'False') {
      prices.push(priceRow(id, r.source, at, r.resolved_to, origin(setName, r.source_commit), now));
      continue;
    }
    if (r.resolved_to !== 0 && r.resolved_to !== 1) {
      throw new ImportError(rFile, line, 'resolved_to', `resolved=True requires resolved_to 1.0 or 0.0, got ${r.resolved_to}`);
    }
    const existing = resolutions.get(id);
    if (existing) {
      const first = resolutionLine.get(id)!;
      if (existing.outcome !== r.resolved_to) {
        throw new ImportError(rFile, line, 'resolved_to', `conflicting resolution for ${id}: ${r.resolved_to} here, ${existing.outcome} at line ${first}`);
      }
      if (existing.resolved_at!.getTime() !== at.getTime()) {
        throw new ImportError(rFile, line, 'resolution_date', `conflicting resolution date for ${id}: ${r.resolution_date} here, ${existing.resolved_at!.toISOString().slice(0, 10)} at line ${first}`);
      }
      skipped.push({ file: rFile, line, reason: `duplicate resolution of ${id} (agrees with line ${first})` });
      continue;
    }
    resolutionLine.set(id, line);
    resolutions.set(id, {
      question_id: id,
      outcome: r.resolved_to,
      resolved_at: at,
      source_slug: r.source,
      source_url: q.row.url,
      evidence_excerpt: `ForecastBench resolution set ${origin(setName, r.source_commit).slice('forecastbench:'.length)}: resolved_to=${r.resolved_to.toFixed(1)}`,
      retrieved_at: now,
      method: 'forecastbench-import',
      annulled_reason: null,
    });
  }

  const entries = [...questions.values()];
  const venuesUsed = new Set(entries.map((e) => e.venue));
  const firstVersions: RawRow<'questions'>[] = [];
  const laterVersions: RawRow<'questions'>[] = [];
  for (const e of entries) {
    let last = e.rounds[0]!.row;
    firstVersions.push(last);
    const later: RawRow<'questions'>[] = [];
    for (const { row } of e.rounds.slice(1)) {
      if (sameVersion(row, last) || row.ingested_at!.getTime() <= last.ingested_at!.getTime()) continue;
      later.push(row);
      last = row;
    }
    // A question whose text changed also gets its first round as a version: a question an earlier
    // version imported is stored once with its latest round's text, dated at that import, so without
    // it a run dated at the first round's freeze was still shown the later text there (QA). Where
    // the question row is that first round (stored, or written by this import) it adds nothing.
    if (later.length) laterVersions.push(e.rounds[0]!.row, ...later);
  }
  return {
    questions: firstVersions,
    question_versions: laterVersions,
    market_prices: dedupePrices(prices),
    resolutions: [...resolutions.values()],
    sources: VENUES.filter((v) => venuesUsed.has(v)).map((v) => ({
      source_slug: v,
      name: VENUE_SOURCES[v].name,
      kind: 'market',
      url: VENUE_SOURCES[v].url,
      description: null,
      attribution: null,
    })),
    lifecycle_events: lifecycleRows(entries, resolutions, now),
    skipped,
  };
}
