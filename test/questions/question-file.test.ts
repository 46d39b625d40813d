import { mkdirSync, readFileSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { stringify } from 'yaml';
import {
  loadQuestionFiles,
  parseQuestionFile,
  QuestionFileError,
} from '../../pipeline/questions/question-file.ts';
import { CATEGORIES, RAW_TABLES } from '../../pipeline/warehouse/tables.ts';
import { tempDir } from '../helpers/temp-dir.ts';
import { REPO } from '../helpers/cli.ts';
import { loadConfig } from '../../pipeline/config.ts';

const FIX = 'test/fixtures/questions';
const NOW = new Date('2026-11-21T12:00:00Z');

const cleanups: (() => void)[] = [];
afterEach(() => cleanups.splice(0).forEach((c) => c()));

/** A valid entry; tests break one field at a time. */
function entry(over: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    id: 'u3',
    title: 'Unemployment rate at or above 4.5% in September 2026',
    resolution_criteria: 'YES if UNRATE for 2026-09 is at least 4.5.',
    created_at: '2026-01-15',
    close_time: '2026-10-01T00:00:00Z',
    resolution: { source: 'fred', series_id: 'UNRATE', observation_date: '2026-09-01', transform: 'level', operator: '>=', threshold: 4.5 },
    ...over,
  };
}

/** Writes `questions` as a file in a fresh temp dir and returns its path. */
function writeFile(name: string, content: string): string {
  const { dir, cleanup } = tempDir('quorum-questions-');
  cleanups.push(cleanup);
  const path = join(dir, name);
  writeFileSync(path, content);
  return path;
}
const yamlFile = (questions: unknown[], name = 'x.yaml') => writeFile(name, stringify({ questions }));

function errorOf(fn: () => unknown): QuestionFileError {
  try {
    fn();
  } catch (e) {
    expect(e).toBeInstanceOf(QuestionFileError);
    return e as QuestionFileError;
  }
  throw new Error('expected a QuestionFileError');
}

describe('parseQuestionFile: valid files', () => {
  it('turns a YAML file into question rows, lifecycle events and specs', () => {
    const path = `${FIX}/valid.yaml`;
    const r = parseQuestionFile(path, { now: NOW });
    expect(r.questions).toHaveLength(2);
    const [cpi, u3] = r.questions;
    expect(Object.keys(cpi!).sort()).toEqual(Object.keys(RAW_TABLES.questions.columns).sort());
    expect(cpi).toEqual({
      question_id: 'quorum:cpi-oct',
      venue: 'quorum',
      venue_market_id: 'cpi-oct',
      title: 'CPI year-over-year above 3.0% for October 2026',
      description: null,
      resolution_criteria: 'YES if the YoY change of CPIAUCSL for 2026-10 is above 3.0%.',
      url: null,
      category: 'economics',
      domain: 'macro',
      tags: ['cpi'],
      created_at: new Date('2026-01-15T00:00:00Z'),
      close_time: new Date('2026-11-01T00:00:00Z'),
      status: 'closed',
      lang: 'en',
      origin: `question-file:${path}`,
      ingested_at: NOW,
    });
    // Not yet open: created_at in the future (offset honoured); blank description is null; classified.
    expect(u3).toMatchObject({
      question_id: 'quorum:u3-later',
      description: null,
      created_at: new Date('2027-01-01T08:30:00Z'),
      close_time: new Date('2027-10-01T00:00:00Z'),
      status: 'proposed',
      category: 'economics',
    });
    expect(r.specs).toEqual([
      { question_id: 'quorum:cpi-oct', source: 'fred', series_id: 'CPIAUCSL', observation_date: '2026-10-01', transform: 'yoy_pct', operator: '>', threshold: 3, round: 1, file: path },
      { question_id: 'quorum:u3-later', source: 'fred', series_id: 'UNRATE', observation_date: '2027-09-01', transform: 'level', operator: '>=', threshold: 4.5, round: null, file: path },
    ]);
    expect(r.lifecycle_events).toEqual([
      { question_id: 'quorum:cpi-oct', state: 'proposed', at: NOW, reason: `imported from question file ${path}` },
      { question_id: 'quorum:cpi-oct', state: 'active', at: new Date('2026-01-15T00:00:00Z'), reason: `opened (question file ${path})` },
      { question_id: 'quorum:cpi-oct', state: 'closed', at: new Date('2026-11-01T00:00:00Z'), reason: `close_time reached (question file ${path})` },
      { question_id: 'quorum:u3-later', state: 'proposed', at: NOW, reason: `imported from question file ${path}` },
    ]);
  });

  it('reads JSON too; created_at defaults to the import time', () => {
    const r = parseQuestionFile(`${FIX}/valid.json`, { now: NOW });
    expect(r.questions[0]).toMatchObject({ question_id: 'quorum:effr-dec', created_at: NOW, status: 'active' });
    expect(CATEGORIES).toContain(r.questions[0]!.category); // classified (no category in the file)
    expect(r.lifecycle_events.map((e) => [e.state, e.at])).toEqual([
      ['proposed', NOW],
      ['active', NOW],
    ]);
  });

  it('classifies only what is missing: a given category is kept', () => {
    const r = parseQuestionFile(yamlFile([entry({ category: 'politics' })]), { now: NOW });
    expect(r.questions[0]!.category).toBe('politics');
    expect(r.questions[0]!.domain).toBe('macro');
  });

  it('parses data/questions/example.yaml with the three documented questions', () => {
    const r = parseQuestionFile('data/questions/example.yaml', { now: NOW });
    expect(r.questions.map((q) => q.title)).toEqual([
      'CPI year-over-year above 3.0% for October 2026',
      'Unemployment rate at or above 4.5% in September 2026',
      'Effective federal funds rate below 4.00% on 2026-12-31',
    ]);
    expect(r.specs.map((s) => [s.series_id, s.observation_date, s.transform, s.operator, s.threshold])).toEqual([
      ['CPIAUCSL', '2026-10-01', 'yoy_pct', '>', 3],
      ['UNRATE', '2026-09-01', 'level', '>=', 4.5],
      ['DFF', '2026-12-31', 'level', '<', 4],
    ]);
    for (const q of r.questions) expect(q.category).toBe('economics');
  });
});

