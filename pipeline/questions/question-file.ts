/**
 * Question files: questions written by hand by operators, resolved automatically from an
 * authoritative data series (FRED). Format documented in `data/questions/README.md`.
 *
 * A file (YAML for `.yaml`/`.yml`, JSON for `.json`) holds `questions: [...]`; each entry becomes a
 * `questions` row (question_id `quorum:<id>`, venue `quorum`, venue_market_id `<id>`), lifecycle
 * events, and a {@link ThresholdSpec} saying how it resolves. Parsing is all-or-nothing per file:
 * the first problem is a {@link QuestionFileError} naming the file (and line when known), the entry
 * (index and id) and the field. Pure apart from reading the file; the output depends only on the
 * file's contents, its path and `opts.now`.
 */
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { extname, join } from 'node:path';
import { LineCounter, parseDocument, type Document } from 'yaml';
import { firstAliasLine, lineOfPath } from '../text/yaml-lines.ts';
import { BLANK_TITLE } from '../text/blank-title.ts';
import { z } from 'zod';
import { classify } from '../taxonomy/classify.ts';
import type { Row } from '../sources/registry.ts';
import { CATEGORIES, DOMAINS } from '../warehouse/tables.ts';
import { parseInstant } from '../time/instant.ts';

/** The venue of hand-written questions; their question_id is `quorum:<id>`. */
export const QUORUM_VENUE = 'quorum';

export const TRANSFORMS = ['level', 'yoy_pct', 'mom_pct'] as const;
export type Transform = (typeof TRANSFORMS)[number];
export const OPERATORS = ['>', '>=', '<', '<='] as const;
export type Operator = (typeof OPERATORS)[number];

/** How one question resolves: YES when transform(series at observation_date) <operator> threshold. */
export interface ThresholdSpec {
  question_id: string;
  source: 'fred';
  series_id: string;
  /** The period, as the series dates it (YYYY-MM-DD; monthly series: the 1st, 2026-10-01 = October). */
  observation_date: string;
  transform: Transform;
  operator: Operator;
  threshold: number;
  /** Decimals the transformed value is rounded to (half away from zero) before the comparison; null = as computed. */
  round: number | null;
  /** The file the question came from. */
  file: string;
}

export interface QuestionFileResult {
  questions: Row<'questions'>[];
  lifecycle_events: Row<'lifecycle_events'>[];
  specs: ThresholdSpec[];
  /** Question ids whose entry gives no created_at (theirs is the import time, which changes with every import). */
  created_at_defaulted: string[];
}

/** A bad question file. `message` is `<file>[:<line>]: questions[<i>] (id "<id>"): <field>: <reason>`. */
export class QuestionFileError extends Error {
  override readonly name = 'QuestionFileError';
  constructor(
    readonly file: string,
    readonly line: number | null,
    /** Index of the entry in `questions`, null when the problem is not in one entry. */
    readonly index: number | null,
    readonly id: string | null,
    /** Dotted path of the field inside the entry (e.g. `resolution.threshold`), or the top-level key. */
    readonly field: string | null,
    readonly reason: string,
  ) {
    const loc = `${file}${line === null ? '' : `:${line}`}`;
    const entry = index === null ? '' : ` questions[${index}]${id === null ? '' : ` (id ${JSON.stringify(id)})`}:`;
    super(`${loc}:${entry}${field === null ? '' : ` ${field}:`} ${reason}`);
  }
}

// ---------------------------------------------------------------------------------------------
// Schema

/** The pipeline's instant grammar (pipeline/time/instant.ts), re-exported for the file's readers. */
export { parseInstant };

const quoteList = (xs: readonly string[]) => xs.map((x) => `'${x}'`).join(', ');

const instant = z
  .string({ message: 'expected a date (YYYY-MM-DD) or ISO-8601 date-time string' })
  .refine((s) => parseInstant(s) !== null, 'not a valid date (YYYY-MM-DD) or ISO-8601 date-time')
  .transform((s) => parseInstant(s)!);

