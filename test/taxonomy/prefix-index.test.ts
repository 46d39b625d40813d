/**
 * The prefix index may only ever over-include: classify() with it must give exactly what running
 * every rule's regex on every field gives. Checked against a literal reading of the scoring rules
 * (the reference below) on the real sample, on generated texts, and on generated taxonomies.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { classify, decodeCharacterReferences, getDefaultTaxonomy, parseTaxonomy, type ClassifyInput, type Taxonomy, type TaxonomyFile } from '../../pipeline/taxonomy/classify.ts';
import { asciiFold, patternPrefixes } from '../../pipeline/taxonomy/prefix-index.ts';

const TAXONOMY_JSON = JSON.parse(readFileSync(join(import.meta.dirname, '../../data/taxonomy.json'), 'utf8')) as TaxonomyFile;
const SAMPLE = join(import.meta.dirname, '../../data/sample/forecastbench');

const compiled = new Map<string, RegExp>();
/** A pattern as a whole-word regex, with the boundaries as lookarounds. */
function wholeWord(pattern: string, caseSensitive: boolean | undefined): RegExp {
  const key = `${caseSensitive ? 'u' : 'iu'}:${pattern}`;
  let re = compiled.get(key);
  if (!re) compiled.set(key, (re = new RegExp(`(?<![\\p{L}\\p{N}_])(?:${pattern})(?![\\p{L}\\p{N}_])`, caseSensitive ? 'u' : 'iu')));
  return re;
}

/** The scoring rules of classify.ts read literally: every pattern, every field, lookbehind boundaries. */
function referenceClassify(q: ClassifyInput, file: TaxonomyFile) {
  const strip = (t: string | null | undefined) => decodeCharacterReferences((t ?? '').replace(/\b(?:https?:\/\/|www\.)\S+/giu, ' ')).replace(/[\u2018\u2019\u02bc]/g, "'");
  const texts = { title: strip(q.title), description: strip(q.description), resolution_criteria: strip(q.resolution_criteria) };
  const matched: { name: string; category: string; domain: string; score: number }[] = [];
  for (const rule of file.rules) {
    let best = 0;
    for (const [field, text] of Object.entries(texts) as [keyof typeof texts, string][]) {
      if (text === '') continue; // an empty field matches nothing (not even a pattern like \d*)
      const hit = rule.patterns.some((p) => wholeWord(p, rule.caseSensitive).test(text));
      if (hit) best = Math.max(best, file.fieldWeights[field]);
    }
    if (best > 0) matched.push({ name: rule.name, category: rule.category, domain: rule.domain, score: best * rule.weight });
  }
  if (matched.length === 0) return { ...file.default, tags: [] };
  const totals = new Map<string, number>();
  for (const m of matched) totals.set(m.category, (totals.get(m.category) ?? 0) + m.score);
  let category = matched[0]!.category;
  for (const [c, t] of totals) if (t > totals.get(category)!) category = c;
  let top = matched.find((m) => m.category === category)!;
  for (const m of matched) if (m.category === category && m.score > top.score) top = m;
  return { category, domain: top.domain, tags: [...new Set(matched.map((m) => m.name))] };
}

describe('asciiFold', () => {
  it('agrees with the regex engine on every code point: the printable ASCII character an `iu` regex matches it to, or null', () => {
    const printable = Array.from({ length: 0x7f - 0x20 }, (_, k) => String.fromCharCode(0x20 + k));
    const exact = printable.map((ch) => new RegExp(`^\\x${ch.charCodeAt(0).toString(16)}$`, 'iu'));
    const anyPrintable = /^[\x20-\x7e]$/iu;
    let folded = 0;
    for (let cp = 0; cp <= 0x10ffff; cp++) {
      if (cp >= 0xd800 && cp <= 0xdfff) continue;
      const ch = String.fromCodePoint(cp);
      const expected = anyPrintable.test(ch) ? printable[exact.findIndex((re) => re.test(ch))]!.toLowerCase() : null;
      if (asciiFold(cp) !== expected) expect({ cp: cp.toString(16), folded: asciiFold(cp) }).toEqual({ cp: cp.toString(16), folded: expected });
      if (expected !== null) folded++;
    }
    expect(folded).toBe(95 + 2); // printable ASCII, KELVIN SIGN, LONG S
  });
});

