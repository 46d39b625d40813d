/**
 * The generic CSV claims format, read and validated by DuckDB (issue 11: operators' own claims may
 * be millions of rows; a JavaScript parse and appender would dominate the import). The format is
 * the one documented in formats.ts (`GENERIC_REQUIRED`) and pipeline/claims/README.md; this module
 * is its implementation for `quorum import claims csv <dir>`:
 *
 *  1. every `*.csv` of the directory is read with `read_csv` (every column as text, strict quoting,
 *     the columns named from the header line read by csv-lines.ts: no sniffing, so a malformed
 *     record is an error at its own line) into a temp table, in file order; a record's file and
 *     line follow from its rowid (insertion order: the files' rowid ranges are kept in `ReadFile`s;
 *     the header is line 1 and a record is one line, as quoted line breaks are refused by the line
 *     check below; the blank lines read_csv skips are found by a byte scan beside the read and
 *     added back). Numbering the records in the read instead, by `row_number() OVER ()`, took
 *     longer than the read itself (a window over every record on one thread: 1.4 s of 3.8 s for a
 *     million claims);
 *  2. the same pass evaluates the checks (the first failing one per record, `_failed`); the first
 *     invalid record (file order) is reported as an ImportError (file, line, field) before
 *     anything is written;
 *  3. sources get their slugs in JavaScript (slug.ts: 10,000 names are nothing; the NFC and NFD
 *     spellings of a name are one source), joined back; a claim_id already stored is checked to be
 *     the same claim of the same source (firstStoredConflict), or the import is rejected;
 *  4. the claims (straight from the temp table, joined to their slugs) and sources are appended like every raw append (raw-writer's rules: dedupe on the
 *     natural key within the batch and against what is stored, a `.tmp` part fsynced and renamed).
 */
import { existsSync, mkdirSync, mkdtempSync, readdirSync, rmSync, statSync, symlinkSync, type Stats } from 'node:fs';
import { tmpdir } from 'node:os';
import { commitTempFile } from '../fs/durable.ts';
import { randomBytes } from 'node:crypto';
import { basename, join, resolve } from 'node:path';
import type { DuckDBConnection } from '@duckdb/node-api';
import { ImportError } from '../import/import-error.ts';
import { hasGlobCharacters, sqlFilePath, sqlIdent, sqlPath } from '../warehouse/duckdb.ts';
import { newRunId, rawPartitionDir, runDate } from '../warehouse/layout.ts';
import { rawRelation } from '../warehouse/raw-views.ts';
import { commitParts, dropParts, type PendingPart } from '../warehouse/raw-writer.ts';
import { CATEGORIES, RAW_TABLES, type RawTableName } from '../warehouse/tables.ts';
import { blankLines, fieldCount, fileTraits, type FileTraits, lineEndingProblem, lineShifts, nonUtf8Field, openQuoteField, readHeader, recordLine } from './csv-lines.ts';
import { BUNDLED_CLAIM_ID_PREFIXES, EARLIEST_CLAIM_DATE, GENERIC_REQUIRED, MAX_ABS_VALUE, MAX_HORIZON_DAYS, SOURCE_KINDS } from './formats.ts';
import { assignSlugs, sourceName, type StoredSources } from './slug.ts';

const OPTIONAL = ['source_kind', 'source_url', 'question_id', 'subject_key', 'category', 'probability', 'side', 'value',
  'unit', 'threshold', 'tolerance', 'horizon_days', 'outcome', 'realized_value', 'resolved_at'] as const;

/**
 * TRUE when `c` is present and not a finite number for which `ok` (SQL over the number) holds.
 * DuckDB's DOUBLE cast accepts NaN, inf, Infinity and overflows (1e400 is inf): such values would
 * be stored and then poison every aggregate (a NaN error) or fail the derive's INTEGER casts on
 * every later run. Every `ok` below is false for them (DuckDB orders NaN above every number, and
 * each bounds the number on both sides), so finiteness needs no test of its own, and the field is
 * cast once (a cast per test cost ~0.1 s of CPU at a million claims). The cast also reads digits
 * grouped by `_` (`1_000` is 1000, `1_0.5_0` 10.5), which JavaScript's Number, and so the bundled
 * formats, refuse: a value a spreadsheet or a script wrote so is refused here too (QA: stored as
 * the number it might not mean). `contains` is a byte search, cheap beside the cast.
 */
const NOT_NUMBER = (c: string, ok: (x: string) => string) => `(${c} IS NOT NULL AND (contains(${c}, '_') OR NOT coalesce(${ok(`TRY_CAST(${c} AS DOUBLE)`)}, false)))`;
/** TRUE when `c` is present and not a finite number of magnitude at most MAX_ABS_VALUE (formats.ts). */
const BIG = (c: string) => NOT_NUMBER(c, (x) => `abs(${x}) <= ${MAX_ABS_VALUE}`);
const BIG_REASON = `expected a finite number of magnitude at most ${MAX_ABS_VALUE}`;
/**
 * `c` upper-cased (RFC 3339 allows `t` and `z`, DuckDB's casts do not) with `:00` seconds added
 * after `hh:mm` when absent (DuckDB's timestamp casts need them).
 */
const SECS = (c: string) => `regexp_replace(upper(${c}), '^(\\d{4}-\\d{2}-\\d{2}[T ]\\d{2}:\\d{2})($|[Z+-])', '\\1:00\\2')`;
/**
 * ISO 8601 date or date-time as the generic format allows (`T`, `t` or a space between date and
 * time; seconds and fraction optional; offset `Z`, `z`, `±hh`, `±hh:mm` or `±hhmm`, none: UTC),
 * as a TIMESTAMP in UTC (what raw claims store); NULL when it is not one (2024-02-30 included).
 * Only a time with an offset goes through TIMESTAMPTZ (AT TIME ZONE 'UTC' back to a TIMESTAMP):
 * a date or a time without one already is the UTC timestamp, and the ICU round trip through
 * TIMESTAMPTZ and back cost ~0.1-0.3 µs per value, four times per claim at a million claims.
 */
/**
 * An RFC 3339 offset: hours 00-23, minutes 00-59 (QA: `+99:00` and `+05:99` were taken, the
 * claim moved by four days or 6 h 39 min; DuckDB's TIMESTAMPTZ cast bounds neither).
 */
const OFFSET = '[+-]([01]\\d|2[0-3])(:?[0-5]\\d)?';
const TIME = (c: string) =>
  // A bare date (the common case) skips the regular expression: GLOB (digits only: QA, LIKE's `_`
  // let `2024-01-3x` be 3 January and `-024-01-01` the year 25 BC, DuckDB's DATE cast being
  // lenient) and a DATE cast check it.
  `CASE WHEN ${c} GLOB '[0-9][0-9][0-9][0-9]-[0-9][0-9]-[0-9][0-9]' THEN TRY_CAST(TRY_CAST(${c} AS DATE) AS TIMESTAMP) ` +
  // hours 00-23 and minutes 00-59 (QA: DuckDB's casts take 24:00 as the next day's midnight, and
  // 2024-12-31T24:00 was a claim made in 2025); seconds past 59 the casts refuse
  `WHEN regexp_full_match(${c}, '\\d{4}-\\d{2}-\\d{2}([Tt ]([01]\\d|2[0-3]):[0-5]\\d(:\\d{2}(\\.\\d{1,9})?)?([Zz]|${OFFSET})?)?') ` +
  // an offset: TIMESTAMPTZ, then UTC; none: UTC already (a time ends in `:mm`, `:ss` or a fraction, so `-hh` at the end is an offset)
  `THEN CASE WHEN regexp_matches(${c}, '([Zz]|[+-]\\d{2}(:?\\d{2})?)$') THEN TRY_CAST(${SECS(c)} AS TIMESTAMPTZ) AT TIME ZONE 'UTC' ` +
  `ELSE TRY_CAST(${SECS(c)} AS TIMESTAMP) END END`;

/**
 * `c` is none of `values` (SQL literals), as IN lists of at most IN_LIST_MAX constants. DuckDB's
 * optimizer rewrites a longer IN list into a join, and that join does not keep insertion order,
 * so the rowids of `_gen_in` (the records' lines) no longer followed the file (88% of a million
 * records got another record's line, with 2 threads). `list_contains([...], c)` keeps the order
 * too but builds the list for every chunk (the import took ~0.5 s longer at a million claims).
 */