describe('parseQuestionFile: errors name the file, the entry and the field', () => {
  it('wrong type', () => {
    const path = `${FIX}/wrong-type.yaml`;
    const e = errorOf(() => parseQuestionFile(path, { now: NOW }));
    expect(e.message).toBe(`${path}:22: questions[2] (id "cpi-oct"): resolution.threshold: expected number, got string "3.0"`);
    expect([e.file, e.line, e.index, e.id, e.field]).toEqual([path, 22, 2, 'cpi-oct', 'resolution.threshold']);
  });

  it('unknown category', () => {
    const e = errorOf(() => parseQuestionFile(yamlFile([entry(), entry({ id: 'v', category: 'econ' })]), { now: NOW }));
    expect(e.message).toMatch(/x\.yaml:\d+: questions\[1\] \(id "v"\): category: unknown category \(expected one of politics, .*climate\), got string "econ"$/);
  });

  it('unknown domain', () => {
    const e = errorOf(() => parseQuestionFile(yamlFile([entry({ domain: 'jobs' })]), { now: NOW }));
    expect(e.field).toBe('domain');
    expect(e.reason).toMatch(/^unknown domain/);
  });

  it('bad operator', () => {
    const bad = entry();
    (bad.resolution as Record<string, unknown>).operator = '=>';
    const e = errorOf(() => parseQuestionFile(yamlFile([bad]), { now: NOW }));
    expect(e.message).toMatch(/questions\[0\] \(id "u3"\): resolution\.operator: expected one of '>', '>=', '<', '<=', got string "=>"$/);
  });

  it('missing close_time', () => {
    const { close_time: _, ...rest } = entry();
    const e = errorOf(() => parseQuestionFile(yamlFile([rest]), { now: NOW }));
    expect(e.message).toMatch(/x\.yaml:2: questions\[0\] \(id "u3"\): close_time: missing required field$/);
  });

  it('a title with a control character, or nothing to read, is refused; a tag given twice is kept once (last notes\' list)', () => {
    // An escape sequence or a newline reached the prompts, the feeds and every terminal printing
    // titles; a zero-width space alone was a question with no text (venues' titles are refused so).
    for (const title of ['Rate \u001b[31mcut\u001b[0m by June', 'Rate cut\nby June', '\u200b \u200b']) {
      const e = errorOf(() => parseQuestionFile(yamlFile([entry({ title })]), { now: NOW }));
      expect([e.field, e.line], JSON.stringify(title)).toEqual(['title', 3]);
      expect(e.reason).toMatch(/^(no control character|nothing to read)/);
    }
    const ok = parseQuestionFile(yamlFile([entry({ title: 'Taux directeur \u2066BCE\u2069 en juin', category: 'economics', domain: 'macro', tags: ['fed', 'rates', 'fed'] })]), { now: NOW });
    expect(ok.questions[0]).toMatchObject({ title: 'Taux directeur \u2066BCE\u2069 en juin', tags: ['fed', 'rates'] });
  });

  it('duplicate id', () => {
    const e = errorOf(() => parseQuestionFile(yamlFile([entry(), entry({ id: 'v' }), entry()]), { now: NOW }));
    expect(e.message).toMatch(/questions\[2\] \(id "u3"\): id: duplicate id \(first used by questions\[0\]\)$/);
  });

  it('YAML syntax error names the file and line', () => {
    const path = `${FIX}/syntax-error.yaml`;
    const e = errorOf(() => parseQuestionFile(path, { now: NOW }));
    expect(e.file).toBe(path);
    expect(e.line).toBeGreaterThanOrEqual(4);
    expect(e.line).toBeLessThanOrEqual(5);
    expect(e.message).toMatch(new RegExp(`^${path.replace(/[.]/g, '\\.')}:\\d+: YAML syntax error: `));
  });

  it('YAML duplicate key is a syntax error with its line', () => {
    const path = writeFile('dup.yaml', 'questions:\n  - id: a\n    title: A\n    title: B\n');
    const e = errorOf(() => parseQuestionFile(path, { now: NOW }));
    expect(e.line).toBe(4);
    expect(e.reason).toMatch(/unique/i);
  });

  it('JSON: a key given twice is refused as in YAML, and errors name the line (QA: the last one won silently)', () => {
    // JSON.parse keeps the last of two equal keys: a pasted "threshold": 4.5, "threshold": 9 resolved at 9.
    const text = JSON.stringify({ questions: [entry()] }, null, 2).replace('"threshold": 4.5', '"threshold": 4.5,\n        "threshold": 9');
    const dup = errorOf(() => parseQuestionFile(writeFile('dup.json', text), { now: NOW }));
    expect(dup.reason).toMatch(/unique.*"threshold" given twice/i);
    expect(dup.line).toBe(text.split('\n').findIndex((l) => l.includes('"threshold": 9')) + 1);
    // ...and a wrong field of a JSON entry is located by line, as a YAML one is.
    const bad = JSON.stringify({ questions: [entry(), entry({ id: 'u4', category: 'econ' })] }, null, 2);
    const e = errorOf(() => parseQuestionFile(writeFile('bad.json', bad), { now: NOW }));
    expect([e.index, e.field, e.line]).toEqual([1, 'category', bad.split('\n').findIndex((l) => l.includes('"econ"')) + 1]);
    expect(e.message).toMatch(/bad\.json:\d+: questions\[1\] \(id "u4"\): category: unknown category/);
  });

  it('JSON syntax error names the file and line', () => {
    const e = errorOf(() => parseQuestionFile(`${FIX}/syntax-error.json`, { now: NOW }));
    expect(e.line).toBe(3);
    expect(e.message).toMatch(/syntax-error\.json:3: JSON syntax error/);
  });

  it.each([
    ['unknown field', entry({ threshhold: 3 }), 'threshhold', /^unknown field$/],
    ['unknown resolution field', entry({ resolution: { ...(entry().resolution as object), threshhold: 3 } }), 'resolution.threshhold', /^unknown field$/],
    ['bad slug', entry({ id: 'Has Spaces' }), 'id', /^expected a slug/],
    ['bad date', entry({ close_time: '2026-02-30' }), 'close_time', /not a valid date/],
    ['bad observation_date', entry({ resolution: { ...(entry().resolution as object), observation_date: '2026-10' } }), 'resolution.observation_date', /expected YYYY-MM-DD/],
    ['bad transform', entry({ resolution: { ...(entry().resolution as object), transform: 'yoy' } }), 'resolution.transform', /expected one of 'level', 'yoy_pct', 'mom_pct'/],
    ['unsupported source', entry({ resolution: { ...(entry().resolution as object), source: 'bls' } }), 'resolution.source', /only 'fred'/],
    ['close before open', entry({ close_time: '2026-01-01' }), 'close_time', /must be after created_at/],
    ['non-integer round', entry({ resolution: { ...(entry().resolution as object), round: 1.5 } }), 'resolution.round', /integer/],
    ['tags not a list', entry({ tags: 'cpi' }), 'tags', /expected array|list/],
    // QA: a round out of 0..10 read "expected number" (it is a number), and a threshold of 1e400
    // (Infinity to the parser) "expected number, got number null".
    ['round below 0', entry({ resolution: { ...(entry().resolution as object), round: -1 } }), 'resolution.round', /^expected an integer from 0 to 10, got number -1$/],
    ['round above 10', entry({ resolution: { ...(entry().resolution as object), round: 11 } }), 'resolution.round', /^expected an integer from 0 to 10, got number 11$/],
    ['infinite threshold', entry({ resolution: { ...(entry().resolution as object), threshold: Infinity } }), 'resolution.threshold', /^expected a finite number, got number Infinity$/],
  ])('%s', (_name, bad, field, reason) => {
    const e = errorOf(() => parseQuestionFile(yamlFile([bad]), { now: NOW }));
    expect(e.field).toBe(field);
    expect(e.index).toBe(0);
    expect(e.reason).toMatch(reason);
  });

  it('a misspelt field is named as unknown, not as the correct field missing (the error pointed at the name the operator had not written)', () => {
    const { threshold: _, ...rest } = entry().resolution as Record<string, unknown>;
    const e = errorOf(() => parseQuestionFile(yamlFile([entry({ resolution: { ...rest, threshhold: 3 } })]), { now: NOW }));
    expect([e.field, e.reason]).toEqual(['resolution.threshhold', 'unknown field (missing here: threshold)']);
    const { close_time: __, ...noClose } = entry();
    const e2 = errorOf(() => parseQuestionFile(yamlFile([{ ...noClose, close_tiem: '2027-01-01' }]), { now: NOW }));
    expect([e2.field, e2.reason]).toEqual(['close_tiem', 'unknown field (missing here: close_time)']);
  });

  it('a file without a questions list', () => {
    expect(errorOf(() => parseQuestionFile(writeFile('a.yaml', 'question: []\n'), { now: NOW })).message).toMatch(/a\.yaml:1: question: unknown top-level field/);
    expect(errorOf(() => parseQuestionFile(writeFile('b.yaml', 'foo\n'), { now: NOW })).message).toMatch(/b\.yaml(:1)?: expected a mapping with a "questions" list/);
    expect(errorOf(() => parseQuestionFile(writeFile('c.yaml', 'questions: 3\n'), { now: NOW })).message).toMatch(/c\.yaml:1: questions: expected a list of questions/);
  });

  it('missing file and unsupported extension', () => {
    expect(errorOf(() => parseQuestionFile('no/such.yaml', { now: NOW })).message).toBe('no/such.yaml: file not found');
    expect(errorOf(() => parseQuestionFile(writeFile('q.txt', ''), { now: NOW })).reason).toMatch(/unsupported extension/);
  });
});

  it('a YAML alias bomb is this file\'s error, not every file\'s (QA: a bare ReferenceError stopped them all)', () => {
    // the "billion laughs" shape: each anchor a list of ten aliases to the one before
    let text = 'a: &a [x, x, x, x, x, x, x, x, x, x]\n';
    ['b', 'c', 'd', 'e', 'f'].forEach((n, i) => (text += `${n}: &${n} [${Array(10).fill(`*${'abcde'[i]}`).join(', ')}]\n`));
    const path = writeFile('bomb.yaml', `${text}questions: []\n`);
    const e = errorOf(() => parseQuestionFile(path, { now: NOW }));
    expect(e.message).toMatch(/bomb\.yaml:\d+: YAML error: .*alias/i);
    const dir = join(path, '..');
    writeFileSync(join(dir, 'ok.yaml'), stringify({ questions: [entry()] }));
    const r = loadQuestionFiles(dir, { now: NOW, keepGoing: true });
    expect([r.files, r.rejected.map((x) => x.file), r.questions.map((q) => q.question_id)]).toEqual([[join(dir, 'ok.yaml')], [path], ['quorum:u3']]);
  });

