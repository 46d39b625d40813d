/**
 * Each exported table has its own route id (`export.<table>`) in the per-key usage
 * (`/api/usage/`), the request log and the Prometheus metrics, through the real app with real keys
 * (QA: six tables exported, all of it counted as `export.predictions`). The ids are bounded to the
 * known tables: any other name is `export.unknown`, never the raw path segment; a path that is not
 * the export route at all is `unmatched`, counted once.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ServerHandle } from '../../api/server.ts';
import { EXPORT_TABLES } from '../../api/export/tables.ts';
import { auth, capturingLogger, fixtureDir, get, newKey, serve } from './helpers.ts';

describe('export route ids', () => {
  let dir: string;
  let cleanup: () => Promise<void>;
  let server: ServerHandle;
  const lines: string[] = [];

  beforeAll(async () => {
    ({ dir, cleanup } = await fixtureDir());
    server = await serve(dir, { logger: capturingLogger(lines) });
  });
  afterAll(async () => {
    await server?.close();
    await cleanup?.();
  });

  it('usage, the request log and the metrics name each exported table; other names are bounded', async () => {
    const { key } = newKey(dir, 'enterprise');
    const expected: Record<string, number> = {};
    for (const table of EXPORT_TABLES) {
      // Whatever the answer (a table the fixture lacks is a 503 not_ready), the route is the table's.
      const r = await get(server, `/api/export/${table}/?limit=2`, auth.x(key));
      expect([200, 503], `${table}: ${r.text.slice(0, 200)}`).toContain(r.res.status);
      expected[`export.${table}`] = 1;
    }
    // HEAD counts like GET.
    expect((await fetch(`${server.url}/api/export/resolved?limit=1`, { method: 'HEAD', headers: { 'X-API-Key': key } })).status).toBe(200);
    expected['export.resolved'] = 2;
    // Names that are no table: one bounded id, whatever the name.
    for (const name of ['nope', 'x' + 'y'.repeat(200), '..%2Fetc', 'predictions%00']) {
      expect((await get(server, `/api/export/${name}`, auth.x(key))).res.status, name).toBe(404);
    }
    expected['export.unknown'] = 4;
    // Not the export route: unmatched, counted once (not also as an export).
    for (const p of ['/api/export/', '/api/export/resolved/extra']) {
      expect((await get(server, p, auth.x(key))).res.status, p).toBe(404);
    }
    expected.unmatched = 2;

    const usage = await get(server, '/api/usage/', auth.x(key));
    expect(usage.res.status).toBe(200);
    expect(usage.body.routes).toEqual(expected);

    await new Promise((r) => setTimeout(r, 20)); // the request lines are written on 'close'
    const logged = lines
      .map((l) => JSON.parse(l) as { msg?: string; path?: string; route?: string | null })
      .filter((l) => l.msg === 'request' && l.path?.startsWith('/api/export/'));
    expect(logged.find((l) => l.path === '/api/export/scores/')?.route).toBe('export.scores');
    expect(logged.find((l) => l.path === '/api/export/track_records/')?.route).toBe('export.track_records');
    expect(logged.find((l) => l.path === '/api/export/nope')?.route).toBe('export.unknown');
    // (the request log writes no route, null, for a path no route answered)
    const routes = new Set(logged.map((l) => l.route ?? 'unmatched'));
    expect([...routes].sort()).toEqual([...Object.keys(expected)].sort());

    const metrics = await get(server, '/metrics');
    expect(metrics.res.status).toBe(200);
    const labelled = [...metrics.text.matchAll(/^quorum_http_requests_total\{route="(export\.[^"]*)",method="(\w+)",status="(\d+)"\} (\d+)/gm)]
      .map((m) => ({ route: m[1]!, method: m[2]!, status: m[3]!, n: Number(m[4]) }));
    const byRoute = new Map<string, number>();
    for (const l of labelled) byRoute.set(l.route, (byRoute.get(l.route) ?? 0) + l.n);
    expect(Object.fromEntries(byRoute)).toEqual(Object.fromEntries(Object.entries(expected).filter(([id]) => id.startsWith('export.'))));
    expect(labelled.find((l) => l.route === 'export.resolved' && l.method === 'HEAD')?.status).toBe('200');
  });

  it('OPTIONS and other methods on an export path are labelled with its table too', async () => {
    lines.length = 0;
    expect((await fetch(`${server.url}/api/export/claims/`, { method: 'OPTIONS' })).status).toBe(204);
    expect((await fetch(`${server.url}/api/export/claims/`, { method: 'DELETE' })).status).toBe(405);
    await new Promise((r) => setTimeout(r, 20));
    const logged = lines.map((l) => JSON.parse(l) as { msg?: string; route?: string | null }).filter((l) => l.msg === 'request');
    expect(logged.map((l) => l.route)).toEqual(['export.claims', 'export.claims']);
  });
  it('a problem raised before the export route ran (a refused key, a table name that does not decode) is labelled with its table, and a keyed one counted in usage (QA: export.predictions in the log and metrics; uncounted)', async () => {
    lines.length = 0;
    const { key } = newKey(dir, 'enterprise');
    // the front door's 401 (an unknown key) on the resolved export
    expect((await get(server, '/api/export/resolved/', auth.x('qrm_' + 'x'.repeat(32)))).res.status).toBe(401);
    // a table name whose percent-encoding does not decode: the router refuses it before the route
    expect((await get(server, '/api/export/%FF', auth.x(key))).res.status).toBe(400);
    // the same on any route with a path parameter: charged, so counted under its route
    expect((await get(server, '/api/predictions/%FF', auth.x(key))).res.status).toBe(400);
    await new Promise((r) => setTimeout(r, 20));
    const logged = lines.map((l) => JSON.parse(l) as { msg?: string; route?: string | null }).filter((l) => l.msg === 'request');
    expect(logged.map((l) => l.route)).toEqual(['export.resolved', 'export.unknown', 'predictions.detail']);
    const usage = await get(server, '/api/usage/', auth.x(key));
    expect(usage.body.quota.used).toBe(2);
    expect(usage.body.routes).toEqual({ 'export.unknown': 1, 'predictions.detail': 1 });
  });
});
