/**
 * End to end, on the real bundled sample: the real CLI imports it, runs the pipeline dated at each
 * round's freeze time and now (against the real model simulator through the real openai SDK), and
 * the real API (`quorum serve`, a process of its own) serves the published snapshot over HTTP.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { join } from 'node:path';
import { DuckDBInstance } from '@duckdb/node-api';
import type { ChildProcess } from 'node:child_process';
import { quorum, quorumProcess, REPO, serveOutcome } from '../helpers/cli.ts';
import { tempDir } from '../helpers/temp-dir.ts';
import { readCurrent } from '../../pipeline/warehouse/snapshot.ts';
import { rawGlob } from '../../pipeline/warehouse/layout.ts';
import { createKey } from '../../api/auth/keys.ts';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';

const tmp = tempDir('quorum-e2e-');
const env = { QUORUM_DATA_DIR: tmp.dir };
const sample = join(REPO, 'data', 'sample', 'forecastbench');
/**
 * The API as the CLI serves it: `quorum serve` on the data directory, rather than api/server.ts
 * started in this process (loading the API's sources into the test process cost more CPU, some
 * 2 s, than the prebuilt CLI's whole serve).
 */
let server: { url: string; child: ChildProcess; closed: Promise<unknown> } | undefined;
const keys: Record<'pro' | 'api' | 'enterprise', string> = { pro: '', api: '', enterprise: '' };

async function rawCount(table: 'questions' | 'forecasts' | 'resolutions' | 'market_prices', distinctKey?: string) {
  const db = await DuckDBInstance.create(':memory:');
  const conn = await db.connect();
  const what = distinctKey ? `count(DISTINCT ${distinctKey})` : 'count(*)';
  const r = await conn.runAndReadAll(`SELECT ${what}::INTEGER AS n FROM read_parquet($1, hive_partitioning=false)`, [
    rawGlob(tmp.dir, table),
  ]);
  conn.closeSync();
  db.closeSync();
  return r.getRowObjectsJS()[0]!.n as number;
}

beforeAll(async () => {
  const imported = quorum(['import', 'forecastbench', sample], env);
  expect(imported.stderr).toBe('');
  expect(imported.status).toBe(0);
  for (const asOf of ['2025-10-16T00:00:00Z', '2026-03-06T00:00:00Z']) {
    const run = quorum(['run', '--as-of', asOf], env);
    expect(run.status, run.stderr).toBe(0);
  }
  const now = quorum(['run'], env);
  expect(now.status, now.stderr).toBe(0);
  for (const plan of ['pro', 'api', 'enterprise'] as const) keys[plan] = createKey(tmp.dir, { name: `e2e ${plan}`, plan, scopes: [] }).key;
  const child = quorumProcess(['serve'], { ...env, HOST: '127.0.0.1', PORT: '0' });
  const closed = new Promise((resolve) => child.on('close', resolve));
  const { url, stderr } = await serveOutcome(child);
  if (!url) throw new Error(`quorum serve exited: ${stderr}`);
  server = { url, child, closed };
}, 600_000);

afterAll(async () => {
  if (server) {
    server.child.kill('SIGTERM');
    await server.closed;
  }
  tmp.cleanup();
});

