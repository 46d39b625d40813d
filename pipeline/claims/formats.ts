/**
 * The claim import formats (issue 11; documented in pipeline/claims/README.md): three bundled
 * datasets and one generic CSV for operators' own claims. Each parser reads its files completely
 * and returns claims whose source is still a name (slugs are assigned by the importer against the
 * warehouse, see slug.ts); any malformed record throws an ImportError naming file, line and field,
 * and nothing is returned. The output depends only on the files and `now`.
 */
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { parseCsv, CsvSyntaxError } from '../import/csv.ts';
import { ImportError } from '../import/import-error.ts';
import type { RawRow } from '../warehouse/tables.ts';

export const CLAIM_FORMATS = ['fte-polls', 'fte-forecasts', 'cbo', 'csv'] as const;
export type ClaimFormat = (typeof CLAIM_FORMATS)[number];

export function isClaimFormat(s: string): s is ClaimFormat {
  return (CLAIM_FORMATS as readonly string[]).includes(s);
}

/**
 * The provenance_dataset of each bundled format's claims. A stored source is matched by name only
 * by an import of the same origin (import.ts): these datasets, or `csv` (operators' claims, whose
 * provenance_dataset is `csv:<directory>`).
 */
export const DATASETS = {
  'fte-polls': 'fte-pollster-raw-polls',
  'fte-forecasts': 'fte-election-forecasts',
  cbo: 'cbo-budget-projections',
} as const satisfies Record<Exclude<ClaimFormat, 'csv'>, string>;

export const SOURCE_KINDS = ['pollster', 'forecaster', 'institution', 'market', 'ai_model', 'consensus', 'media', 'other'] as const;
export type ClaimSourceKind = (typeof SOURCE_KINDS)[number];

/** A claim row before its source has a slug. */
export type ClaimDraft = Omit<RawRow<'claims'>, 'source_slug'> & { source_name: string };

/** A source as the data describes it (its slug comes later). */
export interface SourceDraft {
  name: string;
  kind: ClaimSourceKind;
  url: string | null;
  description: string | null;
  attribution: string | null;
}

/** A record skipped as an exact repeat of an earlier one (same claim, every field equal). */
export interface DuplicateRecord {
  file: string;
  line: number;
  /** The line of the record it repeats (the one imported). */
  first_line: number;
}

export interface ParsedClaims {
  claims: ClaimDraft[];
  sources: SourceDraft[];
  /** Exact repeats skipped, in file order (not in `claims`). */
  duplicates: DuplicateRecord[];
}

// ---------------------------------------------------------------------------------------------
// Attribution lines, as each dataset's README asks.

export const ATTRIBUTION = {
  polls:
    'Pollster ratings raw polls (2023) by FiveThirtyEight / ABC News, https://github.com/fivethirtyeight/data ' +
    '(pollster-ratings/2023/raw-polls.csv), licensed CC BY 4.0. Unmodified.',
  forecasts:
    'FiveThirtyEight election forecast data (forecast_results_2018.csv, historical-senate-predictions.csv) by ' +
    'FiveThirtyEight / ABC News, https://github.com/fivethirtyeight/data, licensed CC BY 4.0. Unmodified.',
  cbo:
    "Congressional Budget Office, Evaluating CBO's Projections (https://github.com/US-CBO/eval-projections), " +
    'output_data/deficit_projection_errors.csv and debt_projection_errors.csv. Unmodified.',
} as const;

/** Poll margins within this many points of the result count as within tolerance (value claims). */
export const POLL_TOLERANCE_POINTS = 5;
/** CBO projections within this share of the year's GDP of the actual value count as within tolerance. */
export const CBO_TOLERANCE_GDP_SHARE = 0.005;
/**
 * The longest horizon a claim may have, in days (100 years; every format, generic-sql.ts too).
 * Longer is a wrong date or a wrong number, not a forecast, and the track records bucket horizons
 * as INTEGER years (sql/derive/90_claims.sql): an absurd one (1e12) would fail every run.
 */
