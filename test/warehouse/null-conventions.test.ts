/**
 * The published tables' conventions for "nothing" (sql/README.md, published derived tables): a
 * missing number is NULL, never NaN or ±Infinity (DuckDB's DOUBLE division gives both: 0/0 is
 * NaN, 1/0 Infinity), and a list column holds an empty list, never NULL, when there is nothing in
 * it (claim_sources' categories and active_predictions' langs are coalesced to []; the API serves
 * [] for every list). Checked over every list and DOUBLE column of a snapshot where the edge cases
 * happen: a factor whose rules match no question (QA: factors.categories was NULL there, while the
 * API's factor showed [] and claim_sources used []), a question never forecast, nothing resolved.
 */
import { readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { readManifest } from '../../pipeline/warehouse/snapshot.ts';
import { RAW_TABLES } from '../../pipeline/warehouse/tables.ts';
import { fixture, forecasts, publish, question, snapshotRows, writeRaw, type Fixture } from '../structure/helpers.ts';

const T1 = new Date('2026-01-10T00:00:00Z');

const FACTORS = [
  'factors:',
  '  - id: live',
  '    name: Live factor',
  '    statement: Widgets win',
  '    drivers:',
  '      - { id: d1, name: Driver one, questions: [{ question: "manifold:a1", sign: 1 }] }',
  '  - id: empty',
  '    name: Empty factor',
  '    statement: Nothing here yet',
  '    drivers:',
  '      - { id: e1, name: Empty driver, rules: [{ match: [[zzzz]], sign: 1 }] }',
  '',
].join('\n');

describe('published tables: NULL, never NaN; [], never a NULL list', () => {
  let f: Fixture;
  let runId: string;
  beforeAll(async () => {
    f = fixture({ 'factors/f.yaml': FACTORS });
    await writeRaw(f.dataDir, {
      // raw lists as the pipeline writes them (tags, key_factors, evidence_ids: arrays, maybe empty)
      questions: [question('manifold:a1', 'alpha widget launch', { tags: ['ai'] }), question('manifold:a2', 'beta widget launch', { tags: [] })],
      forecasts: forecasts('r20260110T000000Z-conv0001', 'manifold:a1', T1, [0.6, 0.6, 0.6, 0.6]).map((r) => ({ ...r, key_factors: ['k'], evidence_ids: [] })),
      market_prices: [{ question_id: 'manifold:a1', venue: 'manifold', observed_at: T1, probability: 0.6 }],
    });
    runId = await publish(f, new Date('2026-01-20T00:00:00Z'));
  });
  afterAll(() => f.cleanup());

  it('a factor without leaves has no categories: an empty list', async () => {
    const [row] = await snapshotRows(f.dataDir, runId, `SELECT categories FROM {factors} WHERE factor_id = 'empty'`);
    expect(row!.categories).toEqual([]);
  });

  it('no list column of any published table holds NULL, and no DOUBLE column NaN or Infinity', async () => {
    const manifest = readManifest(f.dataDir, runId);
    const checks: string[] = [];
    for (const table of manifest.tables) {
      for (const c of manifest.columns![table]!) {
        const col = `"${c.name}"`;
        const bad =
          c.type.endsWith('[]') ? `${col} IS NULL`
          : c.type === 'DOUBLE' ? `isnan(${col}) OR isinf(${col})`
          : null;
        if (bad) checks.push(`SELECT '${table}.${c.name}' AS col, count(*) FILTER (WHERE ${bad}) AS n FROM {${table}}`);
      }
    }
    const found = (await snapshotRows(f.dataDir, runId, checks.join(' UNION ALL '))).filter((r) => Number(r.n) > 0);
    expect(found).toEqual([]);
  });

  it("sql/README.md names every column of every published table in the table's own section", () => {
    const doc = readFileSync(new URL('../../sql/README.md', import.meta.url), 'utf8');
    const sections = doc.split(/\n(?=#{2,4} )/);
    const sectionOf = (table: string): string =>
      sections.filter((x) => new RegExp(`\`${table}\``).test(x.split('\n', 1)[0]!)).join('\n');
    const manifest = readManifest(f.dataDir, runId);
    const missing: string[] = [];
    for (const table of manifest.tables) {
      let text = sectionOf(table);
      expect(text, `a section of sql/README.md for ${table}`).not.toBe('');
      // "the same columns as `x`", "Columns as `x`", "(as track_records, …)": x's section too
      for (const m of text.matchAll(/(?:[Cc]olumns as|as) `?([a-z_]+)`?/g)) if (manifest.tables.includes(m[1]!) && m[1] !== table) text += sectionOf(m[1]!);
      // "x_ci95_lo/hi": both
      text = text.replace(/([a-z0-9_]+)_lo\/hi/g, '$1_lo $1_hi');
      for (const c of manifest.columns![table]!) if (!new RegExp(`(?<![a-z0-9_])${c.name}(?![a-z0-9_])`).test(text)) missing.push(`${table}.${c.name}`);
    }
    expect(missing).toEqual([]);
    // scenario_records: "the archived columns but recorded_at"
    const records = manifest.columns!.scenario_records!.map((c) => c.name);
    const archived = Object.keys(RAW_TABLES.scenario_archive.columns);
    expect(archived.filter((c) => !records.includes(c))).toEqual(['recorded_at']);
    expect(sectionOf('scenario_records')).toContain('the archived columns but `recorded_at`');
  });
});
