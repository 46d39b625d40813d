/**
 * `npm run bench -- probability`: the probability endpoint against the model simulator with 300 ms
 * latency per call, 16 concurrent clients for 20 s (issue 14). The four calls of a request run in
 * parallel, so a request should take about one call: ratio = p50 / (one call's latency), p99_ratio =
 * p99 / (one call's latency). One call's latency is measured in the same run: the median of 20
 * single-model calls through the same runner and simulator (≥ the configured 300 ms).
 * The simulator runs in its own process (its CPU is not charged to the endpoint's event loop), and
 * the clients send through node:http with a keep-alive agent (cheaper than fetch, so the clients'
 * own work takes as little as possible from the API's event loop they share). The CPU used per
 * request by the API process and by the simulator is reported too (load-independent).
 * Before the measured window, every client sends one request at once (a warm-up wave, reported as
 * cold_p50_ms / cold_max_ms): the very first requests open the connections to the models and read
 * the snapshot's calibrations, and 16 of them in ~1,000 would set the p99 alone.
 * Options: --seconds N, --clients N, --latency-ms N.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import http from 'node:http';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { createKey } from '../api/auth/keys.ts';
import { CLOCK_TICKS_PER_S, procStat } from '../test/helpers/proc-stat.ts';
import { silentLogger } from '../api/logging/logger.ts';
import { startServer } from '../api/server.ts';
import { loadModelsConfig } from '../pipeline/models/config.ts';
import { createModelClients, runForecasts } from '../pipeline/models/runner.ts';

const REPO = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');

function arg(args: string[], name: string, def: number): number {
  const i = args.indexOf(`--${name}`);
  return i >= 0 ? Number(args[i + 1]) : def;
}

/** The simulator in a child process; resolves with its base URL. */
async function startSimulatorProcess(latencyMs: number): Promise<{ url: string; child: ChildProcess }> {
  const child = spawn(
    process.execPath,
    ['--import', 'tsx', path.join(REPO, 'pipeline', 'simulator', 'main.ts'), '--latency', String(latencyMs), '--json'],
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

/** CPU time (ms) a process has used so far, from /proc (null where there is none). */
function processCpuMs(pid: number): number | null {
  const stat = procStat(pid);
  return stat === null ? null : (stat.ticks * 1000) / CLOCK_TICKS_PER_S;
}

/** POSTs a JSON body through a keep-alive agent; resolves with the status once the body is read. */
function post(agent: http.Agent, url: URL, headers: Record<string, string>, body: string): Promise<number> {
  return new Promise((resolve, reject) => {
    const req = http.request(
      url,
      { method: 'POST', agent, headers: { ...headers, 'content-length': String(Buffer.byteLength(body)) } },
      (res) => {
        res.on('data', () => {});
        res.on('end', () => resolve(res.statusCode ?? 0));
        res.on('error', reject);
      },
    );
    req.on('error', reject);
    req.end(body);
  });
}

function pct(sorted: number[], q: number): number {
  return sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))]!;
}

