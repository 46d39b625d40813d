/**
 * `npm run bench -- api [--duration 10] [--connections 100] [--rate 1000]`
 *
 * A cached summary endpoint (`GET /api/predictions/accuracy` with an `api` plan key in
 * X-API-Key) through the full middleware stack — request id + pino request log (to a file),
 * metrics, helmet, auth (SHA-256 + timingSafeEqual), quota accounting with durable usage, CORS,
 * entitlement, per-snapshot cache with ETag — against a bare Express 5 JSON handler answering the
 * same body, measured in the same run with autocannon (100 connections, 10 s per side, after a 2 s
 * warm-up). The 10 s are taken as 5 interleaved 2 s slices per side (bare, project, project,
 * bare, ...) so that background load on a shared machine falls on both alike. Each slice opens its
 * connections afresh and is measured from the moment every connection has had its first answer
 * (see `slice` for why); requests/s and the latency percentiles are over the summed measured
 * windows. autocannon's own p99 of the whole slices, connection ramps included, is reported as
 * `p99_with_ramp_ms` / `bare_p99_with_ramp_ms`, the longest ramp as `ramp_ms` / `bare_ramp_ms`.
 * Each server runs in its own child process; autocannon runs in this one.
 * Result: { ratio: project rps / bare rps, p99_ms (project), ... }.
 *
 * Latency at a fixed offered load: at saturation p99 is set by Little's law (above), so latency is
 * judged at a fixed rate instead: autocannon's `overallRate` (its `-R`) of `--rate` requests per
 * second (default 1,000) over the same 100 connections for `duration` seconds per side, taken as
 * two interleaved halves per side (bare, project, project, bare).
 *
 * How autocannon paces `-R`: each connection gets rate/connections requests per second, refilled by
 * a 1 s timer created when the connection is, and sends them back to back as soon as it may. All
 * 100 connections are created in the same instant, so one plain run offers its 1,000 requests as
 * one burst at the start of every second, 100 deep: the server is saturated for the burst and p99
 * is again the burst's drain time (Little's law), which is what the fixed rate is meant to avoid.
 * So the headline run is the same load in `--phases` (default 100, one per connection) autocannon
 * instances of connections/phases connections at rate/phases each, started 1000/phases ms apart:
 * 1,000 requests per second over 100 connections, each connection paced exactly as by `-R`, but
 * the per-second refills spread over the second instead of aligned. With fewer phases each phase
 * is still a burst: at 10 phases, 100 requests every 100 ms, 10 in flight at once, so a request
 * waits behind ~10 others (p50 2-3 ms, p99 14-19 ms for the bare handler too, set by how two
 * bursts and a GC happen to overlap on two cores). One connection per phase offers 10 requests
 * every 10 ms, one at a time: the load closest to evenly spaced arrivals that autocannon's pacing
 * can give (measured here: p50 0.3 ms; p99 5.1 ms, bare 7.6 ms). The aligned single run is
 * measured too and reported as `fixed_aligned_p99_ms` / `bare_fixed_aligned_p99_ms`.
 *
 * `fixed_p99_ms` / `bare_fixed_p99_ms` are the p99 of every response's latency (as autocannon timed
 * it, in float ms) over the whole run; autocannon's own histogram p99 (integer ms, with its
 * coordinated-omission correction) is reported beside them as `*_autocannon_ms`.
 * Targets: ratio ≥ 0.75 (saturation), fixed_p99_ms ≤ 15 and ≤ 1.5 × bare_fixed_p99_ms.
 *
 * Reading p99: autocannon keeps every connection busy (closed loop), so by Little's law the mean
 * latency is connections / throughput whatever the server does — `project_little_ms` and
 * `bare_little_ms` (1000 * connections / rps) sit next to the measured means. With 100
 * connections a server must answer well over 2000 req/s for p99 < 50 ms to be possible at all, and
 * the tail above the mean comes from GC pauses and CPU shared with autocannon and anything else
 * running; the bare handler's own p99 (`bare_p99_ms`, measured the same way) is the yardstick.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

const HERE = path.dirname(fileURLToPath(import.meta.url));
const ENDPOINT = '/api/predictions/accuracy';

interface Measured {
  rps: number;
  mean_ms: number;
  p50_ms: number;
  p99_ms: number;
  /** autocannon's p99 over the whole slices, connection ramps included. */
  p99_with_ramp_ms: number;
  /** The longest connection ramp of the slices (ms). */
  ramp_ms: number;
  non2xx: number;
  errors: number;
  requests: number;
}

