/**
 * Keys, plans, entitlements, quotas and usage over a real server on 127.0.0.1:0 with real keys
 * (key store and the `quorum keys` CLI).
 */
import { readFile } from 'node:fs/promises';
import net from 'node:net';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { rawRoute } from '../../api/http/registry.ts';
import type { ServerHandle } from '../../api/server.ts';
import { UsageResponse } from '../../api/routes/usage.ts';
import { ENTITLEMENTS } from '../../api/auth/entitlements.ts';
import { generateKey, keysFile, readKeys } from '../../api/auth/keys.ts';
import { concretePath, getRoutes } from './route-paths.ts';
import { auth, capturingLogger, cli, expectProblem, fixtureDir, get, newKey, serve, sleep } from './helpers.ts';

const ACC = '/api/predictions/accuracy';

describe('keys: both header forms, malformed, unknown, revoked (CLI, live server)', () => {
  let dir: string;
  let cleanup: () => Promise<void>;
  let server: ServerHandle;
  const logLines: string[] = [];

  beforeAll(async () => {
    ({ dir, cleanup } = await fixtureDir());
    server = await serve(dir, { logger: capturingLogger(logLines), keyRecheckMs: 200 });
  });
  afterAll(async () => {
    await server?.close();
    await cleanup?.();
  });

  it('CLI create → both header forms work; list never shows the key; revoke → 401 without restart', async () => {
    const created = await cli(dir, 'keys', 'create', '--plan', 'api', '--name', 'CLI key');
    expect(created.code, created.stderr).toBe(0);
    const out = JSON.parse(created.stdout.trim());
    expect(out.key).toMatch(/^qrm_[0-9A-Za-z]{32}$/);
    expect(out).toMatchObject({ plan: 'api', name: 'CLI key', scopes: [], revoked_at: null, hint: out.key.slice(-4) });
    const key: string = out.key;

    // stored only as its SHA-256
    const stored = await readFile(path.join(dir, 'state', 'keys.json'), 'utf8');
    expect(stored).not.toContain(key);
    expect(stored).not.toContain(key.slice(4));

    await sleep(250); // the server re-checks the key file at most every keyRecheckMs
    for (const init of [auth.x(key), auth.bearer(key), { headers: { authorization: `bearer   ${key}  ` } }]) {
      const r = await get(server, '/api/usage/', init);
      expect(r.res.status, r.text).toBe(200);
      expect(r.body.key).toMatchObject({ id: out.id, plan: 'api' });
    }
    // both headers with the same key are fine
    const both = await get(server, '/api/usage/', { headers: { 'X-API-Key': key, Authorization: `Bearer ${key}` } });
    expect(both.res.status).toBe(200);

    // (the two lists run at once: both only read the key file)
    const [listed, table] = await Promise.all([cli(dir, 'keys', 'list', '--json'), cli(dir, 'keys', 'list')]);
    expect(listed.code).toBe(0);
    expect(listed.stdout).not.toContain(key);
    expect(JSON.parse(listed.stdout)).toContainEqual(expect.objectContaining({ id: out.id, revoked_at: null }));
    expect(table.stdout).toContain(out.id);
    expect(table.stdout).not.toContain(key);

    const revoked = await cli(dir, 'keys', 'revoke', out.id);
    expect(revoked.code, revoked.stderr).toBe(0);
    expect(JSON.parse(revoked.stdout).revoked_at).not.toBeNull();
    await sleep(250);
    for (const init of [auth.x(key), auth.bearer(key)]) {
      const r = await get(server, ACC, init);
      expectProblem(r, 401, 'unauthorized');
      expect(r.body.detail).toMatch(/revoked/);
      expect(r.text).not.toContain(key);
    }
    // (the list and the three refused commands run at once: each refusal is made on its own
    // arguments, and none writes the key file)
    const [after, noSuchKey, badPlan, badScope] = await Promise.all([
      cli(dir, 'keys', 'list'),
      cli(dir, 'keys', 'revoke', 'key_000000000000'),
      cli(dir, 'keys', 'create', '--plan', 'gold', '--name', 'x'),
      cli(dir, 'keys', 'create', '--plan', 'pro', '--scope', 'admin', '--name', 'x'),
    ]);
    // the table: a header, and every row's columns aligned with it, revoked rows included
    const lines = after.stdout.trimEnd().split('\n');
    expect(lines[0]).toMatch(/^id\s+plan\s+key\s+state\s+created_at\s+revoked_at\s+scopes\s+name$/);
    const col = (line: string, name: string) => line.slice(lines[0]!.indexOf(name)).split(/\s+/)[0];
    const row = lines.find((l) => l.startsWith(out.id))!;
    expect(col(row, 'state')).toBe('revoked');
    expect(col(row, 'revoked_at')).toBe(JSON.parse(revoked.stdout).revoked_at);
    expect(lines.filter((l) => !l.startsWith(out.id) && l !== lines[0]).every((l) => col(l, 'state') !== undefined)).toBe(true);
    expect(noSuchKey.code).toBe(1);
    expect(badPlan.code).not.toBe(0);
    expect(badScope.code).not.toBe(0);
    expect((await get(server, '/healthz')).res.status).toBe(200);
  });

  it('a --name with a control character (a newline, an escape sequence) is refused, naming why, and nothing is stored (QA: stored, then `keys list` printed the row split over two lines, or the escape sequence to the terminal)', async () => {
    const before = readKeys(keysFile(dir)).length;
    // (the four commands run at once: each is refused on its own argument, before the key file)
    const names = ['two\nlines', 'red \u001b[31mALERT\u001b[0m', 'tab\tname', 'bidi \u202egnp.exe'];
    const runs = await Promise.all(names.map((name) => cli(dir, 'keys', 'create', '--plan', 'pro', '--name', name)));
    for (const [i, name] of names.entries()) {
      const r = runs[i]!;
      expect(r.code, name).toBe(1);
      expect(r.stdout).toBe('');
      expect(r.stderr).toContain('--name must be 1 to 200 characters without control characters');
    }
    expect(readKeys(keysFile(dir))).toHaveLength(before);
  });

  it('keys created and revoked by commands running at once: every revocation holds, every key printed is stored (QA: 5 of 8 revocations and 4 of 8 keys were lost)', async () => {
    const base = Array.from({ length: 6 }, (_, i) => newKey(dir, 'pro', [], `concurrent base ${i}`));
    const runs = await Promise.all(base.flatMap(({ id }, i) => [
      cli(dir, 'keys', 'revoke', id),
      cli(dir, 'keys', 'create', '--plan', 'pro', '--name', `concurrent new ${i}`),
    ]));
    for (const r of runs) expect(r.code, r.stderr).toBe(0);
    const stored = readKeys(keysFile(dir));
    for (const { id } of base) expect(stored.find((k) => k.id === id)?.revoked_at, id).not.toBeNull();
    const printed = runs.filter((_, i) => i % 2 === 1).map((r) => JSON.parse(r.stdout) as { id: string; key: string });
    for (const p of printed) expect(stored.some((k) => k.id === p.id), p.id).toBe(true);
    // and the server sees it so: the revoked keys are refused, the new ones answered
    await sleep(300);
    for (const { key } of base) expect((await get(server, ACC, auth.x(key))).res.status).toBe(401);
    for (const { key } of printed) expect((await get(server, ACC, auth.x(key))).res.status).toBe(200);
    // the server re-reads the key file at most every 200 ms here: the next test's new key is
    // seen at once only once that has passed since these reads
    await sleep(300);
  }, 120_000);

  it('malformed and unknown keys → 401 problem, never echoed; the server keeps serving', async () => {
    const valid = newKey(dir, 'pro').key;
    const unknown = `qrm_${'A'.repeat(32)}`;
    const bad: Array<Record<string, string>> = [
      { 'X-API-Key': '' },
      { 'X-API-Key': '   ' },
      { 'X-API-Key': 'abc' },
      { 'X-API-Key': `xyz_${'a'.repeat(32)}` },
      { 'X-API-Key': `${valid}x` },
      { 'X-API-Key': valid.slice(0, -1) },
      { 'X-API-Key': `qrm_${'a'.repeat(10_000)}` },
      { 'X-API-Key': `qrm_' OR '1'='1' --${'a'.repeat(14)}` },
      { 'X-API-Key': `qrm_${'%27%20OR%201%3D1'.padEnd(32, 'a')}` },
      { 'X-API-Key': unknown },
      { 'X-API-Key': valid.toLowerCase() === valid ? valid.toUpperCase() : valid.toLowerCase() },
      { Authorization: 'Bearer' },
      { Authorization: 'Bearer ' },
      { Authorization: `Basic ${Buffer.from(`u:${valid}`).toString('base64')}` },
      { Authorization: valid },
      { Authorization: `Bearer ${unknown}` },
      { Authorization: 'Bearer ../../../../etc/passwd' },
      { Authorization: `Bearer qrm_${'ü'.repeat(32)}` },
      { 'X-API-Key': valid, Authorization: `Bearer ${unknown}` },
    ];
    for (const headers of bad) {
      const r = await get(server, ACC, { headers });
      expectProblem(r, 401, 'unauthorized');
      expect(r.res.headers.get('www-authenticate')).toBe('Bearer');
      for (const v of Object.values(headers)) if (v.length > 8) expect(r.text).not.toContain(v.trim());
    }
    // unicode header values are refused by fetch itself; send raw bytes through node:http
    const { request } = await import('node:http');
    const status = await new Promise<number>((resolve, reject) => {
      const req = request(`${server.url}${ACC}`, { headers: { 'X-API-Key': Buffer.from(`qrm_${'é'.repeat(16)}`, 'utf8').toString('latin1') } }, (res) => {
        res.resume();
        resolve(res.statusCode ?? 0);
      });
      req.on('error', reject);
      req.end();
    });
    expect(status).toBe(401);
    expect((await get(server, ACC)).res.status).toBe(200);
    expect((await get(server, ACC, auth.x(valid))).res.status).toBe(200);
  });

  it('a 401 from the front door on a public read carries CORS, so a browser can read it; a keyed route\'s does not', async () => {
    const headers = { Origin: 'https://app.example', 'X-API-Key': `qrm_${'C'.repeat(32)}` };
    const pub = await get(server, ACC, { headers });
    expectProblem(pub, 401, 'unauthorized');
    expect(pub.res.headers.get('access-control-allow-origin')).toBe('*');
    expect(pub.res.headers.get('access-control-expose-headers')).toMatch(/Retry-After/);
    // the same path with a trailing slash and a path parameter
    const cat = await get(server, '/api/predictions/accuracy/politics/', { headers });
    expect(cat.res.headers.get('access-control-allow-origin')).toBe('*');
    const keyed = await get(server, '/api/usage/', { headers });
    expectProblem(keyed, 401, 'unauthorized');
    expect(keyed.res.headers.get('access-control-allow-origin')).toBeNull();
  });

  it('a key put in the URL (?api_key=, ?apikey=) is a 401 saying where keys go, not an anonymous answer (QA: served anonymously, without a hint)', async () => {
    const valid = newKey(dir, 'pro').key;
    for (const param of ['api_key', 'apikey', 'API_KEY']) {
      const r = await get(server, `${ACC}?${param}=${valid}`);
      expectProblem(r, 401, 'unauthorized');
      expect(r.body.detail).toMatch(/X-API-Key header/);
      expect(r.text).not.toContain(valid);
    }
    // beside a key in its header too: the URL has already put the key in logs and history
    expectProblem(await get(server, `${ACC}?api_key=${valid}`, auth.x(valid)), 401, 'unauthorized');
    expect((await get(server, ACC)).res.status).toBe(200);
  });

  it('a key in the URL under any other name (?access_token= of RFC 6750, ?x-api-key=, ?api_key[]=) is a 401 too, not an anonymous answer (QA: served anonymously)', async () => {
    const valid = newKey(dir, 'pro').key;
    // RFC 6750 §2.3 sends a Bearer token as `access_token` in the query; API gateways' docs show
    // `x-api-key`; PHP and qs-style clients write an array parameter as `name[]`
    for (const query of [`access_token=${valid}`, `x-api-key=${valid}`, `key=${valid}`, `api_key%5B%5D=${valid}`, `token=Bearer%20${valid}`, `${valid}=1`]) {
      const r = await get(server, `${ACC}?${query}`);
      expectProblem(r, 401, 'unauthorized');
      expect(r.body.detail).toMatch(/X-API-Key header/);
      expect(r.text).not.toContain(valid);
    }
    // an unknown, malformed or revoked key there too: it has left the client all the same
    expectProblem(await get(server, `${ACC}?access_token=${generateKey()}`), 401, 'unauthorized');
    // values that merely look alike are not keys: ignored as before
    for (const query of ['access_token=abc', `note=qrm_${'a'.repeat(31)}`, `note=qrm_${'a'.repeat(33)}`]) {
      expect((await get(server, `${ACC}?${query}`)).res.status, query).toBe(200);
    }
  });

  it('a key in the URL of a path outside authentication (/healthz, /api/openapi.json, /docs, the front door) is the same 401, not an anonymous answer (QA: a 200 without a word, the key already in proxies\' logs and the history)', async () => {
    const valid = newKey(dir, 'pro').key;
    // Swagger UI 2.x and OpenAPI tooling append `?api_key=` to every request, the document's too
    for (const p of ['/api/openapi.json', '/healthz', '/readyz', '/metrics', '/docs', '/docs/swagger-ui.css', '/', '/favicon.svg', '/dashboard/app.js']) {
      const r = await get(server, `${p}?api_key=${valid}`);
      expectProblem(r, 401, 'unauthorized');
      expect(r.body.detail, p).toMatch(/X-API-Key header/);
      expect(r.text).not.toContain(valid);
    }
    expectProblem(await get(server, `/api/openapi.json?access_token=${valid}`), 401, 'unauthorized');
    // those paths still take no key: without one in the URL they answer as before
    expect((await get(server, '/api/openapi.json?note=x')).res.status).toBe(200);
    expect((await get(server, '/healthz', auth.x(valid))).res.status).toBe(200);
  });

  it('a key given to quorum keys revoke or quorum webhooks create --key where its id goes is never printed back; the message names its id (QA: "no key with id \\"qrm_…\\"" on stderr)', async () => {
    const created = newKey(dir, 'enterprise');
    const unknown = generateKey();
    // (the three commands run at once: each is refused, and none writes a file)
    const [revoke, webhook, other] = await Promise.all([
      cli(dir, 'keys', 'revoke', created.key),
      cli(dir, 'webhooks', 'create', '--key', created.key, '--url', 'https://198.51.100.9/hook'),
      cli(dir, 'keys', 'revoke', unknown), // a key this directory does not know
    ]);
    expect(revoke.code).toBe(1);
    expect(revoke.stderr + revoke.stdout).not.toContain(created.key);
    expect(revoke.stderr).toContain(`its id is ${created.id}`);
    // nothing was revoked: the key still works
    await sleep(250);
    expect((await get(server, '/api/usage/', auth.x(created.key))).res.status).toBe(200);
    expect(webhook.code).toBe(1);
    expect(webhook.stderr + webhook.stdout).not.toContain(created.key);
    expect(webhook.stderr).toContain(`its id is ${created.id}`);
    // a key this directory does not know: not printed either
    expect(other.code).toBe(1);
    expect(other.stderr).not.toContain(unknown);
  });

  it('X-API-Key sent twice (Node joins the two values) is a 401 saying so, not "malformed"', async () => {
    const valid = newKey(dir, 'pro').key;
    const r = await get(server, ACC, { headers: [['X-API-Key', valid], ['X-API-Key', valid]] });
    expectProblem(r, 401, 'unauthorized');
    expect(r.body.detail).toBe('Send the X-API-Key header once.');
  });

  it('the JSON line quorum keys create prints, sent as the key, is a 401 saying to send its "key" field, not "send the header once" (QA)', async () => {
    const created = newKey(dir, 'pro');
    const printed = JSON.stringify({ key: created.key, id: 'key_x', name: 'me', plan: 'pro' });
    const r = await get(server, ACC, auth.x(printed));
    expectProblem(r, 401, 'unauthorized');
    expect(r.body.detail).toMatch(/holds JSON, not a key: send the "key" field/);
    expect(r.text).not.toContain(created.key);
  });

  it('Authorization sent twice is a 401 saying so, whichever key comes first (QA: Node kept the first and dropped the second unseen)', async () => {
    const valid = newKey(dir, 'api').key;
    const other = newKey(dir, 'pro').key;
    const url = new URL(server.url);
    // fetch joins repeated headers into one line: the request is written by hand
    const rawGet = (keys: string[]) =>
      new Promise<{ status: number; body: string }>((resolve, reject) => {
        const socket = net.connect(Number(url.port), url.hostname, () => {
          socket.write(`GET /api/leaderboard/ HTTP/1.1\r\nHost: ${url.host}\r\nConnection: close\r\n${keys.map((k) => `Authorization: Bearer ${k}\r\n`).join('')}\r\n`);
        });
        let raw = '';
        socket.setEncoding('utf8').on('data', (c: string) => (raw += c)).on('error', reject).on('close', () => {
          const [head, ...rest] = raw.split('\r\n\r\n');
          const body = rest.join('\r\n\r\n');
          // chunked or not: the JSON is the part between the first { and the last }
          resolve({ status: Number(/^HTTP\/1\.1 (\d{3})/.exec(head ?? '')?.[1]), body: body.slice(body.indexOf('{'), body.lastIndexOf('}') + 1) });
        });
      });
    // the server re-reads the key file at most every keyRecheckMs (200 ms here): the two new keys
    // known first, i.e. not a 401 (the pro key's answer on this route is a 403 plan_required; the
    // loop waited for a 200 from it, so it never ended before its 5 s)
    for (const t0 = Date.now(); Date.now() - t0 < 5000; await new Promise((r) => setTimeout(r, 100))) {
      if ((await rawGet([valid])).status === 200 && (await rawGet([other])).status === 403) break;
    }
    for (const pair of [[valid, other], [other, valid], [valid, valid]]) {
      const r = await rawGet(pair);
      expect(r.status, r.body).toBe(401);
      expect(JSON.parse(r.body)).toMatchObject({ code: 'unauthorized', detail: 'Send the Authorization header once.' });
      expect(r.body).not.toContain(valid);
    }
    // once is fine
    const once = await rawGet([valid]);
    expect(once.status, once.body).toBe(200);
  });

  it('a key never appears in a log line', async () => {
    const { key } = newKey(dir, 'enterprise');
    await get(server, ACC, auth.x(key));
    await get(server, ACC, auth.bearer(key));
    await get(server, `/api/nope/${key}`, auth.bearer(key)); // even in an unknown path's 404... only the path is logged
    await get(server, ACC, auth.x(`${key}0`));
    // A key pasted as the request id is neither logged nor echoed: a fresh id replaces it.
    const pasted = await get(server, ACC, { headers: { 'X-API-Key': key, 'X-Request-Id': key } });
    expect(pasted.res.headers.get('x-request-id')).toMatch(/^[0-9a-f-]{36}$/);
    await sleep(50);
    const all = logLines.join('');
    expect(logLines.length).toBeGreaterThan(3);
    const keyLines = logLines.filter((l) => l.includes('"key_id":"key_'));
    expect(keyLines.length).toBeGreaterThan(0);
    // the 404 path line necessarily contains the path the client sent; every other line is clean
    const withoutPathEcho = logLines.filter((l) => !l.includes('/api/nope/'));
    expect(withoutPathEcho.join('')).not.toContain(key);
    expect(all).not.toContain(`Bearer ${key}`);
  });
});

