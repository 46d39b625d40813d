/**
 * The first start on a small ForecastBench extract (test/fixtures/forecastbench/valid): the "now"
 * run says in its summary and its log that the bundled prices are historical (the newest one's
 * time and age), the dated runs do not; and `quorum start` (real process) logs where the API
 * listens once, records itself in the data directory and removes the record on SIGTERM.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { existsSync, mkdirSync, readFileSync, readlinkSync, writeFileSync } from 'node:fs';
import { spawn } from 'node:child_process';
import { hostname } from 'node:os';
import { Writable } from 'node:stream';
import { join } from 'node:path';
import { loadConfig } from '../../pipeline/config.ts';
import { createLogger } from '../../pipeline/log.ts';
import { bootstrapIfEmpty, bootstrapMarkerFile, roundFreezeTimes } from '../../pipeline/bootstrap.ts';
import { listRuns } from '../../pipeline/forecast/runs.ts';
import { readCurrent, readManifest } from '../../pipeline/warehouse/snapshot.ts';
import { parseForecastBench } from '../../pipeline/import/forecastbench.ts';
import { closeDuckdb, withConnection } from '../../pipeline/warehouse/duckdb.ts';
import { serverRecordFile, type ServerRecord } from '../../api/server-record.ts';
import { REPO, quorumProcess } from '../helpers/cli.ts';
import { memTempDir } from '../helpers/mem-temp-dir.ts';
import { ONE_DUCKDB_THREAD, oneDuckdbThread } from '../forecast/helpers.ts';
import { parseLogLines, repeatedKeys, type LogLine } from './log-lines.ts';

const SAMPLE = join(REPO, 'test', 'fixtures', 'forecastbench', 'valid');
/**
 * The data directories in memory (test/helpers/mem-temp-dir.ts: a tmpfs): what is tested is
 * processes stopped by SIGTERM or killed by SIGKILL, whose writes are in the page cache whether
 * or not they were fsynced (a power cut is not tested); on the disk of a busy machine every raw
 * part, snapshot table and journal write of the file's dozen runs waited for its fsync.
 */
const tmp = memTempDir('quorum-first-start-');

/**
 * Every run here (this process's first start and the `quorum start` children's) on one DuckDB
 * thread: the runs' derives are small statements on a small extract, where a second thread only
 * adds its scheduling on a loaded 2-core machine (about 15% more CPU a first start); nothing
 * checked here depends on the thread count.
 */
beforeAll(async () => {
  await oneDuckdbThread();
});

afterAll(async () => {
  await closeDuckdb();
  tmp.cleanup();
});

/** The sample's newest price observation, read independently of the bootstrap. */
async function newestSamplePrice(): Promise<string> {
  const batch = await parseForecastBench(SAMPLE, { now: new Date() });
  const times = batch.market_prices.map((p) => p.observed_at!.getTime());
  expect(times.length).toBeGreaterThan(0);
  return new Date(Math.max(...times)).toISOString();
}