const calendarDate = z
  .string({ message: 'expected a date string YYYY-MM-DD' })
  .regex(/^\d{4}-\d{2}-\d{2}$/, 'expected YYYY-MM-DD')
  .refine((s) => parseInstant(s) !== null, 'not a calendar date');

const ResolutionSchema = z.strictObject({
  source: z.literal('fred', { message: "unsupported source (only 'fred' is supported)" }),
  series_id: z
    .string({ message: 'expected a FRED series id string' })
    .regex(/^[A-Za-z0-9_.]{1,64}$/, 'expected a FRED series id (letters, digits, _ and .), e.g. CPIAUCSL')
    .transform((s) => s.toUpperCase()),
  observation_date: calendarDate,
  transform: z.enum(TRANSFORMS, { message: `expected one of ${quoteList(TRANSFORMS)}` }),
  operator: z.enum(OPERATORS, { message: `expected one of ${quoteList(OPERATORS)}` }),
  threshold: z.number({
    // zod refuses ±Infinity (YAML's .inf, or 1e400) as not a number: "expected number, got number Infinity" read wrong
    error: (iss) => (typeof iss.input === 'number' ? 'expected a finite number' : 'expected number'),
  }),
  round: z
    .number({ message: 'expected number' })
    .int('expected an integer from 0 to 10')
    .min(0, 'expected an integer from 0 to 10')
    .max(10, 'expected an integer from 0 to 10')
    .optional(),
});

const EntrySchema = z.strictObject({
  id: z
    .string({ message: 'expected a string' })
    .regex(/^[a-z0-9][a-z0-9-]{0,99}$/, 'expected a slug: lower-case letters, digits and -, starting with a letter or digit'),
  title: z
    .string({ message: 'expected a string' })
    .trim()
    .min(1, 'must not be empty')
    // One line of text: an escape sequence or a newline reached the prompts, the feeds and every
    // terminal printing titles; format characters (an isolate in a bidirectional title) are text.
    .refine((t) => !/\p{Cc}/u.test(t), 'no control character may appear in a title (a newline, a tab, an escape): one line of text')
    .refine((t) => !BLANK_TITLE.test(t), 'nothing to read: the title is only invisible characters (a zero-width space)'),
  description: z.string({ message: 'expected a string' }).optional(),
  resolution_criteria: z.string({ message: 'expected a string' }).trim().min(1, 'must not be empty'),
  url: z.url({ protocol: /^https?$/, message: 'expected an http(s) URL' }).optional(),
  category: z.enum(CATEGORIES, { message: `unknown category (expected one of ${CATEGORIES.join(', ')})` }).optional(),
  domain: z.enum(DOMAINS, { message: `unknown domain (expected one of ${DOMAINS.join(', ')})` }).optional(),
  tags: z
    .array(z.string({ message: 'expected a string' }).trim().min(1, 'empty tag'))
    .transform((tags) => [...new Set(tags)]) // a tag given twice is one tag
    .optional(),
  created_at: instant.optional(),
  close_time: instant,
  resolution: ResolutionSchema,
});
type Entry = z.infer<typeof EntrySchema>;

const FileSchema = z.strictObject({
  $comment: z.union([z.string(), z.array(z.string())]).optional(),
  questions: z.array(z.unknown(), { message: 'expected a list of questions' }),
});

// ---------------------------------------------------------------------------------------------
// Reading

type Path = (string | number)[];

interface Source {
  data: unknown;
  /** 1-based line of a node at a path, when the format knows it. */
  lineOf: (path: Path) => number | null;
}

