/**
 * Runs the model simulator standalone:
 *   tsx pipeline/simulator/main.ts [--port N] [--host 127.0.0.1] [--latency MS] [--jitter MS]
 *                                  [--faults '<JSON rules>' | --faults @rules.json] [--seed N]
 * Fault rules default to `QUORUM_SIMULATOR_FAULTS` (same JSON; see server.ts for the kinds).
 * Prints the base URL (ending in /v1) and serves until SIGINT/SIGTERM; with `--json` the first
 * line is `{"url": "..."}` instead (for scripts and the fanout bench).
 */
import { readFileSync } from 'node:fs';
import { parseArgs } from 'node:util';
import { parseFaultRules, startSimulator, type FaultRule } from './server.ts';

const { values } = parseArgs({
  options: {
    port: { type: 'string', default: '0' },
    host: { type: 'string', default: '127.0.0.1' },
    latency: { type: 'string', default: '0' },
    jitter: { type: 'string', default: '0' },
    faults: { type: 'string' },
    seed: { type: 'string', default: '1' },
    json: { type: 'boolean', default: false },
    help: { type: 'boolean', short: 'h', default: false },
  },
});

const usage =
  'usage: tsx pipeline/simulator/main.ts [--port N] [--host 127.0.0.1] [--latency MS] [--jitter MS] ' +
  "[--faults '<JSON>' | --faults @file.json] [--seed N] [--json]";
if (values.help) {
  console.log(usage);
  process.exit(0);
}

function fail(message: string): never {
  console.error(message);
  process.exit(1);
}

const port = Number(values.port);
const latencyMs = Number(values.latency);
const jitterMs = Number(values.jitter);
const seed = Number(values.seed);
if (!Number.isInteger(port) || port < 0 || port > 65535) fail(`--port: not a port number: ${values.port}`);
if (!Number.isFinite(latencyMs) || latencyMs < 0) fail(`--latency: not a non-negative number of milliseconds: ${values.latency}`);
if (!Number.isFinite(jitterMs) || jitterMs < 0) fail(`--jitter: not a non-negative number of milliseconds: ${values.jitter}`);
if (!Number.isInteger(seed)) fail(`--seed: not an integer: ${values.seed}`);

let faults: FaultRule[] = [];
const faultText = values.faults ?? process.env.QUORUM_SIMULATOR_FAULTS;
if (faultText) {
  try {
    faults = parseFaultRules(faultText.startsWith('@') ? readFileSync(faultText.slice(1), 'utf8') : faultText);
  } catch (err) {
    fail((err as Error).message);
  }
}

const sim = await startSimulator({ port, host: values.host, latencyMs, jitterMs, faults, seed });
if (values.json) console.log(JSON.stringify({ url: sim.url, port: sim.port, pid: process.pid }));
else console.log(`Quorum model simulator listening at ${sim.url} (simulated answers; not a forecaster)`);

let closing = false;
const shutdown = (signal: string) => {
  if (closing) return;
  closing = true;
  const s = sim.stats();
  if (!values.json) console.log(`${signal}: closing after ${s.requests} requests`);
  sim.close().then(() => process.exit(0));
};
process.on('SIGINT', () => shutdown('SIGINT'));
process.on('SIGTERM', () => shutdown('SIGTERM'));