describe('patternPrefixes', () => {
  it.each([
    ['Bitcoin', ['bitcoin']],
    ['interest rates?', ['interest rate']],
    ['rates?', ['rate']],
    ['ab*', ['a']],
    ['a?', null],
    ['crypto(?:currency|currencies)?', ['crypto']],
    ['commodit(?:y|ies)', ['commodity', 'commodities']],
    ['(?:Pacific|Atlantic) Division', ['pacific division', 'atlantic division']],
    ['(?:Pacific|Atlantic)? Division', null],
    ['[Pp]ublicly traded', ['publicly traded']],
    ['[^P]ublicly', null],
    ['[a-z]+', null],
    ['\\d+ ?bps', ['0', '1', '2', '3', '4', '5', '6', '7', '8', '9']],
    ['\\d* ?bps', null],
    ['U\\.S\\.', ['u.s.']],
    ['A\\.I\\.', ['a.i.']],
    ['S&P 500', ['s&p 500']],
    ['re-?elected', ['reelected', 're-elected']],
    ['market cap(?:italization)?', ['market cap']],
    ['cut-pause-\\w+', ['cut-pause-']],
    ['quantum (?:computing|computers?|strategy)', ['quantum computer', 'quantum strategy', 'quantum computing']],
    ['La Niña', ['la ni']],
    ['\\$\\d+', null],
    ['(?=x)abc', null],
    ['foo|bar', ['foo', 'bar']],
    ['foo|(?:x)?bar', ['foo', 'bar', 'xbar']],
    ['foo|\\w?bar', null],
    ['(a|b)c|d[ef]', ['ac', 'bc', 'de', 'df']],
    ['x{2}', null],
    ['ab\\b', ['ab']],
  ] as [string, string[] | null][])('%s → %j', (source, expected) => {
    const got = patternPrefixes(source);
    expect(got === null ? null : [...got].sort()).toEqual(expected === null ? null : [...expected].sort());
  });

  it('stops reading at 32 prefixes per pattern, keeping the shorter ones', () => {
    const got = patternPrefixes('(?:a|b)(?:c|d)(?:e|f)(?:g|h)(?:i|j)(?:k|l)')!; // 64 expansions
    expect(got).toHaveLength(32);
    expect(got.every((p) => p.length === 5)).toBe(true);
  });

  it('reads a prefix from every bundled pattern', () => {
    const patterns = TAXONOMY_JSON.rules.flatMap((r) => r.patterns);
    expect(patterns.filter((p) => patternPrefixes(p) === null)).toEqual([]);
    expect(getDefaultTaxonomy().index.always).toEqual([]);
  });
});

/** Questions of every bundled sample file. */
function sampleQuestions(): ClassifyInput[] {
  const out: ClassifyInput[] = [];
  for (const file of ['questions_market.jsonl', 'questions_dataset.jsonl']) {
    let text: string;
    try {
      text = readFileSync(join(SAMPLE, file), 'utf8');
    } catch {
      continue;
    }
    for (const line of text.trim().split('\n')) {
      const r = JSON.parse(line);
      out.push({ title: r.question, description: r.background, resolution_criteria: r.resolution_criteria, venue: r.source, url: r.url });
    }
  }
  return out;
}

