/**
 * Curated structure definitions (issue 12): links between questions and theses, written by hand
 * under `data/structure/` (format: data/structure/README.md).
 *
 * `data/structure/links/*.yaml` hold `links: [{a, b, kind, sign?, strength?, note?}]`;
 * `data/structure/theses/*.yaml` hold `theses: [{id, statement, members: [{question, sign, weight?}]}]`.
 * Every file is validated with zod; the first problem is a {@link StructureFileError} naming the
 * file, the 1-based line and the field. Loading is all-or-nothing: a bad file loads nothing.
 */
import { isUtf8 } from 'node:buffer';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { LineCounter, parseDocument } from 'yaml';
import { firstAliasLine, lineOfPath } from '../text/yaml-lines.ts';
import { z } from 'zod';
import { envSettings, pathSetting } from '../env.ts';
import { bundledPath } from '../fs/paths.ts';

/** `data/structure/` of this checkout (QUORUM_STRUCTURE_DIR overrides it, see config.ts). */
export const DEFAULT_STRUCTURE_DIR = bundledPath('structure');

/** QUORUM_STRUCTURE_DIR as every reader takes it: trimmed, as checkStageSettings checks it. */
export const StructureDirEnv = z.object({ QUORUM_STRUCTURE_DIR: pathSetting().default(DEFAULT_STRUCTURE_DIR) });

/** The definitions directory every structure stage reads: QUORUM_STRUCTURE_DIR, else data/structure/. */
export function structureDir(env: NodeJS.ProcessEnv = process.env): string {
  return envSettings(StructureDirEnv, env).QUORUM_STRUCTURE_DIR;
}

export const LINK_KINDS = ['similar', 'same_event', 'implies', 'excludes'] as const;
export type LinkKind = (typeof LINK_KINDS)[number];

/** A venue-qualified question id, as the warehouse stores it (`metaculus:1554`, `polymarket:0x…`). */
export const QuestionId = z.string().regex(/^[a-z][a-z0-9_-]*:\S+$/, 'a venue-qualified question id such as "metaculus:1554"');
/**
 * A name or text shown to readers (a title, a statement, a label): it needs a letter or a digit.
 * Blanks alone passed the length checks ("   " as a title, " " as a label) and were published as a
 * blank name (outside test: scenarios; theses and factors read the same way).
 */
export const shownText = (min: number, max: number) => z.string().min(min).max(max).regex(/[\p{L}\p{N}]/u, 'needs a letter or a digit');

export const Sign = z.union([z.literal(1), z.literal(-1)], { error: 'sign must be 1 or -1' });

const LinkDef = z.strictObject({
  a: QuestionId,
  b: QuestionId,
  kind: z.enum(LINK_KINDS),
  /** -1: YES of one is NO of the other (a negated phrasing of the same event). */
  sign: Sign.default(1),
  strength: z.number().min(0).max(1).default(1),
  note: z.string().optional(),
});

const MemberDef = z.strictObject({
  question: QuestionId,
  /** +1: YES supports the thesis; -1: YES contradicts it. */
  sign: Sign,
  weight: z.number().gt(0).max(100).default(1),
  note: z.string().optional(),
});

/**
 * The prefix of computed clusters' ids (97_theses.sql: `auto-` + 12 hex digits). A curated thesis
 * may not take a computed cluster's id shape ({@link COMPUTED_THESIS_ID}): one named like a computed
 * cluster (a cluster promoted to a curated file with its id kept) was published twice under one id,
 * each copy with the members of both (QA). Other ids starting `auto-` (`auto-tariffs-2026`) can never
 * equal a computed one and stay valid (QA review: refusing the whole prefix failed every run of a
 * theses file valid before the upgrade).
 */
export const COMPUTED_THESIS_PREFIX = 'auto-';

/** A computed cluster's id: the prefix and the first 12 hex digits of a sha256. */
export const COMPUTED_THESIS_ID = /^auto-[0-9a-f]{12}$/;

