/**
 * Two claims imports into one data directory at once (QA): both read what was stored before either
 * had written, so both appended every claim (two `quorum import claims fte-polls` at once stored
 * 22,950 rows for 11,475 polls, each pollster's n_claims doubled). One import at a time now: the
 * second is refused (LockHeldError, the CLI's exit 75), and the first start's own import waits.
 * Real files, the real importer and lock, real Parquet; nothing mocked.
 */
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { importBundledClaims } from '../../pipeline/bootstrap.ts';
import { acquireImportLock, LockHeldError } from '../../pipeline/warehouse/lock.ts';
import { REPO } from '../helpers/cli.ts';
import { tempDir } from '../helpers/temp-dir.ts';
import { importAll, rawQuery } from './helpers.ts';

const tmp = tempDir('quorum-claims-concurrent-');
afterAll(() => tmp.cleanup());
const POLLS = join(REPO, 'data', 'sample', 'fte-pollster-raw-polls');

describe('two claims imports at once', () => {
  it('the second is refused while the first runs; every claim is stored once (QA: every poll twice)', async () => {
    const data = join(tmp.dir, 'wh-two');
    const both = await Promise.allSettled([importAll(data, [['fte-polls', POLLS]]), importAll(data, [['fte-polls', POLLS]])]);
    expect(both.map((r) => r.status).sort()).toEqual(['fulfilled', 'rejected']);
    const refused = both.find((r): r is PromiseRejectedResult => r.status === 'rejected')!.reason as Error;
    expect(refused).toBeInstanceOf(LockHeldError);
    expect(refused.message).toMatch(/^another import is in progress \(pid \d+/);
    expect(await rawQuery(data, 'SELECT count(*)::INTEGER AS n, count(DISTINCT claim_id)::INTEGER AS ids FROM {claims}')).toEqual([{ n: 11_475, ids: 11_475 }]);
    // the lock is released: the same import again runs, and writes nothing
    const [again] = await importAll(data, [['fte-polls', POLLS]]);
    expect(again!.claims.written).toBe(0);
  }, 120_000);

  it('the first start\'s import of the bundled datasets waits for an operator\'s import instead of failing', async () => {
    const data = join(tmp.dir, 'wh-wait');
    const release = acquireImportLock(data);
    const started = importBundledClaims(data, join(REPO, 'data', 'sample'));
    setTimeout(release, 1_500);
    const results = await started;
    expect(results.map((r) => [r.format, r.claims.written])).toEqual([
      ['fte-polls', 11_475],
      ['fte-forecasts', 1_621],
      ['cbo', 694],
    ]);
  }, 120_000);
});
