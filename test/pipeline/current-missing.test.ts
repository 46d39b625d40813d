/**
 * A data directory whose CURRENT names no snapshot that exists (the operator removed that
 * snapshot's directory by hand, or restored a backup that brought CURRENT without it), or has no
 * CURRENT at all, although snapshots were published: the next run compares itself with the newest
 * published snapshot and says so. QA: it compared itself with nothing, as a first publish, and
 * announced every resolution and score again (254 question.resolved and 163 score.posted on the
 * sample), all of them announced before. Real CLI runs, the bundled sample, the simulator.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { existsSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { quorum, quorumProcess, REPO, serveOutcome, type CliResult } from '../helpers/cli.ts';
import { copyWarehouse, ONE_DUCKDB_THREAD, rawQuery, scratch } from '../forecast/helpers.ts';
import { currentFile, rawTableDir, snapshotDir, snapshotsDir } from '../../pipeline/warehouse/layout.ts';
import { publishedBefore, readCurrent } from '../../pipeline/warehouse/snapshot.ts';
import { bootstrapIfEmpty, bootstrapMarkerFile, firstStartSampleProblem } from '../../pipeline/bootstrap.ts';
import { loadConfig } from '../../pipeline/config.ts';
import { createLogger } from '../../pipeline/log.ts';

const root = scratch('quorum-current-missing-');
const prepared = join(root, 'prepared');
const env = (dir: string) => ({ QUORUM_DATA_DIR: dir, QUORUM_VENUES: 'none', QUORUM_MAX_QUESTIONS: '40', LOG_LEVEL: 'warn', ...ONE_DUCKDB_THREAD });

/** The events of the run that `r` (a `quorum run`) printed the summary of, counted by type. */
async function eventsOf(dir: string, r: CliResult): Promise<Record<string, number>> {
  const runId = (JSON.parse(r.stdout.trim().split('\n').pop()!) as { run_id: string }).run_id;
  const rows = await rawQuery(dir, 'events', `SELECT type, count(*) AS n FROM t WHERE run_id = '${runId}' GROUP BY type`);
  return Object.fromEntries(rows.map((row) => [row.type as string, row.n as number]));
}

beforeAll(() => {
  // published snapshots: a dated run that resolves questions, then two rescores now (the scheduled
  // runs' case: the one before CURRENT's saw what CURRENT's saw)
  const steps = [['import', 'forecastbench', join(REPO, 'data', 'sample', 'forecastbench')], ['run', '--as-of', '2026-03-06'], ['run', '--score-only'], ['run', '--score-only']];
  for (const args of steps) {
    const r = quorum(args, env(prepared));
    expect(r.status, `${args.join(' ')}: ${r.stderr}`).toBe(0);
  }
}, 300_000);

afterAll(() => rmSync(root, { recursive: true, force: true }));

describe('a run whose CURRENT names no snapshot', () => {
  it('compares itself with the newest published snapshot, saying so: no resolution or score is announced again', async () => {
    const dir = copyWarehouse(prepared, root, 'removed-by-hand');
    const gone = readCurrent(dir)!;
    rmSync(snapshotDir(dir, gone), { recursive: true });
    const r = quorum(['run', '--score-only'], env(dir));
    expect(r.status, r.stderr).toBe(0);
    expect(await eventsOf(dir, r)).toEqual({ 'run.completed': 1 });
    expect(r.stderr).toContain(`CURRENT names \\"${gone}\\", which is not a published snapshot in snapshots/`);
  });

  it('the same when CURRENT itself is missing', async () => {
    const dir = copyWarehouse(prepared, root, 'no-current');
    rmSync(currentFile(dir));
    const r = quorum(['run', '--score-only'], env(dir));
    expect(r.status, r.stderr).toBe(0);
    expect(await eventsOf(dir, r)).toEqual({ 'run.completed': 1 });
    expect(r.stderr).toContain('CURRENT is missing');
  });

  it('quorum start does not take it for a first start: no bundled sample imported, no dated run made; it serves 503 and says why (QA: both, into a production directory)', async () => {
    const dir = copyWarehouse(prepared, root, 'start');
    rmSync(snapshotDir(dir, readCurrent(dir)!), { recursive: true });
    const questionParts = readdirSync(rawTableDir(dir, 'questions')).length;
    const child = quorumProcess(['start'], { ...env(dir), LOG_LEVEL: 'info', PORT: '0', HOST: '127.0.0.1', QUORUM_SCHEDULE: '0 0 1 1 *' });
    try {
      const started = await serveOutcome(child, 120_000);
      expect(started.url, started.stderr).not.toBeNull();
      expect(started.stderr).not.toContain('importing the bundled sample');
      expect(started.stderr).toContain('CURRENT names no published snapshot in snapshots/');
      expect((await fetch(`${started.url}/api/predictions/accuracy`)).status).toBe(503);
      expect(readdirSync(rawTableDir(dir, 'questions')).length).toBe(questionParts);
      expect(await rawQuery(dir, 'runs', "SELECT run_id FROM t WHERE run_id NOT IN (SELECT run_id FROM read_parquet('" + join(prepared, 'raw', 'runs', '**', '*.parquet') + "', hive_partitioning = false))")).toEqual([]);
    } finally {
      child.kill('SIGTERM');
      await new Promise((resolve) => child.once('close', resolve));
    }
  });

  it('a data directory that never published compares with nothing, as before: its first publish announces its resolutions', async () => {
    const dir = join(root, 'fresh');
    expect(quorum(['import', 'forecastbench', join(REPO, 'data', 'sample', 'forecastbench')], env(dir)).status).toBe(0);
    writeFileSync(currentFile(dir), 'r20260101T000000Z-nothere1\n'); // names nothing, and nothing was published
    const r = quorum(['run', '--as-of', '2026-03-06'], env(dir));
    expect(r.status, r.stderr).toBe(0);
    expect(r.stderr).not.toContain('newest published snapshot');
    expect((await eventsOf(dir, r))['question.resolved']).toBeGreaterThan(0);
  });
});