async function childServer(mode: 'bare' | 'project', dataDir: string): Promise<{ url: string; child: ChildProcess }> {
  const child = spawn(process.execPath, ['--import', 'tsx', path.join(HERE, 'api.ts'), '--serve', mode, dataDir], {
    stdio: ['ignore', 'pipe', 'inherit'],
    env: { ...process.env, UV_THREADPOOL_SIZE: process.env.UV_THREADPOOL_SIZE ?? '8' },
  });
  const url = await new Promise<string>((resolve, reject) => {
    let buf = '';
    child.stdout!.on('data', (d) => {
      buf += String(d);
      const m = /^READY (\S+)$/m.exec(buf);
      if (m) resolve(m[1]!);
    });
    child.once('exit', (code) => reject(new Error(`${mode} server exited with ${code}`)));
  });
  return { url, child };
}

async function stop(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null) return;
  await new Promise<void>((resolve) => {
    child.once('exit', () => resolve());
    child.kill('SIGTERM');
    setTimeout(() => child.kill('SIGKILL'), 10_000).unref();
  });
}

/** An autocannon run: awaitable for its result, with per-response events and an early stop. */
interface AutocannonInstance extends PromiseLike<any> {
  on(event: 'response', fn: (client: unknown, statusCode: number, resBytes: number, responseTime: number) => void): void;
  stop(): void;
}

type Autocannon = ((o: Record<string, unknown>) => AutocannonInstance) & {
  aggregateResult: (results: unknown[], opts: Record<string, unknown>) => any;
};

async function loadAutocannon(): Promise<Autocannon> {
  return ((await import('autocannon' as string)) as { default: Autocannon }).default;
}

/** How long a slice's connections may take to all get their first answer before the bench gives up. */
const RAMP_LIMIT_S = 30;

/** One slice: the steady-state window and, for reference, autocannon's whole-run result. */
interface Slice {
  /** Latency (ms) of every response completed in the measured window. */
  latencies: number[];
  /** The measured window, in seconds. */
  seconds: number;
  /** How long it took (ms) until every connection had had its first answer. */
  rampMs: number;
  /** autocannon's un-aggregated result of the whole slice (ramp included): errors, non-2xx, histogram. */
  raw: any;
}

/**
 * One slice of load: `connections` fresh connections, then `seconds` of measurement that start once
 * every connection has had its first answer. Why: the server accepts new connections one per
 * event-loop turn (libuv; seen with strace: one accept4 per turn, never an EAGAIN), and under load
 * a turn answers every ready connection, so the k-th connection's first request waits ~k turns —
 * up to ~2 s for the 100th at 300 µs a request. A plain 10 s autocannon run pays that ramp once
 * (< 0.5% of its requests, below p99); five 2 s slices would pay it five times and then p99 measures
 * the ramp, not the service. The same rule applies to both sides; the ramp-inclusive p99 is reported
 * separately.
 */
async function slice(url: string, headers: Record<string, string>, seconds: number, connections: number): Promise<Slice> {
  const autocannon = await loadAutocannon();
  const answered = new Set<unknown>();
  const latencies: number[] = [];
  const started = performance.now();
  let windowStart = 0;
  let stopped = false;
  const instance = autocannon({
    url, connections, duration: seconds + RAMP_LIMIT_S, headers, pipelining: 1, skipAggregateResult: true,
  });
  instance.on('response', (client, _status, _bytes, ms) => {
    const now = performance.now();
    if (windowStart === 0) {
      answered.add(client);
      if (answered.size === connections) windowStart = now;
      return;
    }
    if (now - windowStart <= seconds * 1000) {
      latencies.push(ms);
    } else if (!stopped) {
      stopped = true;
      instance.stop();
    }
  });
  const raw = await instance;
  if (windowStart === 0) throw new Error(`${url}: not every connection was answered within ${RAMP_LIMIT_S} s`);
  return { latencies, seconds, rampMs: Math.round(windowStart - started), raw };
}

/** Every response of a fixed-rate run: latencies (ms) and autocannon's result. */
interface FixedRun {
  latencies: number[];
  raws: any[];
}