export const MAX_HORIZON_DAYS = 36_525;
/**
 * The earliest date a claim may be made (the generic format's `made_at`, generic-sql.ts): the
 * bundled formats read years 1900-2100; an earlier one is a wrong year (0024 for 2024).
 */
export const EARLIEST_CLAIM_DATE = '1900-01-01';
/**
 * The largest magnitude of a number of an operator's claim (generic-sql.ts: value, realized value,
 * threshold, tolerance; the bundled formats' own range checks keep theirs far smaller). A finite
 * number is not enough: the track records subtract and sum them (error = value − realized, the
 * reference windows' sums, the means), and two finite values near 1.8e308 give an infinite error
 * (QA: value 1.5e308 and realized −1.5e308 stored, the source's mae and bias Infinity, the JSON
 * export `"mae":Infinity`, which no JSON parser reads, and the API's mae null beside n 2). No
 * quantity anyone forecasts comes near 1e100.
 */
export const MAX_ABS_VALUE = 1e100;

/**
 * The prefixes of the bundled datasets' claim ids (the `claimId`s below). The `csv` format refuses
 * them (generic-sql.ts): the raw key is claim_id alone, and an operator's `fte-polls:26013:87909`
 * took the poll's id, so the bundled import, which skips stored keys, then dropped the poll silently
 * (QA: written 1 of 2, changed 0, the pollster's track record one poll short).
 */
export const BUNDLED_CLAIM_ID_PREFIXES = ['fte-polls:', 'fte-2018:', 'fte-senate:', 'cbo:'] as const;

// ---------------------------------------------------------------------------------------------
// Reading helpers

interface Rec {
  line: number;
  get: (field: string) => string;
  /** The file's header names and this record's fields (both trimmed), for comparing records. */
  header: readonly string[];
  values: readonly string[];
}

async function readText(path: string, what: string): Promise<string> {
  try {
    return await readFile(path, 'utf8');
  } catch (e) {
    const code = (e as NodeJS.ErrnoException).code;
    throw new ImportError(path, null, null, code === 'ENOENT' ? `required ${what} file is missing` : `cannot read: ${(e as Error).message}`);
  }
}

/** CSV records by header name; the header must hold `required`; every row must be as wide as it. */
export function csvRecords(text: string, file: string, required: readonly string[]): Rec[] {
  let records;
  try {
    records = parseCsv(text);
  } catch (e) {
    if (e instanceof CsvSyntaxError) throw new ImportError(file, e.line, null, e.message);
    throw e;
  }
  const header = records[0];
  if (!header) throw new ImportError(file, 1, null, 'empty file (expected a CSV header)');
  const names = header.fields.map((f) => f.trim());
  const index = new Map(names.map((f, i) => [f, i]));
  for (const col of required) if (!index.has(col)) throw new ImportError(file, 1, col, 'missing required column in header');
  const out: Rec[] = [];
  for (const { line, fields } of records.slice(1)) {
    if (fields.length === 1 && fields[0] === '') continue; // a blank line
    if (fields.length !== header.fields.length) {
      const field = fields.length < header.fields.length ? header.fields[fields.length]! : '(extra)';
      throw new ImportError(file, line, field, `expected ${header.fields.length} fields, got ${fields.length} (truncated or malformed row)`);
    }
    const values = fields.map((f) => f.trim());
    out.push({ line, get: (f) => values[index.get(f) ?? -1] ?? '', header: names, values });
  }
  if (out.length === 0) throw new ImportError(file, null, null, 'no data rows');
  return out;
}

const NUMBER = /^[-+]?(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][-+]?\d+)?$/;

