/**
 * Runs the model simulator standalone:
 *   tsx pipeline/simulator/main.ts [--port N] [--host 127.0.0.1] [--latency MS]
 * Prints the base URL (ending in /v1) and serves until SIGINT/SIGTERM.
 */
import { parseArgs } from 'node:util';
import { startSimulator } from './server.ts';

const { values } = parseArgs({
  options: {
    port: { type: 'string', default: '0' },
    host: { type: 'string', default: '127.0.0.1' },
    latency: { type: 'string', default: '0' },
    help: { type: 'boolean', short: 'h', default: false },
  },
});

if (values.help) {
  console.log('usage: tsx pipeline/simulator/main.ts [--port N] [--host 127.0.0.1] [--latency MS]');
  process.exit(0);
}

const port = Number(values.port);
const latencyMs = Number(values.latency);
if (!Number.isInteger(port) || port < 0 || port > 65535) {
  console.error(`--port: not a port number: ${values.port}`);
  process.exit(1);
}
if (!Number.isFinite(latencyMs) || latencyMs < 0) {
  console.error(`--latency: not a non-negative number of milliseconds: ${values.latency}`);
  process.exit(1);
}

const sim = await startSimulator({ port, host: values.host, latencyMs });
console.log(`Quorum model simulator listening at ${sim.url} (simulated answers; not a forecaster)`);

let closing = false;
const shutdown = (signal: string) => {
  if (closing) return;
  closing = true;
  const s = sim.stats();
  console.log(`${signal}: closing after ${s.requests} requests`);
  sim.close().then(() => process.exit(0));
};
process.on('SIGINT', () => shutdown('SIGINT'));
process.on('SIGTERM', () => shutdown('SIGTERM'));
