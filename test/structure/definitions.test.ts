/**
 * Bad curated structure files: every problem names the file, the line and the field, and a run
 * over a bad file fails with that message.
 */
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { loadScenarioDefinitions } from '../../pipeline/scenarios/definitions.ts';
import { parseLinksFile, parseThesesFile, StructureFileError, loadStructureDefinitions } from '../../pipeline/structure/definitions.ts';
import { fixture, publish } from './helpers.ts';

function errorOf(fn: () => unknown): StructureFileError {
  try {
    fn();
  } catch (err) {
    expect(err).toBeInstanceOf(StructureFileError);
    return err as StructureFileError;
  }
  throw new Error('expected a StructureFileError');
}

const thesis = (members: string) =>
  ['theses:', '  - id: t-one', '    statement: A statement', '    members:', members].join('\n');

describe('curated structure files: errors name file and line', () => {
  it('an unknown link kind', () => {
    const text = ['links:', '  - a: manifold:x', '    b: manifold:y', '    kind: causes', ''].join('\n');
    const e = errorOf(() => parseLinksFile(text, 'links/bad.yaml'));
    expect(e.line).toBe(4);
    expect(e.field).toBe('links.0.kind');
    expect(e.message).toMatch(/^links\/bad\.yaml:4 \(field "links\.0\.kind"\): /);
  });

  it('a sign that is neither 1 nor -1, and an unknown key', () => {
    const sign = thesis(['      - { question: "manifold:a", sign: 1 }', '      - { question: "manifold:b", sign: 1 }', '      - { question: "manifold:c", sign: 0 }'].join('\n'));
    const e = errorOf(() => parseThesesFile(sign, 'theses/sign.yaml'));
    expect([e.line, e.field]).toEqual([7, 'theses.0.members.2.sign']);
    expect(e.message).toContain('sign must be 1 or -1');
    const key = ['links:', '  - a: manifold:x', '    b: manifold:y', '    kind: similar', '    strenght: 0.5', ''].join('\n');
    const k = errorOf(() => parseLinksFile(key, 'links/key.yaml'));
    expect([k.line, k.field]).toEqual([5, 'links.0.strenght']);
  });

  it('a statement of blanks alone is an error naming file and line, not a blank thesis published (as scenarios\' titles: review)', () => {
    const members = ['      - { question: "manifold:a", sign: 1 }', '      - { question: "manifold:b", sign: 1 }', '      - { question: "manifold:c", sign: 1 }'].join('\n');
    const e = errorOf(() => parseThesesFile(thesis(members).replace('statement: A statement', 'statement: "   "'), 'theses/blank.yaml'));
    expect(e.message).toBe('theses/blank.yaml:3 (field "theses.0.statement"): needs a letter or a digit');
    expect(parseThesesFile(thesis(members), 'theses/ok.yaml')).toHaveLength(1);
  });

  it('a thesis with fewer than 3 members, a member twice, a bad question id', () => {
    const two = thesis(['      - { question: "manifold:a", sign: 1 }', '      - { question: "manifold:b", sign: -1 }'].join('\n'));
    const e = errorOf(() => parseThesesFile(two, 'theses/two.yaml'));
    expect([e.line, e.field]).toEqual([5, 'theses.0.members']);
    expect(e.message).toContain('at least 3 members');
    const dup = thesis(['      - { question: "manifold:a", sign: 1 }', '      - { question: "manifold:b", sign: 1 }', '      - { question: "manifold:a", sign: -1 }'].join('\n'));
    const d = errorOf(() => parseThesesFile(dup, 'theses/dup.yaml'));
    expect([d.line, d.field]).toEqual([7, 'theses.0.members.2.question']);
    const id = thesis(['      - { question: "no id here", sign: 1 }', '      - { question: "manifold:b", sign: 1 }', '      - { question: "manifold:c", sign: 1 }'].join('\n'));
    expect(errorOf(() => parseThesesFile(id, 'theses/id.yaml')).line).toBe(5);
  });

  it('an empty file, or one of comments alone, says so at line 1', () => {
    for (const text of ['', '\n', '# theses to come\n']) {
      const e = errorOf(() => parseThesesFile(text, 'theses/new.yaml'));
      expect(e.message).toBe('theses/new.yaml:1: the file is empty: it needs its top-level list "theses:"');
      expect(errorOf(() => parseLinksFile(text, 'links/new.yaml')).message).toContain('"links:"');
    }
  });

  it('a YAML syntax error', () => {
    const e = errorOf(() => parseLinksFile('links:\n  - a: manifold:x\n    b: [unclosed\n', 'links/syntax.yaml'));
    expect(e.file).toBe('links/syntax.yaml');
    expect(e.line).toBeGreaterThanOrEqual(3);
  });

  it('a file whose aliases expand past the YAML reader\'s limit names the file and the first alias', () => {
    // QA: the reader's guard against alias bombs threw a bare ReferenceError ("Excessive alias
    // count indicates a resource exhaustion attack"): a run failed without naming the file.
    const names = 'abcdefghi';
    const lines = ['a: &a [x, x, x, x, x, x, x, x, x]'];
    for (let i = 1; i < names.length; i++) lines.push(`${names[i]}: &${names[i]} [${Array(9).fill(`*${names[i - 1]}`).join(', ')}]`);
    const e = errorOf(() => parseThesesFile(['theses: []', ...lines, ''].join('\n'), 'theses/bomb.yaml'));
    expect([e.file, e.line]).toEqual(['theses/bomb.yaml', 3]);
    expect(e.message).toMatch(/^theses\/bomb\.yaml:3: .*alias/i);
  });

  it('a definition "file" that cannot be read (a directory named *.yaml) names it', () => {
    // QA: Node's "EISDIR: illegal operation on a directory, read" named no path
    const f = fixture();
    try {
      for (const dir of ['links', 'theses', 'scenarios']) mkdirSync(join(f.structureDir, dir, 'old.yaml'));
      const e = errorOf(() => loadStructureDefinitions(f.structureDir));
      expect(e.message).toBe(`${join(f.structureDir, 'links', 'old.yaml')}: a directory, not a file`);
      expect(errorOf(() => loadScenarioDefinitions(f.structureDir)).file).toBe(join(f.structureDir, 'scenarios', 'old.yaml'));
    } finally {
      f.cleanup();
    }
  });

  it('a thesis id defined in two files', () => {
    const ok = thesis(['      - { question: "manifold:a", sign: 1 }', '      - { question: "manifold:b", sign: 1 }', '      - { question: "manifold:c", sign: 1 }'].join('\n'));
    const f = fixture({ 'theses/a.yaml': ok, 'theses/b.yaml': ok });
    try {
      const e = errorOf(() => loadStructureDefinitions(f.structureDir));
      expect(e.file).toMatch(/theses\/b\.yaml$/);
      expect([e.line, e.field]).toEqual([2, 'theses.0.id']);
      expect(e.message).toMatch(/already defined in .*theses\/a\.yaml/);
    } finally {
      f.cleanup();
    }
  });

  it('a link defined twice (in two files, or the same pair of a symmetric kind written b, a) is an error naming both places', async () => {
    // QA: both were loaded and 96_question_links.sql kept one of them, which one unspecified (DISTINCT
    // ON (a, b, kind)): a sign or strength written in one file silently lost to the other's.
    const a = 'links:\n  - { a: "manifold:x", b: "manifold:y", kind: excludes, sign: 1, strength: 0.2 }\n';
    const b = '# second file\nlinks:\n  - { a: "manifold:z", b: "manifold:x", kind: implies }\n  - { a: "manifold:y", b: "manifold:x", kind: excludes, sign: -1, strength: 0.9 }\n';
    const f = fixture({ 'links/a.yaml': a, 'links/b.yaml': b });
    try {
      const e = errorOf(() => loadStructureDefinitions(f.structureDir));
      expect(e.file).toMatch(/links\/b\.yaml$/);
      expect([e.line, e.field]).toEqual([4, 'links.1']);
      expect(e.message).toMatch(/excludes link between manifold:x and manifold:y is already defined in .*links\/a\.yaml:2/);
      // the same pair in one file
      const one = 'links:\n  - { a: "manifold:x", b: "manifold:y", kind: similar }\n  - { a: "manifold:y", b: "manifold:x", kind: similar }\n';
      const g = fixture({ 'links/one.yaml': one });
      try {
        expect([errorOf(() => loadStructureDefinitions(g.structureDir)).line]).toEqual([3]);
      } finally {
        g.cleanup();
      }
      // implies is directed: a ⇒ b and b ⇒ a are two links; another kind of the same pair is too
      const both = 'links:\n  - { a: "manifold:x", b: "manifold:y", kind: implies }\n  - { a: "manifold:y", b: "manifold:x", kind: implies }\n  - { a: "manifold:x", b: "manifold:y", kind: similar }\n';
      const h = fixture({ 'links/both.yaml': both });
      try {
        expect(loadStructureDefinitions(h.structureDir).links).toHaveLength(3);
      } finally {
        h.cleanup();
      }
    } finally {
      f.cleanup();
    }
  });

  it('an implies link of sign -1 is an error (its check P(a) <= P(b) ignored the sign: write it as excludes)', () => {
    // QA: accepted, and the health view's contradictions and the coherence checks read it as a ⇒ b,
    // flagging P(a) > P(b) although the link said a YES of a means a NO of b.
    const text = 'links:\n  - a: manifold:x\n    b: manifold:y\n    kind: implies\n    sign: -1\n';
    const e = errorOf(() => parseLinksFile(text, 'links/neg.yaml'));
    expect([e.line, e.field]).toEqual([5, 'links.0.sign']);
    expect(e.message).toContain('excludes');
    expect(parseLinksFile(text.replace('kind: implies', 'kind: excludes'), 'links/ok.yaml')).toHaveLength(1);
  });

  it('a curated thesis id with the computed clusters\' prefix "auto-" is an error', async () => {
    // QA: accepted; a curated thesis named like a computed cluster (one promoted to a file with its
    // id kept) was published as two theses of one id, each with the members of both (doubled,
    // signs mixed), and its vintage held every member four times.
    const members = ['      - { question: "manifold:a", sign: 1 }', '      - { question: "manifold:b", sign: -1 }', '      - { question: "manifold:c", sign: 1 }'].join('\n');
    const text = thesis(members).replace('id: t-one', 'id: auto-07c0eb15bac4');
    const e = errorOf(() => parseThesesFile(text, 'theses/auto.yaml'));
    expect([e.line, e.field]).toEqual([2, 'theses.0.id']);
    expect(e.message).toContain('reserved for computed clusters');
    expect(parseThesesFile(thesis(members).replace('id: t-one', 'id: automation-jobs'), 'theses/ok.yaml')).toHaveLength(1);
  });

  it('a curated thesis id that merely starts with "auto-" (auto-tariffs-2026) is still accepted: only a computed cluster\'s shape, auto- and 12 hex digits, is reserved', () => {
    // QA review: the reserved prefix refused every id starting "auto-", so a theses file valid
    // before (a thesis on the auto industry, "auto-tariffs-2026") failed every run after the upgrade,
    // though no such id can equal a computed cluster's ('auto-' || 12 hex digits of a sha256).
    const members = ['      - { question: "manifold:a", sign: 1 }', '      - { question: "manifold:b", sign: -1 }', '      - { question: "manifold:c", sign: 1 }'].join('\n');
    for (const id of ['auto-tariffs-2026', 'auto-industry', 'auto-07c0eb15bac4x', 'auto-07c0eb15bac']) {
      expect(parseThesesFile(thesis(members).replace('id: t-one', `id: ${id}`), 'theses/ok.yaml').map((t) => t.id), id).toEqual([id]);
    }
    const e = errorOf(() => parseThesesFile(thesis(members).replace('id: t-one', 'id: auto-0123456789ab'), 'theses/auto.yaml'));
    expect([e.line, e.field]).toEqual([2, 'theses.0.id']);
  });

  it('a run over a bad file fails with the file and line', async () => {
    const f = fixture({ 'links/bad.yaml': 'links:\n  - a: manifold:x\n    b: manifold:y\n    kind: similar\n    sign: 2\n' });
    try {
      await expect(publish(f, new Date('2026-01-01T00:00:00Z'))).rejects.toThrow(/links\/bad\.yaml:5 \(field "links\.0\.sign"\)/);
    } finally {
      f.cleanup();
    }
  });
});