describe('first start', () => {
  it('the "now" run says the bundled prices are historical, in its summary and once in the log', async () => {
    const lines: string[] = [];
    const stream = new Writable({
      write(chunk, _enc, cb) {
        lines.push(String(chunk));
        cb();
      },
    });
    const config = loadConfig({ QUORUM_DATA_DIR: join(tmp.dir, 'in-process'), QUORUM_SAMPLE_DIR: SAMPLE, QUORUM_VENUES: 'none', LOG_LEVEL: 'info' });
    const runs = await bootstrapIfEmpty(config, createLogger('info', { destination: stream }));
    expect(runs.map((r) => r.status)).toEqual(['completed', 'completed', 'completed']);
    const [dated1, dated2, now] = runs;
    const newest = await newestSamplePrice();

    // (this small extract lacks most questions the bundled structure files name: each run says so)
    const notes = (r: { notes: string[] }) => r.notes.filter((n) => !/ names questions? the warehouse does not have, left out: /.test(n));
    for (const dated of [dated1!, dated2!]) {
      expect(notes(dated)).toEqual([]);
      expect(dated.prices_historical).toBeUndefined();
    }
    expect(now!.prices_historical).toBe(true);
    expect(now!.newest_price_observed_at).toBe(newest);
    const ageHours = (Date.parse(now!.as_of) - Date.parse(newest)) / 3_600_000;
    expect(now!.newest_price_age_hours).toBeCloseTo(ageHours, 0);
    expect(now!.newest_price_age_hours!).toBeGreaterThan(0);
    expect(notes(now!)).toHaveLength(1);
    expect(notes(now!)[0]).toMatch(/historical/);
    expect(notes(now!)[0]).toContain(newest);

    const logs = parseLogLines(lines.join(''));
    const flagged = logs.filter((l) => l.prices_historical === true);
    expect(flagged).toHaveLength(1);
    expect(flagged[0]).toMatchObject({ level: 40, run_id: now!.run_id, newest_price_observed_at: newest, newest_price_age_hours: now!.newest_price_age_hours });
    expect(flagged[0]!.msg).toBe(notes(now!)[0]);

    // The operators' question files (data/questions/, read without reaching outside) are in the
    // first snapshot, forecast by the "now" run; the dated runs, before they were opened, do not
    // have them (QA: they waited for the first scheduled run, hours later).
    const questionFiles = (id: string) =>
      withConnection(async (conn) => {
        const file = join(config.dataDir, 'snapshots', id, 'questions.parquet').replaceAll("'", "''");
        return (await conn.runAndReadAll(`SELECT question_id FROM read_parquet('${file}') WHERE venue = 'quorum' ORDER BY 1`)).getRowObjectsJS().map((r) => r.question_id);
      });
    expect(await questionFiles(now!.run_id)).toEqual(['quorum:cpi-yoy-above-3-oct-2026', 'quorum:effr-below-4-on-2026-12-31', 'quorum:unrate-at-or-above-4-5-sep-2026']);
    expect(await questionFiles(dated1!.run_id)).toEqual([]);

    // A second start finds the snapshot and makes no run.
    expect(await bootstrapIfEmpty(config, createLogger('silent'))).toEqual([]);
  }, 180_000);

  it('quorum start: bootstraps, says once where it listens, records itself, cleans up on SIGTERM', async () => {
    const dir = join(tmp.dir, 'cli');
    const child = quorumProcess(['start'], { QUORUM_DATA_DIR: dir, QUORUM_SAMPLE_DIR: SAMPLE, PORT: '0', HOST: '127.0.0.1', LOG_LEVEL: 'info', ...ONE_DUCKDB_THREAD });
    let stdout = '';
    let stderr = '';
    child.stdout!.on('data', (d) => (stdout += d));
    child.stderr!.on('data', (d) => (stderr += d));
    const exited = new Promise<number | null>((resolve) => child.on('exit', resolve));
    const deadline = Date.now() + 180_000; // three pipeline runs first, on a shared machine
    while (!/api listening/.test(stderr) && Date.now() < deadline) await new Promise((r) => setTimeout(r, 100));
    let listening: LogLine[];
    try {
      listening = parseLogLines(stderr).filter((l) => /listening/i.test(String(l.msg)));
      expect(listening, stderr).toHaveLength(1);
      const port = Number(new URL(String(listening[0]!.address)).port);
      expect(port).toBeGreaterThan(0);
      const record = JSON.parse(readFileSync(serverRecordFile(dir), 'utf8')) as ServerRecord;
      expect(record).toMatchObject({ pid: child.pid, port });
      expect((await fetch(`http://127.0.0.1:${port}/readyz`)).status).toBe(200);
    } finally {
      child.kill('SIGTERM');
    }
    expect(await exited).toBe(0);
    expect(stdout).toBe('');
    const logs = parseLogLines(stderr);
    for (const l of stderr.split('\n').filter((x) => x.trim())) expect(repeatedKeys(l), l).toEqual([]);
    expect(logs.filter((l) => /listening/i.test(String(l.msg)))).toHaveLength(1);
    expect(logs.filter((l) => l.prices_historical === true)).toHaveLength(1);
    expect(existsSync(serverRecordFile(dir))).toBe(false);
  }, 240_000);

  it('quorum start stopped by SIGTERM during its bootstrap: the run in progress is recorded interrupted, nothing is left locked, and bootstrap.json stays for the next start (QA: it exited in the middle of the run, its calls in flight lost, run.lock left)', async () => {
    const dir = join(tmp.dir, 'sigterm-bootstrap');
    const env = { QUORUM_DATA_DIR: dir, QUORUM_SAMPLE_DIR: SAMPLE, PORT: '0', HOST: '127.0.0.1', LOG_LEVEL: 'info', QUORUM_SIMULATOR_LATENCY_MS: '2000', ...ONE_DUCKDB_THREAD };
    const child = quorumProcess(['start'], env);
    let stderr = '';
    child.stderr!.on('data', (d) => (stderr += d));
    const exited = new Promise<number | null>((resolve) => child.on('exit', resolve));
    const deadline = Date.now() + 180_000;
    while (!/"msg":"forecasting"/.test(stderr) && !/api listening/.test(stderr) && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50));
    await new Promise((r) => setTimeout(r, 500)); // its first calls in flight (each takes 2 s)
    child.kill('SIGTERM');
    expect(await exited).toBe(0);
    expect(stderr).not.toContain('api listening'); // stopped during the first dated run
    expect(stderr).toContain('"msg":"run interrupted"');
    expect(existsSync(join(dir, 'run.lock'))).toBe(false);
    expect(existsSync(join(dir, 'server.lock'))).toBe(false);
    expect(existsSync(bootstrapMarkerFile(dir))).toBe(true); // the next start finishes the sequence
    const runs = await withConnection((conn) => listRuns(conn, dir));
    expect(runs.map((r) => [r.interrupted, r.completed])).toEqual([[true, false]]);
  }, 240_000);

  it('quorum start stopped by SIGTERM while another import holds the import lock: it stops waiting and exits at once, having imported nothing (QA review: it waited until that import ended, up to 3.5 minutes, then imported before it exited)', async () => {
    const dir = join(tmp.dir, 'sigterm-import-wait');
    mkdirSync(dir, { recursive: true });
    // Another import in progress: a live process holding import.lock, with a fresh heartbeat.
    const holder = spawn(process.execPath, ['-e', 'setInterval(() => {}, 1000)']);
    const lock = JSON.stringify({ pid: holder.pid, host: hostname(), pid_ns: readlinkSync('/proc/self/ns/pid'), started_at: new Date().toISOString(), token: 'another-import' });
    writeFileSync(join(dir, 'import.lock'), lock);
    try {
      const env = { QUORUM_DATA_DIR: dir, QUORUM_SAMPLE_DIR: SAMPLE, PORT: '0', HOST: '127.0.0.1', LOG_LEVEL: 'info', ...ONE_DUCKDB_THREAD };
      const child = quorumProcess(['start'], env);
      let stderr = '';
      child.stderr!.on('data', (d) => (stderr += d));
      const exited = new Promise<number | null>((resolve) => child.on('exit', resolve));
      // Stopped once it says it waits for the other import (logged as its wait begins; it tries
      // again every 0.5 s), rather than a fixed 1.5 s after "no snapshot yet": the same state, reached
      // as soon as it is there.
      const deadline = Date.now() + 60_000;
      while (!/another import is in progress/.test(stderr) && child.exitCode === null && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50));
      child.kill('SIGTERM');
      const status = await Promise.race([exited, new Promise((r) => setTimeout(() => r('still running 10 s after SIGTERM'), 10_000))]);
      if (status !== 0) child.kill('SIGKILL');
      expect(status).toBe(0);
      expect(stderr).toContain('another import is in progress');
      expect(stderr).not.toContain('sample imported');
      expect(readFileSync(join(dir, 'import.lock'), 'utf8')).toBe(lock); // the other import's, untouched
      expect(existsSync(join(dir, 'server.lock'))).toBe(false);
      expect(existsSync(bootstrapMarkerFile(dir))).toBe(true); // the next start does the first start
    } finally {
      holder.kill('SIGKILL');
    }
  }, 120_000);

  it('quorum start killed after its first dated run published: the next start finishes the sequence (QA: it served that snapshot, the later runs never made)', async () => {
    const dir = join(tmp.dir, 'killed');
    const env = { QUORUM_DATA_DIR: dir, QUORUM_SAMPLE_DIR: SAMPLE, PORT: '0', HOST: '127.0.0.1', LOG_LEVEL: 'info', ...ONE_DUCKDB_THREAD };
    const [round1, round2] = roundFreezeTimes(SAMPLE);
    const first = quorumProcess(['start'], env);
    const gone = new Promise<void>((resolve) => first.on('exit', () => resolve()));
    const deadline = Date.now() + 180_000;
    while (readCurrent(dir) === null && Date.now() < deadline) await new Promise((r) => setTimeout(r, 10));
    first.kill('SIGKILL');
    await gone;
    // killed with the first round's snapshot published, the rest of the sequence not made
    expect(readManifest(dir, readCurrent(dir)!).as_of).toBe(round1!.toISOString());

    const second = quorumProcess(['start'], env);
    let stderr = '';
    second.stderr!.on('data', (d) => (stderr += d));
    const exited = new Promise<number | null>((resolve) => second.on('exit', resolve));
    const until = Date.now() + 180_000;
    while (!/api listening/.test(stderr) && Date.now() < until) await new Promise((r) => setTimeout(r, 100));
    second.kill('SIGTERM');
    expect(await exited).toBe(0);
    expect(stderr).toContain('the first start was stopped before it finished');

    const runs = await withConnection((conn) => listRuns(conn, dir));
    const completed = runs.filter((r) => r.completed).map((r) => r.as_of);
    expect(completed.filter((t) => t === round1!.toISOString())).toHaveLength(1);
    expect(completed.filter((t) => t === round2!.toISOString())).toHaveLength(1);
    expect(completed.filter((t) => Date.parse(t) > round2!.getTime())).toHaveLength(1);
    expect(Date.parse(readManifest(dir, readCurrent(dir)!).as_of)).toBeGreaterThan(round2!.getTime());
    expect(existsSync(bootstrapMarkerFile(dir))).toBe(false);
  }, 420_000);
});

