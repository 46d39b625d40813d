/**
 * A run killed after publishing its snapshot, before it recorded itself completed (and before its
 * events), then continued with `--resume`: the snapshot stays as it was published (same files, same
 * manifest: servers may be serving and caching it under its id), and its events are the ones of
 * the comparison with the snapshot it replaced, derived once — never a comparison of the run with
 * itself, which QA found sent 541 false events (every resolution again) with previous_snapshot null.
 *
 * The killed state is built deterministically from two real runs (runPipeline, the bundled sample,
 * the real simulator over HTTP): the second run's last `runs` part (status completed) and its
 * events are removed, and the pending-events marker it wrote before publishing is put back, which
 * is what a SIGKILL between the publish and the events leaves.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { readdirSync, rmSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { loadConfig } from '../../pipeline/config.ts';
import { createLogger } from '../../pipeline/log.ts';
import { runPipeline } from '../../pipeline/run.ts';
import { scheduledRun } from '../../pipeline/scheduler.ts';
import { capturedLog } from '../helpers/captured-log.ts';
import { importForecastBench } from '../../pipeline/bootstrap.ts';
import { markEventsPending } from '../../pipeline/events/emit.ts';
import { startSimulator, type Simulator } from '../../pipeline/simulator/server.ts';
import { closeDuckdb } from '../../pipeline/warehouse/duckdb.ts';
import { rawTableDir, snapshotDir } from '../../pipeline/warehouse/layout.ts';
import { makeCurrent, readCurrent, readManifest } from '../../pipeline/warehouse/snapshot.ts';
import { REPO } from '../helpers/cli.ts';
import { oneDuckdbThread, rawQuery, scratch } from '../forecast/helpers.ts';

const root = scratch('quorum-resume-published-');
const logger = createLogger('silent');
let sim: Simulator;

function config() {
  return loadConfig({
    QUORUM_DATA_DIR: root,
    QUORUM_SIMULATOR_URL: sim.url,
    QUORUM_MAX_QUESTIONS: '12',
    QUORUM_MODES: 'blind,augmented',
    LOG_LEVEL: 'silent',
  });
}

/** The partition directories of `runId` under a raw table (any run_date). */
function runPartitions(table: 'runs' | 'events', runId: string): string[] {
  const dir = rawTableDir(root, table);
  return readdirSync(dir).flatMap((d) => readdirSync(join(dir, d)).filter((r) => r === `run_id=${runId}`).map((r) => join(dir, d, r)));
}

beforeAll(async () => {
  // (one thread: about a fifth of this file's CPU was a second thread waking to share nothing)
  await oneDuckdbThread();
  sim = await startSimulator({ port: 0 });
  await importForecastBench(loadConfig({ QUORUM_DATA_DIR: root, LOG_LEVEL: 'silent' }), join(REPO, 'data', 'sample', 'forecastbench'));
}, 120_000);

afterAll(async () => {
  await sim?.close();
  await closeDuckdb();
  rmSync(root, { recursive: true, force: true });
});

