/**
 * A run leaves none of its derived tables in the process's DuckDB instance. The sql/derive files
 * create them as tables of the instance's in-memory database, not TEMP ones (sql/README.md), so
 * they outlived the run's connection: `quorum start`, whose one instance lives as long as the
 * server, kept every derived table of its latest run between runs (outside soak, every 30 s on the
 * bundled sample: 117 tables, 75 MB of DuckDB's IN_MEMORY_TABLE after each run, the next run
 * building its own beside them before replacing them; a rescore of 10 million forecasts builds GBs).
 * They are in the snapshot's Parquet files once published, which is all that reads them.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { withConnection } from '../../pipeline/warehouse/duckdb.ts';
import { derivedStoredObjects, type StoredObject } from '../../pipeline/warehouse/derive.ts';
import { readManifest } from '../../pipeline/warehouse/snapshot.ts';
import { publish, sampleFixture, type Fixture } from '../structure/helpers.ts';

/** The derive's tables, views and types the shared instance's own database still holds, as `KIND name`. */
async function leftInInstance(objects: StoredObject[]): Promise<string[]> {
  const rows = await withConnection(async (conn) =>
    (
      await conn.runAndReadAll(
        "SELECT 'TABLE' AS kind, table_name AS name FROM duckdb_tables() WHERE NOT temporary AND database_name = current_database() " +
          "UNION ALL SELECT 'VIEW', view_name FROM duckdb_views() WHERE NOT temporary AND NOT internal AND database_name = current_database() " +
          "UNION ALL SELECT 'TYPE', type_name FROM duckdb_types() WHERE NOT internal AND database_name = current_database()",
      )
    ).getRowObjectsJS(),
  );
  const wanted = new Set(objects.map((o) => `${o.kind} ${o.name}`));
  return rows.map((r) => `${String(r.kind)} ${String(r.name).toLowerCase()}`).filter((k) => wanted.has(k));
}

describe("a run's derived tables", () => {
  let f: Fixture;
  beforeAll(async () => {
    f = await sampleFixture();
  });
  afterAll(() => f?.cleanup());

  it('the derive creates tables and types in the database, not only TEMP ones (what there is to drop)', async () => {
    const objects = (await derivedStoredObjects()).map((o) => `${o.kind} ${o.name}`);
    expect(objects).toEqual(expect.arrayContaining(['TABLE questions', 'TABLE scored_forecasts', 'TABLE leaderboard', 'TYPE _lb_mode']));
  });

  it('are dropped from the instance once the snapshot is published, which holds them', async () => {
    const objects = await derivedStoredObjects();
    const runId = await publish(f, new Date('2026-03-12T00:00:00Z'));
    const manifest = readManifest(f.dataDir, runId);
    expect(manifest.tables).toEqual(expect.arrayContaining(['questions', 'scored_forecasts', 'leaderboard']));
    expect(await leftInInstance(objects)).toEqual([]);
    // and a second run on the same instance is scored the same way (nothing it needed was dropped)
    const second = await publish(f, new Date('2026-03-13T00:00:00Z'));
    expect(readManifest(f.dataDir, second).tables).toEqual(manifest.tables);
    expect(await leftInInstance(objects)).toEqual([]);
  });
});