const IN_LIST_MAX = 4;
function NONE_OF(c: string, values: readonly string[]): string {
  const lists: string[] = [];
  for (let i = 0; i < values.length; i += IN_LIST_MAX) lists.push(`${c} IN (${values.slice(i, i + IN_LIST_MAX).join(', ')})`);
  return `NOT (${lists.join(' OR ')})`;
}

/**
 * The prefixes of the ids of Quorum's own claims, made by the view over the scored forecasts
 * (sql/derive/90_claims.sql `_claims_quorum`: `forecast:<question>:<model>:<mode>`,
 * `consensus:<question>:<mode>`, `price:<question>:<time>`). An imported claim with such an id
 * was a second claim of that id in the published claims (QA: `consensus:polymarket:q1:blind` of
 * a pundit beside the consensus's own; /api/claims/{claim_id} served either).
 */
export const OWN_CLAIM_ID_PREFIXES = ['forecast:', 'consensus:', 'price:'] as const;

/**
 * A question id as the API takes it (api/routes/prediction-params.ts QUESTION_ID, the venue in any
 * case): `<venue>:<market id>`. A claim's question_id is checked against it and stored with its
 * venue lower-cased, as the API folds it, so that `/api/claims/?question_id=` finds the claim (QA:
 * "Fed cut 2023" was stored, and the filter refused it as no question id; "POLYMARKET:abc" was
 * stored as written, and the filter, which folds the venue, never matched it).
 */
const QUESTION_ID_SQL = '[A-Za-z][A-Za-z0-9_-]{0,31}:[A-Za-z0-9_.-]{1,200}';

/**
 * The validation checks in order: [field, reason, SQL condition that is TRUE for a bad record].
 * Columns hold trimmed text, NULL when empty.
 */
const CHECKS: [string | null, string, string][] = [
  // _linebreak looks at every column of the file, the ignored ones too: a line break in any field
  // makes the record two lines, and every later record's line would be off by one.
  [null, 'a line break inside a quoted field is not supported (records are one line each)', '_linebreak'],
  // The record has another number of fields than the header: its field and reason (the number of
  // fields, counted again) are made by widthError when it is the first invalid record (WIDTH_CHECK).
  [null, 'another number of fields than the header', '_width'],
  ['claim_id', 'missing required value', 'claim_id IS NULL'],
  ['claim_id', 'expected 1-200 characters of A-Z a-z 0-9 : . _ - (no slash: the id is a URL path segment)', "NOT regexp_full_match(claim_id, '[A-Za-z0-9][A-Za-z0-9:._-]{0,199}')"],
  ['claim_id', `${OWN_CLAIM_ID_PREFIXES.join(', ')} begin the ids of Quorum's own claims (its models', consensus' and venues'): give this claim another id`,
    OWN_CLAIM_ID_PREFIXES.map((p) => `starts_with(claim_id, '${p}')`).join(' OR ')],
  ['claim_id', `${BUNDLED_CLAIM_ID_PREFIXES.join(', ')} begin the ids of the bundled datasets' claims (polls, forecasts, CBO projections): give this claim another id`,
    BUNDLED_CLAIM_ID_PREFIXES.map((p) => `starts_with(claim_id, '${p}')`).join(' OR ')],
  ['source', 'missing required value', 'source IS NULL'],
  ['made_at', 'missing required value', 'made_at IS NULL'],
  ['made_at', 'expected an ISO 8601 date or time', '_made IS NULL'],
  // _latest: a day after the import's time (a date already today east of UTC is taken). A claim
  // made later was written and counted, and never shown: the derive reads claims made by as_of
  // (QA: 2052 for 2025).
  ['made_at', 'more than a day after this import: a claim is dated when it was made (a wrong year?)', '_made > _latest'],
  // The bundled formats' years are 1900-2100 (formats.ts): a year such as 0024 for 2024 was taken
  // (DuckDB's dates reach back to year 1) and showed as a claim of the first century in the trends.
  ['made_at', `before ${EARLIEST_CLAIM_DATE}: a claim is dated when it was made (a wrong year?)`, `_made < TIMESTAMP '${EARLIEST_CLAIM_DATE}'`],
  ['kind', 'missing required value', 'kind IS NULL'],
  ['kind', 'expected probability, direction or value', NONE_OF('kind', ["'probability'", "'direction'", "'value'"])],
  ['subject', 'missing required value', 'subject IS NULL'],
  // The API's category filter (/api/track-records/, the claims export) takes the nine categories,
  // in any case: a claim's category is one of them, stored lower case (QA: "Politics" and
  // "elections" were stored as written, shown in the track record, and no filter found them).
  ['category', `expected one of the ${CATEGORIES.length} categories (any case): ${CATEGORIES.join(', ')}`,
    // (one written in lower case, the usual one, is found as it is: lower() copies every string)
    `category IS NOT NULL AND ${NONE_OF('category', CATEGORIES.map((c) => `'${c}'`))} AND ${NONE_OF('lower(category)', CATEGORIES.map((c) => `'${c}'`))}`],
  ['question_id', 'expected a question id such as metaculus:1554 (<venue>:<market id>: letters, digits, _ . -)',
    `question_id IS NOT NULL AND NOT regexp_full_match(question_id, '${QUESTION_ID_SQL}')`],
  ['source_kind', `expected one of ${SOURCE_KINDS.join(', ')}`, `source_kind IS NOT NULL AND ${NONE_OF('source_kind', SOURCE_KINDS.map((k) => `'${k}'`))}`],
  ['probability', 'missing required value', "kind = 'probability' AND probability IS NULL"],
  ['probability', 'expected a number in [0, 1]', NOT_NUMBER('probability', (x) => `${x} BETWEEN 0 AND 1`)],
  ['side', 'a direction claim needs a side', "kind = 'direction' AND side IS NULL"],
  ['value', 'missing required value', "kind = 'value' AND value IS NULL"],
  ['value', BIG_REASON, BIG('value')],
  ['threshold', BIG_REASON, BIG('threshold')],
  ['tolerance', `${BIG_REASON}, >= 0`, NOT_NUMBER('tolerance', (x) => `${x} BETWEEN 0 AND ${MAX_ABS_VALUE}`)],
  ['horizon_days', `expected a number of days in [0, ${MAX_HORIZON_DAYS}] (at most 100 years)`,
    NOT_NUMBER('horizon_days', (x) => `${x} BETWEEN 0 AND ${MAX_HORIZON_DAYS}`)],
  ['outcome', 'expected 1, 0 or 0.5', NOT_NUMBER('outcome', (x) => `${x} IN (0::DOUBLE, 0.5::DOUBLE, 1::DOUBLE)`)],
  ['realized_value', BIG_REASON, BIG('realized_value')],
  // A resolution must carry what the claim's kind is scored on (sql/derive/90_claims.sql: a value
  // claim's error needs its realized value, a direction or probability claim's hit and Brier its
  // outcome). QA: a value claim with only an outcome, a direction claim with only a realized value,
  // was stored and counted in its source's n_resolved but in no metric.
  ['realized_value', 'a resolved value claim needs its realized_value (it is scored on it: an outcome alone counts in no metric)',
    "kind = 'value' AND outcome IS NOT NULL AND realized_value IS NULL"],
  ['outcome', 'a resolved direction claim needs its outcome (it is scored on it: a realized value alone counts in no accuracy)',
    "kind = 'direction' AND realized_value IS NOT NULL AND outcome IS NULL"],
  ['outcome', 'a resolved probability claim needs its outcome (it is scored on it: a realized value alone counts in no metric)',
    "kind = 'probability' AND realized_value IS NOT NULL AND outcome IS NULL"],
  ['resolved_at', 'missing required value', '(outcome IS NOT NULL OR realized_value IS NOT NULL) AND resolved_at IS NULL'],
  ['resolved_at', 'expected an ISO 8601 date or time', 'resolved_at IS NOT NULL AND _resolved IS NULL'],
  // As in the bundled formats (formats.ts horizonDays): such a claim is a wrong date, and would be
  // scored as if it had been made before the event it names.
  ['resolved_at', 'resolved before it was made (resolved_at is before made_at)', '_resolved < _made'],
  ['resolved_at', `more than ${MAX_HORIZON_DAYS} days (100 years) after made_at: a wrong date`,
    `epoch(_resolved) - epoch(_made) > ${MAX_HORIZON_DAYS * 86_400}`],
  // An outcome is not known before it happens; the derive hid it until then. An open claim's
  // resolved_at (not stored: no resolution) may be a date to come.
  ['resolved_at', 'resolved (with an outcome or a realized value) more than a day after this import: import the claim open, and again with its resolution once known',
    '(outcome IS NOT NULL OR realized_value IS NOT NULL) AND _resolved > _latest'],
];