describe('a run killed after its publish, continued with --resume', () => {
  it('keeps its snapshot as published and derives its events once, against the snapshot it replaced', async () => {
    const a = await runPipeline({ config: config(), logger, asOf: new Date('2025-10-16T00:00:00Z') });
    expect(a.status, a.error ?? '').toBe('completed');
    const b = await runPipeline({ config: config(), logger, asOf: new Date('2026-03-06T00:00:00Z') });
    expect(b.status, b.error ?? '').toBe('completed');
    expect(readCurrent(root)).toBe(b.run_id);
    const eventsOf = (runId: string) =>
      rawQuery(root, 'events', `SELECT type, subject, previous_snapshot FROM t WHERE run_id = '${runId}' ORDER BY type, subject`);
    const published = await eventsOf(b.run_id);
    expect(published.length).toBeGreaterThan(1);
    expect(new Set(published.map((e) => e.previous_snapshot))).toEqual(new Set([a.run_id]));
    const manifest = readManifest(root, b.run_id);
    const files = readdirSync(snapshotDir(root, b.run_id)).map((f) => [f, statSync(join(snapshotDir(root, b.run_id), f)).mtimeMs]);

    // The kill: after the publish, before the events and the final `runs` row.
    for (const dir of runPartitions('events', b.run_id)) rmSync(dir, { recursive: true });
    const runParts = runPartitions('runs', b.run_id).flatMap((d) => readdirSync(d).map((f) => join(d, f)));
    expect(runParts).toHaveLength(2); // started, completed
    const newest = runParts.sort((x, y) => statSync(x).mtimeMs - statSync(y).mtimeMs).at(-1)!;
    rmSync(newest);
    expect((await rawQuery(root, 'runs', `SELECT status FROM t WHERE run_id = '${b.run_id}'`)).map((r) => r.status)).toEqual(['started']);
    markEventsPending(root, b.run_id, a.run_id);

    const calls = sim.stats().requests;
    const resumed = await runPipeline({ config: config(), logger, resume: b.run_id });
    expect(resumed.status, resumed.error ?? '').toBe('completed');
    expect(resumed.run_id).toBe(b.run_id);
    expect(resumed.snapshot).toBe(b.run_id);
    expect(sim.stats().requests).toBe(calls); // every call was already made
    // Not derived or published again: the same manifest and the same files, untouched.
    expect(readCurrent(root)).toBe(b.run_id);
    expect(readManifest(root, b.run_id)).toEqual(manifest);
    expect(readdirSync(snapshotDir(root, b.run_id)).map((f) => [f, statSync(join(snapshotDir(root, b.run_id), f)).mtimeMs])).toEqual(files);
    // Its events: exactly those of the first time, against the snapshot it replaced.
    expect(await eventsOf(b.run_id)).toEqual(published);
    const statuses = await rawQuery(root, 'runs', `SELECT status FROM t WHERE run_id = '${b.run_id}' ORDER BY recorded_at`);
    expect(statuses.map((r) => r.status)).toEqual(['started', 'completed']);
  }, 300_000);

  it('stopped between the publish\'s two steps (directory in place, CURRENT not yet moved): the resume makes it current (QA)', async () => {
    const before = readCurrent(root)!;
    const c = await runPipeline({ config: config(), logger, asOf: new Date('2026-03-07T00:00:00Z') });
    expect(c.status, c.error ?? '').toBe('completed');
    const eventsOf = (runId: string) => rawQuery(root, 'events', `SELECT type, subject FROM t WHERE run_id = '${runId}' ORDER BY type, subject`);
    const published = await eventsOf(c.run_id);
    // The stop (a full disk writing CURRENT.tmp): CURRENT still names the snapshot before, no
    // events, no final `runs` row, the pending-events marker written before the publish.
    makeCurrent(root, before);
    for (const dir of runPartitions('events', c.run_id)) rmSync(dir, { recursive: true });
    const runParts = runPartitions('runs', c.run_id).flatMap((d) => readdirSync(d).map((f) => join(d, f)));
    rmSync(runParts.sort((x, y) => statSync(x).mtimeMs - statSync(y).mtimeMs).at(-1)!);
    markEventsPending(root, c.run_id, before);

    // the next run's start (here the resume) finishes the publish, then derives its events
    const resumed = await runPipeline({ config: config(), logger, resume: true });
    expect(resumed).toMatchObject({ run_id: c.run_id, status: 'completed', snapshot: c.run_id });
    expect(readCurrent(root)).toBe(c.run_id); // served at last (it said completed and was never served)
    expect(await eventsOf(c.run_id)).toEqual(published);
  }, 300_000);
});

