/**
 * QUORUM_SCENARIO_MAX_CONDITIONS when earlier components have resolved (QA): the cap was spent in
 * pathway order on every combination of the earlier outcomes, those the resolutions already ruled
 * out first ('0…'), so the conditions of the worlds still possible (the only ones a record is
 * scored on) were never asked. With fed-2026-path's first three components resolved '100' and two
 * components added, every run asked 4:000…4:111, 5:0000…5:1111 and 6:00000…6:00110, never
 * P(c6 | 100··). Now the conditions that agree with the resolutions are asked first.
 *
 * A real pipeline run (the bundled sample in a real DuckDB warehouse, the simulator over HTTP)
 * dated 2026-04-01, after the March 2026 meeting resolved "no change" YES (2026-03-18) and before
 * the April and June meetings, and the task list itself.
 */
import { mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../pipeline/config.ts';
import { createLogger } from '../../pipeline/log.ts';
import { runPipeline } from '../../pipeline/run.ts';
import { importForecastBench } from '../../pipeline/bootstrap.ts';
import type { ForecastTask } from '../../pipeline/models/prompts.ts';
import { conditionalTasks } from '../../pipeline/scenarios/conditional-tasks.ts';
import { parseScenariosFile } from '../../pipeline/scenarios/definitions.ts';
import { startSimulator, type Simulator } from '../../pipeline/simulator/server.ts';
import { closeDuckdb } from '../../pipeline/warehouse/duckdb.ts';
import { REPO } from '../helpers/cli.ts';
import { rawQuery, scratch } from './helpers.ts';

const MARCH_HOLD = 'polymarket:0x257b18205f908aef01ef2d1d50e6fea7d29cf5486fe04031d8b101394476faed'; // resolved YES 2026-03-18
const APRIL_CUT = 'polymarket:0x0d14f5dc9fb3250ec888b1ac8d9fe9a0ce06f9d3ea60fdf138e8690622fea84c'; // resolved 2026-04-29
const JUNE_CUT = 'polymarket:0xdde06286a7b9464d344f410ab0b3d2ebc6469904e72c27fd982f65fdbf78768d'; // resolved 2026-06-17

const SCENARIO = (ids: string[]) =>
  ['scenarios:', '  - id: fed', '    title: The Fed in spring 2026', '    description: Three meetings in a row', '    components:', ...ids.map((q) => `      - { question: "${q}" }`), ''].join('\n');

const task = (id: string): ForecastTask => ({
  mode: 'blind',
  question: { question_id: id, title: id, description: null, resolution_criteria: null, url: null, created_at: null, close_time: null, category: 'tech', domain: 'ai' },
  market: null,
  evidence: [],
});

describe('the conditional-call cap asks the conditions the resolutions leave possible first', () => {
  it('the task list: resolved earlier components pick the agreeing combinations first, then the others', () => {
    const [s] = parseScenariosFile(SCENARIO(['m:a', 'm:b', 'm:c', 'm:d']), 's.yaml');
    const openTasks = new Map(['m:c', 'm:d'].map((q) => [q, task(q)]));
    const titles = new Map(['m:a', 'm:b', 'm:c', 'm:d'].map((q) => [q, q]));
    const codes = (maxConditions: number, outcomes?: Map<string, 0 | 1>) =>
      conditionalTasks({ scenarios: [s!], openTasks, titles, outcomes, mode: 'blind', maxConditions }).map((t) => t.condition!.code.slice(4));
    const resolved = new Map<string, 0 | 1>([['m:a', 1], ['m:b', 0]]);
    // a and b resolved '10': P(c | 10) and P(d | 10·) are the ones still bearing on a world
    expect(codes(3, resolved)).toEqual(['3:10', '4:100', '4:101']);
    expect(codes(5, resolved)).toEqual(['3:00', '3:01', '3:10', '4:100', '4:101']);
    // uncapped (or nothing resolved): every condition, pathway order, as before
    expect(codes(31, resolved)).toEqual(codes(31));
    expect(codes(3)).toEqual(['3:00', '3:01', '3:10']);
    // the assumptions are the condition's, whatever resolved
    const [t] = conditionalTasks({ scenarios: [s!], openTasks, titles, outcomes: resolved, mode: 'blind', maxConditions: 1 });
    expect(t!.condition!.assumed.map((a) => a.outcome)).toEqual([1, 0]);
  });

  describe('in a pipeline run', () => {
    const root = scratch('quorum-conditional-cap-');
    const dir = join(root, 'w');
    const structure = join(root, 'structure');
    let sim: Simulator;
    beforeAll(async () => {
      sim = await startSimulator({ port: 0, latencyMs: 1 });
      await importForecastBench(loadConfig({ QUORUM_DATA_DIR: dir, LOG_LEVEL: 'silent' }), join(REPO, 'data', 'sample', 'forecastbench'));
      for (const d of ['links', 'theses', 'factors', 'scenarios']) mkdirSync(join(structure, d), { recursive: true });
      writeFileSync(join(structure, 'scenarios', 's.yaml'), SCENARIO([MARCH_HOLD, APRIL_CUT, JUNE_CUT]));
      process.env.QUORUM_STRUCTURE_DIR = structure;
      process.env.QUORUM_SCENARIO_MAX_CONDITIONS = '3';
    }, 120_000);
    afterAll(async () => {
      delete process.env.QUORUM_STRUCTURE_DIR;
      delete process.env.QUORUM_SCENARIO_MAX_CONDITIONS;
      await sim.close();
      await closeDuckdb();
      rmSync(root, { recursive: true, force: true });
    });

    it('with March resolved YES, three calls ask P(April | hold) and P(June | hold, ·), none assumes no hold', async () => {
      const config = loadConfig({ QUORUM_DATA_DIR: dir, QUORUM_SIMULATOR_URL: sim.url, QUORUM_MODES: 'blind', LOG_LEVEL: 'silent' });
      const s = await runPipeline({ config, logger: createLogger('silent'), asOf: new Date('2026-04-01T00:00:00Z') });
      expect(s.status, s.error ?? '').toBe('completed');
      const conds = await rawQuery(dir, 'model_calls', 'SELECT DISTINCT condition FROM t WHERE condition IS NOT NULL ORDER BY 1');
      // before: fed:2:0, fed:2:1, fed:3:00 (two of the three assumed the March hold had not happened)
      expect(conds.map((c) => c.condition)).toEqual(['fed:2:1', 'fed:3:10', 'fed:3:11']);
    }, 180_000);

    it('a scenario naming a question the warehouse never had is not asked about: it is never published', async () => {
      // QA: a mistyped third component withholds the scenario from every snapshot
      // (99_scenario_1_joint.sql needs every component), yet every run paid the models for
      // P(June | April) under it. The note names the file, the line and the scenario instead.
      writeFileSync(join(structure, 'scenarios', 't.yaml'), SCENARIO([APRIL_CUT, JUNE_CUT, 'polymarket:0xtypo']).replace('id: fed', 'id: typo'));
      try {
        const config = loadConfig({ QUORUM_DATA_DIR: dir, QUORUM_SIMULATOR_URL: sim.url, QUORUM_MODES: 'blind', LOG_LEVEL: 'silent' });
        const s = await runPipeline({ config, logger: createLogger('silent'), asOf: new Date('2026-04-02T00:00:00Z') });
        expect(s.status, s.error ?? '').toBe('completed');
        const conds = await rawQuery(dir, 'model_calls', `SELECT DISTINCT condition FROM t WHERE run_id = '${s.run_id}' AND condition IS NOT NULL ORDER BY 1`);
        expect(conds.map((c) => c.condition)).toEqual(['fed:2:1', 'fed:3:10', 'fed:3:11']);
        expect(s.notes).toContainEqual(expect.stringMatching(/t\.yaml:8 names a question the warehouse does not have, left out: polymarket:0xtypo; scenario typo is not published/));
      } finally {
        rmSync(join(structure, 'scenarios', 't.yaml'));
      }
    }, 180_000);
  });
});
