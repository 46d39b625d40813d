/**
 * `npm run bench -- api [--duration 10] [--connections 100]`
 *
 * A cached summary endpoint (`GET /api/predictions/accuracy` with an `api` plan key in
 * X-API-Key) through the full middleware stack — request id + pino request log (to a file),
 * metrics, helmet, auth (SHA-256 + timingSafeEqual), quota accounting with durable usage, CORS,
 * entitlement, per-snapshot cache with ETag — against a bare Express 5 JSON handler answering the
 * same body, measured in the same run with autocannon (100 connections, 10 s per side, after a 2 s
 * warm-up). The 10 s are taken as 5 interleaved 2 s slices per side (bare, project, project,
 * bare, ...) so that background load on a shared machine falls on both alike; requests/s are over
 * the summed slice time and the latency percentiles come from the merged HDR histograms.
 * Each server runs in its own child process; autocannon runs in this one.
 * Result: { ratio: project rps / bare rps, p99_ms (project), ... }. Targets: ratio ≥ 0.7, p99 < 50 ms.
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
  p50_ms: number;
  p99_ms: number;
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

type Autocannon = ((o: Record<string, unknown>) => Promise<any>) & {
  aggregateResult: (results: unknown[], opts: Record<string, unknown>) => any;
};

async function loadAutocannon(): Promise<Autocannon> {
  return ((await import('autocannon' as string)) as { default: Autocannon }).default;
}

/** One slice of load; the raw (un-aggregated) result keeps the latency histogram. */
async function slice(url: string, headers: Record<string, string>, seconds: number, connections: number): Promise<any> {
  const autocannon = await loadAutocannon();
  return autocannon({ url, connections, duration: seconds, headers, pipelining: 1, skipAggregateResult: true });
}

/** Merges slices: requests/s over the summed slice time, latency percentiles from the merged histograms. */
async function merge(url: string, connections: number, slices: any[], seconds: number): Promise<Measured> {
  const autocannon = await loadAutocannon();
  const agg = autocannon.aggregateResult(slices, { url, connections });
  const completed = slices.reduce((s, r) => s + r.totalCompletedRequests, 0);
  return {
    rps: completed / seconds,
    p50_ms: agg.latency.p50,
    p99_ms: agg.latency.p99,
    non2xx: agg.non2xx,
    errors: agg.errors + agg.timeouts,
    requests: completed,
  };
}

export default async function bench(args: string[]): Promise<Record<string, unknown>> {
  const opt = (name: string, dflt: number) => {
    const i = args.indexOf(`--${name}`);
    return i >= 0 ? Number(args[i + 1]) : dflt;
  };
  const duration = opt('duration', 10);
  const connections = opt('connections', 100);

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
    const bareSlices: unknown[] = [];
    const projectSlices: unknown[] = [];
    console.error(`measuring: ${rounds} interleaved slices of ${sliceSeconds} s per side, ${connections} connections…`);
    for (let r = 0; r < rounds; r++) {
      const order = r % 2 === 0 ? (['bare', 'project'] as const) : (['project', 'bare'] as const);
      for (const side of order) {
        if (side === 'bare') bareSlices.push(await slice(bare.url + ENDPOINT, {}, sliceSeconds, connections));
        else projectSlices.push(await slice(project.url + ENDPOINT, keyed, sliceSeconds, connections));
      }
    }
    const b = await merge(bare.url + ENDPOINT, connections, bareSlices, duration);
    const p = await merge(project.url + ENDPOINT, connections, projectSlices, duration);
    console.error(`  bare Express 5 JSON handler: ${Math.round(b.rps)} req/s, p99 ${b.p99_ms} ms`);
    console.error(`  project (full stack, cached summary): ${Math.round(p.rps)} req/s, p99 ${p.p99_ms} ms, non-2xx ${p.non2xx}, errors ${p.errors}`);
    if (p.non2xx > 0 || p.errors > 0) throw new Error(`project run had ${p.non2xx} non-2xx answers and ${p.errors} errors`);

    const ratio = Math.round((p.rps / b.rps) * 1000) / 1000;
    return {
      ratio,
      p99_ms: p.p99_ms,
      project_rps: Math.round(p.rps),
      bare_rps: Math.round(b.rps),
      project_p50_ms: p.p50_ms,
      bare_p99_ms: b.p99_ms,
      requests: p.requests,
      connections,
      duration_s: duration,
      pass: ratio >= 0.7 && p.p99_ms < 50,
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