/** The index in CHECKS of the line-break check (its field is the one the record's line leaves quoted). */
const LINE_BREAK_CHECK = CHECKS.findIndex(([, , bad]) => bad === '_linebreak');
/** The index in CHECKS of the record-width check (its message counts the record's fields). */
const WIDTH_CHECK = CHECKS.findIndex(([, , bad]) => bad === '_width');

/**
 * What read_csv reads for an absent field (nullstr), which no CSV field holds. A padded field (the
 * record ended before it: null_padding) is then NULL while an empty one is '' (every field is
 * trimmed to NULL when empty anyway): a record with fewer fields than the header, and one with an
 * extra field even when empty, are told apart from a full record (_width). DuckDB's strict reader
 * drops empty fields past its columns without a word (`,`, `,,`, `,""` at the end of a record):
 * with the header's columns only, `c1,Acme,2024-01-01,probability,X,0,7,` (a decimal comma) was
 * stored as probability 0 (QA). It reads one column more than the header now, so that an extra
 * field lands in it; a record longer still is DuckDB's error ("Expected Number of Columns").
 */
const ABSENT = '\u0001quorum:absent\u0001';

/**
 * QUORUM_IMPORT_PROFILE=1: one stderr line per statement of a csv import (wall ms, this process's
 * CPU ms, the statement's start; QUORUM_IMPORT_PROFILE_FULL=1: the whole statement), for finding
 * the slow SQL like QUORUM_DERIVE_PROFILE; off by default.
 */
const PROFILE = process.env.QUORUM_IMPORT_PROFILE === '1';
function profiled(conn: DuckDBConnection): DuckDBConnection {
  const timed = <T>(name: string, sql: string, p: Promise<T>): Promise<T> => {
    const t0 = performance.now();
    const c0 = process.cpuUsage();
    return p.then((v) => {
      const c = process.cpuUsage(c0);
      process.stderr.write(`import ${name} ${Math.round(performance.now() - t0)} ms cpu ${Math.round((c.user + c.system) / 1000)} ${(process.env.QUORUM_IMPORT_PROFILE_FULL ? sql : sql.replace(/\s+/g, ' ').slice(0, 90))}\n`);
      return v;
    });
  };
  return new Proxy(conn, {
    get(target, prop, receiver) {
      const v = Reflect.get(target, prop, receiver) as unknown;
      if ((prop === 'run' || prop === 'runAndReadAll') && typeof v === 'function') {
        return (sql: string, ...rest: unknown[]) => timed(String(prop), sql, (v as (...a: unknown[]) => Promise<unknown>).call(target, sql, ...rest));
      }
      return typeof v === 'function' ? (v as (...a: unknown[]) => unknown).bind(target) : v;
    },
  });
}

function q(s: string): string {
  return `'${s.replaceAll("'", "''")}'`;
}

/** The line of a file's first record (the header is line 1; a record is one line). */
const FIRST_RECORD_LINE = 2;

/**
 * A file read into `_gen_in`: its records are the rowids [start, end), the first at
 * FIRST_RECORD_LINE, each one line further unless blank lines (`blanks`, sorted) come between.
 */
interface ReadFile {
  file: string;
  /** The header's column names. */
  header: readonly string[];
  start: number;
  end: number;
  blanks: readonly number[];
}

/** The file and line of the record at `rowid`. */
function locate(files: readonly ReadFile[], rowid: number): { file: string; line: number } {
  const f = files.find((r) => rowid >= r.start && rowid < r.end)!;
  return { file: f.file, line: recordLine(rowid - f.start, f.blanks) };
}

/**
 * The rows of `_gen_shift` (from_rowid, shift: the records from that rowid on come `shift` lines
 * further down their file than their position says, for the blank lines before them); none when no
 * record follows a blank line (the common case: the provenance is then plain arithmetic, no join).
 */
function shiftRows(files: readonly ReadFile[]): [number, number][] {
  const rows: [number, number][] = [];
  let any = false;
  for (const f of files) {
    if (f.end === f.start) continue;
    const shifts = lineShifts(f.blanks, f.end - f.start);
    any ||= shifts.length > 0;
    // Every file restarts at no shift, unless a blank line right after its header shifts its first record too.
    if (shifts[0]?.[0] !== 0) rows.push([f.start, 0]);
    for (const [i, n] of shifts) rows.push([f.start + i, n]);
  }
  return any ? rows : [];
}

/**
 * SQL for the file name (base name) and line of the record whose rowid is `rowid` (a column
 * expression): one range test per file (a handful), no join; `shift`: the column of the blank
 * lines before the record (from `_gen_shift`), when some file has blank lines between records.
 */
function provenanceSql(files: readonly ReadFile[], rowid: string, shift: string | null): { file: string; line: string } {
  const ranges = files.filter((f) => f.end > f.start);
  const pick = (value: (f: ReadFile) => string) =>
    ranges.length === 0 ? 'NULL' : ranges.length === 1 ? value(ranges[0]!) : `CASE ${ranges.map((f) => `WHEN ${rowid} < ${f.end} THEN ${value(f)}`).join(' ')} END`;
  return {
    file: pick((f) => q(basename(f.file))),
    line: pick((f) => `(${rowid} - ${f.start} + ${FIRST_RECORD_LINE}${shift ? ` + ${shift}` : ''})::BIGINT`),
  };
}

/**
 * The ImportError of a record of `got` fields in a file whose header has `header`'s: the first
 * missing column, or `(extra)` (got null: the line could not be counted again).
 */
function widthError(file: string, line: number | null, header: readonly string[], got: number | null): ImportError {
  const field = got === null || got > header.length ? '(extra)' : header[got] || `column ${got + 1}`;
  return new ImportError(file, line, field, `expected ${header.length} fields, got ${got ?? 'another number'} (truncated or malformed row)`);
}

/**
 * The column of the field whose quote line `line` of `file` leaves open (csv-lines.ts
 * openQuoteField): its header name, `(extra)` past the header's columns, null when not found.
 */
async function quotedFieldName(file: string, line: number, header: readonly string[]): Promise<string | null> {
  return fieldName(header, await openQuoteField(file, line));
}

/** The column of field `at` (0-based) of a record: its header name, `(extra)` past the header's columns; null for null. */
function fieldName(header: readonly string[], at: number | null): string | null {
  if (at === null) return null;
  return at < header.length ? header[at] || `column ${at + 1}` : '(extra)';
}

/**
 * An ImportError for a failed read_csv of `file` (columns `header`): DuckDB names the physical
 * line (columns are explicit, nothing is sniffed), read here with the usual reasons.
 */
async function readError(file: string, header: readonly string[], e: Error): Promise<ImportError> {
  const msg = e.message;
  const at = /CSV Error on Line: (\d+)/.exec(msg) ?? /line:? (\d+)/i.exec(msg);
  const line = at ? Number(at[1]) : null;
  const width = /Expected Number of Columns: (\d+) Found: (\d+)/.exec(msg);
  if (width) return widthError(file, line, header, Number(width[2]));
  if (/unterminated quote/i.test(msg)) {
    return new ImportError(file, line, line === null ? null : await quotedFieldName(file, line, header), 'unterminated quoted field (file truncated?)');
  }
  // DuckDB says so on a later line of its message (the first is only "CSV Error on Line: N").
  const long = /Maximum line size of (\d+) bytes exceeded\. Actual Size:\s*(\d+)/.exec(msg);
  if (long) {
    return new ImportError(file, line, null, `the line is ${Number(long[2]).toLocaleString('en-US')} bytes long: a record is at most ${Number(long[1]).toLocaleString('en-US')} bytes`);
  }
  // DuckDB says so on a later line of its message, which the generic reason below drops.
  if (/not utf-8 encoded|invalid unicode/i.test(msg)) {
    return new ImportError(file, line, line === null ? null : fieldName(header, await nonUtf8Field(file, line)), 'the file is not UTF-8 encoded (a Latin-1 or Windows-1252 export?): save it as UTF-8');
  }
  return new ImportError(file, line, null, `malformed CSV: ${msg.split('\n')[0]}`);
}