describe('the bundled sample, end to end', () => {
  it('imports idempotently: importing the same files again adds nothing', async () => {
    const before = await rawCount('questions');
    const again = quorum(['import', 'forecastbench', sample], env);
    expect(again.status).toBe(0);
    const written = JSON.parse(again.stdout).written as Record<string, { written: number }>;
    expect(Object.values(written).every((t) => t.written === 0)).toBe(true);
    expect(await rawCount('questions')).toBe(before);
    // one row per question and version (a ForecastBench round whose text changed is a version
    // dated at its freeze time), none twice
    expect(await rawCount('questions', '(question_id, ingested_at)')).toBe(before);
  });

  it('recorded simulated forecasts for every run, each (run, question, model, mode, condition) once', async () => {
    const total = await rawCount('forecasts');
    // condition: a scenario's conditional forecasts of a question (issue 13) are other rows
    const distinct = await rawCount('forecasts', '(run_id, question_id, model, mode, condition)');
    expect(total).toBeGreaterThan(1000);
    expect(distinct).toBe(total);
  });

  it('published a snapshot the API serves, with real outcomes scored', async () => {
    const id = readCurrent(tmp.dir);
    expect(id).not.toBeNull();
    const res = await fetch(`${server!.url}/api/predictions/accuracy`);
    expect(res.status).toBe(200);
    expect(res.headers.get('x-snapshot')).toBe(id);
    const body = (await res.json()) as Record<string, any>;
    expect(body.total_resolved).toBeGreaterThan(100);
    expect(body.accuracy_pct).toBeGreaterThan(0);
    expect(body.accuracy_pct).toBeLessThanOrEqual(100);
    for (const v of [body.brier.ai, body.brier.market]) {
      expect(v).toBeGreaterThanOrEqual(0);
      expect(v).toBeLessThanOrEqual(1);
    }
    expect(body.ai_vs_market.n).toBeGreaterThan(0);
    expect(body.by_category.length).toBeGreaterThan(0);
    expect(body.by_model.map((m: { key: string }) => m.key).sort()).toHaveLength(4);
  });

  it('lists resolved predictions with venue-qualified ids, provenance and both errors', async () => {
    const res = await fetch(`${server!.url}/api/predictions/resolved/?limit=5`);
    expect(res.status).toBe(200);
    const body = (await res.json()) as Record<string, any>;
    const items = body[Object.keys(body).find((k) => Array.isArray(body[k]))!] as Record<string, any>[];
    expect(items).toHaveLength(5);
    for (const item of items) {
      expect(item.question_id).toMatch(/^(polymarket|manifold|metaculus|infer):/);
      expect([0, 1]).toContain(item.outcome);
      // Both figures are published to 6 decimals (issue 9 §12), so they agree to within 1e-6.
      expect(Math.abs(item.ai_error - (item.consensus - item.outcome) ** 2)).toBeLessThanOrEqual(1.0000001e-6);
      expect(item.ai_error).toBe(Math.round(item.ai_error * 1e6) / 1e6);
      expect(item.source.slug).toBe(item.venue);
      expect(item.providers).toContain('simulated');
    }
  });

  it('serves the calibration summary', async () => {
    const res = await fetch(`${server!.url}/api/events/accuracy/`);
    expect(res.status).toBe(200);
  });

  it('exports with real keys: anonymous 401, pro CSV capped, pro JSON 403 naming api, api Parquet complete, enterprise raw forecasts', async () => {
    const url = (path: string) => `${server!.url}${path}`;
    expect((await fetch(url('/api/export/resolved/?output=csv'))).status).toBe(401);

    const pro = await fetch(url('/api/export/resolved/?output=csv&limit=100000'), { headers: { 'X-API-Key': keys.pro } });
    expect(pro.status).toBe(200);
    expect(pro.headers.get('content-disposition')).toMatch(/attachment; filename="quorum-resolved-/);
    expect(pro.headers.get('x-export-row-cap')).toBe('10000');
    const csv = (await pro.text()).trim().split('\n');
    const resolved = (await (await fetch(url('/api/predictions/resolved?limit=1'))).json()) as { total: number };
    expect(csv.length - 1).toBe(resolved.total); // header + every resolved prediction (under the cap)

    const json = await fetch(url('/api/export/resolved/?output=json'), { headers: { authorization: `Bearer ${keys.pro}` } });
    expect(json.status).toBe(403);
    expect(((await json.json()) as { detail: string }).detail).toMatch(/api/);

    const parquet = await fetch(url('/api/export/resolved/?output=parquet'), { headers: { 'X-API-Key': keys.api } });
    expect(parquet.status).toBe(200);
    const dir = mkdtempSync(join(tmpdir(), 'quorum-e2e-export-'));
    try {
      const file = join(dir, 'resolved.parquet');
      writeFileSync(file, Buffer.from(await parquet.arrayBuffer()));
      const db = await DuckDBInstance.create(':memory:');
      const conn = await db.connect();
      const r = await conn.runAndReadAll('SELECT count(*)::INTEGER AS n FROM read_parquet($1)', [file]);
      expect(r.getRowObjectsJS()[0]!.n).toBe(resolved.total);
      conn.closeSync();
      db.closeSync();
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }

    expect((await fetch(url('/api/export/forecasts/?output=jsonl&limit=3'), { headers: { 'X-API-Key': keys.api } })).status).toBe(403);
    const raw = await fetch(url('/api/export/forecasts/?output=jsonl&limit=3'), { headers: { 'X-API-Key': keys.enterprise } });
    expect(raw.status).toBe(200);
    const lines = (await raw.text()).trim().split('\n').map((l) => JSON.parse(l) as { reasoning: string; provider: string });
    expect(lines).toHaveLength(3);
    for (const l of lines) {
      expect(l.reasoning.length).toBeGreaterThan(0);
      expect(l.provider).toBe('simulated');
    }
  });

  it('the raw forecasts export holds the forecasts the snapshot was derived from, not those written since', async () => {
    const exportRunIds = async () => {
      const r = await fetch(`${server!.url}/api/export/forecasts/?output=jsonl`, { headers: { 'X-API-Key': keys.enterprise } });
      expect(r.status).toBe(200);
      return (await r.text()).trim().split('\n').map((l) => (JSON.parse(l) as { run_id: string }).run_id);
    };
    const before = await exportRunIds();
    // What a run dated in the past leaves when it is killed before publishing: a raw forecasts part
    // (QA: its 2,412 rows were in the current snapshot's export, under that snapshot's name).
    const killed = 'r20260301T000000Z-killed01';
    const partDir = join(tmp.dir, 'raw', 'forecasts', 'run_date=2026-03-01', `run_id=${killed}`);
    mkdirSync(partDir, { recursive: true });
    const db = await DuckDBInstance.create(':memory:');
    const conn = await db.connect();
    try {
      await conn.run(
        `COPY (SELECT * REPLACE ('${killed}' AS run_id, TIMESTAMP '2026-03-01' AS created_at) FROM read_parquet($1, hive_partitioning = false) LIMIT 40) ` +
          `TO '${join(partDir, 'part-0.parquet')}' (FORMAT parquet)`,
        [rawGlob(tmp.dir, 'forecasts')],
      );
    } finally {
      conn.closeSync();
      db.closeSync();
    }
    try {
      const after = await exportRunIds();
      expect(after).not.toContain(killed);
      expect(after).toEqual(before);
    } finally {
      rmSync(partDir, { recursive: true, force: true });
    }
  });
});