/**
 * `seconds` at a fixed offered rate of `rate` requests/s over `connections` connections, as
 * `phases` autocannon instances (each connections/phases connections at rate/phases) started
 * 1000/phases ms apart; phases = 1 is one plain `-R` run.
 */
async function fixedRate(
  url: string, headers: Record<string, string>, seconds: number, connections: number, rate: number, phases: number,
): Promise<FixedRun> {
  if (connections % phases !== 0 || rate % phases !== 0) throw new Error(`--phases ${phases} must divide connections and rate`);
  const autocannon = await loadAutocannon();
  const latencies: number[] = [];
  const runs: Array<Promise<any>> = [];
  for (let i = 0; i < phases; i++) {
    if (i > 0) await new Promise((r) => setTimeout(r, 1000 / phases));
    const instance = autocannon({
      url, connections: connections / phases, duration: seconds, headers, pipelining: 1, overallRate: rate / phases,
      skipAggregateResult: true,
    });
    instance.on('response', (_client, _status, _bytes, ms) => {
      latencies.push(ms);
    });
    runs.push(Promise.resolve(instance));
  }
  return { latencies, raws: await Promise.all(runs) };
}

interface FixedMeasured {
  p99_ms: number;
  p50_ms: number;
  max_ms: number;
  p99_autocannon_ms: number;
  achieved_rps: number;
  non2xx: number;
  errors: number;
}

async function mergeFixed(url: string, connections: number, seconds: number, runs: FixedRun[]): Promise<FixedMeasured> {
  const autocannon = await loadAutocannon();
  const agg = autocannon.aggregateResult(runs.flatMap((r) => r.raws), { url, connections });
  const latencies = runs.flatMap((r) => r.latencies).sort((a, b) => a - b);
  return {
    p99_ms: round1(quantile(latencies, 0.99)),
    p50_ms: round1(quantile(latencies, 0.5)),
    max_ms: round1(latencies[latencies.length - 1] ?? Number.NaN),
    p99_autocannon_ms: agg.latency.p99,
    achieved_rps: Math.round(latencies.length / seconds),
    non2xx: agg.non2xx,
    errors: agg.errors + agg.timeouts,
  };
}

/** The value at quantile `q` of ascending `sorted` (nearest rank). */
function quantile(sorted: readonly number[], q: number): number {
  return sorted[Math.max(0, Math.ceil(q * sorted.length) - 1)] ?? Number.NaN;
}

const round1 = (x: number) => Math.round(x * 10) / 10;

/**
 * Merges slices: requests/s and latencies over the summed measured windows; errors and non-2xx over
 * the whole slices; `p99_with_ramp_ms` from autocannon's own merged histograms (connection ramps
 * included).
 */
async function merge(url: string, connections: number, slices: Slice[]): Promise<Measured> {
  const autocannon = await loadAutocannon();
  const agg = autocannon.aggregateResult(slices.map((s) => s.raw), { url, connections });
  const latencies = slices.flatMap((s) => s.latencies).sort((a, b) => a - b);
  const seconds = slices.reduce((n, s) => n + s.seconds, 0);
  return {
    rps: latencies.length / seconds,
    mean_ms: round1(latencies.reduce((n, x) => n + x, 0) / latencies.length),
    p50_ms: round1(quantile(latencies, 0.5)),
    p99_ms: round1(quantile(latencies, 0.99)),
    p99_with_ramp_ms: agg.latency.p99,
    ramp_ms: Math.max(...slices.map((s) => s.rampMs)),
    non2xx: agg.non2xx,
    errors: agg.errors + agg.timeouts,
    requests: latencies.length,
  };
}

