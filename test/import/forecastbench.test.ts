import { mkdtempSync, readFileSync, rmSync, writeFileSync, copyFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { CATEGORIES, DOMAINS, RAW_TABLES } from '../../pipeline/warehouse/tables.ts';
import { parseForecastBench, parseTimestamp, type ImportBatch } from '../../pipeline/import/forecastbench.ts';
import { ImportError } from '../../pipeline/import/import-error.ts';

const SAMPLE = join(import.meta.dirname, '../../data/sample/forecastbench');
const FIXTURES = join(import.meta.dirname, '../fixtures/forecastbench');
const NOW = new Date('2026-08-21T00:00:00Z');

/** Independent, deliberately naive count over the raw sample files (the real CSV has no quotes). */
function naiveCounts(dir: string) {
  const jsonl = readFileSync(join(dir, 'questions_market.jsonl'), 'utf8').trim().split('\n').map((l) => JSON.parse(l));
  const ids = new Set(jsonl.map((r) => `${r.source}:${r.id}`));
  const [head, ...lines] = readFileSync(join(dir, 'resolutions_market.csv'), 'utf8').trim().split('\n');
  const cols = head!.split(',');
  const csv = lines.map((l) => Object.fromEntries(l.split(',').map((v, i) => [cols[i], v])));
  const inExtract = csv.filter((r) => ids.has(`${r.source}:${r.id}`));
  const resolvedIds = new Set(inExtract.filter((r) => r.resolved === 'True').map((r) => `${r.source}:${r.id}`));
  const priceKeys = new Set([
    ...jsonl.map((r) => `${r.source}:${r.id}@${Date.parse(r.freeze_datetime)}`),
    ...inExtract.filter((r) => r.resolved === 'False').map((r) => `${r.source}:${r.id}@${Date.parse(`${r.resolution_date}T00:00:00Z`)}`),
  ]);
  return {
    jsonlLines: jsonl.length,
    questions: ids.size,
    prices: priceKeys.size,
    resolutions: resolvedIds.size,
    csvRows: csv.length,
    resolvedTrueRows: inExtract.filter((r) => r.resolved === 'True').length,
    resolvedFalseRows: inExtract.filter((r) => r.resolved === 'False').length,
    notInExtract: csv.length - inExtract.length,
  };
}

function expectExactColumns(batch: ImportBatch) {
  for (const table of ['questions', 'market_prices', 'resolutions', 'sources', 'lifecycle_events'] as const) {
    const cols = Object.keys(RAW_TABLES[table].columns).sort();
    for (const row of batch[table]) expect(Object.keys(row).sort()).toEqual(cols);
  }
}

describe('parseForecastBench on the bundled sample', async () => {
  const batch = await parseForecastBench(SAMPLE, { now: NOW });
  const expected = naiveCounts(SAMPLE);

  it('matches counts computed independently from the raw files', () => {
    expect(batch.questions).toHaveLength(expected.questions);
    expect(batch.market_prices).toHaveLength(expected.prices);
    expect(batch.resolutions).toHaveLength(expected.resolutions);
    expect(batch.sources.map((s) => s.source_slug)).toEqual(['polymarket', 'manifold', 'metaculus', 'infer']);
    // Every CSV row is accounted for: a resolution, a price, or skipped (not in extract / duplicate).
    expect(batch.skipped).toHaveLength(expected.notInExtract + (expected.resolvedTrueRows - expected.resolutions));
  });

  it('matches the hand-verified numbers (python3 over the same files)', () => {
    // 500 JSONL lines = 480 distinct venue-qualified ids (20 in both rounds);
    // prices = 500 freeze values + 193 resolved=False rows (119 + 74), no collisions;
    // resolutions = 259 resolved=True rows − 5 questions resolved in both rounds' files = 254.
    expect(expected).toMatchObject({ jsonlLines: 500, questions: 480, csvRows: 452, resolvedTrueRows: 259, resolvedFalseRows: 193, notInExtract: 0 });
    expect([batch.questions.length, batch.market_prices.length, batch.resolutions.length, batch.skipped.length]).toEqual([480, 693, 254, 5]);
    expect(batch.skipped.every((s) => s.reason.startsWith('duplicate resolution'))).toBe(true);
  });

  it('returns rows keyed by exactly the table columns, with the right JS types', () => {
    expectExactColumns(batch);
    for (const q of batch.questions) {
      expect(q.created_at).toBeInstanceOf(Date);
      expect(q.close_time).toBeInstanceOf(Date);
      // dated when its round's text was known: the round's freeze time
      expect(['2025-10-16T00:00:00.000Z', '2026-03-06T00:00:00.000Z']).toContain(q.ingested_at!.toISOString());
      expect(Array.isArray(q.tags)).toBe(true);
      expect(CATEGORIES).toContain(q.category);
      expect(DOMAINS).toContain(q.domain);
      expect(q.status).toBe('active');
      expect(q.lang).toBe('en');
      expect(q.question_id).toBe(`${q.venue}:${q.venue_market_id}`);
      expect(q.origin).toMatch(/^forecastbench:20\d\d-\d\d-\d\d-llm\.json@[0-9a-f]{7}$/);
    }
    for (const p of batch.market_prices) {
      expect(p.probability).toBeGreaterThanOrEqual(0);
      expect(p.probability).toBeLessThanOrEqual(1);
      expect([p.best_bid, p.best_ask, p.volume, p.liquidity]).toEqual([null, null, null, null]);
    }
    for (const r of batch.resolutions) {
      expect([0, 1]).toContain(r.outcome);
      expect(r.resolved_at!.toISOString()).toMatch(/T00:00:00\.000Z$/);
      expect(r.method).toBe('forecastbench-import');
      expect(r.annulled_reason).toBeNull();
      expect(r.evidence_excerpt).toMatch(/^ForecastBench resolution set 20\d\d-\d\d-\d\d_resolution_set\.json@[0-9a-f]{7}: resolved_to=[01]\.0$/);
    }
  });

  it('keys are unique per table natural key', () => {
    for (const table of ['questions', 'market_prices', 'resolutions', 'sources', 'lifecycle_events'] as const) {
      const key = RAW_TABLES[table].key as readonly string[];
      const keys = batch[table].map((row) =>
        key
          .map((k) => {
            const v = (row as Record<string, unknown>)[k];
            return v instanceof Date ? String(v.getTime()) : String(v);
          })
          .join('|'),
      );
      expect(new Set(keys).size).toBe(keys.length);
    }
  });

  it('a question in both rounds is one question, a version per round whose text differs, one price per round', () => {
    const qs = batch.questions.filter((q) => q.question_id === 'infer:1432');
    expect(qs).toHaveLength(1);
    // The two rounds' market_info_resolution_criteria differ: the question is the first round's
    // text, dated at its freeze; the 2026-03-15 round's is a version dated at that round's freeze, so
    // a run dated 2025-10-16 is not shown the criteria INFER added later (QA: it was).
    expect(qs[0]!.origin).toBe('forecastbench:2025-10-26-llm.json@25842c8');
    expect(qs[0]!.ingested_at!.toISOString()).toBe('2025-10-16T00:00:00.000Z');
    expect(qs[0]!.resolution_criteria).not.toContain('Platform resolution criteria');
    const versions = batch.question_versions.filter((q) => q.question_id === 'infer:1432');
    // its first round is a version too (a directory an older version imported holds only the latest
    // round's text, dated at that import)
    expect(versions.map((v) => [v.origin, v.ingested_at!.toISOString()])).toEqual([
      ['forecastbench:2025-10-26-llm.json@25842c8', '2025-10-16T00:00:00.000Z'],
      ['forecastbench:2026-03-15-llm.json@6da47e9', '2026-03-06T00:00:00.000Z'],
    ]);
    expect(versions[0]).toEqual(qs[0]);
    expect(versions[1]!.resolution_criteria).toContain('Platform resolution criteria: <p>For this question to resolve "Yes"');
    // the 20 questions in both rounds: 4 changed their text (1401, 1612: background markup; 1432,
    // 1659: the platform's resolution criteria), the others have no version
    expect([...new Set(batch.question_versions.map((v) => v.question_id))].sort()).toEqual(['infer:1401', 'infer:1432', 'infer:1612', 'infer:1659']);
    const prices = batch.market_prices.filter((p) => p.question_id === 'infer:1432');
    expect(prices.map((p) => [p.observed_at!.toISOString(), p.origin])).toEqual([
      ['2025-10-16T00:00:00.000Z', 'forecastbench:2025-10-26-llm.json@25842c8'],
      ['2026-03-06T00:00:00.000Z', 'forecastbench:2026-03-15-llm.json@6da47e9'],
    ]);
  });

  it('resolved=False rows become market prices, not outcomes', () => {
    // metaculus:18258: resolved=False in both rounds: 0.33 on 2026-08-19, 0.15 on 2026-08-20.
    expect(batch.resolutions.find((r) => r.question_id === 'metaculus:18258')).toBeUndefined();
    const later = batch.market_prices.filter((p) => p.question_id === 'metaculus:18258' && p.observed_at! >= new Date('2026-08-01'));
    expect(later.map((p) => [p.observed_at!.toISOString(), p.probability, p.origin])).toEqual([
      ['2026-08-19T00:00:00.000Z', 0.33, 'forecastbench:2025-10-26_resolution_set.json@6072269'],
      ['2026-08-20T00:00:00.000Z', 0.15, 'forecastbench:2026-03-15_resolution_set.json@b5caee1'],
    ]);
  });

  it('resolved=True rows become resolutions with venue, url and lifecycle event', () => {
    const r = batch.resolutions.find((x) => x.question_id === 'infer:1554')!;
    expect(r).toMatchObject({
      outcome: 0,
      source_slug: 'infer',
      source_url: 'https://www.randforecastinginitiative.org/questions/1554',
      evidence_excerpt: 'ForecastBench resolution set 2025-10-26_resolution_set.json@6072269: resolved_to=0.0',
      retrieved_at: NOW,
    });
    expect(r.resolved_at).toEqual(new Date('2026-01-01T00:00:00Z'));
    const events = batch.lifecycle_events.filter((e) => e.question_id === 'infer:1554');
    expect(events.map((e) => e.state)).toEqual(['active', 'closed', 'resolved']);
    expect(events[0]!.reason).toBe('listed on INFER (RAND Forecasting Initiative)');
    expect(events[2]!.reason).toMatch(/INFER/);
  });

  it('questions without a resolution row stay open', () => {
    const resolved = new Set(batch.resolutions.map((r) => r.question_id));
    const open = batch.questions.filter((q) => !resolved.has(q.question_id));
    expect(open.length).toBe(480 - 254);
    for (const q of open) expect(batch.lifecycle_events.some((e) => e.question_id === q.question_id && e.state === 'resolved')).toBe(false);
    expect(resolved.has('manifold:hkmwaaZrisxgrs5Q3zGz')).toBe(false); // no resolution row at all
  });

  it('lifecycle: one active per question, closed only when close_time <= now', () => {
    const active = batch.lifecycle_events.filter((e) => e.state === 'active');
    expect(active).toHaveLength(batch.questions.length);
    const closed = batch.lifecycle_events.filter((e) => e.state === 'closed');
    const expectClosed = batch.questions.filter((q) => q.close_time! <= NOW);
    expect(closed).toHaveLength(expectClosed.length);
    expect(batch.lifecycle_events.filter((e) => e.state === 'resolved')).toHaveLength(batch.resolutions.length);
  });

  it('is deterministic', async () => {
    const again = await parseForecastBench(SAMPLE, { now: NOW });
    expect(again).toEqual(batch);
  });
});

describe('parseForecastBench on the small fixture', async () => {
  const batch = await parseForecastBench(join(FIXTURES, 'valid'), { now: NOW });

  it('venue-qualifies ids: infer:1554 and metaculus:1554 are different questions', () => {
    const ids = batch.questions.map((q) => q.question_id);
    expect(ids).toContain('infer:1554');
    expect(ids).toContain('metaculus:1554');
    expect(batch.resolutions.map((r) => r.question_id)).toContain('infer:1554');
    expect(batch.resolutions.map((r) => r.question_id)).not.toContain('metaculus:1554');
  });

  it('a UTF-8 BOM at the start of questions_market.jsonl is no error (the CSV already allowed one)', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'fb-bom-'));
    try {
      for (const f of ['questions_market.jsonl', 'resolutions_market.csv']) copyFileSync(join(FIXTURES, 'valid', f), join(dir, f));
      writeFileSync(join(dir, 'questions_market.jsonl'), '\uFEFF' + readFileSync(join(dir, 'questions_market.jsonl'), 'utf8'));
      const withBom = await parseForecastBench(dir, { now: NOW });
      expect(withBom.questions).toEqual(batch.questions);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('counts: 6 questions, 10 prices (1 duplicate dropped), 3 resolutions, 3 skipped', () => {
    expect(batch.questions).toHaveLength(6);
    expect(batch.market_prices).toHaveLength(10);
    expect(batch.resolutions).toHaveLength(3);
    expect(batch.skipped.map((s) => [s.line, s.reason.replace(/ of .*\(/, ' (')])).toEqual([
      [5, 'duplicate resolution (agrees with line 4)'],
      [8, 'duplicate resolution (agrees with line 7)'],
      [9, 'question metaculus:999999 is not in questions_market.jsonl'],
    ]);
    expectExactColumns(batch);
  });

  it('dedupes prices by (question_id, observed_at), keeping the first', () => {
    const p = batch.market_prices.filter((x) => x.question_id === 'metaculus:1554');
    expect(p).toHaveLength(1);
    expect(p[0]!.origin).toBe('forecastbench:2025-10-26-llm.json@25842c8');
  });

  it('metaculus:17112: two rounds → one question, 2 freeze prices + 2 resolved=False prices', () => {
    expect(batch.questions.filter((q) => q.question_id === 'metaculus:17112')).toHaveLength(1);
    expect(batch.market_prices.filter((x) => x.question_id === 'metaculus:17112')).toHaveLength(4);
  });
});

describe('bad input throws ImportError with file, line and field', () => {
  const tmp: string[] = [];
  afterAll(() => tmp.forEach((d) => rmSync(d, { recursive: true, force: true })));

  /** Copies the valid fixture into a temp dir, applying `edit` to one file's text. */
  function mutated(file: 'questions_market.jsonl' | 'resolutions_market.csv', edit: (text: string) => string): string {
    const dir = mkdtempSync(join(tmpdir(), 'quorum-fb-'));
    tmp.push(dir);
    for (const f of ['questions_market.jsonl', 'resolutions_market.csv']) copyFileSync(join(FIXTURES, 'valid', f), join(dir, f));
    writeFileSync(join(dir, file), edit(readFileSync(join(dir, file), 'utf8')));
    return dir;
  }

  /** Edits JSON line `n` (1-based) of a JSONL text. */
  function editLine(n: number, f: (o: Record<string, unknown>) => void) {
    return (text: string) =>
      text
        .split('\n')
        .map((l, i) => {
          if (i !== n - 1) return l;
          const o = JSON.parse(l);
          f(o);
          return JSON.stringify(o);
        })
        .join('\n');
  }

  /** Replaces the CSV row at line `n` by `row`. */
  function csvLine(n: number, f: (fields: string[]) => string[]) {
    return (text: string) =>
      text
        .split('\n')
        .map((l, i) => (i === n - 1 ? f(l.split(',')).join(',') : l))
        .join('\n');
  }

  async function expectImportError(dir: string, file: string, line: number | null, field: string | null, reason: RegExp) {
    const err = await parseForecastBench(dir, { now: NOW }).then(
      () => null,
      (e: unknown) => e,
    );
    expect(err).toBeInstanceOf(ImportError);
    const e = err as ImportError;
    expect(e.file).toBe(join(dir, file));
    expect(e.line).toBe(line);
    expect(e.field).toBe(field);
    expect(e.reason).toMatch(reason);
    // The message names all three.
    expect(e.message).toContain(file);
    if (line !== null) expect(e.message).toContain(`:${line}`);
    if (field !== null) expect(e.message).toContain(`"${field}"`);
  }

  const Q = 'questions_market.jsonl';
  const R = 'resolutions_market.csv';

  it('truncated JSONL (cut mid-line)', () =>
    expectImportError(join(FIXTURES, 'truncated-jsonl'), Q, 3, null, /invalid JSON/));
  it('truncated CSV (row with too few fields)', () =>
    expectImportError(join(FIXTURES, 'truncated-csv'), R, 4, 'resolved', /expected 11 fields, got 7/));
  it('CSV ending inside a quoted field', () =>
    expectImportError(join(FIXTURES, 'unterminated-quote-csv'), R, 4, null, /unterminated quoted field/));
  it('conflicting resolutions across rounds', () =>
    expectImportError(join(FIXTURES, 'conflicting-resolutions'), R, 11, 'resolved_to', /conflicting resolution for infer:1554.*line 6/));
  it('missing required file', () =>
    expectImportError(join(FIXTURES, 'missing-resolutions'), R, null, null, /missing/));

  it('invalid JSON line', () => expectImportError(mutated(Q, (t) => t.replace(/\n/, '\n{not json\n')), Q, 2, null, /invalid JSON/));
  it('empty line in the middle', () => expectImportError(mutated(Q, (t) => t.replace(/\n/, '\n\n')), Q, 2, null, /empty line/));
  it('missing required field', () =>
    expectImportError(mutated(Q, editLine(4, (o) => delete o.question)), Q, 4, 'question', /missing required field/));
  it('wrong type', () =>
    expectImportError(mutated(Q, editLine(2, (o) => (o.freeze_datetime_value = '0.5'))), Q, 2, 'freeze_datetime_value', /expected a number/));
  it('probability outside [0,1]', () =>
    expectImportError(mutated(Q, editLine(3, (o) => (o.freeze_datetime_value = 1.2))), Q, 3, 'freeze_datetime_value', /outside \[0, 1\]/));
  it('unparseable date', () =>
    expectImportError(mutated(Q, editLine(5, (o) => (o.market_info_open_datetime = '2024-02-30T10:00:00+00:00'))), Q, 5, 'market_info_open_datetime', /unparseable date/));
  it('unknown source', () =>
    expectImportError(mutated(Q, editLine(1, (o) => (o.source = 'kalshi'))), Q, 1, 'source', /unknown source/));
  it('CSV: unknown source', () =>
    expectImportError(mutated(R, csvLine(3, (f) => ((f[3] = 'kalshi'), f))), R, 3, 'source', /unknown source/));
  it('CSV: resolved not True/False', () =>
    expectImportError(mutated(R, csvLine(4, (f) => ((f[7] = 'yes'), f))), R, 4, 'resolved', /True or False/));
  it('CSV: resolved_to outside [0,1]', () =>
    expectImportError(mutated(R, csvLine(2, (f) => ((f[6] = '1.5'), f))), R, 2, 'resolved_to', /outside \[0, 1\]/));
  it('CSV: resolved_to not a number', () =>
    expectImportError(mutated(R, csvLine(2, (f) => ((f[6] = 'abc'), f))), R, 2, 'resolved_to', /expected a number/));
  it('CSV: resolved=True with a non-binary value', () =>
    expectImportError(mutated(R, csvLine(6, (f) => ((f[6] = '0.5'), f))), R, 6, 'resolved_to', /1\.0 or 0\.0/));
  it('CSV: unparseable resolution_date', () =>
    expectImportError(mutated(R, csvLine(7, (f) => ((f[4] = '2026-13-01'), f))), R, 7, 'resolution_date', /calendar date/));
  it('CSV: too many fields', () =>
    expectImportError(mutated(R, csvLine(2, (f) => [...f, 'extra'])), R, 2, '(extra)', /expected 11 fields, got 12/));
  it('CSV: header missing a required column', () =>
    expectImportError(mutated(R, (t) => t.replace('resolved_to', 'value')), R, 1, 'resolved_to', /missing required column/));
  it('CSV: empty file', () => expectImportError(mutated(R, () => ''), R, 1, null, /empty file/));
  // QA (pagination): a 601-character id was imported, and every list that pages by question id
  // issued a next_cursor it then refused (over the cursor's length), so the walk stopped there
  it('an id over 200 characters, or with a control character', async () => {
    await expectImportError(mutated(Q, editLine(2, (o) => (o.id = 'x'.repeat(201)))), Q, 2, 'id', /over 200 characters/);
    await expectImportError(mutated(Q, editLine(3, (o) => (o.id = 'a\u0000b'))), Q, 3, 'id', /control character/);
    await expectImportError(mutated(R, csvLine(2, (f) => ((f[2] = 'y'.repeat(201)), f))), R, 2, 'id', /over 200 characters/);
  });
  // QA: an id with a space or a '/' was imported, and no path or question_id filter of the API
  // (letters, digits, '_', '.', '-') could name its question
  it('an id with a character the API cannot take (space, slash, colon, non-ASCII)', async () => {
    for (const [line, id] of [[2, 'with space'], [3, 'a/b'], [4, 'a:b'], [5, 'caf\u00e9']] as const) {
      await expectImportError(mutated(Q, editLine(line, (o) => (o.id = id))), Q, line, 'id', /other than letters, digits, '_', '\.' and '-'/);
    }
    await expectImportError(mutated(R, csvLine(3, (f) => ((f[2] = 'x y'), f))), R, 3, 'id', /other than letters, digits/);
  });
});

describe('parseTimestamp', () => {
  it('parses dates and offsets as UTC instants', () => {
    expect(parseTimestamp('2026-01-01')).toEqual(new Date('2026-01-01T00:00:00Z'));
    expect(parseTimestamp('2023-11-16T18:37:14+00:00')).toEqual(new Date('2023-11-16T18:37:14Z'));
    expect(parseTimestamp('2023-11-16T18:37:14+02:00')).toEqual(new Date('2023-11-16T16:37:14Z'));
    expect(parseTimestamp('2023-11-16T18:37:14.5Z')).toEqual(new Date('2023-11-16T18:37:14.500Z'));
  });
  it('rejects malformed or impossible dates', () => {
    // (0025-10-16: Date.UTC reads years 0-99 as 1900-1999; before 1970 is out of range anyway)
    for (const s of ['', 'N/A', '2025-02-29', '2025-13-01', '2025-01-01T25:00:00Z', '16/10/2025', '2025-1-1', '0025-10-16', '1969-12-31']) {
      expect(parseTimestamp(s)).toBeNull();
    }
  });
});
