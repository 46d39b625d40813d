/**
 * Pruning never pulls a snapshot from under a running server: with QUORUM_KEEP_SNAPSHOTS=1, three
 * runs publish and prune (publishSnapshot + pruneSnapshots, as pipeline/run.ts does) before the
 * server's next look at CURRENT; the real API server keeps answering from the snapshot it loaded,
 * then moves to the newest. The superseded snapshots go once the grace period has passed.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { cpSync, existsSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { silentLogger } from '../../api/logging/logger.ts';
import { startServer, type ServerHandle } from '../../api/server.ts';
import { newRunId } from '../../pipeline/warehouse/layout.ts';
import { publishSnapshot, pruneSnapshots, SUPERSEDED_GRACE_MS } from '../../pipeline/warehouse/snapshot.ts';
import { fixtureData, writeSnapshot } from '../api/fixtures.ts';
import { tempDir } from '../helpers/temp-dir.ts';

const tmp = tempDir('quorum-prune-served-');
const data = join(tmp.dir, 'warehouse');
/** Fixture tables written once as Parquet; every "run" publishes a copy of them. */
const staging = join(tmp.dir, 'staging');
let tables: string[] = [];
let server: ServerHandle | undefined;

/** One run's publish and prune, as pipeline/run.ts does them, with QUORUM_KEEP_SNAPSHOTS=1. */
async function run(day: number): Promise<{ id: string; pruned: string[] }> {
  const id = newRunId(new Date(Date.UTC(2026, 4, day)));
  await publishSnapshot(data, id, { asOf: new Date(Date.UTC(2026, 4, day)), headlineModes: ['augmented', 'informed', 'blind'] }, async (dir) => {
    for (const t of tables) cpSync(join(staging, 'snapshots', 'fixture', `${t}.parquet`), join(dir, `${t}.parquet`));
    return { tables };
  });
  return { id, pruned: await pruneSnapshots(data, 1) };
}

beforeAll(async () => {
  await writeSnapshot(staging, 'fixture', fixtureData(1));
  tables = readdirSync(join(staging, 'snapshots', 'fixture'))
    .filter((f) => f.endsWith('.parquet'))
    .map((f) => f.slice(0, -'.parquet'.length));
});

afterAll(async () => {
  await server?.close();
  tmp.cleanup();
});

describe('pruning while a server serves', () => {
  it('the API keeps answering through three publishes with keep 1, then serves the newest', async () => {
    const first = await run(1);
    // Polling off: the server's view of CURRENT lags, as it does for up to 2 s between polls.
    server = await startServer({ port: 0, dataDir: data, logger: silentLogger(), pollMs: 0, recordServer: false });
    const health = async () => {
      const res = await fetch(`${server!.url}/api/factors/health/`);
      return { status: res.status, snapshot: res.headers.get('x-snapshot'), body: await res.text() };
    };
    expect(await health()).toMatchObject({ status: 200, snapshot: first.id });

    const later = [await run(2), await run(3), await run(4)];
    // Still the first snapshot, answered from its files (not cached: factors/health reads per request).
    const during = await health();
    expect(during.status, during.body).toBe(200);
    expect(during.snapshot).toBe(first.id);
    for (const r of later) expect(r.pruned).toEqual([]);

    await server.app.snapshots.reload();
    expect(await health()).toMatchObject({ status: 200, snapshot: later[2]!.id });

    // After the grace, the superseded ones go; the published one stays and is served.
    const removed = await pruneSnapshots(data, 1, new Date(Date.now() + SUPERSEDED_GRACE_MS));
    expect(removed.sort()).toEqual([first.id, later[0]!.id, later[1]!.id].sort());
    expect(existsSync(join(data, 'snapshots', later[2]!.id))).toBe(true);
    expect(await health()).toMatchObject({ status: 200, snapshot: later[2]!.id });
  });
});