export default async function bench(args: string[]): Promise<Record<string, unknown>> {
  const opt = (name: string, dflt: number) => {
    const i = args.indexOf(`--${name}`);
    return i >= 0 ? Number(args[i + 1]) : dflt;
  };
  const duration = opt('duration', 10);
  const connections = opt('connections', 100);
  const rate = opt('rate', 1000);
  const phases = opt('phases', 100);

  const { fixtureData, publish, writeSnapshot } = await import('../test/api/fixtures.ts');
  const { createKey } = await import('../api/auth/keys.ts');
  const dataDir = await mkdtemp(path.join(tmpdir(), 'quorum-bench-api-'));
  const snap = 'r20250402T000000Z-bench';
  await writeSnapshot(dataDir, snap, fixtureData(1));
  await publish(dataDir, snap);
  const { key } = createKey(dataDir, { name: 'bench', plan: 'api' });

  const bare = await childServer('bare', dataDir);
  const project = await childServer('project', dataDir);
  try {
    const keyed = { 'X-API-Key': key };
    // sanity: the project endpoint answers 200 with the key and the cache is warm
    const probe = await fetch(project.url + ENDPOINT, { headers: keyed });
    if (probe.status !== 200 || !probe.headers.get('etag')) throw new Error(`project endpoint answered ${probe.status}`);
    const bareProbe = await fetch(bare.url + ENDPOINT);
    if ((await bareProbe.text()).length !== (await probe.text()).length) throw new Error('bare and project bodies differ');

    console.error('warm-up (2 s each)…');
    await slice(bare.url + ENDPOINT, {}, 2, connections);
    await slice(project.url + ENDPOINT, keyed, 2, connections);
    // Interleaved slices (bare, project, project, bare, ...): background load on a shared machine
    // then falls on both sides alike. Each side gets `duration` seconds in total.
    const rounds = Math.max(1, Math.round(duration / 2));
    const sliceSeconds = duration / rounds;
    const bareSlices: Slice[] = [];
    const projectSlices: Slice[] = [];
    console.error(`measuring: ${rounds} interleaved slices of ${sliceSeconds} s per side, ${connections} connections…`);
    for (let r = 0; r < rounds; r++) {
      const order = r % 2 === 0 ? (['bare', 'project'] as const) : (['project', 'bare'] as const);
      for (const side of order) {
        if (side === 'bare') bareSlices.push(await slice(bare.url + ENDPOINT, {}, sliceSeconds, connections));
        else projectSlices.push(await slice(project.url + ENDPOINT, keyed, sliceSeconds, connections));
      }
    }
    const b = await merge(bare.url + ENDPOINT, connections, bareSlices);
    const p = await merge(project.url + ENDPOINT, connections, projectSlices);
    const line = (m: Measured) =>
      `${Math.round(m.rps)} req/s, mean ${m.mean_ms} ms, p99 ${m.p99_ms} ms (with connection ramps ${m.p99_with_ramp_ms} ms, longest ramp ${m.ramp_ms} ms)`;
    console.error(`  bare Express 5 JSON handler: ${line(b)}`);
    console.error(`  project (full stack, cached summary): ${line(p)}, non-2xx ${p.non2xx}, errors ${p.errors}`);
    if (p.non2xx > 0 || p.errors > 0) throw new Error(`project run had ${p.non2xx} non-2xx answers and ${p.errors} errors`);

    // Fixed offered load: two interleaved halves per side, phased (the headline) and aligned.
    const half = duration / 2;
    const fixedLine = (m: FixedMeasured) =>
      `${m.achieved_rps} req/s achieved, p50 ${m.p50_ms} ms, p99 ${m.p99_ms} ms (autocannon ${m.p99_autocannon_ms} ms), max ${m.max_ms} ms`;
    const fixedSides = async (ph: number) => {
      console.error(`fixed rate: ${rate} req/s over ${connections} connections in ${ph} phase(s), ${duration} s per side…`);
      const bareRuns: FixedRun[] = [];
      const projectRuns: FixedRun[] = [];
      for (const side of ['bare', 'project', 'project', 'bare'] as const) {
        if (side === 'bare') bareRuns.push(await fixedRate(bare.url + ENDPOINT, {}, half, connections, rate, ph));
        else projectRuns.push(await fixedRate(project.url + ENDPOINT, keyed, half, connections, rate, ph));
      }
      const bm = await mergeFixed(bare.url + ENDPOINT, connections, duration, bareRuns);
      const pm = await mergeFixed(project.url + ENDPOINT, connections, duration, projectRuns);
      console.error(`  bare at ${rate}/s: ${fixedLine(bm)}`);
      console.error(`  project at ${rate}/s: ${fixedLine(pm)}, non-2xx ${pm.non2xx}, errors ${pm.errors}`);
      if (pm.non2xx > 0 || pm.errors > 0) throw new Error(`fixed-rate project run had ${pm.non2xx} non-2xx answers and ${pm.errors} errors`);
      return { bm, pm };
    };
    const { bm: bf, pm: pf } = await fixedSides(phases);
    const { bm: bfa, pm: pfa } = await fixedSides(1);

    const ratio = Math.round((p.rps / b.rps) * 1000) / 1000;
    /** Little's law: the mean latency of `connections` closed-loop connections at `rps`. */
    const little = (rps: number) => Math.round((1000 * connections * 10) / rps) / 10;
    return {
      ratio,
      fixed_rate: rate,
      fixed_p99_ms: pf.p99_ms,
      bare_fixed_p99_ms: bf.p99_ms,
      fixed_p50_ms: pf.p50_ms,
      bare_fixed_p50_ms: bf.p50_ms,
      fixed_max_ms: pf.max_ms,
      bare_fixed_max_ms: bf.max_ms,
      fixed_p99_autocannon_ms: pf.p99_autocannon_ms,
      bare_fixed_p99_autocannon_ms: bf.p99_autocannon_ms,
      fixed_achieved_rps: pf.achieved_rps,
      bare_fixed_achieved_rps: bf.achieved_rps,
      fixed_phases: phases,
      fixed_aligned_p99_ms: pfa.p99_ms,
      bare_fixed_aligned_p99_ms: bfa.p99_ms,
      p99_ms: p.p99_ms,
      project_rps: Math.round(p.rps),
      bare_rps: Math.round(b.rps),
      project_p50_ms: p.p50_ms,
      project_mean_ms: p.mean_ms,
      project_little_ms: little(p.rps),
      bare_p50_ms: b.p50_ms,
      bare_mean_ms: b.mean_ms,
      bare_little_ms: little(b.rps),
      bare_p99_ms: b.p99_ms,
      p99_with_ramp_ms: p.p99_with_ramp_ms,
      bare_p99_with_ramp_ms: b.p99_with_ramp_ms,
      ramp_ms: p.ramp_ms,
      bare_ramp_ms: b.ramp_ms,
      requests: p.requests,
      connections,
      duration_s: duration,
      pass: ratio >= 0.75 && pf.p99_ms <= 15 && pf.p99_ms <= 1.5 * bf.p99_ms,
    };
  } finally {
    await stop(project.child);
    await stop(bare.child);
    await rm(dataDir, { recursive: true, force: true });
  }
}