function readYaml(text: string, file: string): Source {
  const lineCounter = new LineCounter();
  const doc: Document = parseDocument(text, { lineCounter, prettyErrors: false, uniqueKeys: true });
  if (doc.errors.length > 0) {
    const err = doc.errors[0]!;
    const line = err.linePos?.[0].line ?? lineCounter.linePos(err.pos[0]).line;
    throw new QuestionFileError(file, line, null, null, null, `YAML syntax error: ${err.message.split('\n')[0]}`);
  }
  let data: unknown;
  try {
    data = doc.toJS({ maxAliasCount: 100 });
  } catch (e) {
    // The alias limit (a "billion laughs" file) threw a bare ReferenceError, which stopped every
    // question file, not this one, and named none (QA): this file's error, at its first alias.
    throw new QuestionFileError(file, firstAliasLine(doc, lineCounter), null, null, null, `YAML error: ${(e as Error).message}`);
  }
  return { data, lineOf: lineOfPath(doc, lineCounter) };
}

/**
 * JSON is read by JSON.parse (the data). What JSON.parse does not tell is found apart: a key given
 * twice in one object (JSON.parse keeps the last without a word, so a pasted `"threshold": 4.5,
 * "threshold": 9` resolved at 9 where YAML refuses it, QA), by one linear scan; and the line of a
 * node, for an error only, by the YAML parser, whose grammar holds JSON's (it is ten times slower
 * than JSON.parse on a large file: not on the path of a file without errors). A JSON file's errors
 * named no line (QA).
 */
function readJson(text: string, file: string): Source {
  let data: unknown;
  try {
    data = JSON.parse(text);
  } catch (e) {
    const msg = (e as Error).message;
    const lineMatch = /line (\d+)/.exec(msg);
    const posMatch = /position (\d+)/.exec(msg);
    const line = lineMatch ? Number(lineMatch[1]) : posMatch ? text.slice(0, Number(posMatch[1])).split('\n').length : null;
    throw new QuestionFileError(file, line, null, null, null, `JSON syntax error: ${msg}`);
  }
  const dup = duplicateJsonKey(text);
  if (dup) {
    const line = text.slice(0, dup.at).split('\n').length;
    throw new QuestionFileError(file, line, null, null, null, `JSON error: keys must be unique in an object (${JSON.stringify(dup.key)} given twice)`);
  }
  let lineOf: Source['lineOf'] | undefined;
  return {
    data,
    lineOf: (path) => {
      if (!lineOf) {
        const lineCounter = new LineCounter();
        const doc: Document = parseDocument(text, { lineCounter, prettyErrors: false, schema: 'json' });
        // any disagreement with JSON.parse (none is known for valid JSON): no lines
        lineOf = doc.errors.length === 0 ? lineOfPath(doc, lineCounter) : () => null;
      }
      return lineOf(path);
    },
  };
}

/** The first key given twice in one object of a valid JSON text, with its offset; null when none. */
function duplicateJsonKey(text: string): { key: string; at: number } | null {
  const stack: ({ keys: Set<string>; expectKey: boolean } | null)[] = []; // null: an array
  for (let i = 0; i < text.length; i++) {
    const c = text[i];
    if (c === '"') {
      const from = i;
      for (i++; text[i] !== '"'; i++) if (text[i] === '\\') i++;
      const top = stack.at(-1);
      if (top?.expectKey) {
        const key = JSON.parse(text.slice(from, i + 1)) as string;
        if (top.keys.has(key)) return { key, at: from };
        top.keys.add(key);
        top.expectKey = false;
      }
    } else if (c === '{') stack.push({ keys: new Set(), expectKey: true });
    else if (c === '[') stack.push(null);
    else if (c === '}' || c === ']') stack.pop();
    else if (c === ',') {
      const top = stack.at(-1);
      if (top) top.expectKey = true;
    }
  }
  return null;
}

const describeValue = (v: unknown): string =>
  v === null
    ? 'null'
    : Array.isArray(v)
      ? 'list'
      : typeof v === 'object'
        ? 'mapping'
        : typeof v === 'number'
          ? `number ${String(v)}` // JSON.stringify(Infinity) is "null" (YAML's .inf, 1e400)
          : `${typeof v} ${JSON.stringify(v)}`;

