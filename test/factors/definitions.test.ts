/**
 * Anchor factor definitions (issue 12): the zod-validated format with file, line and field in
 * every error, the whole-word rule patterns, the flattened trees, and the bundled factors over the
 * real sample (at least 6 anchor factors, 2–3 levels, every listed question in the sample, and
 * together the nine categories).
 */
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { flattenFactors, loadFactorDefinitions, parseFactorsFile } from '../../pipeline/factors/definitions.ts';
import { DEFAULT_STRUCTURE_DIR, StructureFileError } from '../../pipeline/structure/definitions.ts';
import { classify } from '../../pipeline/taxonomy/classify.ts';
import { CATEGORIES } from '../../pipeline/warehouse/tables.ts';

const GOOD = [
  'factors:',
  '  - id: hand',
  '    name: Hand',
  '    statement: Widgets win',
  '    drivers:',
  '      - id: d1',
  '        name: One',
  '        questions:',
  '          - { question: "manifold:a1", sign: 1 }',
  '        drivers:',
  '          - id: s1',
  '            name: Sub',
  '            rules:',
  '              - { categories: [tech], match: [[gizmo, s&p 500], [up]], exclude: [recall], sign: -1, weight: 2 }',
  '      - id: d2',
  '        name: Two',
  '        rules:',
  '          - { match: [[recall]], sign: 1 }',
  '',
].join('\n');

/** The error parseFactorsFile throws for `text`. */
function errorOf(text: string): StructureFileError {
  try {
    parseFactorsFile(text, 'f.yaml');
  } catch (err) {
    if (err instanceof StructureFileError) return err;
    throw err;
  }
  throw new Error('no error');
}

describe('factor definitions', () => {
  it('parse into trees: depth-first nodes, hand leaves, one row per rule group', () => {
    const flat = flattenFactors(parseFactorsFile(GOOD, 'f.yaml'));
    expect(flat.nodes.map((n) => [n.node_id, n.parent_id, n.depth, n.ord])).toEqual([
      ['hand', null, 0, 0],
      ['hand/d1', 'hand', 1, 1],
      ['hand/d1/s1', 'hand/d1', 2, 2],
      ['hand/d2', 'hand', 1, 3],
    ]);
    expect(flat.leaves).toEqual([{ node_id: 'hand/d1', factor_id: 'hand', question_id: 'manifold:a1', sign: 1, weight: 1 }]);
    expect(flat.rules.map((r) => [r.node_id, r.rule_ord, r.n_groups, r.group_ord, r.term, r.categories, r.sign, r.weight])).toEqual([
      ['hand/d1/s1', 0, 2, 0, 'gizmo', 'tech', -1, 2],
      ['hand/d1/s1', 0, 2, 0, 's&p 500', 'tech', -1, 2],
      ['hand/d1/s1', 0, 2, 1, 'up', 'tech', -1, 2],
      ['hand/d1/s1', 0, 2, -1, 'recall', 'tech', -1, 2], // the exclude list
      ['hand/d2', 1, 1, 0, 'recall', null, 1, 1],
    ]);
  });

  it.each([
    ['an unknown key, at its line', GOOD.replace('    name: Hand', '    name: Hand\n    colour: red'), 4, 'factors.0.colour'],
    ['a bad sign', GOOD.replace('"manifold:a1", sign: 1', '"manifold:a1", sign: 2'), 9, 'factors.0.drivers.0.questions.0.sign'],
    ['a bad question id', GOOD.replace('"manifold:a1"', '"no id"'), 9, 'factors.0.drivers.0.questions.0.question'],
    ['an unknown category', GOOD.replace('categories: [tech]', 'categories: [gossip]'), 14, 'factors.0.drivers.0.drivers.0.rules.0.categories.0'],
    ['an empty match group', GOOD.replace('match: [[recall]]', 'match: [[]]'), 18, 'factors.0.drivers.1.rules.0.match.0'],
    ['a term of punctuation only', GOOD.replace('match: [[recall]]', 'match: [["&"]]'), 18, 'factors.0.drivers.1.rules.0.match.0.0'],
    ['a driver with nothing under it', GOOD.replace('        rules:\n          - { match: [[recall]], sign: 1 }\n', ''), 15, 'factors.0.drivers.1'],
    ['a factor without drivers', 'factors:\n  - { id: x1, name: X, statement: Some thing, drivers: [] }\n', 2, 'factors.0.drivers'],
    ['a question twice in a factor', GOOD.replace('        rules:\n          - { match: [[recall]], sign: 1 }', '        questions:\n          - { question: "manifold:a1", sign: -1 }'), 18, 'factors.0.drivers.1.questions.0.question'],
    ['a driver id twice', GOOD.replace('id: d2', 'id: d1'), 15, 'factors.0.drivers.1.id'],
    ['a sub-sub-driver (more than three levels)', GOOD.replace('            name: Sub\n', '            name: Sub\n            drivers: []\n'), 13, 'factors.0.drivers.0.drivers.0.drivers'],
  ])('%s is an error naming file, line and field', (_what, text, line, field) => {
    const err = errorOf(text);
    expect(err.file).toBe('f.yaml');
    expect(err.line).toBe(line);
    expect(err.field).toBe(field);
    expect(err.message).toMatch(new RegExp(`^f\\.yaml:${line} \\(field "${field.replace(/\./g, '\\.')}"\\): `));
  });

  it('YAML syntax errors and duplicate factor ids across files are errors; a bad file loads nothing', () => {
    expect(errorOf('factors:\n  - id: [unclosed\n').line).toBeGreaterThan(0);
    const root = mkdtempSync(join(tmpdir(), 'quorum-factors-'));
    try {
      mkdirSync(join(root, 'factors'));
      writeFileSync(join(root, 'factors', 'a.yaml'), GOOD);
      writeFileSync(join(root, 'factors', 'b.yaml'), GOOD);
      expect(() => loadFactorDefinitions(root)).toThrow(/b\.yaml:2 \(field "factors\.0\.id"\): factor id hand is already defined in .*a\.yaml/);
      rmSync(join(root, 'factors', 'b.yaml'));
      expect(loadFactorDefinitions(root).map((f) => f.id)).toEqual(['hand']);
    } finally {
      rmSync(root, { recursive: true, force: true });
    }
  });
});