const ThesisDef = z.strictObject({
  id: z
    .string()
    .regex(/^[a-z0-9][a-z0-9-]{1,62}$/, 'id: lower-case letters, digits and dashes (2-63)')
    .refine((id) => !COMPUTED_THESIS_ID.test(id), {
      error: `id: "${COMPUTED_THESIS_PREFIX}" followed by 12 hex digits is a computed cluster's id, reserved for computed clusters`,
    }),
  statement: shownText(3, 500),
  members: z.array(MemberDef).min(3, 'a thesis needs at least 3 members'),
  note: z.string().optional(),
});

const LinksFile = z.strictObject({ links: z.array(LinkDef) });
const ThesesFile = z.strictObject({ theses: z.array(ThesisDef) });

/** A curated link with where it is written (`line`: of its list item; null when unknown). */
export type CuratedLink = z.infer<typeof LinkDef> & { file: string; line: number | null };
export type CuratedThesis = z.infer<typeof ThesisDef> & { file: string };

export interface StructureDefinitions {
  links: CuratedLink[];
  theses: CuratedThesis[];
}

/** A bad definition file: `<file>:<line> (field "<path>"): <reason>`. */
export class StructureFileError extends Error {
  override readonly name = 'StructureFileError';
  constructor(
    readonly file: string,
    readonly line: number | null,
    readonly field: string | null,
    readonly reason: string,
  ) {
    super(`${file}${line === null ? '' : `:${line}`}${field === null ? '' : ` (field "${field}")`}: ${reason}`);
  }
}

export type Path = (string | number)[];

type ParsedYaml = { value: unknown; lineOf: (path: Path) => number | null };

/**
 * The last parse of each file, by its text: a run reads the definition files several times (the
 * stage-settings check, links and theses, factors, scenarios, the unknown-questions warnings), and
 * the YAML parser took 60-150 ms for the bundled files each time (0.4-0.6 s of every run). Keyed by
 * the whole text, so an edited file is parsed again; the values are only ever read.
 */
const parsedYaml = new Map<string, { text: string; parsed: ParsedYaml }>();

/** Parses one YAML file with line positions; syntax errors are StructureFileErrors. */
export function parseYaml(text: string, file: string): ParsedYaml {
  const last = parsedYaml.get(file);
  if (last?.text === text) return last.parsed;
  const parsed = parseYamlUncached(text, file);
  parsedYaml.set(file, { text, parsed });
  return parsed;
}

function parseYamlUncached(text: string, file: string): ParsedYaml {
  const lineCounter = new LineCounter();
  const doc = parseDocument(text, { lineCounter, prettyErrors: false, uniqueKeys: true });
  const err = doc.errors[0];
  if (err) throw new StructureFileError(file, lineCounter.linePos(err.pos[0]).line, null, err.message.split('\n')[0]!);
  let value: unknown;
  try {
    value = doc.toJS();
  } catch (e) {
    // an alias bomb: the file and its first alias (firstAliasLine)
    throw new StructureFileError(file, firstAliasLine(doc, lineCounter), null, e instanceof Error ? e.message : String(e));
  }
  return { value, lineOf: lineOfPath(doc, lineCounter) };
}

/** Validates `text` against `schema`; the first zod issue becomes a StructureFileError at its line. */
export function parseFile<T>(text: string, file: string, schema: z.ZodType<T>): { data: T; lineOf: (path: Path) => number | null } {
  const { value, lineOf } = parseYaml(text, file);
  // An empty file (or comments alone) was `file (field "theses"): Invalid input: expected array,
  // received undefined`, with no line: it says so, at line 1 (QA).
  if (value === null || value === undefined) {
    const key = schema instanceof z.ZodObject ? Object.keys(schema.shape)[0] : undefined;
    throw new StructureFileError(file, 1, null, `the file is empty: it needs ${key ? `its top-level list "${key}:"` : 'its definitions'}`);
  }
  const parsed = schema.safeParse(value);
  if (parsed.success) return { data: parsed.data, lineOf };
  const issue = parsed.error.issues[0]!;
  const path = issue.path.filter((k): k is string | number => typeof k !== 'symbol');
  // An unknown key is reported at the key itself.
  const keyPath = issue.code === 'unrecognized_keys' && issue.keys[0] ? [...path, issue.keys[0]] : path;
  throw new StructureFileError(file, lineOf(keyPath), keyPath.length ? keyPath.join('.') : null, issue.message);
}