function num(r: Rec, file: string, field: string, opts: { optional?: boolean; min?: number; max?: number } = {}): number | null {
  const t = r.get(field);
  if (t === '') {
    if (opts.optional) return null;
    throw new ImportError(file, r.line, field, 'missing required value');
  }
  if (!NUMBER.test(t)) throw new ImportError(file, r.line, field, `expected a number, got ${JSON.stringify(t.slice(0, 40))}`);
  const v = Number(t);
  if (!Number.isFinite(v)) throw new ImportError(file, r.line, field, 'expected a finite number');
  if ((opts.min !== undefined && v < opts.min) || (opts.max !== undefined && v > opts.max)) {
    throw new ImportError(file, r.line, field, `${t} is outside [${opts.min ?? '-inf'}, ${opts.max ?? 'inf'}]`);
  }
  return v;
}

function reqNum(r: Rec, file: string, field: string, opts: { min?: number; max?: number } = {}): number {
  return num(r, file, field, opts)!;
}

function text(r: Rec, file: string, field: string): string {
  const t = r.get(field);
  if (t === '') throw new ImportError(file, r.line, field, 'missing required value');
  return t;
}

/** A date as the file spells it: `m/d/YYYY`, `m/d/YY` (20YY) or `YYYY-MM-DD`; UTC midnight. */
function dateOf(r: Rec, file: string, field: string): Date {
  const t = text(r, file, field);
  let y: number, m: number, d: number;
  let match = /^(\d{1,2})\/(\d{1,2})\/(\d{2}|\d{4})$/.exec(t);
  if (match) {
    [m, d, y] = [Number(match[1]), Number(match[2]), Number(match[3])];
    if (match[3]!.length === 2) y += 2000;
  } else if ((match = /^(\d{4})-(\d{2})-(\d{2})$/.exec(t))) {
    [y, m, d] = [Number(match[1]), Number(match[2]), Number(match[3])];
  } else {
    throw new ImportError(file, r.line, field, `expected a date (m/d/YYYY or YYYY-MM-DD), got ${JSON.stringify(t.slice(0, 40))}`);
  }
  const at = new Date(Date.UTC(y, m - 1, d));
  if (at.getUTCMonth() !== m - 1 || at.getUTCDate() !== d) throw new ImportError(file, r.line, field, `not a calendar date: ${t}`);
  return at;
}

function days(from: Date, to: Date): number {
  return (to.getTime() - from.getTime()) / 86_400_000;
}

/**
 * The horizon from `made` (the record's `field`) to `resolved`, in days: in [0, MAX_HORIZON_DAYS]
 * or an ImportError (a claim made after its resolution, or a century away, is a wrong date).
 */
function horizonDays(r: Rec, file: string, field: string, made: Date, resolved: Date): number {
  const h = days(made, resolved);
  if (!(h >= 0 && h <= MAX_HORIZON_DAYS)) {
    throw new ImportError(file, r.line, field,
      `horizon ${h} days from ${made.toISOString().slice(0, 10)} to ${resolved.toISOString().slice(0, 10)} is outside [0, ${MAX_HORIZON_DAYS}]`);
  }
  return h;
}

/**
 * The records of one file by the claim (or claim part) each makes, its `key`. The first record of
 * a key is used. A later one whose every field equals it is an exact repeat: skipped and listed in
 * `duplicates` (the bundled files are published datasets imported unmodified; a repeated row is
 * the same claim once more). One that differs in any field is an ImportError at its own line
 * naming the first differing field: both cannot be the claim, and keeping either silently (as the
 * idempotent append would, first wins) hides the conflict.
 */
class FirstRecords {
  private readonly seen = new Map<string, Rec>();

  constructor(
    private readonly file: string,
    private readonly duplicates: DuplicateRecord[],
  ) {}

