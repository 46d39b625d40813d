/**
 * `npm run bench -- probability`: the probability endpoint against the model simulator with 300 ms
 * latency per call, 16 concurrent clients for 20 s (issue 14). The four calls of a request run in
 * parallel, so a request should take about one call: ratio = p50 / (one call's latency), p99_ratio =
 * p99 / (one call's latency). One call's latency is measured in the same run: the median of 20
 * single-model calls through the same runner and simulator (≥ the configured 300 ms).
 * Options: --seconds N, --clients N, --latency-ms N.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { createKey } from '../api/auth/keys.ts';
import { silentLogger } from '../api/logging/logger.ts';
import { startServer } from '../api/server.ts';
import { loadModelsConfig } from '../pipeline/models/config.ts';
import { createModelClients, runForecasts } from '../pipeline/models/runner.ts';
import { startSimulator } from '../pipeline/simulator/server.ts';

function arg(args: string[], name: string, def: number): number {
  const i = args.indexOf(`--${name}`);
  return i >= 0 ? Number(args[i + 1]) : def;
}

function pct(sorted: number[], q: number): number {
  return sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))]!;
}

export default async function bench(args: string[]): Promise<Record<string, unknown>> {
  const seconds = arg(args, 'seconds', 20);
  const clients = arg(args, 'clients', 16);
  const latencyMs = arg(args, 'latency-ms', 300);
  const sim = await startSimulator({ port: 0, latencyMs });
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
    const lat: number[] = [];
    let errors = 0;
    let seq = 0;
    const until = Date.now() + seconds * 1000;
    const worker = async () => {
      while (Date.now() < until) {
        const n = seq++;
        const t0 = performance.now();
        const res = await fetch(`${server.url}/api/probability/`, {
          method: 'POST',
          headers: { 'content-type': 'application/json', 'x-api-key': key },
          body: JSON.stringify({ question: `Will bench question number ${n} resolve YES?`, close_date: future, category: 'science', market_probability: 0.4 }),
        });
        await res.arrayBuffer();
        if (res.status === 200) lat.push(performance.now() - t0);
        else errors++;
      }
    };
    const started = performance.now();
    await Promise.all(Array.from({ length: clients }, worker));
    const elapsed = (performance.now() - started) / 1000;
    await server.close();
    lat.sort((a, b) => a - b);
    const p50 = pct(lat, 0.5);
    const p99 = pct(lat, 0.99);
    console.error(
      `probability: ${lat.length} answers (${errors} errors) in ${elapsed.toFixed(1)} s with ${clients} clients; ` +
        `one call ${callMs.toFixed(1)} ms (configured ${latencyMs}); endpoint p50 ${p50.toFixed(1)} ms, p99 ${p99.toFixed(1)} ms`,
    );
    return {
      ratio: Math.round((p50 / callMs) * 1000) / 1000,
      p99_ratio: Math.round((p99 / callMs) * 1000) / 1000,
      rps: Math.round((lat.length / elapsed) * 10) / 10,
      p50_ms: Math.round(p50),
      p99_ms: Math.round(p99),
      call_ms: Math.round(callMs),
      errors,
    };
  } finally {
    await sim.close();
    await rm(dir, { recursive: true, force: true });
  }
}
