/**
 * Rule-based question taxonomy: category (nine), domain and tags.
 *
 * The rules live in `data/taxonomy.json` (validated with zod on load). Each rule has a name, a
 * category, a domain, a weight and regex patterns. A pattern matches only as a whole word: it is
 * wrapped as `(?<![\p{L}\p{N}_])(?:pattern)(?![\p{L}\p{N}_])` (Unicode-aware `\b`) and compiled
 * case-insensitively unless the rule sets `caseSensitive`.
 *
 * Scoring (deterministic; depends only on the input text and the file's rule order):
 *  - a rule matches a field if any of its patterns occurs in it; its score is
 *    `weight × the largest fieldWeight among the fields it matched` (title counts most);
 *  - a category's score is the sum of the scores of its matching rules; the highest wins, ties go
 *    to the category of the earliest matching rule in the file;
 *  - the domain is that of the winning category's highest-scoring rule (ties: earliest rule);
 *  - tags are the names of all matching rules, in file order;
 *  - URLs are removed from the text first (their slugs would match spuriously); an empty field
 *    matches nothing, not even a pattern that can match the empty string;
 *  - HTML character references are read as the characters they stand for (`S&amp;P 500` is
 *    `S&P 500`; INFER's backgrounds are HTML, Metaculus's markdown carries `&#x20;`): `&amp;`,
 *    `&lt;`, `&gt;`, `&quot;`, `&apos;`, `&nbsp;` and numeric references, once; typographic
 *    apostrophes (’ ‘ ʼ) are read as `'` (the rules write "People's Bank of China");
 *  - nothing matches → the file's `default` (world / other: general-interest questions such as
 *    culture, celebrities and curiosities belong to no more specific category).
 */
import { readFileSync } from 'node:fs';
import { z } from 'zod';
import { CATEGORIES, DOMAINS, type Category, type Domain } from '../warehouse/tables.ts';
import { buildPrefixIndex, collectCandidates, type PrefixIndex } from './prefix-index.ts';

/** What the classifier reads of a question. `venue` and `url` are accepted for future rules. */
export interface ClassifyInput {
  title: string;
  description?: string | null;
  resolution_criteria?: string | null;
  venue?: string;
  url?: string | null;
}

export interface Classification {
  category: Category;
  domain: Domain;
  tags: string[];
}

/** The text fields rules look at, in the order their weights are listed. */
const FIELDS = ['title', 'description', 'resolution_criteria'] as const;
type Field = (typeof FIELDS)[number];

const RuleSchema = z.strictObject({
  name: z.string().regex(/^[a-z0-9][a-z0-9-]*$/, 'rule names are kebab-case'),
  category: z.enum(CATEGORIES),
  domain: z.enum(DOMAINS),
  weight: z.number().positive(),
  caseSensitive: z.boolean().optional(),
  patterns: z.array(z.string().min(1)).min(1),
  comment: z.string().optional(),
});

const TaxonomySchema = z.strictObject({
  $comment: z.union([z.string(), z.array(z.string())]).optional(),
  version: z.literal(1),
  default: z.strictObject({ category: z.enum(CATEGORIES), domain: z.enum(DOMAINS) }),
  fieldWeights: z.strictObject({
    title: z.number().nonnegative(),
    description: z.number().nonnegative(),
    resolution_criteria: z.number().nonnegative(),
  }),
  rules: z.array(RuleSchema).min(1),
});

export type TaxonomyFile = z.infer<typeof TaxonomySchema>;

/** The end of a whole-word match: no word character follows. */
const TRAILING_BOUNDARY = '(?![\\p{L}\\p{N}_])';

interface CompiledRule {
  name: string;
  category: Category;
  domain: Domain;
  weight: number;
  /** All patterns as one alternation with the trailing word boundary; global, for scanning a text. */
  regex: RegExp;
}

/** A validated taxonomy with compiled patterns. */
export interface Taxonomy {
  default: { category: Category; domain: Domain };
  fieldWeights: Record<Field, number>;
  rules: CompiledRule[];
  /** Where in a text each pattern can possibly match, read off its words (see prefix-index.ts). */
  index: PrefixIndex;
  /** The largest field weight among a set of matched fields (a bit per FIELDS entry). */
  bestWeight: number[];
  /**
   * Each pattern (rules' patterns flattened) with the trailing word boundary, sticky: does it
   * match starting exactly at lastIndex (a word start)?
   */
  sticky: RegExp[];
}

/** Error for an invalid rules file: names the file and every problem. */
export class TaxonomyError extends Error {
  override readonly name = 'TaxonomyError';
}

