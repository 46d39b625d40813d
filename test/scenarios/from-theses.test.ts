/**
 * Scenarios from theses (issue 13, optional): QUORUM_SCENARIOS_FROM_THESES = n makes every curated
 * thesis a scenario of its n most weighted members, most weighted first; a curated scenario of the
 * same id wins; a bad value is an error naming the variable; and on the bundled sample the derive
 * publishes one such scenario per bundled thesis, with its joint and a record, beside the curated ones.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadScenarioDefinitions } from '../../pipeline/scenarios/definitions.ts';
import { loadScenarios, loadThesisScenarioSize, thesisScenarioId, thesisScenarios } from '../../pipeline/scenarios/from-theses.ts';
import { DEFAULT_STRUCTURE_DIR, loadStructureDefinitions, parseThesesFile, StructureFileError } from '../../pipeline/structure/definitions.ts';
import { fixture, sampleFixture, forecasts, publish, question, snapshotRows, writeRaw, type Fixture } from '../structure/helpers.ts';
import { get, serve } from '../api/helpers.ts';

const THESES = `theses:
  - id: rates-fall
    statement: Rates fall this year
    members:
      - { question: "kalshi:A", sign: 1, weight: 1 }
      - { question: "kalshi:B", sign: -1, weight: 3 }
      - { question: "kalshi:C", sign: 1, weight: 1 }
      - { question: "kalshi:D", sign: 1, weight: 2 }
`;

describe('thesisScenarios', () => {
  const theses = parseThesesFile(THESES, 'theses/t.yaml');

  it('takes the n most weighted members, most weighted first, ties in the listed order', () => {
    const [s] = thesisScenarios(theses, 3);
    expect(s).toMatchObject({ id: 'thesis-rates-fall', title: 'Rates fall this year', file: 'theses/t.yaml' });
    expect(s!.components.map((c) => c.question)).toEqual(['kalshi:B', 'kalshi:D', 'kalshi:A']);
    expect(s!.description).toContain('rates-fall');
    // more than the thesis holds: all of them
    expect(thesisScenarios(theses, 6)[0]!.components.map((c) => c.question)).toEqual(['kalshi:B', 'kalshi:D', 'kalshi:A', 'kalshi:C']);
    expect(thesisScenarios(theses, 0)).toEqual([]);
  });

  it('keeps ids and titles within a scenario definition\'s limits', () => {
    const long = 'x'.repeat(63);
    expect(thesisScenarioId(long)).toHaveLength(63);
    expect(thesisScenarioId(long)).toMatch(/^thesis-x+$/);
    expect(thesisScenarioId(`${'a'.repeat(55)}-bcd`)).toBe(`thesis-${'a'.repeat(55)}`); // no trailing dash
    const wordy = parseThesesFile(THESES.replace('Rates fall this year', 'y'.repeat(400)), 't.yaml');
    expect(thesisScenarios(wordy, 2)[0]!.title.length).toBeLessThanOrEqual(200);
  });

  it('QUORUM_SCENARIOS_FROM_THESES: 0 (default) or 2 to 6; anything else names the variable', () => {
    expect(loadThesisScenarioSize({})).toBe(0);
    expect(loadThesisScenarioSize({ QUORUM_SCENARIOS_FROM_THESES: '' })).toBe(0);
    expect(loadThesisScenarioSize({ QUORUM_SCENARIOS_FROM_THESES: '4' })).toBe(4);
    for (const bad of ['1', '7', '-2', '2.5', 'three', '1e9']) {
      expect(() => loadThesisScenarioSize({ QUORUM_SCENARIOS_FROM_THESES: bad }), bad).toThrow(/^QUORUM_SCENARIOS_FROM_THESES: /);
    }
    // digits only, as every count (QA: 0x3, 3e0, +3 and -0 were taken as numbers, `three` "received NaN")
    for (const bad of ['0x3', '3e0', '+3', '-0', '0b11']) {
      expect(() => loadThesisScenarioSize({ QUORUM_SCENARIOS_FROM_THESES: bad }), bad).toThrow(/^QUORUM_SCENARIOS_FROM_THESES: /);
    }
    expect(() => loadThesisScenarioSize({ QUORUM_SCENARIOS_FROM_THESES: 'three' })).toThrow('QUORUM_SCENARIOS_FROM_THESES: expected a whole number (digits only)');
    expect(loadThesisScenarioSize({ QUORUM_SCENARIOS_FROM_THESES: ' 3 ' })).toBe(3);
  });

  it('loadScenarios: the curated ones, then the theses\' ones whose id is free', () => {
    const f = fixture({ 'theses/t.yaml': THESES });
    try {
      writeFileSync(join(f.structureDir, 'scenarios', 's.yaml'), `scenarios:
  - id: thesis-rates-fall
    title: A hand-written pathway
    description: Replaces the generated one
    components: [{ question: "kalshi:C" }, { question: "kalshi:A" }]
  - id: other
    title: Another
    description: Another one
    components: [{ question: "kalshi:X" }, { question: "kalshi:Y" }]
`);
      expect(loadScenarios(f.structureDir, {}).map((s) => s.id)).toEqual(['thesis-rates-fall', 'other']);
      const both = loadScenarios(f.structureDir, { QUORUM_SCENARIOS_FROM_THESES: '3' });
      expect(both.map((s) => s.id)).toEqual(['thesis-rates-fall', 'other']);
      expect(both[0]!.title).toBe('A hand-written pathway');
      mkdirSync(join(f.structureDir, 'theses'), { recursive: true });
      writeFileSync(join(f.structureDir, 'theses', 'u.yaml'), THESES.replace('rates-fall', 'rates-rise'));
      expect(loadScenarios(f.structureDir, { QUORUM_SCENARIOS_FROM_THESES: '2' }).map((s) => s.id)).toEqual(['thesis-rates-fall', 'other', 'thesis-rates-rise']);
    } finally {
      f.cleanup();
    }
  });
});

describe('a thesis scenario\'s description names its file within the structure directory (QA)', () => {
  it('not the absolute path a structure directory outside the working directory was read from', async () => {
    const f = fixture({ 'theses/t.yaml': THESES });
    const at = new Date('2026-01-10T00:00:00Z');
    try {
      expect(f.structureDir.startsWith(process.cwd())).toBe(false); // a temp dir: read by its absolute path
      const ids = ['kalshi:A', 'kalshi:B', 'kalshi:C', 'kalshi:D'];
      await writeRaw(f.dataDir, {
        questions: ids.map((q, i) => question(q, `unrelated ${['zebra', 'yak', 'walrus', 'heron'][i]}`)),
        forecasts: ids.flatMap((q) => forecasts('r-t-1', q, at, [0.2, 0.4, 0.6, 0.8])),
      });
      await publish(f, at, { QUORUM_SCENARIOS_FROM_THESES: '3' });
      const server = await serve(f.dataDir);
      try {
        const got = await get(server, '/api/scenarios/thesis-rates-fall/');
        expect(got.res.status, got.text).toBe(200);
        // before: "… of thesis rates-fall (/tmp/quorum-structure-…/structure/theses/t.yaml) …"
        expect(got.body.scenario.description).toBe('The 3 most weighted members of thesis rates-fall (theses/t.yaml), most weighted first.');
      } finally {
        await server.close();
      }
    } finally {
      f.cleanup();
    }
  }, 120_000);
});

describe('loadScenarios: generated ids are unique (QA)', () => {
  it('two theses whose ids cut to the same scenario id are an error naming both, not two scenarios of one id', () => {
    const long = 'a'.repeat(57);
    const f = fixture({ 'theses/t.yaml': THESES.replace('rates-fall', `${long}-x`) + THESES.replace('theses:\n', '').replace('rates-fall', `${long}-y`) });
    try {
      expect(loadStructureDefinitions(f.structureDir).theses.map((t) => t.id)).toEqual([`${long}-x`, `${long}-y`]);
      expect(() => loadScenarios(f.structureDir, { QUORUM_SCENARIOS_FROM_THESES: '2' })).toThrow(StructureFileError);
      expect(() => loadScenarios(f.structureDir, { QUORUM_SCENARIOS_FROM_THESES: '2' })).toThrow(new RegExp(`${long}-y.*${long}-x`));
      expect(loadScenarios(f.structureDir, {})).toEqual([]); // off: nothing generated, nothing to clash
    } finally {
      f.cleanup();
    }
  });
});

describe('scenarios from the bundled theses over the imported sample', () => {
  const theses = loadStructureDefinitions(DEFAULT_STRUCTURE_DIR).theses;
  const curated = loadScenarioDefinitions(DEFAULT_STRUCTURE_DIR);
  const FORECAST_AT = new Date('2026-03-05T12:00:00Z');
  let f: Fixture;
  let run: string;

  beforeAll(async () => {
    f = await sampleFixture();
    const members = [...new Set(theses.flatMap((t) => t.members.map((m) => m.question)))];
    await writeRaw(
      f.dataDir,
      { forecasts: members.flatMap((q, i) => forecasts('r-thesis-scenarios', q, FORECAST_AT, [0.2, 0.4, 0.6, 0.8].map((p) => ((p + i * 0.11) % 0.9) + 0.05))) },
      FORECAST_AT,
    );
    f.structureDir = DEFAULT_STRUCTURE_DIR;
    run = await publish(f, new Date('2026-03-06T00:00:00Z'), { QUORUM_SCENARIOS_FROM_THESES: '3' });
  });
  afterAll(() => f?.cleanup());

  it('publishes one scenario per thesis (its three most weighted members) beside the curated ones', async () => {
    const rows = await snapshotRows(f.dataDir, run, 'SELECT scenario_id, title, n_components, n_models FROM {scenarios} ORDER BY scenario_id');
    const expected = [...curated.map((s) => s.id), ...theses.map((t) => thesisScenarioId(t.id))].sort();
    expect(rows.map((r) => r.scenario_id)).toEqual(expected);
    const comps = await snapshotRows(f.dataDir, run, 'SELECT scenario_id, ord, question_id FROM {scenario_components} ORDER BY scenario_id, ord');
    for (const t of theses) {
      const id = thesisScenarioId(t.id);
      const top = [...t.members].map((m, i) => ({ m, i })).sort((a, b) => b.m.weight - a.m.weight || a.i - b.i).slice(0, 3).map(({ m }) => m.question);
      expect(comps.filter((c) => c.scenario_id === id).map((c) => c.question_id), id).toEqual(top);
      expect(rows.find((r) => r.scenario_id === id)).toMatchObject({ title: t.statement, n_components: 3, n_models: 4 });
    }
  });

  it('each gets a consensus joint over its 8 worlds that sums to 1', async () => {
    const joint = await snapshotRows(
      f.dataDir, run,
      `SELECT scenario_id, count(*)::INTEGER AS worlds, sum(probability) AS total FROM {scenario_worlds}
       WHERE source = 'consensus' AND scenario_id LIKE 'thesis-%' GROUP BY scenario_id ORDER BY scenario_id`,
    );
    expect(joint).toHaveLength(theses.length);
    for (const j of joint) {
      expect(j.worlds, j.scenario_id).toBe(8);
      expect(j.total, j.scenario_id).toBeCloseTo(1, 9);
    }
  });
});
