/**
 * The real `quorum` CLI, killed with SIGKILL mid-forecast, then resumed; stopped with SIGTERM; and
 * a finished run re-run. The simulator runs in this test process (QUORUM_SIMULATOR_URL), so its
 * request counter sees every model call of every CLI process.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { quorum, quorumProcess, REPO } from '../helpers/cli.ts';
import { startSimulator, type Simulator } from '../../pipeline/simulator/server.ts';
import { journalPath, readJournal } from '../../pipeline/forecast/journal.ts';
import { rawQuery, scratch } from './helpers.ts';

const sample = join(REPO, 'data', 'sample', 'forecastbench');
const root = scratch('quorum-kill-');
const TOTAL = 20 * 4; // 20 questions × 1 mode × 4 models
const IN_FLIGHT = 4 * 2; // 4 models × QUORUM_SIMULATOR_MAX_CONCURRENCY
let sim: Simulator;
let env: Record<string, string>;

beforeAll(async () => {
  sim = await startSimulator({ port: 0, latencyMs: 150 });
  env = {
    QUORUM_DATA_DIR: join(root, 'wh'),
    QUORUM_SIMULATOR_URL: sim.url,
    QUORUM_SIMULATOR_MAX_CONCURRENCY: '2',
    QUORUM_MODES: 'blind',
    QUORUM_MAX_QUESTIONS: '20',
    QUORUM_JOURNAL_FSYNC_MS: '200',
  };
  const r = quorum(['import', 'forecastbench', sample], env);
  expect(r.status, r.stderr).toBe(0);
}, 120_000);

afterAll(async () => {
  await sim.close();
});

/** Runs the CLI to completion without blocking this process (the simulator lives here). */
function cli(args: string[], extra: Record<string, string> = {}): Promise<{ status: number | null; stdout: string; stderr: string }> {
  const child = quorumProcess(args, { ...env, LOG_LEVEL: 'warn', ...extra });
  let stdout = '';
  let stderr = '';
  child.stdout!.on('data', (d) => (stdout += d));
  child.stderr!.on('data', (d) => (stderr += d));
  return new Promise((resolve) => child.on('exit', (status) => resolve({ status, stdout, stderr })));
}

/** Starts `quorum run ...`, waits until its journal holds `calls` finished calls, then sends `signal`. */
async function runAndSignal(args: string[], calls: number, signal: NodeJS.Signals) {
  const child = quorumProcess(['run', ...args], { ...env, LOG_LEVEL: 'warn' });
  let stdout = '';
  let stderr = '';
  child.stdout!.on('data', (d) => (stdout += d));
  child.stderr!.on('data', (d) => (stderr += d));
  const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
  const dir = join(env.QUORUM_DATA_DIR!, 'journal');
  let journal: string | null = null;
  for (let i = 0; i < 600; i++) {
    if (!journal && existsSync(dir)) {
      const f = (await import('node:fs')).readdirSync(dir).find((x) => x.endsWith('.jsonl'));
      if (f) journal = join(dir, f);
    }
    if (journal && readJournal(journal).calls.length >= calls) break;
    await new Promise((r) => setTimeout(r, 20));
  }
  expect(journal, stderr).not.toBeNull();
  const requestsAtSignal = sim.stats().requests;
  child.kill(signal);
  const code = await exited;
  return { code, stdout, stderr, journal: journal!, requestsAtSignal };
}

describe('quorum run killed, stopped and resumed (real processes)', () => {
  it('SIGKILL mid-forecast loses at most the calls in flight; --resume repeats no finished call; a re-run makes none', async () => {
    const r0 = sim.stats().requests;
    const killed = await runAndSignal([], 16, 'SIGKILL');
    expect(killed.code).toBeNull();
    const sentBeforeKill = sim.stats().requests - r0;
    const j = readJournal(killed.journal);
    const runId = j.header!.run_id;
    const journaled = new Set(j.calls.map((c) => `${c.call.question_id}|${c.call.model}`)).size;
    expect(journaled).toBeGreaterThanOrEqual(16);
    expect(sentBeforeKill - journaled).toBeLessThanOrEqual(IN_FLIGHT); // lost: only what was in flight

    const r1 = sim.stats().requests;
    const resumed = await cli(['run', '--resume']);
    expect(resumed.status, resumed.stderr).toBe(0);
    const summary = JSON.parse(resumed.stdout.trim().split('\n').pop()!);
    expect(summary).toMatchObject({ run_id: runId, status: 'completed', resumed: true, calls: TOTAL, forecasts: TOTAL });
    expect(sim.stats().requests - r1).toBe(TOTAL - journaled); // exactly the unfinished calls
    expect(summary.calls_made).toBe(TOTAL - journaled);
    expect(existsSync(journalPath(env.QUORUM_DATA_DIR!, runId))).toBe(false);
    const rows = await rawQuery(env.QUORUM_DATA_DIR!, 'model_calls', `SELECT count(*) AS n, count(DISTINCT (question_id, model, mode)) AS k FROM t WHERE run_id = '${runId}'`);
    expect(rows[0]).toEqual({ n: TOTAL, k: TOTAL });

    const r2 = sim.stats().requests;
    const again = await cli(['run', '--resume', runId]);
    expect(again.status, again.stderr).toBe(0);
    expect(sim.stats().requests - r2).toBe(0);
    expect(JSON.parse(again.stdout.trim().split('\n').pop()!)).toMatchObject({ run_id: runId, calls_made: 0, calls: TOTAL });
  }, 120_000);

  it('SIGTERM: stops taking calls, finishes and records those in flight, exits 143; --resume completes it', async () => {
    const r0 = sim.stats().requests;
    const stopped = await runAndSignal([], 12, 'SIGTERM');
    expect(stopped.code, stopped.stderr).toBe(143);
    const summary = JSON.parse(stopped.stdout.trim().split('\n').pop()!);
    expect(summary.status).toBe('interrupted');
    const sent = sim.stats().requests - r0;
    expect(summary.calls).toBe(sent); // nothing in flight was lost
    expect(summary.calls).toBeLessThan(TOTAL);
    expect(readJournal(stopped.journal).calls).toHaveLength(sent);
    const stored = await rawQuery(env.QUORUM_DATA_DIR!, 'model_calls', `SELECT status FROM t WHERE run_id = '${summary.run_id}'`);
    expect(stored).toHaveLength(sent);
    expect(stored.every((c) => c.status === 'ok')).toBe(true);

    const r1 = sim.stats().requests;
    const resumed = await cli(['run', '--resume']);
    expect(resumed.status, resumed.stderr).toBe(0);
    expect(JSON.parse(resumed.stdout.trim().split('\n').pop()!)).toMatchObject({ run_id: summary.run_id, status: 'completed', calls: TOTAL });
    expect(sim.stats().requests - r1).toBe(TOTAL - sent);
    expect(readFileSync(join(env.QUORUM_DATA_DIR!, 'CURRENT'), 'utf8').trim()).toBe(summary.run_id);
  }, 120_000);
});