/**
 * The characters trimmed from a field's ends: JavaScript's String#trim set (ECMAScript WhiteSpace
 * and LineTerminator: tab, LF, VT, FF, CR, U+FEFF and the Unicode space separators Zs, U+2028,
 * U+2029), as a SQL string of code points for DuckDB's two-argument trim.
 */
const WHITESPACE = [9, 10, 11, 12, 13, 0x20, 0xa0, 0x1680, ...Array.from({ length: 11 }, (_, k) => 0x2000 + k), 0x2028, 0x2029, 0x202f, 0x205f, 0x3000, 0xfeff];
const WHITESPACE_SQL = WHITESPACE.map((c) => `chr(${c})`).join(' || ');

/** Field separators of spreadsheets' other CSV dialects (a locale with a decimal comma uses `;`). */
const OTHER_DELIMITERS: [string, string][] = [[';', "';'"], ['\t', 'tab'], ['|', "'|'"]];

/**
 * A header read as one column that holds another separator is a file in another dialect: said so
 * (otherwise it would be "missing required column claim_id", which sends one looking for a typo).
 */
function checkDelimiter(file: string, header: readonly string[]): void {
  if (header.length !== 1) return;
  const found = OTHER_DELIMITERS.find(([d]) => header[0]!.includes(d));
  if (found) {
    throw new ImportError(file, 1, null, `the header has one column: fields must be comma-separated (found ${found[1]})`);
  }
}

/**
 * A header name that is one of the format's columns written in another case or with a space or
 * `-` for `_` (`Outcome`, `Resolved_At`, `horizon days`, `Question-ID`) is rejected, naming it:
 * such a column was taken for an extra one and ignored (QA: a spreadsheet's `Outcome,Resolved_At`
 * stored every claim open, its resolution dropped silently; a `Claim_ID` was said to be missing).
 */
function checkColumnNames(file: string, header: readonly string[]): void {
  const known = new Set<string>([...GENERIC_REQUIRED, ...OPTIONAL]);
  for (const name of header) {
    if (known.has(name)) continue;
    const col = name.toLowerCase().replace(/[\s-]+/g, '_');
    if (known.has(col)) {
      throw new ImportError(file, 1, col, `column ${JSON.stringify(name)} is not read: columns are named as documented, in lower case (write ${col})`);
    }
  }
}

/**
 * The header of `file`, checked: its delimiter, the documented columns' names and case, each
 * required column present and none named twice (errors at line 1).
 */
async function checkedHeader(file: string): Promise<string[]> {
  let header: string[];
  try {
    header = await readHeader(file);
  } catch (e) {
    if (e instanceof ImportError) throw e;
    throw new ImportError(file, null, null, `cannot read: ${(e as Error).message}`);
  }
  checkDelimiter(file, header);
  checkColumnNames(file, header);
  for (const col of GENERIC_REQUIRED) if (!header.includes(col)) throw new ImportError(file, 1, col, 'missing required column in header');
  const cols = [...GENERIC_REQUIRED, ...OPTIONAL];
  for (const col of cols) if (header.indexOf(col) !== header.lastIndexOf(col)) throw new ImportError(file, 1, col, 'column named twice in the header');
  return header;
}

/**
 * The SELECT that reads the records of `file` (columns `header`) for `_gen_in`: every column of the
 * format as trimmed text (NULL when empty), the line-break, width and empty-record flags, the two
 * times parsed, and `_failed`, the index in CHECKS of the record's first failing check. `traits`:
 * what the file's bytes rule out (fileTraits); `parallel`: false to read on one thread.
 */
function recordsSql(file: string, header: readonly string[], traits: FileTraits, latest: string, parallel: boolean): string {
  const cols = [...GENERIC_REQUIRED, ...OPTIONAL];
  // Columns by position (c0, c1, ...): the header's own names may be anything, extra ones ignored.
  // One more (ABSENT): an extra field lands in it, even an empty one.
  const width = header.length;
  const columns = `{${[...header, ''].map((_, i) => `'c${i}': 'VARCHAR'`).join(', ')}}`;
  // A field is trimmed (WHITESPACE at either end, what JavaScript's String#trim and the header's
  // names trim: a tab, CR, form feed or U+FEFF too, not only the Unicode space separators that
  // DuckDB's one-argument trim removes: QA, "Acme<TAB>" was a second source, acme-2) and NULL when
  // empty. trim copies every string (0.6 s of CPU at a million claims, a third of the read), so a
  // field of a plain record (_plain: all ASCII, no tab, VT, FF or CR anywhere) that starts with a
  // printable character and does not end in a space, the only other ASCII whitespace, is taken as
  // it is (trim would return it unchanged): every other field is trimmed. "Starts with a printable
  // character" is `c >= '!'`: in an all-ASCII record that is a first byte of 0x21 or more, what
  // `ascii(c) > 32` tested, but a byte comparison of the string's inlined prefix instead of a
  // UTF-8 decode (the guards of 17 fields cost ~0.06 s less CPU at a million claims).
  // An empty field ('': ABSENT is what read_csv reads as NULL) is NULL without a trim (the bench's
  // records have eight empty fields each: trimming them took ~1.5 s more CPU at a million claims).
  const field = (i: number) =>
    `CASE WHEN c${i} = '' THEN NULL WHEN _plain AND c${i} >= '!' AND NOT suffix(c${i}, ' ') THEN c${i} ELSE nullif(trim(c${i}, ${WHITESPACE_SQL}), '') END`;
  const select = cols
    .map((c) => (header.includes(c) ? `${field(header.indexOf(c))} AS ${sqlIdent(c)}` : `NULL::VARCHAR AS ${sqlIdent(c)}`))
    .join(', ');
  // The record's fields, every column of the file, the ignored ones too (CHECKS[0]: a line break
  // in any of them; concat reads NULL as ''), computed once for the line break and _plain.
  const line = `concat(${[...header, ''].map((_, i) => `c${i}`).join(', ')}, '')`;
  // What the file's bytes rule out for every record (csv-lines.ts fileTraits) is not tested per
  // record: an all-ASCII file without tab, VT, FF or CR has only plain records, and a file without
  // a quote no line break in a field. Building _line (concat of every field) and testing it cost
  // ~0.2 s of CPU at a million claims (the concat 0.14 s, _plain 0.06 s), the byte scan ~0.03 s.
  const plain = traits.plain
    ? 'true'
    : 'strlen(_line) = length(_line) AND NOT contains(_line, chr(9)) AND NOT contains(_line, chr(13)) AND NOT contains(_line, chr(11)) AND NOT contains(_line, chr(12))';
  const lineBreak = traits.unquoted ? 'false' : 'contains(_line, chr(10))';
  // A record of only empty fields (`,,,,,,,`: a spreadsheet's empty row, whitespace or "" fields
  // too) is skipped like a blank line: kept in _gen_in (its rowid keeps the later records' lines
  // exact) but neither checked nor written (QA: it was rejected at claim_id). A line break in it
  // is still refused (CHECKS[0]). In a plain file without quotes no _line is built: a record
  // whose first field starts with a printable character is not empty (its _line starts with it),
  // and the others (an empty or blank first field) are tested on their concatenated fields.
  const bare = traits.plain && traits.unquoted;
  const empty = bare
    ? `CASE WHEN c0 >= '!' THEN false ELSE trim(${line}, ${WHITESPACE_SQL}) = '' END AS _empty`
    : `NOT ${lineBreak} AND CASE WHEN _plain AND _line >= '!' THEN false ELSE trim(_line, ${WHITESPACE_SQL}) = '' END AS _empty`;
  // The two times are parsed once here (validation and staging both read _made, _resolved).
  // The checks are evaluated in the same pass (_failed: the index of the first failing check).
  const cases = CHECKS.map(([, , bad], i) => `WHEN ${bad} THEN ${i}`).join(' ');
  return (
    `SELECT *, CASE WHEN _empty THEN NULL ${cases} END AS _failed FROM (` +
    `SELECT *, ${TIME('made_at')} AS _made, ${TIME('resolved_at')} AS _resolved, ${latest} AS _latest FROM (` +
    `SELECT ${select}, ${lineBreak} AS _linebreak, (c${width - 1} IS NULL OR c${width} IS NOT NULL) AS _width, ${empty} FROM (` +
    `SELECT *, ${plain} AS _plain FROM (` +
    `SELECT *${bare ? '' : `, ${line} AS _line`} ` +
    `FROM read_csv(${sqlFilePath(file)}, header = false, skip = 1, auto_detect = false, columns = ${columns}, ` +
    `delim = ',', quote = '"', escape = '"', strict_mode = true, null_padding = true, nullstr = ${q(ABSENT)}${parallel ? '' : ', parallel = false'})))))`
  );
}

