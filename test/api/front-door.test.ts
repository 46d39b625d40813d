/**
 * The front door (issue 9, point 13; since issue 16 the dashboard's shell): `GET /` is an HTML page
 * within the helmet CSP (nothing from another origin, no inline executable script: one module
 * script (its charts chunk preloaded) and the styles from /dashboard/, the route-access table as non-executed JSON data) that
 * says what Quorum is and links the docs, the OpenAPI document, health and the endpoints; every
 * link on it answers; the favicon is served in both forms and no request of a browser's first
 * visit is a 404 in the request log. The dashboard itself is tested in a browser
 * (test/dashboard/dashboard.browser.test.ts).
 */
import { readFileSync } from 'node:fs';
import http from 'node:http';
import path from 'node:path';
import { gunzipSync } from 'node:zlib';
import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ServerHandle } from '../../api/server.ts';
import { DASHBOARD_DIST, buildDashboard } from '../../scripts/build-dashboard.ts';
import { fixtureDir, get, linesStream, serve } from './helpers.ts';

describe('GET / and the favicon', () => {
  let cleanup: () => Promise<void>;
  let server: ServerHandle;
  const lines: string[] = [];

  beforeAll(async () => {
    let dir: string;
    await buildDashboard();
    ({ dir, cleanup } = await fixtureDir());
    server = await serve(dir, { logger: pino({ level: 'info' }, linesStream(lines)) });
  });
  afterAll(async () => {
    await server?.close();
    await cleanup?.();
  });

  it('is an HTML page saying what Quorum is, with the main links', async () => {
    const r = await get(server, '/');
    expect(r.res.status).toBe(200);
    expect(r.res.headers.get('content-type')).toMatch(/^text\/html; charset=utf-8/);
    expect(r.text).toMatch(/^<!doctype html>/);
    expect(r.text).toContain('Quorum');
    expect(r.text).toMatch(/AI models/);
    expect(r.text).toMatch(/Brier/);
    const hrefs = [...r.text.matchAll(/href="([^"]*)"/g)].map((m) => m[1]!);
    for (const must of [
      '/docs', '/api/openapi.json', '/healthz', '/readyz', '/favicon.svg', '/api/predictions/accuracy',
      '/api/predictions/resolved', '/api/events/accuracy/', '/api/events/service_stats/', '/api/predictions/edges/',
    ]) {
      expect(hrefs, must).toContain(must);
    }
    // templated endpoints are named too
    expect(r.text).toContain('/api/predictions/{market_id}');
    expect(r.text).toContain('/api/events/lang/{lang}/');
    expect(r.text).toContain('public (beta)');
    expect(r.text).toMatch(/<td>POST<\/td><td><code>\/api\/probability\/<\/code>/);
  });

  it('has no external asset, no inline executable script and fits the CSP', async () => {
    const r = await get(server, '/');
    const scripts = [...r.text.matchAll(/<script([^>]*)>([\s\S]*?)<\/script>/gi)].map((m) => ({ attrs: m[1]!, body: m[2]! }));
    expect(scripts).toHaveLength(2);
    expect(scripts[0]).toEqual({ attrs: ' type="module" src="/dashboard/app.js"', body: '' });
    // data, not code: a browser never runs type="application/json"
    expect(scripts[1]!.attrs).toBe(' type="application/json" id="quorum-routes"');
    const access = JSON.parse(scripts[1]!.body) as { publicBeta: boolean; routes: Record<string, { path: string; plan: string | null }> };
    expect(access.publicBeta).toBe(true);
    expect(access.routes['predictions.accuracy']).toEqual({ path: '/api/predictions/accuracy', plan: null, keyRequired: false });
    expect(access.routes.leaderboard).toEqual({ path: '/api/leaderboard/', plan: 'api', keyRequired: false });
    expect(access.routes.usage).toMatchObject({ keyRequired: true });
    expect(r.text).not.toMatch(/\son[a-z]+=/i); // no inline event handlers
    expect(r.text).not.toMatch(/(?:src|href)="(?:[a-z]+:)?\/\//i); // nothing from another origin
    expect(r.text).not.toMatch(/@import|url\(/i);
    const csp = r.res.headers.get('content-security-policy') ?? '';
    expect(csp).toContain("default-src 'self'");
    expect(csp).toContain("script-src 'self'");
    expect(csp).toMatch(/style-src 'self' 'unsafe-inline'/);
    expect(r.text.length).toBeLessThan(30_000);
  });

  it('every link on the page answers (no 404)', async () => {
    const r = await get(server, '/');
    // the dashboard's own pages are #-links of this document; the others are requests
    const hrefs = [...new Set([...r.text.matchAll(/(?:href|src)="([^"]*)"/g)].map((m) => m[1]!))].filter((h) => !h.startsWith('#'));
    expect(hrefs.length).toBeGreaterThan(8);
    expect(hrefs).toContain('/dashboard/style.css');
    expect(hrefs).toContain('/dashboard/app.js');
    for (const href of hrefs) {
      const got = await get(server, href);
      expect([200, 401, 403], `${href}: ${got.res.status}`).toContain(got.res.status);
    }
  });

  it('preloads the charts chunk and serves only what the build wrote', async () => {
    const r = await get(server, '/');
    const preloaded = [...r.text.matchAll(/<link rel="modulepreload" href="([^"]+)">/g)].map((m) => m[1]!);
    const manifest = JSON.parse(readFileSync(path.join(DASHBOARD_DIST, 'manifest.json'), 'utf8')) as { preload: string[] };
    expect(manifest.preload.length).toBeGreaterThan(0);
    expect(preloaded).toEqual(manifest.preload.map((n) => `/dashboard/${n}`));
    // app.js reaches the chunks (by import()), so a preload is never a wasted request
    const app = await get(server, '/dashboard/app.js');
    for (const n of manifest.preload) {
      const chunk = await fetch(`${server.url}/dashboard/${n}`);
      expect(chunk.status, n).toBe(200);
      expect(chunk.headers.get('content-type')).toMatch(/^text\/javascript/);
      expect(chunk.headers.get('etag')).toMatch(/^"[\w-]{22}(-gzip)?"$/);
    }
    expect(manifest.preload.some((n) => app.text.includes(n))).toBe(true);
    // nothing but built .js/.css files: not the manifest, not a path out of dist, not a made-up chunk
    for (const bad of ['manifest.json', '..%2Fpackage.json', '%2E%2E%2F%2E%2E%2Fpackage.json', 'chunk-NOPE.js', 'app.js.map', '.hidden.js', 'a%00.js']) {
      const got = await fetch(`${server.url}/dashboard/${bad}`);
      expect(got.status, bad).toBe(404);
      expect(((await got.json()) as { code: string }).code, bad).toBe('not_found');
    }
  });

  it('serves the favicon as ICO and SVG; a first visit logs no 404', async () => {
    const ico = await fetch(`${server.url}/favicon.ico`);
    expect(ico.status).toBe(200);
    expect(ico.headers.get('content-type')).toBe('image/x-icon');
    const bytes = Buffer.from(await ico.arrayBuffer());
    expect(bytes.readUInt16LE(0)).toBe(0); // ICONDIR: reserved
    expect(bytes.readUInt16LE(2)).toBe(1); // type icon
    expect(bytes.readUInt16LE(4)).toBe(1); // one image
    expect(bytes.readUInt32LE(6 + 8) + bytes.readUInt32LE(6 + 12)).toBe(bytes.length); // size + offset = file
    const svg = await get(server, '/favicon.svg');
    expect(svg.res.status).toBe(200);
    expect(svg.res.headers.get('content-type')).toMatch(/^image\/svg\+xml/);
    expect(svg.text).toMatch(/^<svg /);

    lines.length = 0;
    const first = ['/', '/dashboard/style.css', '/dashboard/app.js', '/favicon.ico', '/favicon.svg', '/docs', '/docs/swagger-ui.css', '/api/openapi.json'];
    for (const p of first) {
      expect((await fetch(`${server.url}${p}`)).status, p).toBe(200);
    }
    await new Promise((r) => setTimeout(r, 20));
    const logged = lines.map((l) => JSON.parse(l) as { msg?: string; status?: number; path?: string }).filter((l) => l.msg === 'request');
    expect(logged.length).toBe(first.length);
    for (const l of logged) expect(l.status, l.path).toBe(200);
  });

  it('HEAD and OPTIONS work; other methods are 405', async () => {
    expect((await fetch(`${server.url}/`, { method: 'HEAD' })).status).toBe(200);
    expect((await fetch(`${server.url}/`, { method: 'OPTIONS' })).status).toBe(204);
    expect((await fetch(`${server.url}/`, { method: 'DELETE' })).status).toBe(405);
  });

  /** GET over node:http: the raw bytes as sent (fetch would decode gzip itself). */
  function raw(p: string, headers: Record<string, string>): Promise<{ status: number; headers: http.IncomingHttpHeaders; body: Buffer }> {
    return new Promise((resolve, reject) => {
      const req = http.get(`${server.url}${p}`, { headers, agent: false }, (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body: Buffer.concat(chunks) }));
        res.on('error', reject);
      });
      req.on('error', reject);
    });
  }

  it('dashboard files: Accept-Encoding q-values are honoured, each coding has its own ETag, Vary: Accept-Encoding', async () => {
    const plain = readFileSync(path.join(DASHBOARD_DIST, 'app.js'));
    const gz = await raw('/dashboard/app.js', { 'Accept-Encoding': 'gzip, deflate, br' });
    expect(gz.status).toBe(200);
    expect(gz.headers['content-encoding']).toBe('gzip');
    expect(gunzipSync(gz.body).equals(plain)).toBe(true);
    expect(gz.headers.vary).toMatch(/\bAccept-Encoding\b/i);

    // q=0 means "not acceptable" (QA: it was still sent gzipped); so does a preference for identity.
    for (const ae of ['gzip;q=0', 'gzip;q=0, identity', 'identity, gzip;q=0.5', 'br', '', 'GZIP;Q=0']) {
      const r = await raw('/dashboard/app.js', ae === '' ? {} : { 'Accept-Encoding': ae });
      expect(r.status, ae).toBe(200);
      expect(r.headers['content-encoding'], ae).toBeUndefined();
      expect(r.body.equals(plain), ae).toBe(true);
      expect(r.headers.vary, ae).toMatch(/\bAccept-Encoding\b/i);
      // The identity bytes and the gzip bytes are two representations: two strong tags.
      expect(r.headers.etag, ae).toMatch(/^"[\w-]{22}"$/);
      expect(r.headers.etag, ae).not.toBe(gz.headers.etag);
    }
    expect(gz.headers.etag).toMatch(/^"[\w-]{22}-gzip"$/);
    const identityTag = (await raw('/dashboard/app.js', { 'Accept-Encoding': 'identity' })).headers.etag!;

    // Revalidation matches the coding negotiated now: a tag of the other coding is no 304.
    const gz304 = await raw('/dashboard/app.js', { 'Accept-Encoding': 'gzip', 'If-None-Match': gz.headers.etag! });
    expect(gz304.status).toBe(304);
    expect(gz304.headers.etag).toBe(gz.headers.etag);
    expect(gz304.headers.vary).toMatch(/\bAccept-Encoding\b/i);
    expect((await raw('/dashboard/app.js', { 'Accept-Encoding': 'identity', 'If-None-Match': identityTag })).status).toBe(304);
    const crossed = await raw('/dashboard/app.js', { 'Accept-Encoding': 'gzip;q=0', 'If-None-Match': gz.headers.etag! });
    expect(crossed.status).toBe(200);
    expect(crossed.body.equals(plain)).toBe(true);
    const crossed2 = await raw('/dashboard/app.js', { 'Accept-Encoding': 'gzip', 'If-None-Match': identityTag });
    expect(crossed2.status).toBe(200);
    expect(crossed2.headers['content-encoding']).toBe('gzip');
  });
});

describe('quorum serve and start make the dashboard build current first (ensureDashboardBuilt)', () => {
  // QA upgrade pass: a checkout updated in place and started with `quorum start` (not npm start,
  // whose prestart builds) served the previous release's dashboard, with nothing to say so.
  it('builds a missing build, leaves a current one, rebuilds one whose sources moved on', async () => {
    const { mkdtempSync, readFileSync: read, rmSync, writeFileSync } = await import('node:fs');
    const { tmpdir } = await import('node:os');
    const { ensureDashboardBuilt } = await import('../../pipeline/cli/dashboard.ts');
    const dir = mkdtempSync(path.join(tmpdir(), 'quorum-dashboard-build-'));
    const lines: string[] = [];
    const logger = pino({ level: 'info' }, { write: (l: string) => lines.push(l) });
    try {
      expect(await ensureDashboardBuilt(logger, dir)).toBe('built');
      expect(read(path.join(dir, 'app.js'), 'utf8').length).toBeGreaterThan(1000);
      const inputs = JSON.parse(read(path.join(dir, 'inputs.json'), 'utf8')).inputs as [string, number, number][];
      expect(inputs.map(([file]) => file)).toContain('dashboard/src/main.ts');
      expect(await ensureDashboardBuilt(logger, dir)).toBe('current');
      // a source edited since (here: the size its build recorded no longer matches)
      const edited = inputs.map(([file, size, mtime]) => (file === 'dashboard/src/pages/question.ts' ? [file, size + 1, mtime] : [file, size, mtime]));
      writeFileSync(path.join(dir, 'inputs.json'), JSON.stringify({ inputs: edited }));
      expect(await ensureDashboardBuilt(logger, dir)).toBe('built');
      expect(lines.filter((l) => l.includes('dashboard built'))).toHaveLength(2);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
