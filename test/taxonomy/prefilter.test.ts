/**
 * The classifier's prefilter (a rule is skipped when no word of the text starts like one of its
 * patterns) must never change a classification: it only saves regex runs.
 */
import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { readFileSync } from 'node:fs';
import { classify, getDefaultTaxonomy, literalStart, type Taxonomy } from '../../pipeline/taxonomy/classify.ts';

const taxonomy = getDefaultTaxonomy();
/** The same rules with the prefilter off. */
const unfiltered: Taxonomy = { ...taxonomy, rules: taxonomy.rules.map((r) => ({ ...r, starts: null })) };

describe('literalStart', () => {
  it.each([
    ['bitcoin', 'bitcoin'],
    ['interest rates?', 'interest'],
    ['stocks?', 'stock'],
    ['crypto(?:currency|currencies)?', 'crypto'],
    ['Gold \\(GC\\)', 'gold'],
    ['OPEC\\+?', 'opec'],
    ['cut[-–]cut[-–]\\w+', 'cut'],
    ['[Pp]ublicly traded', null],
    ['\\d+ ?bps', null],
    ['A\\.I\\.', null],
    ['fed|fomc', null],
    ['x', null],
    ['ab*c', null],
  ])('%s → %s', (pattern, expected) => {
    expect(literalStart(pattern)).toBe(expected);
  });
});

describe('prefilter', () => {
  it('gives the same classification as running every rule, on all 500 real questions', () => {
    const lines = readFileSync(new URL('../../data/sample/forecastbench/questions_market.jsonl', import.meta.url), 'utf8').trim().split('\n');
    for (const line of lines) {
      const q = JSON.parse(line) as { question: string; background: string; resolution_criteria: string };
      const input = { title: q.question, description: q.background, resolution_criteria: q.resolution_criteria };
      expect(classify(input, taxonomy)).toEqual(classify(input, unfiltered));
    }
  });

  it('gives the same classification on texts mixing the rules’ own words with noise', () => {
    const words = [...new Set(taxonomy.rules.flatMap((r) => r.regex.source.match(/[A-Za-z]{2,}/g) ?? []))];
    const word = fc.oneof(fc.constantFrom(...words), fc.string({ minLength: 1, maxLength: 8 }));
    const text = fc.array(word, { maxLength: 30 }).chain((ws) =>
      fc.array(fc.constantFrom(' ', '-', ', ', "'", '.', '  ', '/'), { minLength: ws.length, maxLength: ws.length }).map((seps) =>
        ws.map((w, i) => (i % 3 === 0 ? w.toUpperCase() : w) + seps[i]).join(''),
      ),
    );
    fc.assert(
      fc.property(text, text, (title, description) => {
        expect(classify({ title, description }, taxonomy)).toEqual(classify({ title, description }, unfiltered));
      }),
      { numRuns: 300 },
    );
  });
});