export default async function bench(args: string[]): Promise<Record<string, unknown>> {
  const seconds = arg(args, 'seconds', 20);
  const clients = arg(args, 'clients', 16);
  const latencyMs = arg(args, 'latency-ms', 300);
  const sim = await startSimulatorProcess(latencyMs);
  const models = loadModelsConfig({ env: {}, simulatorUrl: sim.url, simulator: { maxConcurrency: 64 } });
  const dir = await mkdtemp(path.join(tmpdir(), 'quorum-bench-prob-'));
  const future = new Date(Date.now() + 90 * 86_400_000).toISOString();
  try {
    // One call's latency: the same runner, one model, sequential calls.
    const one = createModelClients(models.slice(0, 1));
    const single: number[] = [];
    for (let i = 0; i < 20; i++) {
      const t0 = performance.now();
      await runForecasts({
        models: models.slice(0, 1),
        clients: one,
        runId: 'bench',
        asOf: new Date(),
        tasks: [{
          mode: 'informed',
          question: { question_id: `b:${i}`, title: `Will bench baseline question ${i} resolve YES?`, description: null, resolution_criteria: null, url: null, created_at: new Date(), close_time: new Date(future), category: 'science', domain: null },
          market: { probability: 0.4, observed_at: new Date(), volume: null, liquidity: null, history: [] },
        }],
      });
      single.push(performance.now() - t0);
    }
    single.sort((a, b) => a - b);
    const callMs = pct(single, 0.5);

    const { key } = createKey(dir, { name: 'bench', plan: 'pro', scopes: ['probability'] });
    const server = await startServer({
      port: 0,
      dataDir: dir,
      logger: silentLogger(),
      pollMs: 0,
      schedule: null,
      keyRecheckMs: 0,
      recordServer: false,
      limits: { anonymousPerHour: null, proPerDay: null, apiPerDay: null, enterprisePerDay: null, probabilityPerDay: null },
      probability: { models, evidenceProviders: [], maxInFlightPerKey: clients, timeoutMs: 30_000 },
    });
    const agent = new http.Agent({ keepAlive: true, maxSockets: clients });
    const endpoint = new URL(`${server.url}/api/probability/`);
    const headers = { 'content-type': 'application/json', 'x-api-key': key };
    let lat: number[] = [];
    let errors = 0;
    let seq = 0;
    let until = 0;
    const worker = async () => {
      do {
        const n = seq++;
        const t0 = performance.now();
        const body = JSON.stringify({ question: `Will bench question number ${n} resolve YES?`, close_date: future, category: 'science', market_probability: 0.4 });
        const status = await post(agent, endpoint, headers, body).catch(() => 0);
        if (status === 200) lat.push(performance.now() - t0);
        else errors++;
      } while (Date.now() < until);
    };
    // Warm-up, not measured: one request per client at once. The first wave opens the connections
    // to the models and reads the calibrations; its 16 requests (1.6% of a 20 s run) would
    // otherwise be the run's p99 on their own. Reported as cold_max_ms.
    await Promise.all(Array.from({ length: clients }, worker));
    const cold = lat.sort((a, b) => a - b);
    const coldErrors = errors;
    lat = [];
    errors = 0;
    until = Date.now() + seconds * 1000;
    const cpu0 = process.cpuUsage();
    const sim0 = processCpuMs(sim.child.pid!);
    const started = performance.now();
    await Promise.all(Array.from({ length: clients }, worker));
    const elapsed = (performance.now() - started) / 1000;
    const cpu = process.cpuUsage(cpu0);
    const sim1 = processCpuMs(sim.child.pid!);
    agent.destroy();
    await server.close();
    const requests = lat.length + errors;
    const apiCpuMs = (cpu.user + cpu.system) / 1000 / requests;
    const simCpuMs = sim0 === null || sim1 === null ? null : (sim1 - sim0) / requests;
    lat.sort((a, b) => a - b);
    const p50 = pct(lat, 0.5);
    const p99 = pct(lat, 0.99);
    console.error(
      `probability: ${lat.length} answers (${errors} errors) in ${elapsed.toFixed(1)} s with ${clients} clients; ` +
        `one call ${callMs.toFixed(1)} ms (configured ${latencyMs}); endpoint p50 ${p50.toFixed(1)} ms, p99 ${p99.toFixed(1)} ms; ` +
        `CPU per request: ${apiCpuMs.toFixed(2)} ms in the API process (clients included), ${simCpuMs?.toFixed(2) ?? '?'} ms in the simulator`,
    );
    return {
      ratio: Math.round((p50 / callMs) * 1000) / 1000,
      p99_ratio: Math.round((p99 / callMs) * 1000) / 1000,
      rps: Math.round((lat.length / elapsed) * 10) / 10,
      p50_ms: Math.round(p50),
      p99_ms: Math.round(p99),
      call_ms: Math.round(callMs),
      errors,
      cold_p50_ms: Math.round(pct(cold, 0.5)),
      cold_max_ms: Math.round(cold.at(-1) ?? NaN),
      cold_errors: coldErrors,
      api_cpu_ms_per_request: Math.round(apiCpuMs * 100) / 100,
      sim_cpu_ms_per_request: simCpuMs === null ? null : Math.round(simCpuMs * 100) / 100,
    };
  } finally {
    sim.child.kill('SIGTERM');
    await rm(dir, { recursive: true, force: true });
  }
}