/** `*.yaml` / `*.yml` files of `dir`, sorted by name (missing dir: none). */
export function yamlFiles(dir: string): string[] {
  if (!existsSync(dir)) return [];
  return readdirSync(dir)
    .filter((f) => /\.ya?ml$/.test(f))
    .sort()
    .map((f) => join(dir, f));
}

/**
 * The text of definition file `f`; one that cannot be read (a directory named *.yaml, a broken
 * link, no permission) is a StructureFileError naming it: Node's EISDIR named no path (QA).
 */
function readDefinitionFile(f: string): string {
  let bytes: Buffer;
  try {
    bytes = readFileSync(f);
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    const reason = code === 'EISDIR' ? 'a directory, not a file' : code === 'ENOENT' ? 'not found (a broken link?)' : `cannot be read (${code ?? String(err)})`;
    throw new StructureFileError(shownPath(f), null, null, reason);
  }
  return decodeUtf8(bytes, shownPath(f));
}

/** (the bytes are known to be UTF-8 when it decodes them: isUtf8) */
const utf8 = new TextDecoder('utf-8');

/**
 * The text of a definition file's bytes, which must be UTF-8 (a byte-order mark is dropped). A file
 * in another encoding is a StructureFileError at the line of its first bad byte: read leniently, a
 * Latin-1 "Café" became "Caf\uFFFD", published and archived in every scenario record (immutable),
 * and a UTF-16 file was "expected object, received string" (outside test; the claims import
 * already refuses both).
 */
function decodeUtf8(bytes: Buffer, file: string): string {
  if ((bytes[0] === 0xff && bytes[1] === 0xfe) || (bytes[0] === 0xfe && bytes[1] === 0xff)) {
    throw new StructureFileError(file, 1, null, 'the file is UTF-16 encoded: save it as UTF-8');
  }
  // UTF-16 without a byte-order mark: of ASCII text every other byte is a NUL, which isUtf8 takes
  // (U+0000 is UTF-8) and YAML never holds (review: it loaded as one string, "expected object").
  // A YAML file starts with an ASCII character (a key, "#", "-", a space), so UTF-16's first NUL is
  // its first or second byte; a NUL further on is a stray one in UTF-8 (review: "UTF-16" at line 3).
  const nul = bytes.indexOf(0);
  if (nul >= 0) {
    throw new StructureFileError(file, lineAt(bytes, nul), null, nul < 2
      ? 'the file is UTF-16 encoded: save it as UTF-8'
      : 'the file holds a NUL byte, which no YAML text does: remove it');
  }
  if (isUtf8(bytes)) return utf8.decode(bytes);
  // the first line that is not UTF-8 (a line feed byte is never part of a UTF-8 sequence)
  let line = 1;
  let start = 0;
  for (let end = bytes.indexOf(0x0a); end >= 0 && isUtf8(bytes.subarray(start, end)); end = bytes.indexOf(0x0a, start)) {
    start = end + 1;
    line++;
  }
  throw new StructureFileError(file, line, null, 'the file is not UTF-8 encoded (a Latin-1 or Windows-1252 editor?): save it as UTF-8');
}

/** The 1-based line of byte `at` of `bytes` (lines end at a line feed byte: 0x0a, as in UTF-16 little-endian's `\n\0`). */
function lineAt(bytes: Buffer, at: number): number {
  let line = 1;
  for (let i = bytes.indexOf(0x0a); i >= 0 && i < at; i = bytes.indexOf(0x0a, i + 1)) line++;
  return line;
}

