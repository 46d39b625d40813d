/**
 * `npm run bench -- fanout [--calls N] [--latency MS] [--models M] [--per-model C]`
 *
 * Model fan-out throughput and the runner's own CPU cost. The model simulator runs in a child
 * process with a fixed latency (default 200 ms), so `process.cpuUsage()` of this process measures
 * the client side alone. Layout: 4 simulated models × 8 calls in flight each = 32 in flight (the
 * shape of a real run: one p-queue per model), 1,200 calls (300 tasks × 4 models, modes cycling
 * blind/informed/augmented). Ideal throughput = in-flight / latency = 32 / 0.2 s = 160 calls/s.
 *
 * Measured in the same run, after a warm-up:
 *   - baseline: the bare openai SDK, 32 concurrent loops of chat.completions.create (same prompts);
 *   - runner: `runForecasts` (per-model p-queues, prompt rendering, zod validation, deadlines)
 *     with every finished call journaled as the forecast stage does (JournalWriter, fsync ≤ 1/s).
 * ratio = runner calls/s ÷ ideal; cpu_pct = runner CPU time ÷ wall time × 100 (one core = 100).
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import OpenAI from 'openai';
import { simulatedModels } from '../pipeline/models/config.ts';
import { renderPrompt, type ForecastTask } from '../pipeline/models/prompts.ts';
import { createModelClients, runForecasts } from '../pipeline/models/runner.ts';
import { JournalWriter } from '../pipeline/forecast/journal.ts';
import { MODES } from '../pipeline/warehouse/tables.ts';

const REPO = fileURLToPath(new URL('..', import.meta.url));

function arg(args: string[], name: string, fallback: number): number {
  const i = args.indexOf(`--${name}`);
  const v = i >= 0 ? Number(args[i + 1]) : fallback;
  if (!Number.isFinite(v) || v <= 0) throw new Error(`--${name}: expected a positive number`);
  return v;
}

async function startSimulatorProcess(latencyMs: number): Promise<{ url: string; child: ChildProcess }> {
  const child = spawn(
    process.execPath,
    ['--import', 'tsx', join(REPO, 'pipeline', 'simulator', 'main.ts'), '--latency', String(latencyMs), '--json'],
    { cwd: REPO, stdio: ['ignore', 'pipe', 'inherit'] },
  );
  const rl = createInterface({ input: child.stdout! });
  const url = await new Promise<string>((resolve, reject) => {
    const t = setTimeout(() => reject(new Error('simulator did not start within 30 s')), 30_000);
    child.once('exit', (code) => reject(new Error(`simulator exited (${code})`)));
    rl.once('line', (line) => {
      clearTimeout(t);
      resolve((JSON.parse(line) as { url: string }).url);
    });
  });
  return { url, child };
}

function tasks(n: number): ForecastTask[] {
  return Array.from({ length: n }, (_, i) => ({
    mode: MODES[i % 3]!,
    question: {
      question_id: `bench:${i}`,
      title: `Will benchmark event number ${i} happen before the end of 2026?`,
      description: `Background of benchmark event ${i}: a paragraph of context the informed and augmented modes show.`,
      resolution_criteria: 'Resolves YES if the event happens before 2027-01-01 00:00 UTC, as reported by an official source.',
      url: `https://example.com/q/${i}`,
      created_at: new Date('2025-09-01T00:00:00Z'),
      close_time: new Date('2026-12-31T00:00:00Z'),
      category: 'science',
      domain: 'other',
    },
    market: {
      probability: ((i * 37) % 90) / 100 + 0.05,
      observed_at: new Date('2025-10-26T10:00:00Z'),
      volume: 1000 + i,
      liquidity: 500,
      history: Array.from({ length: 5 }, (_, d) => ({ observed_at: new Date(Date.UTC(2025, 9, 20 + d)), probability: 0.5 })),
    },
    evidence: [
      { evidence_id: `ev-${i}`, title: 'A relevant report', url: 'https://example.com/r', published_at: new Date('2025-10-20T00:00:00Z'), snippet: 'Something relevant happened.' },
    ],
  }));
}

interface Measure {
  seconds: number;
  cpuPct: number;
  calls: number;
  ok: number;
}

async function measure(work: () => Promise<{ calls: number; ok: number }>): Promise<Measure> {
  const cpu0 = process.cpuUsage();
  const t0 = performance.now();
  const { calls, ok } = await work();
  const seconds = (performance.now() - t0) / 1000;
  const cpu = process.cpuUsage(cpu0);
  return { seconds, cpuPct: ((cpu.user + cpu.system) / 1e6 / seconds) * 100, calls, ok };
}

export default async function fanout(args: string[]) {
  const totalCalls = arg(args, 'calls', 1200);
  const latencyMs = arg(args, 'latency', 200);
  const nModels = arg(args, 'models', 4);
  const perModel = arg(args, 'per-model', 8);
  const inFlight = nModels * perModel;
  const asOf = new Date('2025-10-26T12:00:00Z');
  const { url, child } = await startSimulatorProcess(latencyMs);
  const dir = mkdtempSync(join(tmpdir(), 'quorum-bench-fanout-'));
  try {
    const models = simulatedModels(url, { maxConcurrency: perModel, requestsPerMinute: 1_000_000 }).slice(0, nModels);
    if (models.length < nModels) throw new Error(`at most ${models.length} simulated models`);
    const nTasks = Math.ceil(totalCalls / nModels);
    const all = tasks(nTasks);

    // --- baseline: the bare SDK, `inFlight` concurrent loops over the same prompts
    const prompts = all.map((t) => renderPrompt(t, { asOf }));
    const bare = models.map((m) => new OpenAI({ baseURL: m.base_url, apiKey: 'x', maxRetries: 2 }));
    const bareRun = (n: number) => async () => {
      let next = 0;
      let ok = 0;
      const loop = async (w: number) => {
        const mi = w % nModels;
        for (let i = next++; i < n; i = next++) {
          const p = prompts[Math.floor(i / nModels) % prompts.length]!;
          const r = await bare[mi]!.chat.completions.create({
            model: models[mi]!.model,
            messages: [{ role: 'system', content: p.system }, { role: 'user', content: p.user }],
            response_format: { type: 'json_object' },
          });
          if (r.choices[0]?.message.content) ok++;
        }
      };
      await Promise.all(Array.from({ length: inFlight }, (_, w) => loop(w)));
      return { calls: n, ok };
    };

    // --- the runner, journaling every call like the forecast stage
    const clients = createModelClients(models);
    const runnerRun = (taskList: ForecastTask[], runId: string) => async () => {
      const journal = JournalWriter.open(join(dir, `${runId}.jsonl`), { fsyncMs: 1000 });
      try {
        const out = await runForecasts({
          models,
          tasks: taskList,
          runId,
          asOf,
          clients,
          callTimeoutMs: 30_000,
          onCall: (call, forecasts) => journal.append({ t: 'call', call, forecasts }),
        });
        return { calls: out.calls.length, ok: out.calls.filter((c) => c.status === 'ok').length };
      } finally {
        journal.close();
      }
    };

    // warm-up (connections, JIT), then the measured runs
    await bareRun(inFlight * 2)();
    await runnerRun(all.slice(0, Math.ceil((inFlight * 2) / nModels)), 'warmup')();
    const baseline = await measure(bareRun(totalCalls));
    const runner = await measure(runnerRun(all, 'bench'));

    const ideal = inFlight / (latencyMs / 1000);
    const achieved = runner.calls / runner.seconds;
    const round = (x: number, d = 3) => Math.round(x * 10 ** d) / 10 ** d;
    console.error(
      `fanout: ${runner.calls} calls (${runner.ok} ok) in ${runner.seconds.toFixed(2)} s = ${achieved.toFixed(1)}/s ` +
        `(ideal ${ideal}/s: ${nModels} models × ${perModel} in flight, ${latencyMs} ms latency); runner CPU ${runner.cpuPct.toFixed(1)}% ` +
        `| bare SDK ${(baseline.calls / baseline.seconds).toFixed(1)}/s, CPU ${baseline.cpuPct.toFixed(1)}%`,
    );
    if (runner.ok !== runner.calls) throw new Error(`${runner.calls - runner.ok} calls failed`);
    return {
      ratio: round(achieved / ideal),
      cpu_pct: round(runner.cpuPct, 1),
      calls: runner.calls,
      achieved_per_s: round(achieved, 1),
      ideal_per_s: ideal,
      layout: `${nModels} models x ${perModel} in flight`,
      latency_ms: latencyMs,
      baseline_ratio: round(baseline.calls / baseline.seconds / ideal),
      baseline_cpu_pct: round(baseline.cpuPct, 1),
    };
  } finally {
    child.kill('SIGTERM');
    rmSync(dir, { recursive: true, force: true });
  }
}