const getAt = (root: unknown, path: PropertyKey[]): unknown =>
  path.reduce<unknown>((v, k) => (v !== null && typeof v === 'object' ? (v as Record<PropertyKey, unknown>)[k] : undefined), root);

/** Turns the first zod issue of an entry into a QuestionFileError. */
function entryError(file: string, src: Source, index: number, entry: unknown, error: z.ZodError): QuestionFileError {
  const keyPath = (i: z.core.$ZodIssue) => i.path.filter((p): p is string | number => typeof p !== 'symbol');
  const isMissing = (i: z.core.$ZodIssue) => {
    const p = keyPath(i);
    const parent = getAt(entry, p.slice(0, -1));
    return p.length > 0 && (parent === null || typeof parent !== 'object' || !Object.hasOwn(parent, p.at(-1)!));
  };
  // A misspelt field (threshhold) explains the correct one missing (threshold) better than
  // "missing required field" does, which named a field the operator never wrote (QA).
  const misspelt = error.issues.find(
    (u) => u.code === 'unrecognized_keys' && error.issues.some((m) => isMissing(m) && keyPath(m).slice(0, -1).join('.') === keyPath(u).join('.')),
  );
  const issue = misspelt ?? error.issues[0]!;
  let path = keyPath(issue);
  let reason = issue.message;
  if (issue.code === 'unrecognized_keys') {
    const here = path.join('.');
    const missing = error.issues.filter((m) => isMissing(m) && keyPath(m).slice(0, -1).join('.') === here).map((m) => String(keyPath(m).at(-1)));
    path = [...path, issue.keys[0]!];
    const also = issue.keys.length > 1 ? `also: ${issue.keys.slice(1).join(', ')}` : null;
    const notes = [also, missing.length ? `missing here: ${missing.join(', ')}` : null].filter((x) => x !== null);
    reason = `unknown field${notes.length ? ` (${notes.join('; ')})` : ''}`;
  } else {
    const value = getAt(entry, path);
    const parent = getAt(entry, path.slice(0, -1));
    const key = path.at(-1);
    if (value === undefined && key !== undefined && (parent === null || typeof parent !== 'object' || !Object.hasOwn(parent, key))) {
      reason = 'missing required field';
    } else if (issue.code === 'invalid_type' || issue.code === 'invalid_value' || issue.code === 'invalid_format' || issue.code === 'custom' || issue.code === 'too_small' || issue.code === 'too_big') {
      reason = `${issue.message}, got ${describeValue(value)}`;
    }
  }
  const id = entry !== null && typeof entry === 'object' && typeof (entry as { id?: unknown }).id === 'string' ? (entry as { id: string }).id : null;
  const field = path.map((p, i) => (typeof p === 'number' ? `[${p}]` : `${i ? '.' : ''}${p}`)).join('') || null;
  return new QuestionFileError(file, src.lineOf(['questions', index, ...path]), index, id, field, reason);
}

function fileSource(path: string): Source {
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (e) {
    const code = (e as NodeJS.ErrnoException).code;
    throw new QuestionFileError(path, null, null, null, null, code === 'ENOENT' ? 'file not found' : `cannot read: ${(e as Error).message}`);
  }
  if (text.charCodeAt(0) === 0xfeff) text = text.slice(1);
  const ext = extname(path).toLowerCase();
  if (ext === '.yaml' || ext === '.yml') return readYaml(text, path);
  if (ext === '.json') return readJson(text, path);
  throw new QuestionFileError(path, null, null, null, null, `unsupported extension ${JSON.stringify(ext)} (expected .yaml, .yml or .json)`);
}

// ---------------------------------------------------------------------------------------------
// Rows