// ---------------------------------------------------------------------------------------------
// Child mode: `node --import tsx bench/api.ts --serve bare|project <dataDir>` prints `READY <url>`.

async function serveChild(mode: string, dataDir: string): Promise<void> {
  if (mode === 'bare') {
    const { default: express } = await import('express');
    const { createServer } = await import('node:http');
    // the same body the project serves, answered by a plain JSON handler
    const { startServer } = await import('../api/server.ts');
    const { silentLogger } = await import('../api/logging/logger.ts');
    const tmp = await startServer({ port: 0, dataDir, logger: silentLogger(), pollMs: 0, schedule: null, limits: { anonymousPerHour: null } });
    const body = await (await fetch(tmp.url + ENDPOINT)).json();
    await tmp.close();
    const app = express();
    app.get(ENDPOINT, (_req, res) => {
      res.json(body);
    });
    const server = createServer(app).listen(0, '127.0.0.1', () => {
      const a = server.address() as { port: number };
      console.log(`READY http://127.0.0.1:${a.port}`);
    });
    process.on('SIGTERM', () => server.close(() => process.exit(0)));
    return;
  }
  const { pino } = await import('pino');
  const { createLogger } = await import('../api/logging/logger.ts');
  const { startServer } = await import('../api/server.ts');
  const logFile = path.join(dataDir, 'bench-requests.log');
  const logger = createLogger('info', pino.destination({ dest: logFile, sync: false, minLength: 4096 }));
  const server = await startServer({
    port: 0,
    dataDir,
    logger,
    pollMs: 2000,
    schedule: '0 */4 * * *',
    limits: { apiPerDay: 1_000_000_000 },
  });
  console.log(`READY ${server.url}`);
  process.on('SIGTERM', () => {
    void server.close().then(() => process.exit(0));
  });
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href && process.argv[2] === '--serve') {
  await serveChild(process.argv[3]!, process.argv[4]!);
}