describe('a scheduled tick after a run killed after its publish', () => {
  it('records that run completed, then runs its own (outside test: the tick only closed the old run, a whole cycle lost)', async () => {
    const d = await runPipeline({ config: config(), logger, asOf: new Date('2026-03-08T00:00:00Z') });
    expect(d.status, d.error ?? '').toBe('completed');
    const runParts = runPartitions('runs', d.run_id).flatMap((dir) => readdirSync(dir).map((f) => join(dir, f)));
    rmSync(runParts.sort((x, y) => statSync(x).mtimeMs - statSync(y).mtimeMs).at(-1)!); // the kill: no `completed` row
    // A plain run's start says what that run is (not "its journaled calls are not in the warehouse").
    const { logger: seen, lines } = capturedLog();
    const live = loadConfig({ QUORUM_DATA_DIR: root, QUORUM_SIMULATOR_URL: sim.url, QUORUM_MAX_QUESTIONS: '12', QUORUM_MODES: 'blind', QUORUM_VENUES: 'none', LOG_LEVEL: 'silent' });
    const tick = await scheduledRun(live, seen, new AbortController().signal);
    expect(tick.status, tick.error ?? '').toBe('completed');
    expect(tick.run_id).not.toBe(d.run_id); // this tick's own run
    expect(tick.resumed).toBe(false);
    expect(readCurrent(root)).toBe(tick.run_id);
    const statuses = await rawQuery(root, 'runs', `SELECT status FROM t WHERE run_id = '${d.run_id}' ORDER BY recorded_at`);
    expect(statuses.map((r) => r.status)).toEqual(['started', 'completed']);
    expect(lines.some((l) => String(l.msg).startsWith('the run continued had published before it was stopped'))).toBe(true);
  }, 300_000);

  it('a plain run beside such a run says it only lacks its completed row', async () => {
    const e = await runPipeline({ config: config(), logger, asOf: new Date('2026-03-09T00:00:00Z') });
    const runParts = runPartitions('runs', e.run_id).flatMap((dir) => readdirSync(dir).map((f) => join(dir, f)));
    rmSync(runParts.sort((x, y) => statSync(x).mtimeMs - statSync(y).mtimeMs).at(-1)!);
    const { logger: seen, lines } = capturedLog();
    const f = await runPipeline({ config: config(), logger: seen, asOf: new Date('2026-03-10T00:00:00Z'), scoreOnly: true });
    expect(f.status, f.error ?? '').toBe('completed');
    const warned = lines.map((l) => String(l.msg)).filter((m) => m.startsWith(`run ${e.run_id}`));
    expect(warned).toEqual([`run ${e.run_id} was stopped after it published its snapshot, before it recorded itself completed: \`quorum run --resume\` records it so (nothing is made or published again); this is a new run`]);
  }, 300_000);
});

describe('a run dated before the served snapshot (a backfill with --as-of)', () => {
  it('adds its forecasts, and its snapshot is scored as of the served one: the view does not go back, nothing is announced twice (QA)', async () => {
    const served = readCurrent(root)!;
    const servedAsOf = readManifest(root, served).as_of;
    const resolvedEvents = async () =>
      rawQuery(root, 'events', `SELECT subject, count(*)::INTEGER AS n FROM t WHERE type = 'question.resolved' GROUP BY subject HAVING count(*) > 1`);
    expect(await resolvedEvents()).toEqual([]);
    const back = await runPipeline({ config: config(), logger, asOf: new Date('2025-10-20T00:00:00Z') });
    expect(back.status, back.error ?? '').toBe('completed');
    expect(back.as_of).toBe('2025-10-20T00:00:00.000Z'); // its forecasts carry its own date
    const forecasts = await rawQuery(root, 'forecasts', `SELECT min(created_at) AS t, count(*)::INTEGER AS n FROM t WHERE run_id = '${back.run_id}'`);
    expect(forecasts[0]!.n).toBeGreaterThan(0);
    expect(readCurrent(root)).toBe(back.run_id);
    expect(readManifest(root, back.run_id).as_of).toBe(servedAsOf); // not 2025-10-20
    expect(back.notes).toContainEqual(expect.stringContaining(`scored as of ${servedAsOf}`));
    const types = await rawQuery(root, 'events', `SELECT DISTINCT type FROM t WHERE run_id = '${back.run_id}'`);
    expect(types.map((t) => t.type)).not.toContain('question.resolved');
    // the next run announces no resolution a second time
    const next = await runPipeline({ config: config(), logger, asOf: new Date('2026-03-08T00:00:00Z') });
    expect(next.status, next.error ?? '').toBe('completed');
    expect(await resolvedEvents()).toEqual([]);
  }, 300_000);
});
