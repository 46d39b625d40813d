/**
 * What every browser test file starts: a real `quorum serve` (its own process, port 0, loopback)
 * and Debian's Chromium (puppeteer-core), and how each is stopped. One definition, so the four
 * browser test files wait for a server the same way (listening, and its first reads cached: a
 * first visit to a started server, not one racing its start-up).
 */
import type { ChildProcess } from 'node:child_process';
import puppeteer, { type Browser } from 'puppeteer-core';
import { expect } from 'vitest';
import { quorumProcess } from '../helpers/cli.ts';
import { parseLogLines } from '../pipeline/log-lines.ts';

/** Chromium: QUORUM_CHROMIUM, or Debian's (`.ci/run` installs it). */
export const CHROMIUM = process.env.QUORUM_CHROMIUM ?? '/usr/bin/chromium';

/** A started `quorum serve`: where it listens, its process, and its log so far (stderr). */
export interface Served { url: string; child: ChildProcess; log: () => string }

/**
 * `quorum serve` with `env` (QUORUM_DATA_DIR and the rest) on 127.0.0.1, port 0, logging at info;
 * resolves once it listens and, with `primed`, has cached its first reads (a directory with no
 * snapshot yet primes nothing: `primed` false waits for the listening line alone).
 */
export async function serveQuorum(env: Record<string, string>, primed = true): Promise<Served> {
  const child = quorumProcess(['serve'], { PORT: '0', HOST: '127.0.0.1', LOG_LEVEL: 'info', ...env });
  let stderr = '';
  child.stderr!.on('data', (d) => (stderr += d));
  child.stdout!.resume();
  const deadline = Date.now() + 60_000;
  const line = (msg: RegExp) => parseLogLines(stderr).find((l) => msg.test(String(l.msg)));
  while (!(line(/listening/) && (!primed || line(/first reads cached/))) && child.exitCode === null && Date.now() < deadline) {
    await new Promise((r) => setTimeout(r, 50));
  }
  expect(line(/listening/), stderr).toBeDefined();
  if (primed) expect(line(/first reads cached/), stderr).toBeDefined();
  return { url: String(line(/listening/)!.address), child, log: () => stderr };
}

/** Stops a served process with SIGTERM and waits for it to exit (at once when it already has). */
export async function stopQuorum(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise((r) => child.once('exit', r));
  child.kill('SIGTERM');
  await exited;
}

/** Headless Chromium with its own profile directory and nothing running in the background. */
export function launchChromium(profile: string): Promise<Browser> {
  return puppeteer.launch({
    executablePath: CHROMIUM,
    headless: true,
    args: ['--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking',
      '--disable-component-update', '--disable-sync', `--user-data-dir=${profile}`],
  });
}