  /** True when `r` is the first record of `key`, false when it repeats it exactly; throws when it conflicts. */
  isFirst(key: string, r: Rec): boolean {
    const prev = this.seen.get(key);
    if (prev === undefined) {
      this.seen.set(key, r);
      return true;
    }
    const i = r.values.findIndex((v, k) => v !== prev.values[k]);
    if (i < 0) {
      this.duplicates.push({ file: this.file, line: r.line, first_line: prev.line });
      return false;
    }
    const field = r.header[i]!;
    throw new ImportError(this.file, r.line, field,
      `duplicate claim ${key} (first at line ${prev.line}) with a different ${field}: ${JSON.stringify(r.values[i]!.slice(0, 40))}, there ${JSON.stringify(prev.values[i]!.slice(0, 40))}`);
  }
}

/** A claim row with every optional column NULL: formats fill in what they know. */
function blankClaim(now: Date): Omit<ClaimDraft, 'claim_id' | 'source_name' | 'claimed_at' | 'kind'> {
  return {
    question_id: null, claim_text: null, probability_or_direction: null, subject: null, subject_key: null,
    category: null, probability: null, side: null, value: null, unit: null, threshold: null, tolerance: null,
    horizon_days: null, outcome: null, realized_value: null, resolved_at: null, provenance_dataset: null,
    provenance_file: null, provenance_line: null, ingested_at: now,
  };
}

// ---------------------------------------------------------------------------------------------
// fte-polls: FiveThirtyEight's raw polls (raw-polls.csv)

export const POLLS_FILE = 'raw-polls.csv';
const POLL_COLUMNS = ['poll_id', 'question_id', 'race_id', 'race', 'pollster', 'polldate', 'cand1_name', 'cand2_name',
  'cand1_pct', 'cand2_pct', 'margin_poll', 'electiondate', 'margin_actual', 'rightcall'] as const;

/**
 * One claim per poll: kind `direction` ("the poll's leader wins", side = the leader; a poll with a
 * zero margin names no side) with its margin as the value (cand1 − cand2, points). The outcome is
 * the file's own `rightcall` (1 the leader won, 0 lost, 0.5 a tie, spelled ".5"), realized value
 * `margin_actual`. subject_key = the race, for the same-race reference.
 */
export async function parsePolls(dir: string, now: Date): Promise<ParsedClaims> {
  const file = join(dir, POLLS_FILE);
  const recs = csvRecords(await readText(file, 'raw polls'), file, POLL_COLUMNS);
  const claims: ClaimDraft[] = [];
  const pollsters = new Map<string, SourceDraft>();
  const duplicates: DuplicateRecord[] = [];
  const polls = new FirstRecords(file, duplicates);
  for (const r of recs) {
    const claimId = `fte-polls:${text(r, file, 'poll_id')}:${text(r, file, 'question_id')}`;
    if (!polls.isFirst(claimId, r)) continue;
    const pollster = text(r, file, 'pollster');
    const made = dateOf(r, file, 'polldate');
    const election = dateOf(r, file, 'electiondate');
    const margin = reqNum(r, file, 'margin_poll', { min: -100, max: 100 });
    const actual = reqNum(r, file, 'margin_actual', { min: -100, max: 100 });
    const right = r.get('rightcall');
    const outcome = right === '1' ? 1 : right === '0' ? 0 : right === '.5' || right === '0.5' ? 0.5 : null;
    if (outcome === null) throw new ImportError(file, r.line, 'rightcall', `expected 1, 0 or .5, got ${JSON.stringify(right)}`);
    const [c1, c2] = [text(r, file, 'cand1_name'), text(r, file, 'cand2_name')];
    const race = text(r, file, 'race');
    const side = margin > 0 ? c1 : margin < 0 ? c2 : null;
    claims.push({
      ...blankClaim(now),
      claim_id: claimId,
      source_name: pollster,
      claimed_at: made,
      kind: 'direction',
      claim_text: `${pollster}: ${c1} ${r.get('cand1_pct')}, ${c2} ${r.get('cand2_pct')} (${race})`,
      probability_or_direction: side,
      subject: `${race}: ${c1} vs ${c2}`,
      subject_key: `fte-polls:race:${text(r, file, 'race_id')}`,
      category: 'politics',
      side,
      value: margin,
      unit: 'points',
      tolerance: POLL_TOLERANCE_POINTS,
      horizon_days: horizonDays(r, file, 'polldate', made, election),
      outcome,
      realized_value: actual,
      resolved_at: election,
      provenance_dataset: DATASETS['fte-polls'],
      provenance_file: POLLS_FILE,
      provenance_line: r.line,
    });
    if (!pollsters.has(pollster)) {
      pollsters.set(pollster, {
        name: pollster,
        kind: 'pollster',
        url: null,
        description: `Pollster in FiveThirtyEight's pollster-ratings raw polls (rating id ${r.get('pollster_rating_id') || 'none'}).`,
        attribution: ATTRIBUTION.polls,
      });
    }
  }
  return { claims, sources: [...pollsters.values()], duplicates };
}