describe('quorum start with a bad definition file', () => {
  it('says so as it starts, naming the file and line, before its first run (QA: the next scheduled run, hours later, was the first to say)', async () => {
    const dir = join(tmp.dir, 'bad-definitions');
    const structure = join(tmp.dir, 'bad-structure');
    for (const sub of ['links', 'theses', 'factors', 'scenarios']) mkdirSync(join(structure, sub), { recursive: true });
    writeFileSync(join(structure, 'links', 'bad.yaml'), 'links:\n  - { a: "manifold:a", b: "manifold:b", kind: causes }\n');
    const env = { QUORUM_DATA_DIR: dir, QUORUM_SAMPLE_DIR: SAMPLE, QUORUM_STRUCTURE_DIR: structure, PORT: '0', HOST: '127.0.0.1', LOG_LEVEL: 'info', ...ONE_DUCKDB_THREAD };
    const child = quorumProcess(['start'], env);
    let stderr = '';
    child.stderr!.on('data', (d) => (stderr += d));
    const exited = new Promise<number | null>((resolve) => child.on('exit', resolve));
    const deadline = Date.now() + 60_000;
    while (!/every run fails until this file is fixed/.test(stderr) && !/"msg":"run started"/.test(stderr) && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50));
    child.kill('SIGTERM');
    await exited;
    const warning = parseLogLines(stderr).find((l) => /every run fails until this file is fixed/.test(String(l.msg)));
    expect(warning, stderr.slice(0, 2000)).toBeDefined();
    expect(warning!.level).toBe(40);
    expect(String(warning!.msg)).toContain(`${join(structure, 'links', 'bad.yaml')}:2 (field "links.0.kind")`);
    // before anything else ran
    expect(stderr.indexOf('every run fails until this file is fixed')).toBeLessThan(stderr.indexOf('"msg":"run started"') === -1 ? Infinity : stderr.indexOf('"msg":"run started"'));
  }, 120_000);
});
