/**
 * `quorum start` after an upgrade: a snapshot derived by other sql/derive files (or one that does
 * not say, published before the manifest recorded it) is rescored before the API serves it, with
 * no model call; a current one is served as it is.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { rescoreIfDerivedByOtherSql, snapshotFromOtherSql } from '../../pipeline/bootstrap.ts';
import { loadConfig } from '../../pipeline/config.ts';
import { createLogger } from '../../pipeline/log.ts';
import { runPipeline } from '../../pipeline/run.ts';
import { deriveSqlHash } from '../../pipeline/warehouse/derive.ts';
import { closeDuckdb, withConnection } from '../../pipeline/warehouse/duckdb.ts';
import { createRawViews } from '../../pipeline/warehouse/raw-views.ts';
import { readCurrent, readManifest } from '../../pipeline/warehouse/snapshot.ts';
import { sampleFixture, type Fixture } from '../structure/helpers.ts';

/** Rows of raw table `table` (0 when it has no part yet). */
async function rawCount(dataDir: string, table: 'claims'): Promise<number> {
  return withConnection(async (conn) => {
    await createRawViews(conn, dataDir);
    return Number((await conn.runAndReadAll(`SELECT count(*)::BIGINT AS n FROM raw_${table}`)).getRowObjectsJS()[0]!.n);
  });
}

describe('rescore when the snapshot was derived by other SQL', () => {
  let f: Fixture;
  const logger = createLogger('silent');
  let config: ReturnType<typeof loadConfig>;

  beforeAll(async () => {
    f = await sampleFixture();
    config = loadConfig({ QUORUM_DATA_DIR: f.dataDir, QUORUM_VENUES: 'none', LOG_LEVEL: 'silent' });
    const first = await runPipeline({ config, logger, scoreOnly: true, asOf: new Date('2026-03-10T00:00:00Z') });
    expect(first.status).toBe('completed');
  }, 120_000);
  afterAll(async () => {
    await closeDuckdb();
    f.cleanup();
  });

  it('a snapshot records the fingerprint of the SQL that derived it; a current one is not rescored', async () => {
    const id = readCurrent(f.dataDir)!;
    expect(readManifest(f.dataDir, id).derive_sql_hash).toBe(await deriveSqlHash());
    expect(await rescoreIfDerivedByOtherSql(config, logger)).toBeNull();
    expect(readCurrent(f.dataDir)).toBe(id);
  });

  it('other SQL, or none recorded: a score-only run publishes a snapshot derived by this version', async () => {
    const tampers = [(m: Record<string, unknown>) => { m.derive_sql_hash = '0'.repeat(64); }, (m: Record<string, unknown>) => { delete m.derive_sql_hash; }];
    let claimsAfterFirst = 0;
    expect(await rawCount(f.dataDir, 'claims')).toBe(0);
    for (const tamper of tampers) {
      const before = readCurrent(f.dataDir)!;
      const file = join(f.dataDir, 'snapshots', before, 'manifest.json');
      const manifest = JSON.parse(readFileSync(file, 'utf8')) as Record<string, unknown>;
      tamper(manifest);
      writeFileSync(file, JSON.stringify(manifest));
      // what quorum serve (which does not rescore) warns about
      expect(await snapshotFromOtherSql(f.dataDir)).toMatchObject({ snapshot: before, expected: await deriveSqlHash() });
      const summary = await rescoreIfDerivedByOtherSql(config, logger);
      expect(summary).toMatchObject({ status: 'completed', calls_made: 0 });
      const after = readCurrent(f.dataDir)!;
      expect(after).not.toBe(before);
      expect(readManifest(f.dataDir, after).derive_sql_hash).toBe(await deriveSqlHash());
      // the bundled claims datasets, which a first start of a version without claims never imported,
      // come in with the upgrade (QA), once
      const claims = await rawCount(f.dataDir, 'claims');
      expect(claims).toBeGreaterThan(10_000);
      if (tamper === tampers[1]) expect(claims).toBe(claimsAfterFirst);
      claimsAfterFirst = claims;
      // the same snapshot re-derived: as of the one it replaces (a past-dated one stays so, QA)
      expect(readManifest(f.dataDir, after).as_of).toBe('2026-03-10T00:00:00.000Z');
      expect(summary!.as_of).toBe('2026-03-10T00:00:00.000Z');
      expect(await snapshotFromOtherSql(f.dataDir)).toBeNull();
    }
  }, 120_000);
});