function rowsOf(entry: Entry, file: string, now: Date, out: QuestionFileResult): void {
  const question_id = `${QUORUM_VENUE}:${entry.id}`;
  const created_at = entry.created_at ?? now;
  if (entry.created_at === undefined) out.created_at_defaulted.push(question_id);
  const description = entry.description?.trim() ? entry.description.trim() : null;
  const resolution_criteria = entry.resolution_criteria.trim();
  const url = entry.url ?? null;
  const auto =
    entry.category && entry.domain && entry.tags
      ? null
      : classify({ title: entry.title, description, resolution_criteria, venue: QUORUM_VENUE, url });
  const status = created_at.getTime() > now.getTime() ? 'proposed' : entry.close_time.getTime() <= now.getTime() ? 'closed' : 'active';
  out.questions.push({
    question_id,
    venue: QUORUM_VENUE,
    venue_market_id: entry.id,
    title: entry.title,
    description,
    resolution_criteria,
    url,
    category: entry.category ?? auto!.category,
    domain: entry.domain ?? auto!.domain,
    tags: entry.tags ?? auto!.tags,
    created_at,
    close_time: entry.close_time,
    status,
    lang: 'en',
    origin: `question-file:${file}`,
    ingested_at: now,
  });
  out.lifecycle_events.push({ question_id, state: 'proposed', at: now, reason: `imported from question file ${file}` });
  if (created_at.getTime() <= now.getTime()) {
    out.lifecycle_events.push({ question_id, state: 'active', at: created_at, reason: `opened (question file ${file})` });
  }
  if (entry.close_time.getTime() <= now.getTime()) {
    out.lifecycle_events.push({ question_id, state: 'closed', at: entry.close_time, reason: `close_time reached (question file ${file})` });
  }
  const r = entry.resolution;
  out.specs.push({
    question_id,
    source: r.source,
    series_id: r.series_id,
    observation_date: r.observation_date,
    transform: r.transform,
    operator: r.operator,
    threshold: r.threshold,
    round: r.round ?? null,
    file,
  });
}

/**
 * Parses one question file into rows. `opts.now` is the import time: it stamps ingested_at and the
 * `proposed` event, is the default created_at, and decides status (proposed before created_at,
 * closed from close_time, else active) and which of the `active`/`closed` events have happened.
 * Throws QuestionFileError on the first problem; returns nothing partial.
 */
export function parseQuestionFile(path: string, opts: { now: Date }): QuestionFileResult {
  const src = fileSource(path);
  const top = FileSchema.safeParse(src.data);
  if (!top.success) {
    // A misspelt top-level key explains a missing "questions" better than "missing" does.
    const issue = top.error.issues.find((i) => i.code === 'unrecognized_keys') ?? top.error.issues[0]!;
    const missing = issue.path[0] === 'questions' && getAt(src.data, ['questions']) === undefined;
    const field = issue.code === 'unrecognized_keys' ? issue.keys[0]! : issue.path.length ? String(issue.path[0]) : null;
    const reason =
      src.data === null || typeof src.data !== 'object' || Array.isArray(src.data)
        ? `expected a mapping with a "questions" list, got ${describeValue(src.data)}`
        : issue.code === 'unrecognized_keys'
          ? 'unknown top-level field (expected "questions")'
          : missing
            ? 'missing required field'
            : issue.message;
    throw new QuestionFileError(path, src.lineOf(field ? [field] : []), null, null, src.data !== null && typeof src.data === 'object' && !Array.isArray(src.data) ? field : null, reason);
  }
  const out: QuestionFileResult = { questions: [], lifecycle_events: [], specs: [], created_at_defaulted: [] };
  const seen = new Map<string, number>();
  top.data.questions.forEach((raw, index) => {
    const parsed = EntrySchema.safeParse(raw);
    if (!parsed.success) throw entryError(path, src, index, raw, parsed.error);
    const entry = parsed.data;
    const first = seen.get(entry.id);
    if (first !== undefined) {
      throw new QuestionFileError(path, src.lineOf(['questions', index, 'id']), index, entry.id, 'id', `duplicate id (first used by questions[${first}])`);
    }
    seen.set(entry.id, index);
    const created = entry.created_at ?? opts.now;
    if (entry.close_time.getTime() <= created.getTime()) {
      throw new QuestionFileError(
        path,
        src.lineOf(['questions', index, 'close_time']),
        index,
        entry.id,
        'close_time',
        `must be after created_at (${created.toISOString()}${entry.created_at ? '' : ', the import time'})`,
      );
    }
    rowsOf(entry, path, opts.now, out);
  });
  return out;
}