/** `quorum serve` or `start` on `dir` until it listens (or exits): its outcome, then stopped. */
async function served(command: 'serve' | 'start', dir: string, check: (url: string) => Promise<void>): Promise<string> {
  const child = quorumProcess([command], { ...env(dir), LOG_LEVEL: 'info', PORT: '0', HOST: '127.0.0.1', QUORUM_SCHEDULE: '0 0 1 1 *' });
  try {
    const started = await serveOutcome(child, 120_000);
    expect(started.url, `exit ${started.status}: ${started.stderr}`).not.toBeNull();
    await check(started.url!);
    return started.stderr;
  } finally {
    child.kill('SIGTERM');
    await new Promise((resolve) => child.once('close', resolve));
  }
}

// Outside upgrade test: a data directory whose current snapshot was copied or restored in part
// (its directory there, its manifest.json not, or cut short). quorum serve and quorum start
// stopped at once with "quorum: ENOENT: no such file or directory, open '.../manifest.json'" (or
// a JSON parse error), exit 1, nothing served and nothing said about what to do.
describe('CURRENT naming a half-written snapshot (its manifest missing or cut short)', () => {
  it('quorum serve serves 503 not_ready and says why and what to do; the next run publishes, compared with the newest whole snapshot', async () => {
    const dir = copyWarehouse(prepared, root, 'manifest-missing');
    const half = readCurrent(dir)!;
    rmSync(join(snapshotDir(dir, half), 'manifest.json'));
    const stderr = await served('serve', dir, async (url) => {
      const ready = await fetch(`${url}/readyz`);
      expect(ready.status).toBe(503);
      expect(((await ready.json()) as { detail: string }).detail).toContain(half);
    });
    expect(stderr).toContain(`CURRENT names snapshot ${half}, whose manifest.json is missing`);
    expect(stderr).toContain('quorum run --score-only');
    const r = quorum(['run', '--score-only'], env(dir));
    expect(r.status, r.stderr).toBe(0);
    expect(await eventsOf(dir, r)).toEqual({ 'run.completed': 1 });
    expect(r.stderr).toContain(`CURRENT names \\"${half}\\", which is not a published snapshot in snapshots/`);
  });

  it('quorum start does the same with a manifest cut short, and takes it for no first start', async () => {
    const dir = copyWarehouse(prepared, root, 'manifest-cut');
    const half = readCurrent(dir)!;
    const manifest = join(snapshotDir(dir, half), 'manifest.json');
    writeFileSync(manifest, readFileSync(manifest, 'utf8').slice(0, 200));
    const stderr = await served('start', dir, async (url) => {
      expect((await fetch(`${url}/api/predictions/accuracy`)).status).toBe(503);
    });
    expect(stderr).toContain(`CURRENT names snapshot ${half}, whose manifest.json is not a snapshot manifest`);
    expect(stderr).not.toContain('importing the bundled sample');
  });

  it('the only snapshot, its manifest missing: no first start either (outside review: publishedBefore read CURRENT through readCurrent, which now takes it for no snapshot, so with no other snapshot beside it a start imported the bundled sample into the directory and made its dated runs)', async () => {
    const dir = copyWarehouse(prepared, root, 'manifest-missing-alone');
    const half = readCurrent(dir)!;
    for (const id of readdirSync(snapshotsDir(dir))) if (id !== half) rmSync(join(snapshotsDir(dir), id), { recursive: true });
    rmSync(join(snapshotDir(dir, half), 'manifest.json'));
    expect(publishedBefore(dir)).toBe(true);
    // a sample directory that does not exist: a first start would fail at once importing it
    const config = loadConfig({ ...env(dir), QUORUM_SAMPLE_DIR: join(root, 'no-sample-here'), LOG_LEVEL: 'silent' });
    expect(await bootstrapIfEmpty(config, createLogger('silent'))).toEqual([]);
    expect(existsSync(bootstrapMarkerFile(dir))).toBe(false);
    expect(firstStartSampleProblem(config)).toBeNull();
  });

  it('the only snapshot, its manifest missing: the next run compares itself with that snapshot\'s files, announcing nothing again (review: with no whole snapshot beside it the run compared itself with nothing, as a first publish, and announced every resolution and score again)', async () => {
    const dir = copyWarehouse(prepared, root, 'manifest-missing-run');
    const half = readCurrent(dir)!;
    for (const id of readdirSync(snapshotsDir(dir))) if (id !== half) rmSync(join(snapshotsDir(dir), id), { recursive: true });
    rmSync(join(snapshotDir(dir, half), 'manifest.json'));
    const r = quorum(['run', '--score-only'], env(dir));
    expect(r.status, r.stderr).toBe(0);
    expect(await eventsOf(dir, r)).toEqual({ 'run.completed': 1 });
    expect(r.stderr).toContain(`this run's events compare it with ${half}`);
  });
});