/** Validates parsed JSON as a taxonomy and compiles its patterns. `source` names it in errors. */
export function parseTaxonomy(json: unknown, source: string): Taxonomy {
  const parsed = TaxonomySchema.safeParse(json);
  if (!parsed.success) {
    throw new TaxonomyError(`invalid taxonomy ${source}:\n${z.prettifyError(parsed.error)}`);
  }
  const file = parsed.data;
  const seen = new Set<string>();
  const rules = file.rules.map((rule, i): CompiledRule => {
    if (seen.has(rule.name)) throw new TaxonomyError(`invalid taxonomy ${source}: duplicate rule name "${rule.name}" (rules[${i}])`);
    seen.add(rule.name);
    const flags = rule.caseSensitive ? 'u' : 'iu';
    rule.patterns.forEach((p, j) => {
      try {
        new RegExp(p, flags);
      } catch (e) {
        throw new TaxonomyError(`invalid taxonomy ${source}: rules[${i}] "${rule.name}" patterns[${j}] ${JSON.stringify(p)}: ${(e as Error).message}`);
      }
    });
    // One alternation per rule: same matches as testing each pattern, far fewer regex runs.
    const alternation = rule.patterns.map((p) => `(?:${p})`).join('|');
    // The leading word boundary is checked in code (see wholeWordMatch), not as a lookbehind: a
    // pattern that starts with the alternation lets V8 scan for its first characters quickly,
    // which makes classification several times faster on long descriptions. Same matches.
    const regex = new RegExp(`(?:${alternation})${TRAILING_BOUNDARY}`, `${flags}g`);
    return { name: rule.name, category: rule.category, domain: rule.domain, weight: rule.weight, regex };
  });
  const sticky = file.rules.flatMap((rule) => rule.patterns.map((p) => new RegExp(`(?:${p})${TRAILING_BOUNDARY}`, rule.caseSensitive ? 'uy' : 'iuy')));
  const index = buildPrefixIndex(file.rules.map((r) => r.patterns));
  const bestWeight = Array.from({ length: 1 << FIELDS.length }, (_, mask) =>
    Math.max(0, ...FIELDS.filter((_f, k) => (mask & (1 << k)) !== 0).map((f) => file.fieldWeights[f])),
  );
  return { default: file.default, fieldWeights: file.fieldWeights, rules, index, sticky, bestWeight };
}

/** Reads and validates a taxonomy file. */
export function loadTaxonomy(path: string | URL): Taxonomy {
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (e) {
    throw new TaxonomyError(`cannot read taxonomy ${String(path)}: ${(e as Error).message}`);
  }
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch (e) {
    throw new TaxonomyError(`invalid taxonomy ${String(path)}: not JSON: ${(e as Error).message}`);
  }
  return parseTaxonomy(json, String(path));
}

/** The bundled rules file. */
export const DEFAULT_TAXONOMY_PATH = new URL('../../data/taxonomy.json', import.meta.url);

let defaultTaxonomy: Taxonomy | undefined;

/** The bundled taxonomy, loaded (and validated) once. */
export function getDefaultTaxonomy(): Taxonomy {
  defaultTaxonomy ??= loadTaxonomy(DEFAULT_TAXONOMY_PATH);
  return defaultTaxonomy;
}

/**
 * Reads the rules file again: each sync does (pipeline/sync.ts), so an operator's edit reaches a
 * long-lived process (`quorum start`, whose scheduled runs sync in it), not only a new one. An
 * invalid file throws (TaxonomyError) and the rules loaded before stay.
 */
export function reloadDefaultTaxonomy(): Taxonomy {
  defaultTaxonomy = loadTaxonomy(DEFAULT_TAXONOMY_PATH);
  return defaultTaxonomy;
}

/** Removes URLs: their slugs (e.g. "polymarket.com/event/...") would match rules spuriously. */
function stripUrls(text: string): string {
  // The cheap test first: most questions have no URL, and the replace is a slower Unicode scan.
  return MAYBE_URL.test(text) ? text.replace(URL_TEXT, ' ') : text;
}
/** A field as its rules read it: URLs removed, HTML character references decoded, ’ as '. */
function readable(text: string | null | undefined): string {
  let t = stripUrls(text ?? '');
  if (t.includes('&')) t = decodeCharacterReferences(t);
  return t.replace(TYPOGRAPHIC_APOSTROPHES, "'");
}
/** Left and right single quotation marks and the modifier letter apostrophe (Metaculus, INFER). */
const TYPOGRAPHIC_APOSTROPHES = /[\u2018\u2019\u02bc]/g;