const QUESTION_FILE_EXTS = new Set(['.yaml', '.yml', '.json']);

/**
 * A symbolic link to a file is a file here: a Kubernetes ConfigMap mounts each of its files as a
 * link (`q.yaml -> ..data/q.yaml`), and those were skipped without a word (QA). A link to a
 * directory or to nothing is not.
 */
function isFileTarget(path: string): boolean {
  try {
    return statSync(path, { throwIfNoEntry: false })?.isFile() ?? false;
  } catch {
    return false; // a loop of links, a target not readable
  }
}

/**
 * Parses every `.yaml`, `.yml` and `.json` file of `dir` (not recursive, in name order; other
 * files such as README.md are skipped; a symbolic link to a file counts as one). All-or-nothing:
 * the first bad file throws; with `keepGoing` (the sync), a bad file is left out and its error
 * listed in `rejected`, and the others are read (one operator's typo stopped every file's questions
 * from being imported and resolved, QA). An id used in two files is an error naming both. A
 * missing directory is an error either way.
 */
export function loadQuestionFiles(
  dir: string,
  opts: { now: Date; keepGoing?: boolean },
): QuestionFileResult & { files: string[]; rejected: QuestionFileError[] } {
  let names: string[];
  try {
    names = readdirSync(dir, { withFileTypes: true })
      .filter((d) => QUESTION_FILE_EXTS.has(extname(d.name).toLowerCase()) && (d.isFile() || (d.isSymbolicLink() && isFileTarget(join(dir, d.name)))))
      .map((d) => d.name)
      .sort();
  } catch (e) {
    const code = (e as NodeJS.ErrnoException).code;
    throw new QuestionFileError(dir, null, null, null, null, code === 'ENOENT' ? 'questions directory not found' : `cannot read directory: ${(e as Error).message}`);
  }
  const out: QuestionFileResult & { files: string[]; rejected: QuestionFileError[] } = {
    questions: [], lifecycle_events: [], specs: [], created_at_defaulted: [], files: [], rejected: [],
  };
  const owner = new Map<string, string>();
  for (const name of names) {
    const file = join(dir, name);
    let r: QuestionFileResult;
    try {
      r = parseQuestionFile(file, opts);
      r.questions.forEach((q, index) => {
        const other = owner.get(q.question_id!);
        if (other !== undefined) {
          // the line as for every other error of an entry (YAML): the file is read again, on this error only
          const line = fileSource(file).lineOf(['questions', index, 'id']);
          throw new QuestionFileError(file, line, index, q.venue_market_id, 'id', `duplicate id (also defined in ${other})`);
        }
      });
    } catch (e) {
      if (!opts.keepGoing || !(e instanceof QuestionFileError)) throw e;
      out.rejected.push(e);
      continue;
    }
    for (const q of r.questions) owner.set(q.question_id!, file);
    // Element by element: a spread of a file's rows overflows the stack past ~100,000 of them.
    for (const q of r.questions) out.questions.push(q);
    for (const e of r.lifecycle_events) out.lifecycle_events.push(e);
    for (const s of r.specs) out.specs.push(s);
    for (const id of r.created_at_defaulted) out.created_at_defaulted.push(id);
    out.files.push(file);
  }
  return out;
}