/**
 * Reads one CSV into `_gen_in` (created by the first file, appended to by the others; `start`: the
 * rows already there); errors name the file and line. Returns the rowid range of its records and
 * its blank lines.
 */
async function readOne(conn: DuckDBConnection, file: string, first: boolean, start: number, latest: string): Promise<ReadFile> {
  const header = await checkedHeader(file);
  const traits = await fileTraits(file).catch((e: Error) => {
    throw new ImportError(file, null, null, `cannot read: ${e.message}`);
  });
  const read = readablePath(file);
  try {
    return await readRecords(conn, file, read.path, header, traits, first, start, latest);
  } finally {
    read.release();
  }
}

/**
 * The path DuckDB reads `file` by, and what to remove once read: the file's own path, or, when its
 * path holds a glob character (hasGlobCharacters: DuckDB would read it as a pattern, an operator's
 * directory `f*` its sibling `fx` too, outside test), a link to it named plainly in a private
 * temporary directory.
 */
function readablePath(file: string): { path: string; release: () => void } {
  if (!hasGlobCharacters(file)) return { path: file, release: () => {} };
  const dir = mkdtempSync(join(tmpdir(), 'quorum-csv-link-'));
  const release = () => rmSync(dir, { recursive: true, force: true });
  const path = join(dir, 'claims.csv');
  try {
    if (hasGlobCharacters(path)) throw new Error(`the temporary directory ${dir} holds one too`);
    symlinkSync(resolve(file), path);
  } catch (e) {
    release();
    throw new ImportError(file, null, null, `cannot read: its path holds * ? [ ] { or }, which DuckDB reads as a glob, and ${(e as Error).message}`);
  }
  return { path, release };
}

/** readOne's read of `file` through `path` (the file itself, or a link to it: readablePath) into `_gen_in`. */
async function readRecords(
  conn: DuckDBConnection, file: string, path: string, header: readonly string[], traits: FileTraits, first: boolean, start: number, latest: string,
): Promise<ReadFile> {
  const body = (parallel: boolean) => recordsSql(path, header, traits, latest, parallel);
  const statement = (parallel: boolean) => (first ? `CREATE OR REPLACE TEMP TABLE _gen_in AS ${body(parallel)}` : `INSERT INTO _gen_in ${body(parallel)}`);
  // Numbering the blank lines, when the traits' pass saw some (a line-by-line read; the file is in
  // the page cache), runs beside DuckDB's read.
  const blanks = blankLines(file, traits);
  blanks.catch(() => {}); // awaited below unless the read fails first
  let count: number;
  try {
    // Insertion order is kept (preserve_insertion_order, DuckDB's default): rowid = read order.
    // DuckDB's parallel reader refuses null_padding in a file with a line break inside quotes (a
    // CR in a quoted field is one, and is trimmed; an LF is refused by CHECKS[0]): such a file is
    // read again on one thread (rare; a failed statement wrote nothing).
    const read = await conn.runAndReadAll(statement(true)).catch((e: Error) => {
      if (!/does not support null_padding in conjunction with quoted new lines/.test(e.message)) throw e;
      return conn.runAndReadAll(statement(false));
    });
    count = Number(read.getRowObjectsJS()[0]?.Count ?? 0);
  } catch (e) {
    // DuckDB names no line when the line endings are mixed (rows appended by another tool): found here.
    if (/state machine reached an invalid state/.test((e as Error).message)) {
      const endings = await lineEndingProblem(file);
      if (endings) throw new ImportError(file, endings.line, null, endings.reason);
    }
    // DuckDB's message names the path it read: the file's, not a link's
    throw await readError(file, header, path === file ? (e as Error) : new Error((e as Error).message.replaceAll(path, file)));
  }
  return { file, header, start, end: start + count, blanks: await blanks };
}

/**
 * The first invalid record (file order, then line), as an ImportError; null when all are valid.
 * A duplicate claim_id is reported at its second occurrence (hash aggregate first: no sort of the
 * whole import unless duplicates exist).
 */
async function firstInvalid(conn: DuckDBConnection, files: readonly ReadFile[]): Promise<ImportError | null> {
  const r = await conn.runAndReadAll('SELECT rowid::BIGINT AS pos, _failed AS failed FROM _gen_in WHERE _failed IS NOT NULL ORDER BY rowid LIMIT 1');
  const dup = await conn.runAndReadAll(
    `WITH d AS (SELECT claim_id FROM _gen_in WHERE claim_id IS NOT NULL GROUP BY claim_id HAVING count(*) > 1) ` +
      `SELECT pos, first FROM (SELECT i.rowid::BIGINT AS pos, min(i.rowid) OVER (PARTITION BY i.claim_id)::BIGINT AS first, ` +
      `row_number() OVER (PARTITION BY i.claim_id ORDER BY i.rowid) AS k ` +
      `FROM _gen_in AS i JOIN d USING (claim_id)) WHERE k = 2 ORDER BY pos LIMIT 1`,
  );
  const bad = r.getRowObjectsJS()[0];
  const twice = dup.getRowObjectsJS()[0];
  if (twice && (!bad || Number(twice.pos) < Number(bad.pos))) {
    const { file, line } = locate(files, Number(twice.pos));
    const first = locate(files, Number(twice.first));
    return new ImportError(file, line, 'claim_id', `duplicate claim_id (first at ${basename(first.file)}:${first.line})`);
  }
  if (!bad) return null;
  const [field, reason] = CHECKS[Number(bad.failed)]!;
  const { file, line } = locate(files, Number(bad.pos));
  if (Number(bad.failed) === WIDTH_CHECK) {
    const header = files.find((f) => f.file === file)!.header;
    return widthError(file, line, header, await fieldCount(file, line));
  }
  if (Number(bad.failed) === LINE_BREAK_CHECK) {
    const header = files.find((f) => f.file === file)!.header;
    return new ImportError(file, line, await quotedFieldName(file, line, header), reason);
  }
  return new ImportError(file, line, field, reason);
}

/**
 * A number field as stored: DOUBLE, a negative zero made zero (`+ 0.0`: IEEE -0 + 0 is +0). Outside test:
 * a probability written `-0.0` (or `-0`, a spreadsheet's rounding of a tiny negative) was stored
 * as -0 and exported as `"probability": -0.0` in JSONL and `-0.0` in CSV.
 */
const STORED_NUMBER = (c: string) => `(TRY_CAST(${c} AS DOUBLE) + 0.0)`;

/**
 * A claim's columns as this import writes them from its record (`i`: the record in `_gen_in`,
 * `s`: its source in `_gen_sources`), each with the CSV field it comes from (null: derived from
 * others). One list for the claims part and for the comparison with claims already stored, so that
 * "the same claim" means the same stored values. In comparison order: the source first, the
 * resolution last.
 */
const CLAIM_COLUMNS: [column: string, expr: string, field: string | null][] = [
  ['source_slug', 's.source_slug', 'source'],
  ['claimed_at', 'i._made', 'made_at'],
  ['kind', 'i.kind', 'kind'],
  ['subject', 'i.subject', 'subject'],
  ['claim_text', 'i.subject', null],
  ['question_id', "lower(split_part(i.question_id, ':', 1)) || substr(i.question_id, strpos(i.question_id, ':'))", 'question_id'],
  ['subject_key', 'i.subject_key', 'subject_key'],
  ['category', 'lower(i.category)', 'category'],
  ['probability', STORED_NUMBER('i.probability'), 'probability'],
  ['side', 'i.side', 'side'],
  ['value', STORED_NUMBER('i.value'), 'value'],
  ['probability_or_direction', "CASE i.kind WHEN 'probability' THEN i.probability WHEN 'value' THEN i.value ELSE i.side END", null],
  ['unit', 'i.unit', 'unit'],
  ['threshold', STORED_NUMBER('i.threshold'), 'threshold'],
  ['tolerance', STORED_NUMBER('i.tolerance'), 'tolerance'],
  ['horizon_days', STORED_NUMBER('i.horizon_days'), 'horizon_days'],
  ['outcome', STORED_NUMBER('i.outcome'), 'outcome'],
  ['realized_value', STORED_NUMBER('i.realized_value'), 'realized_value'],
  ['resolved_at', "CASE WHEN i.outcome IS NOT NULL OR i.realized_value IS NOT NULL THEN i._resolved END", 'resolved_at'],
];

