/**
 * A run that does not sync (dated with --as-of, --score-only) writes the sources registry
 * (data/sources.json) first: in a data directory that never synced, the sources the registry alone
 * names (GDELT's evidence, the official resolution sources) had no name, so a backtest's GDELT
 * evidence was shown with `source.name` null (QA). Real import, real run, real Parquet.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { join } from 'node:path';
import { loadConfig } from '../../pipeline/config.ts';
import { createLogger } from '../../pipeline/log.ts';
import { runPipeline } from '../../pipeline/run.ts';
import { importForecastBench } from '../../pipeline/bootstrap.ts';
import { closeDuckdb } from '../../pipeline/warehouse/duckdb.ts';
import { REPO } from '../helpers/cli.ts';
import { rawQuery } from '../forecast/helpers.ts';
import { fixture, type Fixture } from '../structure/helpers.ts';

let f: Fixture;

beforeAll(async () => {
  f = fixture();
  await importForecastBench(loadConfig({ QUORUM_DATA_DIR: f.dataDir, LOG_LEVEL: 'silent' }), join(REPO, 'data', 'sample', 'forecastbench'));
}, 120_000);

afterAll(async () => {
  await closeDuckdb();
  f?.cleanup();
});

describe('a dated run in a directory that never synced', () => {
  it('writes the sources registry: GDELT and the official sources have their names; a second run adds nothing', async () => {
    const gdelt = 'SELECT source_slug, name FROM t WHERE source_slug = \'gdelt\'';
    expect(await rawQuery(f.dataDir, 'sources', gdelt)).toEqual([]);
    const config = loadConfig({ QUORUM_DATA_DIR: f.dataDir, LOG_LEVEL: 'silent' });
    const run = await runPipeline({ config, logger: createLogger('silent'), asOf: new Date('2026-03-10T00:00:00Z'), scoreOnly: true });
    expect(run.status, run.error ?? '').toBe('completed');
    expect(await rawQuery(f.dataDir, 'sources', gdelt)).toEqual([{ source_slug: 'gdelt', name: 'GDELT Project (DOC 2.0 news search)' }]);
    const count = 'SELECT count(*) AS n FROM t';
    const before = await rawQuery(f.dataDir, 'sources', count);
    await runPipeline({ config, logger: createLogger('silent'), asOf: new Date('2026-03-11T00:00:00Z'), scoreOnly: true });
    expect(await rawQuery(f.dataDir, 'sources', count)).toEqual(before);
  }, 120_000);
});