// ---------------------------------------------------------------------------------------------
// fte-forecasts: FiveThirtyEight's 2018 forecasts (three versions) and 2008–2012 Senate forecasts

export const FORECASTS_2018_FILE = 'forecast_results_2018.csv';
export const SENATE_FILE = 'historical-senate-predictions.csv';
const F2018_COLUMNS = ['cycle', 'branch', 'race', 'forecastdate', 'version', 'Democrat_WinProbability',
  'Republican_WinProbability', 'Democrat_Won', 'Republican_Won', 'uncalled'] as const;
const SENATE_COLUMNS = ['state', 'year', 'candidate', 'forecast_prob', 'result', 'winflag'] as const;
const VERSIONS: Record<string, string> = { lite: 'FiveThirtyEight Lite', classic: 'FiveThirtyEight Classic', deluxe: 'FiveThirtyEight Deluxe' };
/** The 2018 results are as of this date (README: "with the result as of 2018-12-03"). */
const RESULTS_2018_AT = new Date(Date.UTC(2018, 11, 3));

/** US general election day of `year`: the Tuesday after the first Monday of November. */
export function electionDay(year: number): Date {
  const nov1 = new Date(Date.UTC(year, 10, 1)).getUTCDay(); // 0 = Sunday
  const firstMonday = 1 + ((8 - nov1) % 7);
  return new Date(Date.UTC(year, 10, firstMonday + 1));
}

function forecasterSource(name: string, description: string): SourceDraft {
  return { name, kind: 'forecaster', url: 'https://fivethirtyeight.com', description, attribution: ATTRIBUTION.forecasts };
}

/**
 * 2018: one probability claim per race and model version, "the Democrat wins" at
 * Democrat_WinProbability; outcome Democrat_Won, except uncalled races (uncalled = 1), which stay
 * unresolved (their *_Won columns are not a result as of 2018-12-03).
 * Senate 2008–2012: one claim per race, "the favourite wins" at the highest forecast_prob (ties: the
 * first name in code-point order), outcome its winflag. Races have one, two or three candidate rows
 * (a single row is an uncontested race); `result` spells a loss "Loss" or "Lose" and must agree
 * with winflag; each race must have exactly one winner.
 */