/** The compared columns (those a CSV field gives) of CLAIM_COLUMNS. */
const COMPARED = CLAIM_COLUMNS.filter((c): c is [string, string, string] => c[2] !== null);
/** The resolution's fields (the rest are the claim as made). */
const RESOLUTION_FIELDS: readonly string[] = ['outcome', 'realized_value', 'resolved_at'];

/**
 * `_gen_stored`: the stored claims this import's records name, each with its resolution as stored
 * (its own, or the one a later import added: raw claim_resolutions) and `is_open` when it has
 * none. Read once; firstStoredConflict and resolutionsQuery both join it.
 */
async function stageStoredClaims(conn: DuckDBConnection, root: string): Promise<void> {
  const resolved = RESOLUTION_FIELDS.map((f) => `CASE WHEN r.claim_id IS NULL THEN c.${sqlIdent(f)} ELSE r.${sqlIdent(f)} END AS ${sqlIdent(f)}`);
  // The category lower case, as this import writes it and sql/derive/90_claims.sql reads it: a
  // version before the check stored it as written ("Politics"), and the same claim imported again
  // (or with its resolution) was refused as 'another category: "Politics" here, "Politics" stored'.
  await conn.run(
    'CREATE OR REPLACE TEMP TABLE _gen_stored AS ' +
    `SELECT c.* REPLACE (${resolved.join(', ')}, lower(c.category) AS category), ` +
    `r.claim_id IS NULL AND c.outcome IS NULL AND c.realized_value IS NULL AS is_open ` +
    `FROM (${rawRelation(root, 'claims')}) AS c ` +
    `LEFT JOIN (${rawRelation(root, 'claim_resolutions')}) AS r ON r.claim_id = c.claim_id AND c.outcome IS NULL AND c.realized_value IS NULL ` +
    'WHERE c.claim_id IN (SELECT claim_id FROM _gen_in)',
  );
}

/** The record resolves a claim stored open: it has an outcome or a realized value. */
const RESOLVES = 'e.is_open AND (i.outcome IS NOT NULL OR i.realized_value IS NOT NULL)';

/**
 * The first record (file order) whose claim_id is already stored with other content, as an
 * ImportError; null when every stored claim_id is the same claim again (it is then not written:
 * the append skips stored keys). The key of raw `claims` is claim_id alone, and the API serves a
 * claim by it (`/api/claims/{claim_id}`), so ids are unique across sources:
 *  - stored for another source: rejected at `claim_id`, naming that source (operators' files
 *    numbering their rows 1, 2, 3 would otherwise be dropped silently, the source written empty);
 *  - stored with another value of a field: rejected at that field. The claim as made must not
 *    change, and the raw tables are append-only: a second row would be a second claim to every
 *    reader (sql/derive/90_claims.sql reads every row). A stored resolution (`_gen_stored`'s) must
 *    not change either; only a claim stored open may get one (resolutionsQuery records it).
 */
async function firstStoredConflict(conn: DuckDBConnection, root: string, files: readonly ReadFile[]): Promise<ImportError | null> {
  const differs = COMPARED.map(([col, expr]) => `e.${sqlIdent(col)} IS DISTINCT FROM ${expr}`);
  // A resolution added to a claim stored open is no conflict: it is recorded (resolutionsQuery).
  const conflicts = COMPARED.map(([, , f], k) => (RESOLUTION_FIELDS.includes(f) ? `(${differs[k]} AND NOT (${RESOLVES}))` : differs[k]));
  const field = `CASE ${COMPARED.map(([, , f], k) => `WHEN ${conflicts[k]} THEN '${f}'`).join(' ')} END`;
  // Shown: the record's own text (as the operator wrote it), the stored value; the source's slug.
  const values = COMPARED.map(([col, , f], k) => `${f === 'source' ? 's.source_slug' : `i.${sqlIdent(f)}`} AS n${k}, e.${sqlIdent(col)}::VARCHAR AS e${k}`).join(', ');
  const r = await conn.runAndReadAll(
    `SELECT i.rowid::BIGINT AS pos, i.claim_id, ${field} AS field, ${values}, ` +
      `coalesce(e.provenance_file, e.provenance_dataset) AS first_file, e.provenance_line::BIGINT AS first_line, ` +
      `e.is_open AS stored_open, ` +
      `(SELECT min(name) FROM (${rawRelation(root, 'sources')}) AS o WHERE o.source_slug = e.source_slug) AS stored_name ` +
      `FROM _gen_in AS i JOIN _gen_sources AS s ON s.source = i.source JOIN _gen_stored AS e ON e.claim_id = i.claim_id ` +
      `WHERE ${conflicts.join(' OR ')} ORDER BY i.rowid LIMIT 1`,
  );
  const row = r.getRowObjectsJS()[0];
  if (!row) return null;
  const { file, line } = locate(files, Number(row.pos));
  const id = String(row.claim_id);
  const k = COMPARED.findIndex(([, , f]) => f === row.field);
  const first = `first stored from ${String(row.first_file)}${row.first_line === null ? '' : `:${String(row.first_line)}`}`;
  if (row.field === 'source') {
    const name = row.stored_name === null ? '' : ` (${JSON.stringify(row.stored_name)})`;
    return new ImportError(file, line, 'claim_id',
      `claim_id ${id} is already stored for another source, ${String(row[`e${k}`])}${name} (${first}): claim ids are unique across all sources; ` +
        `give this source's claims their own ids (e.g. ${String(row[`n${k}`])}:${id})`);
  }
  const shown = (v: unknown) => (v === null ? 'none' : JSON.stringify(String(v).slice(0, 40)));
  const was = `${shown(row[`n${k}`])} here, ${shown(row[`e${k}`])} stored`;
  if (RESOLUTION_FIELDS.includes(String(row.field))) {
    return new ImportError(file, line, String(row.field),
      `claim ${id} is stored resolved (${first}); a stored resolution cannot change or be removed by a later import (${was})`);
  }
  return new ImportError(file, line, String(row.field), `claim ${id} already stored with another ${String(row.field)} (${first}): ${was}`);
}

/**
 * The first record (file order) giving its source (any spelling of its name: `_gen_sources`'
 * slug) another source_kind or source_url than an earlier record of that source, as an
 * ImportError naming both lines; null when none does. Only run when some source has two.
 */
async function sourceConflict(conn: DuckDBConnection, files: readonly ReadFile[]): Promise<ImportError | null> {
  let found: { pos: number; first: number; field: string; v: string; v0: string } | null = null;
  for (const field of ['source_kind', 'source_url']) {
    const r = await conn.runAndReadAll(
      `WITH k AS (SELECT s.source_slug, i.rowid::BIGINT AS pos, i.${sqlIdent(field)} AS v FROM _gen_in AS i ` +
        `JOIN _gen_sources AS s ON s.source = i.source WHERE i.${sqlIdent(field)} IS NOT NULL), ` +
        'f AS (SELECT source_slug, arg_min(v, pos) AS v0, min(pos) AS p0 FROM k GROUP BY source_slug) ' +
        'SELECT k.pos, f.p0 AS first, k.v, f.v0 FROM k JOIN f USING (source_slug) WHERE k.v <> f.v0 ORDER BY k.pos LIMIT 1',
    );
    const row = r.getRowObjectsJS()[0];
    if (row && (!found || Number(row.pos) < found.pos)) {
      found = { pos: Number(row.pos), first: Number(row.first), field, v: String(row.v), v0: String(row.v0) };
    }
  }
  if (!found) return null;
  const { file, line } = locate(files, found.pos);
  const first = locate(files, found.first);
  const shown = (v: string) => JSON.stringify(v.slice(0, 80));
  return new ImportError(file, line, found.field,
    `this source's ${found.field} is ${shown(found.v)} here, ${shown(found.v0)} at ${basename(first.file)}:${first.line}: ` +
      `a source has one ${found.field} (give it alike on its rows, or on one of them)`);
}