describe('entitlements: 403 plan_required, the beta setting, scopes', () => {
  let dir: string;
  let cleanup: () => Promise<void>;
  let closed: ServerHandle;
  let beta: ServerHandle;

  // a stand-in for the probability endpoint (scope probability, its own limit)
  const probabilityRoute = rawRoute({
    id: 'probability',
    path: '/api/probability/',
    summary: 'test stand-in',
    tags: ['test'],
    responses: { 'application/json': { schema: z.object({ ok: z.boolean() }) } },
    handle: (_req, res, { services }) => {
      services.quotas.chargeProbability(res, res.locals.auth);
      res.json({ ok: true });
    },
  });
  const rawTablesRoute = rawRoute({
    id: 'raw.tables',
    path: '/api/raw/',
    summary: 'test stand-in',
    tags: ['test'],
    responses: { 'application/json': { schema: z.object({ ok: z.boolean() }) } },
    handle: (_req, res) => {
      res.json({ ok: true });
    },
  });

  beforeAll(async () => {
    ({ dir, cleanup } = await fixtureDir());
    const extraRoutes = [probabilityRoute, rawTablesRoute];
    closed = await serve(dir, { publicBeta: false, extraRoutes, limits: { probabilityPerDay: 3 } });
    beta = await serve(dir, { publicBeta: true, extraRoutes });
  });
  afterAll(async () => {
    await closed?.close();
    await beta?.close();
    await cleanup?.();
  });

  it('public beta on: anonymous reads of the public endpoints; off: they need pro', async () => {
    const publicPaths = [ACC, '/api/predictions/accuracy/politics', '/api/predictions/resolved', '/api/events/accuracy/', '/api/events/service_stats/'];
    for (const p of publicPaths) {
      expect((await get(beta, p)).res.status, p).toBe(200);
      const r = await get(closed, p);
      expectProblem(r, 403, 'plan_required');
      expect(r.body.plan).toBe('pro');
      expect(r.body.detail).toMatch(/pro/);
    }
    const pro = newKey(dir, 'pro').key;
    for (const p of publicPaths) expect((await get(closed, p, auth.bearer(pro))).res.status, p).toBe(200);
  });

  it('a read above the plan → 403 naming the plan it needs', async () => {
    const pro = newKey(dir, 'pro').key;
    const api = newKey(dir, 'api').key;
    const ent = newKey(dir, 'enterprise').key;
    for (const [key, status] of [[pro, 403], [api, 403], [ent, 200]] as const) {
      const r = await get(closed, '/api/raw/', auth.x(key));
      if (status === 403) {
        expectProblem(r, 403, 'plan_required');
        expect(r.body.plan).toBe('enterprise');
      } else expect(r.res.status).toBe(200);
    }
    const anon = await get(beta, '/api/raw/');
    expectProblem(anon, 403, 'plan_required');
    expect(anon.body.plan).toBe('enterprise');
  });

  it('probability scope: needed, and limited on its own', async () => {
    const noScope = newKey(dir, 'enterprise').key;
    const scoped = newKey(dir, 'pro', ['probability']).key;
    const r = await get(closed, '/api/probability/', auth.x(noScope));
    expectProblem(r, 403, 'plan_required');
    expect(r.body.scope).toBe('probability');
    for (let i = 1; i <= 3; i++) {
      const ok = await get(closed, '/api/probability/', auth.x(scoped));
      expect(ok.res.status).toBe(200);
      expect(ok.res.headers.get('ratelimit-policy')).toContain('"probability";q=3;w=86400');
      expect(ok.res.headers.get('ratelimit')).toContain(`"probability";r=${3 - i};`);
    }
    const limited = await get(closed, '/api/probability/', auth.x(scoped));
    expectProblem(limited, 429, 'rate_limited');
    expect(limited.body.policy).toBe('probability');
    expect(Number(limited.res.headers.get('retry-after'))).toBeGreaterThan(0);
    // the limit that refused it is used up; the plan did not pay for the refusal (pro: 1,000 a day)
    expect(limited.res.headers.get('x-ratelimit-remaining')).toBe('0');
    expect(limited.res.headers.get('ratelimit')).toContain('"pro";r=997;');
    const u = await get(closed, '/api/usage/', auth.x(scoped));
    expect(u.body.quota.used).toBe(3);
    expect(u.body.routes).toEqual({ probability: 3 });
    expect(JSON.stringify(u.body)).toMatch(/"rejected":1/);
    // the plan's own quota is unaffected
    expect((await get(closed, ACC, auth.x(scoped))).res.status).toBe(200);
  });

  it('/api/usage/ needs a key', async () => {
    expectProblem(await get(beta, '/api/usage/'), 401, 'unauthorized');
  });
});