describe('the bundled anchor factors over the real sample', () => {
  const factors = loadFactorDefinitions(DEFAULT_STRUCTURE_DIR);
  const sample = new Map(
    readFileSync(new URL('../../data/sample/forecastbench/questions_market.jsonl', import.meta.url), 'utf8')
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as { source: string; id: string; question: string; background?: string })
      .map((r) => [`${r.source}:${r.id}` as string, r] as const),
  );

  it('the factor id "health" is an error: GET /api/factors/health/ is the health view, so that factor had no detail', () => {
    const e = errorOf(GOOD.replace('  - id: hand', '  - id: health'));
    expect([e.line, e.field]).toEqual([2, 'factors.0.id']);
    expect(e.message).toMatch(/reserved/);
    expect(parseFactorsFile(GOOD.replace('  - id: hand', '  - id: health-care'), 'f.yaml')).toHaveLength(1);
  });

  it('a name or statement of blanks alone is an error naming file and line, not a blank factor or driver published (as scenarios\' titles: review)', () => {
    const statement = errorOf(GOOD.replace('statement: Widgets win', 'statement: "    "'));
    expect([statement.field, statement.message.endsWith('needs a letter or a digit')]).toEqual(['factors.0.statement', true]);
    const driver = errorOf(GOOD.replace('name: One', 'name: " "'));
    expect(driver.field).toBe('factors.0.drivers.0.name');
    expect(driver.line).toBe(GOOD.split('\n').findIndex((l) => l.includes('name: One')) + 1);
  });

  it('at least 6 factors, each two or three levels deep', () => {
    expect(factors.length).toBeGreaterThanOrEqual(6);
    const flat = flattenFactors(factors);
    for (const f of factors) {
      const depth = Math.max(...flat.nodes.filter((n) => n.factor_id === f.id).map((n) => n.depth));
      expect([1, 2], f.id).toContain(depth); // drivers (2 levels) or sub-drivers (3)
    }
    expect(new Set(factors.map((f) => Math.max(...flat.nodes.filter((n) => n.factor_id === f.id).map((n) => n.depth))))).toEqual(new Set([1, 2]));
  });

  it('every listed question is in the sample, and the leaves listed by hand cover the nine categories', () => {
    const flat = flattenFactors(factors);
    const categories = new Set<string>();
    for (const l of flat.leaves) {
      const q = sample.get(l.question_id);
      expect(q, l.question_id).toBeDefined();
      categories.add(classify({ title: q!.question, description: q!.background ?? '' }).category);
    }
    expect([...categories].sort()).toEqual([...CATEGORIES].sort());
  });
});