/**
 * The first record (file order) giving a source already stored (its slug matched a stored name:
 * slug.ts) another source_kind or source_url than the stored one, as an ImportError; null when
 * none does. Stored sources are never rewritten (raw tables are append-only, the stored row is
 * kept), so such a kind or url was dropped silently while the claims were written (QA). A stored
 * source without a url (or kind `other`, none given) has that: a url given later is rejected too.
 */
async function storedSourceConflict(conn: DuckDBConnection, root: string, files: readonly ReadFile[]): Promise<ImportError | null> {
  const r = await conn.runAndReadAll(
    `WITH st AS (SELECT source_slug, min(name) AS name, min(kind) AS kind, min(url) AS url FROM (${rawRelation(root, 'sources')}) GROUP BY source_slug), ` +
      'k AS (SELECT i.rowid::BIGINT AS pos, i.source_kind AS kind, i.source_url AS url, st.source_slug, st.name, st.kind AS skind, st.url AS surl ' +
      'FROM _gen_in AS i JOIN _gen_sources AS s ON s.source = i.source JOIN st ON st.source_slug = s.source_slug ' +
      'WHERE (i.source_kind IS NOT NULL AND i.source_kind IS DISTINCT FROM st.kind) OR (i.source_url IS NOT NULL AND i.source_url IS DISTINCT FROM st.url)) ' +
      'SELECT * FROM k ORDER BY pos LIMIT 1',
  );
  const row = r.getRowObjectsJS()[0];
  if (!row) return null;
  const kindDiffers = row.kind !== null && row.kind !== row.skind;
  const field = kindDiffers ? 'source_kind' : 'source_url';
  const here = String(kindDiffers ? row.kind : row.url);
  const stored = kindDiffers ? row.skind : row.surl;
  const shown = (v: string) => JSON.stringify(v.slice(0, 80));
  const { file, line } = locate(files, Number(row.pos));
  return new ImportError(file, line, field,
    `this source's ${field} is ${shown(here)} here, ${stored === null ? 'none' : shown(String(stored))} stored ` +
      `(source ${String(row.source_slug)}, ${JSON.stringify(String(row.name))}): a stored source's kind and url never change ` +
      `(leave ${field} empty to keep the stored one)`);
}

/**
 * The resolutions this import adds to claims stored open (the same claim again, now with its
 * outcome or realized value), as raw claim_resolutions rows: the claim's own row is never
 * rewritten. Run after firstStoredConflict, so the rest of each such record equals the stored claim.
 */
function resolutionsQuery(provenance: { file: string; line: string }, datasetSql: string, nowSql: string, shifted: boolean): string {
  const cols = CLAIM_COLUMNS.filter(([c]) => RESOLUTION_FIELDS.includes(c)).map(([c, expr]) => `${expr} AS ${sqlIdent(c)}`);
  return (
    `(SELECT i.claim_id, ${cols.join(', ')}, ${datasetSql} AS provenance_dataset, ${provenance.file} AS provenance_file, ` +
    `${provenance.line} AS provenance_line, (${nowSql}::TIMESTAMPTZ AT TIME ZONE 'UTC') AS ingested_at ` +
    `FROM _gen_in AS i JOIN _gen_stored AS e ON e.claim_id = i.claim_id` +
    `${shifted ? ' ASOF JOIN _gen_shift AS g ON i.rowid >= g.from_rowid' : ''} WHERE ${RESOLVES})`
  );
}

/**
 * Appends the rows of `stage`, a temp table or a parenthesized query (the raw table's columns, keys unique within it: the
 * import validated them; row order inside the part is not significant) like raw-writer: keys already stored are skipped, the new rows go to a
 * `.tmp` part that is fsynced and renamed into place. `knownCount`: the number of rows of `stage`
 * when the caller knows it (a query is then not run twice). `parts`: the part is left in its temp
 * file and added there, for commitParts with the batch's other parts.
 */
export async function appendStaged(
  conn: DuckDBConnection,
  root: string,
  table: RawTableName,
  stage: string,
  now: Date,
  knownCount?: number,
  parts?: PendingPart[],
): Promise<{ received: number; written: number }> {
  const { columns, key } = RAW_TABLES[table];
  const typed = Object.entries(columns).map(([c, t]) => `CAST(s.${sqlIdent(c)} AS ${t}) AS ${sqlIdent(c)}`).join(', ');
  const received = knownCount ?? Number((await conn.runAndReadAll(`SELECT count(*)::BIGINT AS n FROM ${stage}`)).getRowObjectsJS()[0]!.n);
  const match = key.map((k) => `e.${sqlIdent(k)} = s.${sqlIdent(k)}`).join(' AND ');
  const fresh = `SELECT ${typed} FROM ${stage} AS s WHERE NOT EXISTS (SELECT 1 FROM (${rawRelation(root, table)}) e WHERE ${match})`;
  const dir = rawPartitionDir(root, table, runDate(now), newRunId(now));
  mkdirSync(dir, { recursive: true });
  const file = join(dir, `part-${Date.now()}-${randomBytes(4).toString('hex')}.parquet`);
  const tmp = `${file}.tmp`;
  let written = 0;
  try {
    // COPY reports the rows it wrote: one pass, no count query. (Strings written PLAIN, without the
    // dictionaries that the writer builds and drops for the claim ids, subjects and texts, took
    // 0.25-0.3 s less CPU here at a million claims, but the derive's three reads of the part
    // 0.2-0.25 s more: the repetitive strings, source_slug first, came back as flat vectors.)
    const copied = await conn.runAndReadAll(`COPY (${fresh}) TO ${sqlPath(tmp)} (FORMAT parquet, COMPRESSION zstd)`);
    written = Number(copied.getRowObjectsJS()[0]?.Count ?? 0);
    if (written === 0) {
      rmSync(dir, { recursive: true, force: true }); // this import's own (random) partition: nothing to keep
    } else if (parts) {
      parts.push({ tmp, file }); // put in place with the batch's other parts (commitParts)
    } else {
      commitTempFile(tmp, file);
    }
  } catch (err) {
    if (existsSync(tmp)) rmSync(tmp, { force: true });
    throw err;
  }
  return { received, written };
}

/**
 * The *.csv files of `dir` that a `csv` import reads, sorted: the extension in any case (QA: a
 * `Claims.CSV` beside `b.csv` was skipped silently, its claims never imported); directories are
 * not files, whatever their name, a symbolic link to one included (it was refused with EISDIR,
 * while the directory itself was skipped). Another kind of file (a named pipe, a socket, a
 * device) is refused naming it: opening a named pipe waits for a writer, and the import hung for
 * good without a word (outside test). A link to nothing stays, and is refused when read.
 */
export function claimCsvFiles(dir: string): string[] {
  const names: string[] = [];
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    if (!/\.csv$/i.test(entry.name)) continue;
    const path = join(dir, entry.name);
    const kind = entry.isSymbolicLink() ? linkedKind(path) : entry;
    if (kind === null || kind.isFile()) names.push(entry.name);
    else if (!kind.isDirectory()) throw new ImportError(path, null, null, `not a regular file (${specialFileKind(kind)}): only files are read`);
  }
  return names.sort();
}

/** What the symbolic link `path` points to; null when it points to nothing (or cannot be followed). */
function linkedKind(path: string): Stats | null {
  try {
    return statSync(path);
  } catch {
    return null;
  }
}

/** The kind of a file that is neither a regular file nor a directory, in words. */
function specialFileKind(kind: Pick<Stats, 'isFIFO' | 'isSocket' | 'isCharacterDevice' | 'isBlockDevice'>): string {
  if (kind.isFIFO()) return 'a named pipe';
  if (kind.isSocket()) return 'a socket';
  if (kind.isCharacterDevice() || kind.isBlockDevice()) return 'a device';
  return 'a special file';
}

/**
 * Imports every `*.csv` of `dir` (generic format; `.CSV` in any case). `stored`: the stored sources (slug.ts).
 * Throws an ImportError, writing nothing, when any record is invalid.
 */