export async function parseForecasts(dir: string, now: Date): Promise<ParsedClaims> {
  const claims: ClaimDraft[] = [];
  const sources = new Map<string, SourceDraft>();
  const duplicates: DuplicateRecord[] = [];
  const f2018 = join(dir, FORECASTS_2018_FILE);
  const forecasts = new FirstRecords(f2018, duplicates);
  for (const r of csvRecords(await readText(f2018, '2018 forecasts'), f2018, F2018_COLUMNS)) {
    const version = text(r, f2018, 'version');
    const race = text(r, f2018, 'race');
    const claimId = `fte-2018:${version}:${race}`;
    if (!forecasts.isFirst(claimId, r)) continue;
    const name = VERSIONS[version];
    if (!name) throw new ImportError(f2018, r.line, 'version', `expected lite, classic or deluxe, got ${JSON.stringify(version)}`);
    const made = dateOf(r, f2018, 'forecastdate');
    const pD = reqNum(r, f2018, 'Democrat_WinProbability', { min: 0, max: 1 });
    reqNum(r, f2018, 'Republican_WinProbability', { min: 0, max: 1 });
    const uncalled = reqNum(r, f2018, 'uncalled', { min: 0, max: 1 });
    const dWon = reqNum(r, f2018, 'Democrat_Won', { min: 0, max: 1 });
    const rWon = reqNum(r, f2018, 'Republican_Won', { min: 0, max: 1 });
    if (uncalled === 0 && dWon + rWon !== 1) throw new ImportError(f2018, r.line, 'Democrat_Won', 'a called race needs exactly one of Democrat_Won, Republican_Won');
    const branch = text(r, f2018, 'branch');
    const resolved = uncalled === 0;
    claims.push({
      ...blankClaim(now),
      claim_id: claimId,
      source_name: name,
      claimed_at: made,
      kind: 'probability',
      claim_text: `${name}: the Democrat wins ${branch} race ${race} (${r.get('cycle')}) with probability ${pD}`,
      probability_or_direction: String(pD),
      subject: `${r.get('cycle')} ${branch} ${race}: the Democrat wins`,
      subject_key: `fte-2018:${race}`,
      category: 'politics',
      probability: pD,
      side: 'Democrat',
      horizon_days: horizonDays(r, f2018, 'forecastdate', made, electionDay(made.getUTCFullYear())),
      outcome: resolved ? dWon : null,
      resolved_at: resolved ? RESULTS_2018_AT : null,
      provenance_dataset: DATASETS['fte-forecasts'],
      provenance_file: FORECASTS_2018_FILE,
      provenance_line: r.line,
    });
    if (!sources.has(name)) sources.set(name, forecasterSource(name, `FiveThirtyEight's 2018 midterm model, ${version} version.`));
  }

  const fSen = join(dir, SENATE_FILE);
  const races = new Map<string, { line: number; state: string; year: number; candidate: string; p: number; won: number }[]>();
  // A race's claim is built from its candidates' rows: the key of a row is its candidate.
  const candidates = new FirstRecords(fSen, duplicates);
  for (const r of csvRecords(await readText(fSen, 'historical Senate forecasts'), fSen, SENATE_COLUMNS)) {
    if (!candidates.isFirst(`fte-senate:${r.get('year')}:${r.get('state')}:${text(r, fSen, 'candidate')}`, r)) continue;
    const result = text(r, fSen, 'result');
    const won = reqNum(r, fSen, 'winflag', { min: 0, max: 1 });
    const resultWon = result === 'Win' ? 1 : result === 'Loss' || result === 'Lose' ? 0 : null;
    if (resultWon === null) throw new ImportError(fSen, r.line, 'result', `expected Win, Loss or Lose, got ${JSON.stringify(result)}`);
    if (resultWon !== won) throw new ImportError(fSen, r.line, 'winflag', `winflag ${won} contradicts result ${result}`);
    const year = reqNum(r, fSen, 'year', { min: 1900, max: 2100 });
    if (!Number.isInteger(year)) throw new ImportError(fSen, r.line, 'year', 'expected a whole year');
    const state = text(r, fSen, 'state');
    const key = `${year}|${state}`;
    const list = races.get(key) ?? [];
    list.push({ line: r.line, state, year, candidate: text(r, fSen, 'candidate'), p: reqNum(r, fSen, 'forecast_prob', { min: 0, max: 1 }), won });
    races.set(key, list);
  }
  const senateName = 'FiveThirtyEight';
  const raceLines = new Map<string, number>(); // claim id → the line of its race's first row
  for (const rows of races.values()) {
    const winners = rows.filter((x) => x.won === 1).length;
    if (winners !== 1) throw new ImportError(fSen, rows[0]!.line, 'winflag', `race ${rows[0]!.state} ${rows[0]!.year} has ${winners} winners (expected 1)`);
    const fav = [...rows].sort((a, b) => b.p - a.p || (a.candidate < b.candidate ? -1 : a.candidate > b.candidate ? 1 : 0))[0]!;
    const eday = electionDay(fav.year);
    // Two spellings of a state ("New York", "new york") are two races of the file but one claim id.
    const claimId = `fte-senate:${fav.year}:${fav.state.toLowerCase().replace(/[^a-z0-9]+/g, '-')}`;
    const other = raceLines.get(claimId);
    if (other !== undefined) throw new ImportError(fSen, rows[0]!.line, 'state', `duplicate claim ${claimId}: ${JSON.stringify(fav.state)} is another spelling of the state at line ${other}`);
    raceLines.set(claimId, rows[0]!.line);
    claims.push({
      ...blankClaim(now),
      claim_id: claimId,
      source_name: senateName,
      claimed_at: eday,
      kind: 'probability',
      claim_text: `${senateName}: ${fav.candidate} wins the ${fav.year} ${fav.state} Senate race with probability ${fav.p}`,
      probability_or_direction: String(fav.p),
      subject: `${fav.year} Senate ${fav.state}: ${fav.candidate} wins`,
      subject_key: `fte-senate:${fav.year}:${fav.state}`,
      category: 'politics',
      probability: fav.p,
      side: fav.candidate,
      horizon_days: 0,
      outcome: fav.won,
      resolved_at: eday,
      provenance_dataset: DATASETS['fte-forecasts'],
      provenance_file: SENATE_FILE,
      provenance_line: fav.line,
    });
  }
  if (races.size > 0) sources.set(senateName, forecasterSource(senateName, "FiveThirtyEight's Election Day Senate forecasts, 2008-2012."));
  return { claims, sources: [...sources.values()], duplicates };
}