describe('classify with the prefix index equals the literal rules', () => {
  it('on every sample question', () => {
    const qs = sampleQuestions();
    expect(qs.length).toBeGreaterThanOrEqual(480);
    for (const q of qs) expect({ title: q.title, ...classify(q) }).toEqual({ title: q.title, ...referenceClassify(q, TAXONOMY_JSON) });
  });

  // Texts built from the bundled patterns' own words, cut, re-cased, glued to neighbours, with the
  // two non-ASCII characters that fold to ASCII letters and word characters from other scripts.
  const vocabulary = [...new Set(TAXONOMY_JSON.rules.flatMap((r) => r.patterns.flatMap((p) => p.match(/[A-Za-z0-9' ]{2,}/g) ?? [])))];
  const piece = fc.oneof(
    fc.constantFrom(...vocabulary),
    fc.constantFrom(...vocabulary).map((w) => w.slice(0, Math.max(1, w.length - 2))),
    fc.constantFrom(...vocabulary).map((w) => w.toUpperCase()),
    fc.constantFrom(...vocabulary).map((w) => w.replace(/s/g, 'ſ').replace(/k/gi, '\u212A')),
    fc.constantFrom(' ', ', ', '-', '_', '.', "'", 'é', 'ß', 'İ', '数', '𝐁', '2', '25 bps', '$', 'https://x.io/bitcoin', 'HTTPſ://bitcoin', 'www.fed', 's'),
    fc.string({ maxLength: 4 }),
  );
  const text = fc.array(piece, { maxLength: 14 }).map((ps) => ps.join(''));

  it('on generated texts (bundled taxonomy)', () => {
    fc.assert(
      fc.property(text, text, text, (title, description, resolution_criteria) => {
        const q = { title, description, resolution_criteria };
        expect(classify(q)).toEqual(referenceClassify(q, TAXONOMY_JSON));
      }),
      { numRuns: Number(process.env.QUORUM_PROPERTY_RUNS ?? 1000) },
    );
  });

  // Taxonomies with patterns from a small grammar covering every prefix form patternPrefixes reads.
  const word = fc.constantFrom('bank', 'rate', 'vote', 'gold', 'ai', 'war', 'k', 'sun');
  const atom = fc.oneof(
    word,
    word.map((w) => `${w}s?`),
    fc.tuple(word, word).map(([a, b]) => `(?:${a}|${b})`),
    fc.tuple(word, word).map(([a, b]) => `(?:${a}|${b})?`),
    word.map((w) => `[${w[0]!.toUpperCase()}${w[0]}]${w.slice(1)}`),
    fc.constant('\\d+'),
    fc.constant('\\d*'),
    fc.constant('\\w+'),
  );
  const pattern = fc.oneof(
    fc.array(atom, { minLength: 1, maxLength: 3 }).map((as) => as.join(' ')),
    fc.tuple(atom, atom).map(([a, b]) => `${a}|${b}`),
  );
  const taxonomy = fc.array(fc.tuple(pattern, fc.boolean(), fc.integer({ min: 1, max: 5 })), { minLength: 1, maxLength: 6 }).map(
    (rules): TaxonomyFile => ({
      version: 1,
      default: { category: 'world', domain: 'other' },
      fieldWeights: { title: 4, description: 1, resolution_criteria: 1 },
      rules: rules.map(([p, caseSensitive, weight], i) => ({
        name: `r${i}`,
        category: (['tech', 'science', 'world', 'finance'] as const)[i % 4]!,
        domain: 'other',
        weight,
        caseSensitive,
        patterns: [p],
      })),
    }),
  );
  const generatedText = fc
    .array(fc.oneof(word, word.map((w) => w.toUpperCase()), fc.constantFrom(' ', '7', '42 ', 'ſ', '\u212A', '-', 'x'), word.map((w) => `${w}s`)), { maxLength: 10 })
    .map((ps) => ps.join(' '));

  it('on generated taxonomies and texts', () => {
    fc.assert(
      fc.property(taxonomy, generatedText, generatedText, (file, title, description) => {
        const compiled: Taxonomy = parseTaxonomy(file, 'generated');
        expect(classify({ title, description }, compiled)).toEqual(referenceClassify({ title, description }, file));
      }),
      { numRuns: Number(process.env.QUORUM_PROPERTY_RUNS ?? 1000) },
    );
  });
});
