/**
 * A bad definition file (links, theses, factors, scenarios under QUORUM_STRUCTURE_DIR) fails a run
 * before it syncs or calls a model: the file was read only at publish, after every model call of
 * the run was made and paid for (QA: `quorum run` with a factors file whose sign was 2 made 2,048
 * calls, then failed with the file and line; every scheduled run did the same until it was fixed).
 * A real run (runPipeline, the bundled sample, the real simulator over HTTP).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { join } from 'node:path';
import { loadConfig } from '../../pipeline/config.ts';
import { createLogger } from '../../pipeline/log.ts';
import { runPipeline } from '../../pipeline/run.ts';
import { importForecastBench } from '../../pipeline/bootstrap.ts';
import { startSimulator, type Simulator } from '../../pipeline/simulator/server.ts';
import { closeDuckdb } from '../../pipeline/warehouse/duckdb.ts';
import { REPO } from '../helpers/cli.ts';
import { rawQuery } from '../forecast/helpers.ts';
import { fixture, type Fixture } from './helpers.ts';

const BAD_FILES: [string, string, RegExp][] = [
  ['factors/bad.yaml', 'factors:\n  - id: ff\n    name: F\n    statement: xyz\n    drivers:\n      - { id: d1, name: D, questions: [{ question: "manifold:a", sign: 2 }] }\n', /factors\/bad\.yaml:6 \(field "factors\.0\.drivers\.0\.questions\.0\.sign"\)/],
  ['theses/bad.yaml', 'theses:\n  - id: t1\n    statement: xyz\n    members: [{ question: "manifold:a", sign: 1 }]\n', /theses\/bad\.yaml:4 \(field "theses\.0\.members"\)/],
  ['links/bad.yaml', 'links:\n  - { a: "manifold:a", b: "manifold:b", kind: causes }\n', /links\/bad\.yaml:2 \(field "links\.0\.kind"\)/],
];

const logger = createLogger('silent');
let sim: Simulator;
let f: Fixture;
const saved = process.env.QUORUM_STRUCTURE_DIR;

beforeAll(async () => {
  sim = await startSimulator({ port: 0 });
  f = fixture();
  await importForecastBench(loadConfig({ QUORUM_DATA_DIR: f.dataDir, LOG_LEVEL: 'silent' }), join(REPO, 'data', 'sample', 'forecastbench'));
}, 120_000);

afterAll(async () => {
  if (saved === undefined) delete process.env.QUORUM_STRUCTURE_DIR;
  else process.env.QUORUM_STRUCTURE_DIR = saved;
  await sim?.close();
  await closeDuckdb();
  f?.cleanup();
});

describe('a bad definition file fails the run before any model call', () => {
  for (const [file, text, error] of BAD_FILES) {
    it(`${file}: the run fails naming the file and line, with no call made and nothing forecast`, async () => {
      const dir = fixture({ [file]: text });
      try {
        process.env.QUORUM_STRUCTURE_DIR = dir.structureDir;
        const config = loadConfig({ QUORUM_DATA_DIR: f.dataDir, QUORUM_SIMULATOR_URL: sim.url, QUORUM_MAX_QUESTIONS: '3', QUORUM_MODES: 'blind', LOG_LEVEL: 'silent' });
        const before = await rawQuery(f.dataDir, 'forecasts', 'SELECT count(*) AS n FROM t');
        const summary = await runPipeline({ config, logger, asOf: new Date('2026-03-10T00:00:00Z') });
        expect(summary.status).toBe('failed');
        expect(summary.error).toMatch(error);
        expect(summary.calls_made).toBe(0);
        expect(summary.forecasts).toBe(0);
        expect(await rawQuery(f.dataDir, 'forecasts', 'SELECT count(*) AS n FROM t')).toEqual(before);
        const calls = await rawQuery(f.dataDir, 'model_calls', `SELECT count(*) AS n FROM t WHERE run_id = '${summary.run_id}'`);
        expect(calls[0]?.n ?? 0).toBe(0);
      } finally {
        dir.cleanup();
      }
    }, 120_000);
  }
});

describe('a definition file naming a question the warehouse does not have', () => {
  it('the run says so in its notes and log, naming the file, the line and the ids; known ids and the other files say nothing', async () => {
    // QA: a typo in a member's id left the member out without a word (a thesis published with fewer
    // members, or not at all).
    const known = (await rawQuery(f.dataDir, 'questions', 'SELECT DISTINCT question_id FROM t ORDER BY question_id LIMIT 4')).map((r) => String(r.question_id));
    const member = (q: string) => `      - { question: "${q}", sign: 1 }\n`;
    const dir = fixture({
      'theses/typo.yaml': `theses:\n  - id: t-typo\n    statement: a thesis with a typo\n    members:\n${[known[0]!, known[1]!, 'manifold:no-such-market'].map(member).join('')}`,
      'theses/fine.yaml': `theses:\n  - id: t-fine\n    statement: a thesis of known questions\n    members:\n${known.slice(1, 4).map(member).join('')}`,
      'links/typo.yaml': `links:\n  - { a: "${known[0]}", b: "polymarket:0xtypo", kind: implies, sign: 1 }\n`,
    });
    try {
      process.env.QUORUM_STRUCTURE_DIR = dir.structureDir;
      const config = loadConfig({ QUORUM_DATA_DIR: f.dataDir, QUORUM_SIMULATOR_URL: sim.url, LOG_LEVEL: 'silent' });
      const summary = await runPipeline({ config, logger, asOf: new Date('2026-03-10T00:00:00Z'), scoreOnly: true });
      expect(summary.status, summary.error ?? '').toBe('completed');
      expect(summary.notes).toEqual([
        `${join(dir.structureDir, 'links', 'typo.yaml')}:2 names a question the warehouse does not have, left out: polymarket:0xtypo`,
        `${join(dir.structureDir, 'theses', 'typo.yaml')}:7 names a question the warehouse does not have, left out: manifold:no-such-market`,
      ]);
    } finally {
      dir.cleanup();
    }
  }, 120_000);
});
