/**
 * QA (third pass): which claims the probability scores count. Brier, log loss and the
 * calibration bins are those of probability claims (README "Claims and track records",
 * sql/README.md 90_claims); a direction or value claim of an operator's file may carry a
 * `probability` too (the column filled on every row), kept with the claim but not scored as a
 * probability. Real files, the real importer, derive and snapshot; nothing mocked.
 */
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { withConnection } from '../../pipeline/warehouse/duckdb.ts';
import { tempDir } from '../helpers/temp-dir.ts';
import { csvFolder, importAll, publishScores } from './helpers.ts';

const tmp = tempDir('quorum-claims-qa-kinds-');
afterAll(() => tmp.cleanup());

async function snapshotRows(data: string, runId: string, table: string, sql: string): Promise<Record<string, unknown>[]> {
  const file = join(data, 'snapshots', runId, `${table}.parquet`);
  return withConnection(async (conn) => (await conn.runAndReadAll(sql.replace('{t}', `read_parquet('${file}')`))).getRowObjectsJS());
}

describe('a probability on a direction or value claim', () => {
  it('is not scored as a probability claim: no Brier, log loss or calibration bin (QA: a direction claim "yes" at 0.3 that came true scored hit 1 and Brier 0.49)', async () => {
    const dir = csvFolder(tmp.dir, {
      'a.csv':
        'claim_id,source,made_at,kind,subject,probability,side,value,outcome,realized_value,resolved_at\n' +
        'd1,Dir Ops,2024-01-01,direction,A,0.3,yes,,1,,2024-02-01\n' +
        'd2,Dir Ops,2024-01-01,value,B,0.9,,5,0,5,2024-02-01\n' +
        'd3,Dir Ops,2024-01-01,probability,C,0.8,,,1,,2024-02-01\n',
    });
    const data = join(tmp.dir, 'wh');
    await importAll(data, [['csv', dir]]);
    const runId = await publishScores(data, new Date('2025-01-01T00:00:00Z'));
    const claims = await snapshotRows(data, runId, 'claims', 'SELECT claim_id, probability, hit, brier, log_loss FROM {t} ORDER BY claim_id');
    expect(claims).toEqual([
      // the probability is kept with the claim; the direction claim is scored by its outcome alone
      { claim_id: 'd1', probability: 0.3, hit: 1, brier: null, log_loss: null },
      { claim_id: 'd2', probability: 0.9, hit: null, brier: null, log_loss: null },
      { claim_id: 'd3', probability: 0.8, hit: 1, brier: expect.closeTo(0.04, 12), log_loss: expect.closeTo(-Math.log(0.8), 12) },
    ]);
    const [tr] = await snapshotRows(data, runId, 'track_records', 'SELECT n_directional::INTEGER AS nd, hits, n_probability::INTEGER AS np, brier, log_loss FROM {t}');
    expect(tr).toEqual({ nd: 2, hits: 2, np: 1, brier: expect.closeTo(0.04, 12), log_loss: expect.closeTo(-Math.log(0.8), 12) });
    expect(await snapshotRows(data, runId, 'track_record_calibration', 'SELECT bin, n::INTEGER AS n FROM {t}')).toEqual([{ bin: 8, n: 1 }]);
    const [h] = await snapshotRows(data, runId, 'track_record_horizons', 'SELECT count(*)::INTEGER AS rows FROM {t}');
    expect(h).toEqual({ rows: 0 }); // no horizon_days given
    const [y] = await snapshotRows(data, runId, 'track_record_trends', 'SELECT n_probability::INTEGER AS np, brier FROM {t}');
    expect(y).toEqual({ np: 1, brier: expect.closeTo(0.04, 12) });
  });
});
