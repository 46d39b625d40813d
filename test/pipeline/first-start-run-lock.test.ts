/**
 * A first start while another process's run or sync holds the run lock (an operator's `quorum
 * sync` or `quorum run`, a cron job) waits for it, as its imports wait for another import, instead
 * of failing: QA started `quorum start` on an empty directory and ran `quorum run` beside it; the
 * start's first dated run found the lock held and the service exited 75 ("another run is in
 * progress"), which the README gives for start as "another server has the data directory open",
 * and never served. SIGTERM/SIGINT ends the wait.
 */
import { afterAll, describe, expect, it } from 'vitest';
import { capturedLog } from '../helpers/captured-log.ts';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { loadConfig } from '../../pipeline/config.ts';
import { bootstrapIfEmpty, bootstrapMarkerFile } from '../../pipeline/bootstrap.ts';
import { listRuns } from '../../pipeline/forecast/runs.ts';
import { acquireRunLock } from '../../pipeline/warehouse/lock.ts';
import { readCurrent } from '../../pipeline/warehouse/snapshot.ts';
import { closeDuckdb, withConnection } from '../../pipeline/warehouse/duckdb.ts';
import { REPO } from '../helpers/cli.ts';
import { tempDir } from '../helpers/temp-dir.ts';

const SAMPLE = join(REPO, 'test', 'fixtures', 'forecastbench', 'valid');
const tmp = tempDir('quorum-first-start-lock-');

afterAll(async () => {
  await closeDuckdb();
  tmp.cleanup();
});

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const waiting = (lines: Record<string, unknown>[]) => lines.filter((l) => String(l.msg).startsWith('another run or sync holds the run lock'));

describe('first start beside another run', () => {
  it('waits for the run lock, says so once, then makes its runs', async () => {
    const config = loadConfig({ QUORUM_DATA_DIR: join(tmp.dir, 'wait'), QUORUM_SAMPLE_DIR: SAMPLE, QUORUM_VENUES: 'none' });
    const { logger, lines } = capturedLog();
    const release = acquireRunLock(config.dataDir, 'r-held-by-test');
    let settled: string | null = null;
    const started = bootstrapIfEmpty(config, logger).then(
      (runs) => (settled = `resolved ${runs.length}`),
      (err: Error) => (settled = `rejected ${err.message}`),
    );
    try {
      for (let i = 0; i < 150 && waiting(lines).length === 0 && settled === null; i++) await sleep(100);
      await sleep(2_500); // it keeps waiting
      expect(settled).toBeNull();
      expect(waiting(lines)).toHaveLength(1);
      expect(waiting(lines)[0]).toMatchObject({ level: 40 });
    } finally {
      release();
    }
    await started;
    expect(settled).toBe('resolved 3');
    expect(readCurrent(config.dataDir)).not.toBeNull();
    expect(existsSync(bootstrapMarkerFile(config.dataDir))).toBe(false);
  }, 180_000);

  it('a signal ends the wait: no run is made, and bootstrap.json stays for the next start', async () => {
    const config = loadConfig({ QUORUM_DATA_DIR: join(tmp.dir, 'stopped'), QUORUM_SAMPLE_DIR: SAMPLE, QUORUM_VENUES: 'none' });
    const { logger, lines } = capturedLog();
    const release = acquireRunLock(config.dataDir, 'r-held-by-test');
    const stop = new AbortController();
    try {
      const started = bootstrapIfEmpty(config, logger, stop.signal);
      for (let i = 0; i < 150 && waiting(lines).length === 0; i++) await sleep(100);
      expect(waiting(lines)).toHaveLength(1);
      const at = Date.now();
      stop.abort();
      expect(await started).toEqual([]);
      expect(Date.now() - at).toBeLessThan(3_000);
    } finally {
      release();
    }
    expect(existsSync(bootstrapMarkerFile(config.dataDir))).toBe(true);
    expect(await withConnection((conn) => listRuns(conn, config.dataDir))).toEqual([]);
  }, 120_000);
});