// ---------------------------------------------------------------------------------------------
// cbo: the Congressional Budget Office's deficit and debt projections

export const CBO_FILES = { deficit: 'deficit_projection_errors.csv', debt: 'debt_projection_errors.csv' } as const;

/**
 * The files each bundled dataset's format reads from its directory (`csv` reads every *.csv
 * there: generic-sql.ts). The CLI checks them before it touches the data directory.
 */
export const CLAIM_FORMAT_FILES: Record<Exclude<ClaimFormat, 'csv'>, readonly string[]> = {
  'fte-polls': [POLLS_FILE],
  'fte-forecasts': [FORECASTS_2018_FILE, SENATE_FILE],
  cbo: Object.values(CBO_FILES),
};
const CBO_COLUMNS = ['component', 'baseline_date', 'projected_fiscal_year', 'projected_year_number', 'value',
  'actual_value', 'GDP', 'adjusted_projection', 'projection_error'] as const;
const CBO_NAME = 'Congressional Budget Office';

/**
 * One value claim per row: "<component> in FY <year> will be <value> $bn", made at baseline_date,
 * realized `actual_value` at the fiscal year's end (30 September). Values are kept as the files
 * give them (deficits negative), so error = value − actual in the same sign for both files. The
 * files' own `projection_error` differs in sign convention (deficit file: −(adjusted − actual);
 * debt file: adjusted − actual): it is not imported, but each row is checked against its file's
 * convention (within 0.01 $bn), so a file with the other convention is rejected.
 */