/** Parses one links file (exported for tests). */
export function parseLinksFile(text: string, file: string): CuratedLink[] {
  const { data, lineOf } = parseFile(text, file, LinksFile);
  return data.links.map((l, i) => {
    if (l.a === l.b) throw new StructureFileError(file, lineOf(['links', i, 'b']), `links.${i}.b`, 'a link needs two different questions');
    // a ⇒ not b is `excludes`; read as a ⇒ b (P(a) ≤ P(b)), every check of the link was wrong (QA)
    if (l.kind === 'implies' && l.sign === -1) {
      throw new StructureFileError(file, lineOf(['links', i, 'sign']), `links.${i}.sign`, 'an implies link has sign 1 (a YES of a implies a YES of b); a YES of a that implies a NO of b is an excludes link');
    }
    return { ...l, file, line: lineOf(['links', i]) };
  });
}

/** Parses one theses file (exported for tests). */
export function parseThesesFile(text: string, file: string): CuratedThesis[] {
  const { data, lineOf } = parseFile(text, file, ThesesFile);
  const theses = data.theses;
  theses.forEach((t, i) => {
    const seen = new Set<string>();
    t.members.forEach((m, j) => {
      if (seen.has(m.question)) {
        const path = ['theses', i, 'members', j, 'question'];
        throw new StructureFileError(file, lineOf(path), path.join('.'), `question ${m.question} is a member twice`);
      }
      seen.add(m.question);
    });
  });
  return theses.map((t) => ({ ...t, file }));
}

/** A path as errors show it: relative to the working directory when below it. */
function shownPath(f: string): string {
  const r = relative(process.cwd(), f);
  return r.startsWith('..') ? f : r;
}

/**
 * Every `<folder>/*.yaml` under `root`, each file parsed by `parse` (whose list is the top-level
 * key `folder`), with ids unique across files: a repeated id is a StructureFileError naming the
 * file, the line and the file that defined it first. Theses, factors and scenarios load this way.
 */
export function loadDefinitionFiles<T extends { id: string }>(
  root: string,
  folder: string,
  noun: string,
  parse: (text: string, file: string) => T[],
): T[] {
  const out: T[] = [];
  const ids = new Map<string, string>();
  for (const f of yamlFiles(join(root, folder))) {
    const text = readDefinitionFile(f);
    const file = shownPath(f);
    const parsed = parse(text, file);
    parsed.forEach((d, i) => {
      const other = ids.get(d.id);
      if (other) {
        const path = [folder, i, 'id'];
        throw new StructureFileError(file, parseYaml(text, file).lineOf(path), path.join('.'), `${noun} id ${d.id} is already defined in ${other}`);
      }
      ids.set(d.id, file);
    });
    for (const d of parsed) out.push(d);
  }
  return out;
}

/**
 * The links of `links/*.yaml`, each (pair, kind) once across the files: symmetric kinds are one
 * link whichever way round they are written, `implies` is directed. A repeat is a
 * StructureFileError naming where the link was first written (both were loaded, and
 * 96_question_links.sql kept one of them, which one unspecified: a sign or strength written in
 * one file silently lost to the other's; QA).
 */
function loadLinks(root: string): CuratedLink[] {
  const out: CuratedLink[] = [];
  const seen = new Map<string, CuratedLink>();
  for (const f of yamlFiles(join(root, 'links'))) {
    parseLinksFile(readDefinitionFile(f), shownPath(f)).forEach((l, i) => {
      const [x, y] = l.kind === 'implies' || l.a < l.b ? [l.a, l.b] : [l.b, l.a];
      const key = `${l.kind} ${x} ${y}`;
      const first = seen.get(key);
      if (first) {
        const where = `${first.file}${first.line === null ? '' : `:${first.line}`}`;
        const what = l.kind === 'implies' ? `implies link ${x} => ${y}` : `${l.kind} link between ${x} and ${y}`;
        throw new StructureFileError(l.file, l.line, `links.${i}`, `the ${what} is already defined in ${where}`);
      }
      seen.set(key, l);
      out.push(l);
    });
  }
  return out;
}

/** Loads every definition under `root` (`links/*.yaml`, `theses/*.yaml`). Thesis ids and links are unique across files. */
export function loadStructureDefinitions(root: string = DEFAULT_STRUCTURE_DIR): StructureDefinitions {
  return { links: loadLinks(root), theses: loadDefinitionFiles(root, 'theses', 'thesis', parseThesesFile) };
}