export async function importGenericSql(
  rawConn: DuckDBConnection,
  root: string,
  dir: string,
  stored: StoredSources,
  now: Date,
): Promise<{ claims: { received: number; written: number }; sources: { received: number; written: number }; resolutions: { received: number; written: number } }> {
  const conn = PROFILE ? profiled(rawConn) : rawConn;
  let names: string[];
  try {
    names = claimCsvFiles(dir);
  } catch (e) {
    throw new ImportError(dir, null, null, `cannot read the directory: ${(e as Error).message}`);
  }
  if (names.length === 0) throw new ImportError(dir, null, null, 'no *.csv file in the directory');
  // Lines are rowids in read order, which needs preserve_insertion_order (DuckDB's default; a
  // caller's instance may have turned it off for speed): on for the import, then as it was.
  const ordered = (await conn.runAndReadAll("SELECT current_setting('preserve_insertion_order') AS on")).getRowObjectsJS()[0]!.on === true;
  if (!ordered) await conn.run('SET preserve_insertion_order = true');
  try {
    const files: ReadFile[] = [];
    // The latest made_at (and resolved_at of a resolution) taken: a day after the import's time.
    const latest = `TIMESTAMP ${q(new Date(now.getTime() + 86_400_000).toISOString().replace('T', ' ').replace('Z', ''))}`;
    for (const name of names) files.push(await readOne(conn, join(dir, name), files.length === 0, files.at(-1)?.end ?? 0, latest));
    const bad = await firstInvalid(conn, files);
    if (bad) throw bad;

    // Sources: each spelling of a name (as the files write it) gets its slug; the NFC spellings of
    // a name share one, and its first row (file order) gives the source's name, kind and url.
    // A spelling is matched back to its records by its first rowid, never by the text JavaScript
    // read: the DuckDB client drops a leading U+FEFF from every string it returns, so a source
    // written "\uFEFFAcme" came back as "Acme", matched the records of "Acme" twice (each claim
    // written twice) and its own records not at all (its claims silently dropped).
    await conn.run(
      'CREATE OR REPLACE TEMP TABLE _gen_spellings AS SELECT source, min(rowid)::BIGINT AS first, ' +
        'arg_min(source_kind, rowid) AS kind, arg_min(source_url, rowid) AS url, ' +
        '(count(DISTINCT source_kind) > 1 OR count(DISTINCT source_url) > 1) AS mixed FROM _gen_in WHERE NOT _empty GROUP BY source',
    );
    const srcRows = (await conn.runAndReadAll('SELECT * FROM _gen_spellings ORDER BY first')).getRowObjectsJS() as {
      source: string;
      first: bigint;
      kind: string | null;
      url: string | null;
      mixed: boolean;
    }[];
    const slugs = assignSlugs(srcRows.map((r) => r.source), stored.known, stored.taken, stored.venues);
    // A source's kind and url: the ones its rows give (rows that leave them empty take them; none
    // given: kind other). Two rows of a source (any spelling of its name) giving different ones are
    // rejected below (sourceConflict); the first was kept silently before (QA).
    const given = new Map<string, { kind: Set<string>; url: Set<string> }>();
    let mixed = false;
    for (const r of srcRows) {
      const slug = slugs.get(r.source)!;
      const g = given.get(slug) ?? { kind: new Set<string>(), url: new Set<string>() };
      given.set(slug, g);
      if (r.kind !== null) g.kind.add(r.kind);
      if (r.url !== null) g.url.add(r.url);
      mixed ||= r.mixed || g.kind.size > 1 || g.url.size > 1;
    }
    await conn.run('CREATE OR REPLACE TEMP TABLE _gen_slugs (first BIGINT, source_slug VARCHAR)');
    await conn.run('CREATE OR REPLACE TEMP TABLE _gen_sources_stage (source_slug VARCHAR, name VARCHAR, kind VARCHAR, url VARCHAR, description VARCHAR, attribution VARCHAR)');
    const spellings = await conn.createAppender('_gen_slugs', 'main', 'temp');
    const stage = await conn.createAppender('_gen_sources_stage', 'main', 'temp');
    try {
      const staged = new Set<string>();
      for (const r of srcRows) {
        const slug = slugs.get(r.source)!;
        spellings.appendBigInt(BigInt(r.first));
        spellings.appendVarchar(slug);
        spellings.endRow();
        if (staged.has(slug)) continue; // another spelling of a name already staged (rows are in file order)
        staged.add(slug);
        stage.appendVarchar(slug);
        stage.appendVarchar(sourceName(r.source));
        const g = given.get(slug)!;
        stage.appendVarchar([...g.kind][0] ?? 'other');
        const url = [...g.url][0];
        if (url === undefined) stage.appendNull();
        else stage.appendVarchar(url);
        stage.appendNull();
        stage.appendNull();
        stage.endRow();
      }
      spellings.flushSync();
      stage.flushSync();
    } finally {
      spellings.closeSync();
      stage.closeSync();
    }
    // Each spelling as DuckDB holds it (not as JavaScript read it), with its slug.
    await conn.run(
      'CREATE OR REPLACE TEMP TABLE _gen_sources AS SELECT p.source, m.source_slug FROM _gen_spellings AS p JOIN _gen_slugs AS m ON m.first = p.first',
    );
    if (mixed) {
      const conflict = await sourceConflict(conn, files);
      if (conflict) throw conflict;
    }
    const storedConflict = await storedSourceConflict(conn, root, files);
    if (storedConflict) throw storedConflict;
    await stageStoredClaims(conn, root);
    const changed = await firstStoredConflict(conn, root, files);
    if (changed) throw changed;
    const nowSql = q(now.toISOString());
    // The records, less those of only empty fields (skipped: not received, like blank lines).
    const empties = Number((await conn.runAndReadAll('SELECT count(*) FILTER (WHERE _empty)::BIGINT AS n FROM _gen_in')).getRowObjectsJS()[0]!.n);
    const received = files.at(-1)!.end - empties;
    // Blank lines between records (rare): their count before each record, by an ASOF join on rowid.
    const shifts = shiftRows(files);
    if (shifts.length > 0) {
      await conn.run('CREATE OR REPLACE TEMP TABLE _gen_shift (from_rowid BIGINT, shift BIGINT)');
      const app = await conn.createAppender('_gen_shift', 'main', 'temp');
      try {
        for (const [rowid, n] of shifts) {
          app.appendBigInt(BigInt(rowid));
          app.appendBigInt(BigInt(n));
          app.endRow();
        }
        app.flushSync();
      } finally {
        app.closeSync();
      }
    }
    const provenance = provenanceSql(files, 'i.rowid', shifts.length > 0 ? 'g.shift' : null);
    // The claims are written straight from _gen_in (no staged copy of every claim).
    const dataset = q(`csv:${basename(resolve(dir))}`);
    const claimsQuery =
      `(SELECT i.claim_id, ${CLAIM_COLUMNS.map(([col, expr]) => `${expr} AS ${sqlIdent(col)}`).join(', ')}, ` +
        `${dataset} AS provenance_dataset, ${provenance.file} AS provenance_file, ${provenance.line} AS provenance_line, ` +
        `(${nowSql}::TIMESTAMPTZ AT TIME ZONE 'UTC') AS ingested_at ` +
        `FROM _gen_in AS i JOIN _gen_sources AS s ON s.source = i.source` +
        `${shifts.length > 0 ? ' ASOF JOIN _gen_shift AS g ON i.rowid >= g.from_rowid' : ''})`;
    // Both parts are written before either is put in place: claims that fail to write (a full
    // disk) leave no source behind either (QA: 517 sources written, no claim). They go in place in
    // this order, the sources last: a kill between the renames then leaves claims whose sources
    // the next import writes under the same slugs, never sources named by no claim, which the next
    // import took for another origin's and stored again as `<slug>-2` (QA, write-batch.ts).
    const parts: PendingPart[] = [];
    try {
      const resolutions = await appendStaged(conn, root, 'claim_resolutions', resolutionsQuery(provenance, dataset, nowSql, shifts.length > 0), now, undefined, parts);
      const claims = await appendStaged(conn, root, 'claims', claimsQuery, now, received, parts);
      const sources = await appendStaged(conn, root, 'sources', '_gen_sources_stage', now, undefined, parts);
      commitParts(parts);
      return { claims, sources, resolutions };
    } catch (err) {
      dropParts(parts);
      throw err;
    }
  } finally {
    for (const t of ['_gen_in', '_gen_spellings', '_gen_slugs', '_gen_sources', '_gen_sources_stage', '_gen_shift', '_gen_stored']) await conn.run(`DROP TABLE IF EXISTS ${t}`);
    if (!ordered) await conn.run('SET preserve_insertion_order = false');
  }
}