describe('quotas: each plan at its limit, headers on every response, durable usage', () => {
  let dir: string;
  let cleanup: () => Promise<void>;
  let server: ServerHandle;
  const limits = { anonymousPerHour: 5, proPerDay: 4, apiPerDay: 6, enterprisePerDay: null, probabilityPerDay: null };

  beforeAll(async () => {
    ({ dir, cleanup } = await fixtureDir());
    server = await serve(dir, { limits, usageFlushMs: 100 });
  });
  afterAll(async () => {
    await server?.close();
    await cleanup?.();
  });

  function parse(res: Response) {
    const rl = res.headers.get('ratelimit') ?? '';
    const m = /"([a-z]+)";r=(\d+);t=(\d+)/.exec(rl);
    return m ? { policy: m[1], remaining: Number(m[2]), reset: Number(m[3]) } : null;
  }

  async function exhaust(init: RequestInit | undefined, quota: number, policy: string, window: number) {
    // the path mix matters not: every counted request is charged (cached answers included)
    const paths = [ACC, '/api/events/accuracy/', '/api/predictions/resolved?limit=1', '/api/nope'];
    for (let i = 1; i <= quota; i++) {
      const r = await get(server, paths[i % paths.length]!, init);
      expect([200, 404], r.text).toContain(r.res.status);
      expect(r.res.headers.get('ratelimit-policy')).toBe(`"${policy}";q=${quota};w=${window}`);
      const p = parse(r.res)!;
      expect(p).toMatchObject({ policy, remaining: quota - i });
      expect(p.reset).toBeGreaterThan(0);
      expect(p.reset).toBeLessThanOrEqual(window);
      expect(r.res.headers.get('x-ratelimit-remaining')).toBe(String(quota - i));
    }
    for (let j = 0; j < 2; j++) {
      const r = await get(server, ACC, init);
      expectProblem(r, 429, 'rate_limited');
      const retry = Number(r.res.headers.get('retry-after'));
      expect(retry).toBeGreaterThan(0);
      expect(retry).toBeLessThanOrEqual(window);
      expect(r.body.retry_after).toBe(retry);
      expect(r.body.policy).toBe(policy);
      expect(parse(r.res)).toMatchObject({ policy, remaining: 0 });
      expect(r.res.headers.get('ratelimit-policy')).toBe(`"${policy}";q=${quota};w=${window}`);
    }
  }

  it('pro: the 429 arrives exactly after the limit (both header forms share the quota)', async () => {
    const { key } = newKey(dir, 'pro');
    const r1 = await get(server, ACC, auth.x(key));
    expect(parse(r1.res)).toMatchObject({ policy: 'pro', remaining: 3 });
    const r2 = await get(server, ACC, auth.bearer(key));
    expect(parse(r2.res)).toMatchObject({ policy: 'pro', remaining: 2 });
    await get(server, ACC, auth.x(key));
    await get(server, ACC, auth.bearer(key));
    const over = await get(server, ACC, auth.bearer(key));
    expectProblem(over, 429, 'rate_limited');
    // the key can still read its own usage (not charged), which shows the refusal
    const usage = await get(server, '/api/usage/', auth.x(key));
    expect(usage.res.status).toBe(200);
    expect(JSON.stringify(usage.body)).toMatch(/"rejected":1/);
    // ... and reading it charges nothing: the next read is still a 429, not a further 200
    expectProblem(await get(server, ACC, auth.x(key)), 429, 'rate_limited');
    // health endpoints are exempt
    expect((await get(server, '/healthz', auth.x(key))).res.status).toBe(200);
    expect((await get(server, '/readyz', auth.x(key))).res.status).toBe(200);
  });

  it('paths match in any case, as the router does: exempt and uncharged paths stay so (QA: /HEALTHZ was a 401 with a bad key, /API/USAGE/ charged)', async () => {
    const { key } = newKey(dir, 'pro');
    // exempt in any case: neither authenticated nor charged
    for (const p of ['/HEALTHZ', '/Readyz/', '/Metrics', '/api/OpenAPI.json', '/DOCS']) {
      const r = await get(server, p, auth.x(`qrm_${'C'.repeat(32)}`));
      expect(r.res.status, p).toBe(200);
      expect(r.res.headers.get('ratelimit'), p).toBeNull();
    }
    // the caller's usage, in any case: not charged (its remaining quota stays 4), and not counted
    for (const p of ['/API/USAGE/', '/api/Usage']) {
      const u = await get(server, p, auth.x(key));
      expect(u.res.status, p).toBe(200);
      expect(u.res.headers.get('x-ratelimit-remaining'), p).toBe('4');
      expect(u.body.quota.used, p).toBe(0);
    }
  });

  it('api plan at its limit', async () => {
    const { key } = newKey(dir, 'api');
    await exhaust(auth.bearer(key), 6, 'api', 86_400);
  });

  it('anonymous: per IP per hour; failed key attempts are charged too', async () => {
    await exhaust(undefined, 5, 'anonymous', 3600);
    // brute force is throttled: a bad key now gets the 429 instead of the 401, saying that the key
    // was not accepted (not "use an API key for more")
    const guess = await get(server, ACC, { headers: { ...auth.x(`qrm_${'B'.repeat(32)}`).headers, Origin: 'https://app.example' } });
    expectProblem(guess, 429, 'rate_limited');
    // readable by a browser: CORS on the front door's 429 too
    expect(guess.res.headers.get('access-control-allow-origin')).toBe('*');
    expect(guess.body.detail).toMatch(/key presented was not accepted/);
    expect(guess.body.detail).not.toMatch(/use an API key for more/);
    // a key is not affected by the IP's anonymous quota
    const { key } = newKey(dir, 'enterprise');
    const r = await get(server, ACC, auth.x(key));
    expect(r.res.status).toBe(200);
    expect(r.res.headers.get('x-ratelimit-remaining')).toBe('unlimited');
    expect(r.res.headers.get('ratelimit')).toBeNull();
  });

  it('anonymous IPv6 callers are counted per /56 network, IPv4 per address, an IPv4-mapped address as its IPv4 (QA: every IPv6 address had a quota of its own)', async () => {
    const proxied = await serve(dir, { limits: { ...limits, anonymousPerHour: 2 }, trustProxy: 1 });
    try {
      const from = (address: string, init: RequestInit = {}) =>
        get(proxied, ACC, { ...init, headers: { ...(init.headers as Record<string, string>), 'X-Forwarded-For': address } });
      // one host rotating through its /64 (and its /56): two requests, then the 429
      expect((await from('2001:db8:1:2::a')).res.status).toBe(200);
      expect((await from('2001:db8:1:2::b')).res.status).toBe(200);
      expectProblem(await from('2001:db8:1:ff::c'), 429, 'rate_limited');
      // key guessing from fresh addresses of the same network is throttled too
      expectProblem(await from('2001:db8:1:2::d', auth.x(`qrm_${'E'.repeat(32)}`)), 429, 'rate_limited');
      // another /56 is another caller
      expect((await from('2001:db8:1:300::1')).res.status).toBe(200);
      // IPv4: per address, whether written plainly or IPv4-mapped (a dual-stack socket's form)
      expect((await from('198.51.100.7')).res.status).toBe(200);
      expect((await from('::ffff:198.51.100.7')).res.status).toBe(200);
      expectProblem(await from('198.51.100.7'), 429, 'rate_limited');
      expect((await from('198.51.100.8')).res.status).toBe(200);
      expect((await from('::ffff:198.51.100.9')).res.status).toBe(200);
      // a proxy that writes the client's port (Azure App Service, IIS ARR: "ip:port"): the same
      // client from another source port is the same caller (QA: each port had a quota of its own)
      expect((await from('198.51.100.20:50123')).res.status).toBe(200);
      expect((await from('198.51.100.20:50124')).res.status).toBe(200);
      expectProblem(await from('198.51.100.20'), 429, 'rate_limited');
      expect((await from('[2001:db8:7::1]:443')).res.status).toBe(200);
      expect((await from('[2001:db8:7::2]:444')).res.status).toBe(200);
      expectProblem(await from('2001:db8:7::3'), 429, 'rate_limited');
    } finally {
      await proxied.close();
    }
  });

  it('enterprise: unlimited, still counted; usage shows the key its own', async () => {
    const { key, id } = newKey(dir, 'enterprise');
    const other = newKey(dir, 'api');
    for (let i = 0; i < 25; i++) expect((await get(server, ACC, auth.x(key))).res.status).toBe(200);
    await get(server, '/api/predictions/accuracy/politics', auth.x(other.key));
    const u = await get(server, '/api/usage/', auth.bearer(key));
    expect(u.res.status).toBe(200);
    expect(() => UsageResponse.parse(u.body)).not.toThrow();
    expect(u.body.key).toMatchObject({ id, plan: 'enterprise' });
    // reading one's own usage is not charged: 25, not 26
    expect(u.body.quota).toMatchObject({ policy: 'enterprise', limit: null, used: 25, remaining: null });
    expect(u.body.routes['predictions.accuracy']).toBe(25);
    expect(u.body.routes.usage).toBeUndefined();
    expect(u.body.routes['predictions.accuracy.category']).toBeUndefined();
    expect(u.body.history[0]).toMatchObject({ date: u.body.date, requests: 25 });
    expect(u.text).not.toContain(key);
    expect(u.res.headers.get('cache-control')).toContain('no-store');
    expectProblem(await get(server, '/api/usage/?days=0', auth.x(key)), 400, 'invalid_parameter');
    expectProblem(await get(server, '/api/usage/?days=91', auth.x(key)), 400, 'invalid_parameter');
  });

  it('usage counts every route, exports included: one count per charged request', async () => {
    const { key } = newKey(dir, 'enterprise', ['probability']);
    const counted = getRoutes().filter((r) => ENTITLEMENTS[r.id].kind !== 'open');
    expect(counted.map((r) => r.id)).toContain('export.predictions');
    for (const route of counted) {
      const r = await get(server, concretePath(route.path), auth.x(key));
      // counted whatever the answer; a fixture without the route's tables answers 503 not_ready
      if (r.res.status >= 500) expect(r.body.code, `${route.id}: ${r.text.slice(0, 200)}`).toBe('not_ready');
    }
    // an unknown path, a known path with another method and a route above the plan are charged
    // too, and counted (unmatched twice, the route)
    expectProblem(await get(server, '/api/nonexistent', auth.x(key)), 404, 'not_found');
    expectProblem(await get(server, '/api/leaderboard/', { method: 'DELETE', ...auth.x(key) }), 405, 'method_not_allowed');
    const pro = newKey(dir, 'pro').key;
    expectProblem(await get(server, '/api/leaderboard/', auth.x(pro)), 403, 'plan_required');
    const u = await get(server, '/api/usage/', auth.x(key));
    expect(u.res.status).toBe(200);
    // usage itself is neither charged nor counted (its reads above included)
    for (const route of counted) expect(u.body.routes[route.id], route.id).toBe(route.id === 'usage' ? undefined : 1);
    expect(u.body.routes.unmatched).toBe(2);
    const sum = Object.values(u.body.routes as Record<string, number>).reduce((a, b) => a + b, 0);
    expect(sum).toBe(u.body.quota.used);
    const p = await get(server, '/api/usage/', auth.x(pro));
    expect(p.body.routes).toEqual({ leaderboard: 1 });
    expect(p.body.quota.used).toBe(1);
    // uncharged, it still says what is left, as every response does (the OpenAPI document requires
    // the header; QA found it absent): pro's 4 a day, one used, whatever the reads of usage
    for (let i = 0; i < 2; i++) {
      const again = await get(server, '/api/usage/', auth.x(pro));
      expect(again.res.headers.get('x-ratelimit-remaining')).toBe('3');
      expect(again.res.headers.get('ratelimit')).toMatch(/^"pro";r=3;t=\d+$/);
    }
  });

  it('usage survives a restart: the quota continues', async () => {
    const { key, id } = newKey(dir, 'pro');
    for (let i = 0; i < 3; i++) expect((await get(server, ACC, auth.x(key))).res.status).toBe(200);
    await server.close();
    const file = JSON.parse(await readFile(path.join(dir, 'state', 'usage', `${new Date().toISOString().slice(0, 10)}.json`), 'utf8'));
    expect(file.keys[id].requests).toBe(3);

    server = await serve(dir, { limits, usageFlushMs: 100 });
    const r = await get(server, ACC, auth.x(key));
    expect(r.res.status).toBe(200);
    expect(parse(r.res)).toMatchObject({ policy: 'pro', remaining: 0 });
    expectProblem(await get(server, ACC, auth.x(key)), 429, 'rate_limited');
  });
});