describe('loadQuestionFiles', () => {
  it('reads every yaml/yml/json file of a directory in name order, skipping README.md', () => {
    const { dir, cleanup } = tempDir('quorum-qdir-');
    cleanups.push(cleanup);
    writeFileSync(join(dir, 'README.md'), '# not a question file\n');
    writeFileSync(join(dir, 'b.json'), JSON.stringify({ questions: [entry({ id: 'b1' })] }));
    writeFileSync(join(dir, 'a.yml'), stringify({ questions: [entry({ id: 'a1' }), entry({ id: 'a2' })] }));
    mkdirSync(join(dir, 'sub.yaml'));
    const r = loadQuestionFiles(dir, { now: NOW });
    expect(r.files).toEqual([join(dir, 'a.yml'), join(dir, 'b.json')]);
    expect(r.questions.map((q) => q.question_id)).toEqual(['quorum:a1', 'quorum:a2', 'quorum:b1']);
    expect(r.specs).toHaveLength(3);
  });

  it('reads a question file that is a symbolic link (a Kubernetes ConfigMap mounts each file so); a link to a directory or nowhere is no file', () => {
    const { dir: real, cleanup: c1 } = tempDir('quorum-qdir-real-');
    const { dir, cleanup: c2 } = tempDir('quorum-qdir-');
    cleanups.push(c1, c2);
    // as a ConfigMap volume lays it out: q.yaml -> ..data/q.yaml, ..data -> ..2026_11_27_15_00_00.123
    mkdirSync(join(real, '..2026_11_27_15_00_00.123'));
    writeFileSync(join(real, '..2026_11_27_15_00_00.123', 'q.yaml'), stringify({ questions: [entry({ id: 'linked' })] }));
    symlinkSync('..2026_11_27_15_00_00.123', join(real, '..data'));
    symlinkSync(join(real, '..data', 'q.yaml'), join(dir, 'q.yaml'));
    symlinkSync(real, join(dir, 'dir.yaml'));
    symlinkSync(join(real, 'missing.yaml'), join(dir, 'dangling.yaml'));
    const r = loadQuestionFiles(dir, { now: NOW });
    expect(r.files).toEqual([join(dir, 'q.yaml')]);
    expect(r.questions.map((q) => q.question_id)).toEqual(['quorum:linked']);
  });

  it('an id in two files is an error naming both', () => {
    const { dir, cleanup } = tempDir('quorum-qdir-');
    cleanups.push(cleanup);
    writeFileSync(join(dir, 'a.yaml'), stringify({ questions: [entry()] }));
    writeFileSync(join(dir, 'b.yaml'), stringify({ questions: [entry()] }));
    const e = errorOf(() => loadQuestionFiles(dir, { now: NOW }));
    expect(e.message).toBe(`${join(dir, 'b.yaml')}:2: questions[0] (id "u3"): id: duplicate id (also defined in ${join(dir, 'a.yaml')})`);
  });

  it("an id in two files names the second file's line in YAML, as every other error of an entry does (it had none)", () => {
    const { dir, cleanup } = tempDir('quorum-qdir-');
    cleanups.push(cleanup);
    writeFileSync(join(dir, 'a.yaml'), stringify({ questions: [entry({ id: 'u3' })] }));
    writeFileSync(join(dir, 'b.yaml'), stringify({ questions: [entry({ id: 'other' }), entry({ id: 'u3' })] }));
    const e = errorOf(() => loadQuestionFiles(dir, { now: NOW }));
    const line = readFileSync(join(dir, 'b.yaml'), 'utf8').split('\n').findIndex((l) => /id: u3$/.test(l)) + 1;
    expect(line).toBeGreaterThan(1);
    expect([e.file, e.line, e.index, e.id, e.field]).toEqual([join(dir, 'b.yaml'), line, 1, 'u3', 'id']);
    expect(e.message).toBe(`${join(dir, 'b.yaml')}:${line}: questions[1] (id "u3"): id: duplicate id (also defined in ${join(dir, 'a.yaml')})`);
  });

  it('the bundled data/questions directory loads; the directory comes from QUORUM_QUESTIONS_DIR', () => {
    expect(loadConfig({}).questionsDir).toBe(join(REPO, 'data', 'questions'));
    expect(loadConfig({ QUORUM_QUESTIONS_DIR: '/tmp/q' }).questionsDir).toBe('/tmp/q');
    expect(loadQuestionFiles('data/questions', { now: NOW }).questions.length).toBeGreaterThanOrEqual(3);
    expect(errorOf(() => loadQuestionFiles('no/such/dir', { now: NOW })).reason).toBe('questions directory not found');
  });
});
