/**
 * Shared helpers of the API product tests: fixture data dir + server, fetch wrapper, problem
 * assertions, real key creation through the key store and through the `quorum keys` CLI.
 */
import { spawn } from 'node:child_process';
import path from 'node:path';
import { Writable } from 'node:stream';
import type { Logger } from 'pino';
import { expect } from 'vitest';
import { createKey } from '../../api/auth/keys.ts';
import type { KeyPlan, Scope } from '../../api/auth/plans.ts';
import { createLogger, silentLogger } from '../../api/logging/logger.ts';
import { startServer, type ServerHandle, type StartServerOptions } from '../../api/server.ts';
import { FEED, fixtureData, publish, tempDataDir, writeSnapshot, type FixtureData } from './fixtures.ts';

export const SNAP = 'r20250402T000000Z-aa01';
const ROOT = path.resolve(import.meta.dirname, '..', '..');

/** A data directory with `data` published as snapshot SNAP (`memory`: see tempDataDir). */
export async function fixtureDir(data: FixtureData = fixtureData(1), opts: { memory?: boolean } = {}): Promise<{ dir: string; cleanup: () => Promise<void> }> {
  const tmp = await tempDataDir(opts);
  await writeSnapshot(tmp.dir, SNAP, data);
  await publish(tmp.dir, SNAP);
  return tmp;
}

export function serve(dir: string, opts: Partial<StartServerOptions> = {}): Promise<ServerHandle> {
  return startServer({
    port: 0,
    host: '127.0.0.1',
    dataDir: dir,
    logger: silentLogger(),
    pollMs: 0,
    schedule: null,
    keyRecheckMs: 0, // tests create keys and use them at once
    limits: { anonymousPerHour: null, proPerDay: null, apiPerDay: null, enterprisePerDay: null, probabilityPerDay: null },
    // Off here: most tests start a server for a few requests, and warming (the OpenAPI document, the
    // first reads) would cost each of them CPU. test/api/cache-priming.test.ts and the browser tests
    // run with it on, as `quorum serve` does.
    primeCache: false,
    ...opts,
  });
}

export interface Got {
  res: Response;
  body: any;
  text: string;
}

/** The body as text; an SSE stream (GET /api/stream/) never ends: its status and headers are the answer (''). */
export async function bodyText(res: Response): Promise<string> {
  if (res.headers.get('content-type')?.startsWith('text/event-stream')) {
    await res.body?.cancel();
    return '';
  }
  return res.text();
}

export async function get(server: Pick<ServerHandle, 'url'>, p: string, init?: RequestInit): Promise<Got> {
  const res = await fetch(server.url + p, init);
  const text = await bodyText(res);
  let body: any = text;
  try {
    body = text === '' ? null : JSON.parse(text);
  } catch {
    // not JSON
  }
  return { res, body, text };
}

export function expectProblem(got: Got, status: number, code: string): void {
  const { res, body } = got;
  expect(res.status, `${status} ${code}: ${got.text.slice(0, 300)}`).toBe(status);
  expect(res.headers.get('content-type')).toMatch(/^application\/problem\+json/);
  expect(body).toMatchObject({ status, code, type: `urn:quorum:problem:${code}` });
  expect(typeof body.title).toBe('string');
  expect(typeof body.detail).toBe('string');
  expect(JSON.stringify(body)).not.toMatch(/\bat .*\.(ts|js):\d+/);
  expect(body.stack).toBeUndefined();
}

export function newKey(dir: string, plan: KeyPlan, scopes: Scope[] = [], name = `test ${plan}`): { key: string; id: string } {
  const { key, record } = createKey(dir, { name, plan, scopes });
  return { key, id: record.id };
}

/** Runs the real CLI: `node pipeline/cli/quorum.cjs ...args` with QUORUM_DATA_DIR=dir (async: servers keep serving). */
export function cli(dir: string, ...args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [path.join(ROOT, 'pipeline/cli/quorum.cjs'), ...args], {
      cwd: ROOT,
      env: { ...process.env, QUORUM_DATA_DIR: dir, LOG_LEVEL: 'silent' },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d) => (stdout += String(d)));
    child.stderr.on('data', (d) => (stderr += String(d)));
    const timer = setTimeout(() => child.kill('SIGKILL'), 60_000);
    child.on('error', reject);
    child.on('close', (code) => {
      clearTimeout(timer);
      resolve({ code: code ?? -1, stdout, stderr });
    });
  });
}

/** A stream that appends every chunk written to it to `lines` (a logger's destination). */
export function linesStream(lines: string[]): Writable {
  return new Writable({
    write(chunk, _enc, cb) {
      lines.push(String(chunk));
      cb();
    },
  });
}

/** A pino logger writing into `lines` (to check what gets logged). */
export function capturingLogger(lines: string[]): Logger {
  return createLogger('debug', linesStream(lines));
}

/** Path values that exist in the fixture snapshot with feeds (withFeeds), for sweeps of every route. */
export const FIXTURE_PATH_VALUES = { market_id: FEED.a, question_id: FEED.a, lang: 'en', category: 'politics' };

export const auth = {
  x: (key: string): RequestInit => ({ headers: { 'X-API-Key': key } }),
  bearer: (key: string): RequestInit => ({ headers: { Authorization: `Bearer ${key}` } }),
};

export const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/**
 * The most decimals of any number in `v` (nested arrays and objects included; a number printed in
 * exponent form, like 5.5e-17, counts as 99): published figures carry at most 6 (percentages 2).
 */
export function maxDecimals(v: unknown): number {
  if (typeof v === 'number') {
    const s = String(v);
    return s.includes('e') ? 99 : (s.split('.')[1]?.length ?? 0);
  }
  if (Array.isArray(v)) return Math.max(0, ...v.map(maxDecimals));
  if (v !== null && typeof v === 'object') return Math.max(0, ...Object.values(v).map(maxDecimals));
  return 0;
}