describe('a 429 of a route\'s own limit is not charged to the plan', () => {
  let dir: string;
  let cleanup: () => Promise<void>;
  let server: ServerHandle;

  beforeAll(async () => {
    ({ dir, cleanup } = await fixtureDir());
    server = await serve(dir, { events: { pollMs: 25, heartbeatMs: 100, maxPerKey: 1 } });
  });
  afterAll(async () => {
    await server?.close();
    await cleanup?.();
  });

  it('a stream refused for streams_per_key is recorded as rejected, as the plan\'s own 429 is, not charged (QA: charged, and rejected stayed 0)', async () => {
    const ent = newKey(dir, 'enterprise').key;
    const open = await fetch(`${server.url}/api/stream/`, { headers: { 'X-API-Key': ent } });
    expect(open.status).toBe(200);
    const reader = open.body!.getReader();
    const refused = await get(server, '/api/stream/', auth.x(ent));
    expectProblem(refused, 429, 'rate_limited');
    expect(refused.body).toMatchObject({ policy: 'streams_per_key', limit: 1 });
    await reader.cancel();
    const u = await get(server, '/api/usage/', auth.x(ent));
    expect(u.body.quota.used).toBe(1);
    expect(u.body.rejected).toBe(1);
    expect(u.body.routes).toEqual({ stream: 1 });
  });
});
