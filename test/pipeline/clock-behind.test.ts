/**
 * A run dated now (a scheduled run, a plain `quorum run`) that finds the published snapshot dated
 * after this machine's clock: the clock was stepped back (NTP correcting a clock that ran ahead, a
 * VM restored), or the host that published it runs ahead. QA: with the served snapshot 3 hours
 * ahead, every scheduled run for 3 hours said only "this run is dated ..., before the snapshot it
 * replaces", the words of a backfill, and froze no thesis vintage; nothing named the clock, and
 * /metrics showed quorum_snapshot_age_seconds -10699. The note now says what happened.
 */
import { afterAll, describe, expect, it } from 'vitest';
import { existsSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { loadConfig } from '../../pipeline/config.ts';
import { createLogger } from '../../pipeline/log.ts';
import { importForecastBench } from '../../pipeline/bootstrap.ts';
import { runPipeline } from '../../pipeline/run.ts';
import { silentProgress } from '../../pipeline/forecast/progress.ts';
import { lockFile } from '../../pipeline/warehouse/layout.ts';
import { readCurrent } from '../../pipeline/warehouse/snapshot.ts';
import { closeDuckdb } from '../../pipeline/warehouse/duckdb.ts';
import { REPO } from '../helpers/cli.ts';
import { withLockTakenAtManifold } from '../helpers/lock-takeover.ts';
import { tempDir } from '../helpers/temp-dir.ts';

const SAMPLE = join(REPO, 'test', 'fixtures', 'forecastbench', 'valid');
const tmp = tempDir('quorum-clock-behind-');

afterAll(async () => {
  await closeDuckdb();
  tmp.cleanup();
});

/** The warehouse of the first describe ('d'), with a published snapshot (made here when it has none). */
async function publishedWarehouse() {
  const config = loadConfig({ QUORUM_DATA_DIR: join(tmp.dir, 'd'), QUORUM_SAMPLE_DIR: SAMPLE, QUORUM_VENUES: 'none' });
  const logger = createLogger('silent');
  const root = config.dataDir;
  if (readCurrent(root) === null) {
    await importForecastBench(config, SAMPLE);
    expect((await runPipeline({ config, logger })).status).toBe('completed');
  }
  return { config, logger, root };
}

describe('a run dated now, behind the published snapshot', () => {
  it("says this machine's clock is behind the snapshot's time, by how much; a backfill (--as-of) keeps its own note", async () => {
    const config = loadConfig({ QUORUM_DATA_DIR: join(tmp.dir, 'd'), QUORUM_SAMPLE_DIR: SAMPLE, QUORUM_VENUES: 'none' });
    const logger = createLogger('silent');
    await importForecastBench(config, SAMPLE);
    // Published while this host's clock ran 3 hours ahead (here: dated so directly).
    const ahead = await runPipeline({ config, logger, asOf: new Date(Date.now() + 3 * 3_600_000) });
    expect(ahead.status).toBe('completed');
    const live = await runPipeline({ config, logger });
    expect(live.status).toBe('completed');
    const note = live.notes.find((n) => n.includes('before the snapshot it replaces'));
    expect(note).toMatch(/this machine's clock is behind the published snapshot's time by (2\.9|3\.0) hours/);
    expect(note).toMatch(/clock was stepped back|runs ahead/);
    const backfill = await runPipeline({ config, logger, asOf: new Date(Date.now() - 24 * 3_600_000) });
    const backfillNote = backfill.notes.find((n) => n.includes('before the snapshot it replaces'));
    expect(backfillNote).toBeDefined();
    expect(backfillNote).not.toMatch(/clock/);
  }, 180_000);
});

/**
 * A run whose process was paused past the lock's staleness (Ctrl-Z on `quorum run`, a paused
 * container or a suspended VM on a shared volume): another host took the lock over and runs. When
 * the paused run resumes, it must not publish over the other's snapshot, CURRENT and pending-events
 * marker as if it still held the lock. Here the takeover is done while the run forecasts.
 */
describe('a run whose lock was taken over while it was paused', () => {
  it('does not publish: it fails, saying the lock was taken over, and leaves CURRENT and the new holder alone', async () => {
    const { config, logger, root } = await publishedWarehouse();
    const before = readCurrent(root);
    const pending = join(root, 'events', 'pending.json');
    const pendingBefore = existsSync(pending) ? readFileSync(pending, 'utf8') : null;
    const theirs = JSON.stringify({ pid: 1, host: 'other-host', started_at: new Date().toISOString(), token: 'theirs' });
    const base = silentProgress;
    const progress = {
      stage: (name: string, total: number) => {
        // Paused past LOCK_STALE_MS; another host judged the lock stale and holds it now.
        writeFileSync(lockFile(root), theirs);
        return base.stage(name, total);
      },
      close: () => base.close(),
    };
    try {
      const lost = await runPipeline({ config, logger, resume: false, progress });
      expect(lost.status).toBe('failed');
      expect(lost.error).toMatch(/run lock.*taken over/);
      expect(lost.snapshot).toBeNull();
      expect(readCurrent(root)).toBe(before);
      expect(existsSync(pending) ? readFileSync(pending, 'utf8') : null).toBe(pendingBefore);
      expect(readFileSync(lockFile(root), 'utf8')).toBe(theirs);
    } finally {
      rmSync(lockFile(root), { force: true });
    }
  }, 180_000);
});

/**
 * The same takeover during the run's own sync (while it waits for a venue): the sync writes nothing
 * more and throws (RunLockLostError.forSync), and the run ends there, failed: no forecast, nothing
 * published. The loopback Manifold replay writes another host's lock as it answers
 * (test/helpers/lock-takeover.ts).
 */
describe("a run whose lock is taken over during its sync", () => {
  it('fails with the sync\'s lost-lock error, forecasts nothing and does not publish', async () => {
    const { config, logger, root } = await publishedWarehouse();
    const before = readCurrent(root);
    const theirs = JSON.stringify({ pid: 1, host: 'other-host', started_at: new Date().toISOString(), token: 'theirs-sync' });
    try {
      const requests = await withLockTakenAtManifold(lockFile(root), theirs, async () => {
        const lost = await runPipeline({ config, logger, resume: false });
        expect(lost).toMatchObject({ status: 'failed', snapshot: null, forecasts: 0, calls: 0, sync: null });
        expect(lost.error).toMatch(/^sync \S+ lost the run lock: .*writing nothing more/);
      });
      expect(requests).toBeGreaterThan(0);
      expect(readCurrent(root)).toBe(before);
      expect(readFileSync(lockFile(root), 'utf8')).toBe(theirs);
    } finally {
      rmSync(lockFile(root), { force: true });
    }
  }, 180_000);
});