const NAMED_REFERENCES: Record<string, string> = { amp: '&', lt: '<', gt: '>', quot: '"', apos: "'", nbsp: '\u00a0' };
const CHARACTER_REFERENCE = /&(?:#(\d{1,7})|#[xX]([0-9a-fA-F]{1,6})|(amp|lt|gt|quot|apos|nbsp));/g;

/** Decodes HTML character references once (`&amp;lt;` → `&lt;`); one naming no character stays as written. */
export function decodeCharacterReferences(text: string): string {
  return text.replace(CHARACTER_REFERENCE, (ref, dec: string | undefined, hex: string | undefined, name: string | undefined) => {
    if (name !== undefined) return NAMED_REFERENCES[name]!;
    const cp = dec !== undefined ? Number(dec) : Number.parseInt(hex!, 16);
    return cp > 0 && cp <= 0x10ffff && !(cp >= 0xd800 && cp <= 0xdfff) ? String.fromCodePoint(cp) : ref;
  });
}

const URL_TEXT = /\b(?:https?:\/\/|www\.)\S+/giu;
/** URL_TEXT without its word boundary and tail: a superset of its matches (same flags: `ſ` folds to s). */
const MAYBE_URL = /https?:\/\/|www\./iu;

const WORD_CHAR = /[\p{L}\p{N}_]/u;

/** True when `regex` (global, trailing boundary built in) matches at a position not preceded by a word character. */
function wholeWordMatch(regex: RegExp, text: string): boolean {
  regex.lastIndex = 0;
  for (let m = regex.exec(text); m !== null; m = regex.exec(text)) {
    const i = m.index;
    if (i === 0) return true;
    // The character before the match, as a whole code point (letters outside the BMP are pairs).
    const before = i >= 2 && /[\uDC00-\uDFFF]/.test(text[i - 1]!) ? text.slice(i - 2, i) : text[i - 1]!;
    if (!WORD_CHAR.test(before)) return true;
    regex.lastIndex = i + 1;
  }
  return false;
}

/** (pattern, start) pairs of the field being matched; reused (classify is synchronous). */
const candidates: number[] = [];

/**
 * For each rule, a bit per field (FIELDS order) it matches as a whole word. A pattern the prefix
 * index can place is tried, sticky, only at the word starts where one of its prefixes begins;
 * the rules it cannot place scan each field with their whole alternation.
 */
function matchedFields(taxonomy: Taxonomy, texts: readonly string[]): number[] {
  const { rules, index, sticky } = taxonomy;
  const fields = new Array<number>(rules.length).fill(0);
  for (let f = 0; f < texts.length; f++) {
    const text = texts[f]!;
    if (text === '') continue; // an empty field matches nothing
    const bit = 1 << f;
    for (const r of index.always) if (wholeWordMatch(rules[r]!.regex, text)) fields[r]! |= bit;
    const written = collectCandidates(index, text, candidates);
    for (let k = 0; k < written; k += 2) {
      const pattern = candidates[k]!;
      const r = index.ruleOf[pattern]!;
      if ((fields[r]! & bit) !== 0) continue;
      const re = sticky[pattern]!;
      re.lastIndex = candidates[k + 1]!;
      if (re.test(text)) fields[r]! |= bit;
    }
  }
  return fields;
}

/**
 * Classifies a question with the bundled rules (or the given taxonomy). Pure and deterministic.
 *
 * Why it is fast: a pattern's regex runs only where a word of the question starts with one of
 * its literal prefixes (prefix-index.ts), typically a few dozen sticky attempts instead of 46
 * scans of every field. The regex still decides every match, so the result is exactly that of
 * running every rule on every field.
 */
export function classify(q: ClassifyInput, taxonomy: Taxonomy = getDefaultTaxonomy()): Classification {
  const texts = [readable(q.title), readable(q.description), readable(q.resolution_criteria)];
  const fields = matchedFields(taxonomy, texts);
  const { rules } = taxonomy;

  // A rule scores its weight × the largest weight among the fields it matched. Matching rules in
  // file order, with their scores (scratch arrays: classify runs once per new market in a sync).
  const matched = scratch.matched;
  const scores = scratch.scores;
  matched.length = 0;
  scores.length = 0;
  for (let i = 0; i < rules.length; i++) {
    if (fields[i] === 0) continue;
    const score = taxonomy.bestWeight[fields[i]!]! * rules[i]!.weight;
    if (score > 0) {
      matched.push(i);
      scores.push(score);
    }
  }
  if (matched.length === 0) return { ...taxonomy.default, tags: [] };

  // Category totals; a Map iterates in insertion order, i.e. the file order of each category's
  // first matching rule, which breaks ties.
  const totals = scratch.totals;
  totals.clear();
  for (let k = 0; k < matched.length; k++) {
    const c = rules[matched[k]!]!.category;
    totals.set(c, (totals.get(c) ?? 0) + scores[k]!);
  }
  let category = rules[matched[0]!]!.category;
  for (const [c, total] of totals) if (total > totals.get(category)!) category = c;

  // The domain of the category's best rule (ties: the earliest); tags: every matching rule's name
  // (names are unique in a taxonomy).
  let top = -1;
  const tags: string[] = [];
  for (let k = 0; k < matched.length; k++) {
    const rule = rules[matched[k]!]!;
    tags.push(rule.name);
    if (rule.category === category && (top < 0 || scores[k]! > scores[top]!)) top = k;
  }
  return { category, domain: rules[matched[top]!]!.domain, tags };
}

/** Working arrays of classify, reused (it is synchronous and never re-entered). */
const scratch = { matched: [] as number[], scores: [] as number[], totals: new Map<Category, number>() };