export async function parseCbo(dir: string, now: Date): Promise<ParsedClaims> {
  const claims: ClaimDraft[] = [];
  const duplicates: DuplicateRecord[] = [];
  for (const [component, name] of Object.entries(CBO_FILES) as [keyof typeof CBO_FILES, string][]) {
    const file = join(dir, name);
    const sign = component === 'deficit' ? -1 : 1;
    const projections = new FirstRecords(file, duplicates);
    for (const r of csvRecords(await readText(file, `CBO ${component}`), file, CBO_COLUMNS)) {
      if (r.get('component') !== component) throw new ImportError(file, r.line, 'component', `expected ${component}, got ${JSON.stringify(r.get('component'))}`);
      const made = dateOf(r, file, 'baseline_date');
      const fy = reqNum(r, file, 'projected_fiscal_year', { min: 1900, max: 2200 });
      // One claim per baseline month and fiscal year (the id): another row of both is a duplicate.
      const claimId = `cbo:${component}:${made.toISOString().slice(0, 7)}:${fy}`;
      if (!projections.isFirst(claimId, r)) continue;
      const yearNo = reqNum(r, file, 'projected_year_number', { min: 1, max: 50 });
      const value = reqNum(r, file, 'value');
      const actual = reqNum(r, file, 'actual_value');
      const gdp = reqNum(r, file, 'GDP', { min: 0 });
      const adjusted = reqNum(r, file, 'adjusted_projection');
      const error = reqNum(r, file, 'projection_error');
      if (Math.abs(error - sign * (adjusted - actual)) > 0.01) {
        throw new ImportError(file, r.line, 'projection_error', `${error} is not ${sign < 0 ? '-' : ''}(adjusted_projection - actual_value) (sign convention of the ${component} file)`);
      }
      const fyEnd = new Date(Date.UTC(fy, 8, 30));
      claims.push({
        ...blankClaim(now),
        claim_id: claimId,
        source_name: CBO_NAME,
        claimed_at: made,
        kind: 'value',
        claim_text: `${CBO_NAME}: the ${component} in FY ${fy} will be ${value} $bn (baseline ${made.toISOString().slice(0, 7)}, year ${yearNo})`,
        probability_or_direction: String(value),
        subject: `US federal ${component === 'debt' ? 'debt held by the public' : 'deficit'} in FY ${fy}`,
        subject_key: `cbo:${component}:${fy}`,
        category: 'economics',
        value,
        unit: 'usd_bn',
        tolerance: CBO_TOLERANCE_GDP_SHARE * gdp,
        horizon_days: horizonDays(r, file, 'baseline_date', made, fyEnd),
        outcome: null,
        realized_value: actual,
        resolved_at: fyEnd,
        provenance_dataset: DATASETS.cbo,
        provenance_file: name,
        provenance_line: r.line,
      });
    }
  }
  return {
    claims,
    duplicates,
    sources: [{ name: CBO_NAME, kind: 'institution', url: 'https://www.cbo.gov', description: 'Baseline projections of the federal deficit and debt.', attribution: ATTRIBUTION.cbo }],
  };
}

// ---------------------------------------------------------------------------------------------
// csv: the generic format for operators' own claims (every *.csv file of the directory), read and
// validated by DuckDB in generic-sql.ts (millions of rows).

/**
 * Columns (header names; order free, extra columns ignored): claim_id, source (the name), made_at,
 * kind (probability | direction | value), subject are required; source_kind (default other),
 * source_url, question_id, subject_key, category (one of the nine CATEGORIES, any case: stored lower
 * case), probability ([0,1], required for probability),
 * side (required for direction), value (required for value), unit, threshold, tolerance,
 * horizon_days, outcome (1, 0 or 0.5), realized_value, resolved_at (required with an outcome or a
 * realized value). A claim id appearing twice in the import is an error, and so is one already
 * stored for another source or with other content (generic-sql.ts firstStoredConflict).
 */
export const GENERIC_REQUIRED = ['claim_id', 'source', 'made_at', 'kind', 'subject'] as const;

/** Parses `dir` in one of the bundled formats (the generic csv format is imported by generic-sql.ts). */
export function parseClaims(format: Exclude<ClaimFormat, 'csv'>, dir: string, now: Date): Promise<ParsedClaims> {
  switch (format) {
    case 'fte-polls':
      return parsePolls(dir, now);
    case 'fte-forecasts':
      return parseForecasts(dir, now);
    case 'cbo':
      return parseCbo(dir, now);
  }
}
