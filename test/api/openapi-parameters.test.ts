/**
 * The OpenAPI document's grammar of a parameter is the one the server applies: a client generated
 * from the document neither sends a value the server refuses nor refuses one it takes.
 *
 * - `category`, on every route that takes one (query or path), is one of the nine categories:
 *   the server refuses anything else (400 `invalid_parameter` listing the nine; the accuracy path,
 *   a 404 naming them), so the document lists them as the parameter's enum, as it does for the
 *   export's `category` and every `venue` (QA: six routes documented it as any string).
 *
 * - `Idempotency-Key` (POST /api/probability/ and /api/webhooks/) is 1-200 visible ASCII characters:
 *   the document's schema of the header takes exactly the keys the server takes (QA: it documented
 *   any string up to 200 characters; the server refused an empty key, a space or a non-ASCII one).
 *
 * - 400: every operation documents it. Every mounted route refuses a query parameter in bracket form
 *   (`x[]=1`, api/http/params.ts rejectBracketedParams) and the accuracy summary a `category`, each a
 *   400 `invalid_parameter`; the document listed no 400 on the nine routes without a parameter of
 *   their own (`/healthz` … `/api/webhooks/`; QA), so a generated client had no type for the problem.
 *
 * Real HTTP against the fixture snapshot (the probability endpoint's models: the model simulator),
 * with an enterprise key (the probability endpoint: a key with its scope).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ServerHandle } from '../../api/server.ts';
import { loadModelsConfig } from '../../pipeline/models/config.ts';
import { startSimulator, type Simulator } from '../../pipeline/simulator/server.ts';
import { CATEGORIES } from '../../pipeline/warehouse/tables.ts';
import { fixtureData, withFeeds } from './fixtures.ts';
import { FIXTURE_PATH_VALUES as VALUES, fixtureDir, get, newKey, serve } from './helpers.ts';
import { concretePath } from './route-paths.ts';

type Param = { name: string; in: string; schema: Record<string, unknown> };
type Operation = { parameters?: Param[] };

let dir: string;
let cleanup: () => Promise<void>;
let server: ServerHandle;
let key: string;
let scoped: string;
let sim: Simulator;

beforeAll(async () => {
  sim = await startSimulator({ port: 0 });
  const models = loadModelsConfig({ env: {}, simulatorUrl: sim.url, simulator: { priceInPerMtok: 1, priceOutPerMtok: 1 } });
  ({ dir, cleanup } = await fixtureDir(withFeeds(fixtureData(1))));
  server = await serve(dir, { probability: { models, timeoutMs: 3000, evidenceProviders: [] } });
  key = newKey(dir, 'enterprise').key;
  scoped = newKey(dir, 'pro', ['probability']).key;
});

afterAll(async () => {
  await server?.close();
  await sim?.close();
  await cleanup?.();
});

/** The status of GET `url` (a stream is aborted once its headers arrived). */
async function statusOf(url: string, as = key): Promise<number> {
  const ac = new AbortController();
  const res = await fetch(`${server.url}${url}`, { headers: { 'X-API-Key': as }, signal: ac.signal });
  ac.abort();
  return res.status;
}

describe('the documented grammar of category is the server\'s', () => {
  it('every category parameter lists the nine categories, which the server takes, and it refuses any other', async () => {
    const doc = (await get(server, '/api/openapi.json')).body as { paths: Record<string, Record<string, Operation>> };
    const seen: string[] = [];
    for (const [template, item] of Object.entries(doc.paths)) {
      const op = item.get;
      const param = op?.parameters?.find((p) => p.name === 'category');
      if (!param) continue;
      seen.push(`${param.in} ${template}`);
      expect(param.schema.enum, `${template}: category`).toEqual([...CATEGORIES]);
      const at = (value: string) => {
        if (param.in === 'path') return concretePath(template, { ...VALUES, category: value });
        const base = concretePath(template, VALUES);
        return `${base}?category=${encodeURIComponent(value)}`;
      };
      for (const c of CATEGORIES) expect(await statusOf(at(c)), `${template} category=${c}`).not.toBe(400);
      expect(await statusOf(at('nope')), `${template} category=nope`).toBe(param.in === 'path' ? 404 : 400);
    }
    // the routes that filter by category, the summary of one category, and the event stream
    expect(seen.sort()).toEqual([
      'path /api/predictions/accuracy/{category}',
      'query /api/analysis/information-value/',
      'query /api/events/lang/{lang}/',
      'query /api/export/{table}/',
      'query /api/leaderboard/',
      'query /api/predictions/edges/',
      'query /api/predictions/lang/{lang}',
      'query /api/predictions/resolved',
      'query /api/stream/',
      'query /api/track-records/',
    ]);
  });
});

describe('every operation documents the 400 the server answers', () => {
  it('a bracket-form query parameter is a documented 400 on every GET operation, as ?category= on the accuracy summary', async () => {
    const doc = (await get(server, '/api/openapi.json')).body as { paths: Record<string, Record<string, { responses: Record<string, unknown> }>> };
    const undocumented: string[] = [];
    for (const [template, item] of Object.entries(doc.paths)) {
      for (const [method, op] of Object.entries(item)) {
        if (method === 'get') expect(await statusOf(`${concretePath(template, VALUES)}?x[]=1`, template.startsWith('/api/probability/') ? scoped : key), `${template}?x[]=1`).toBe(400);
        if (!op.responses['400']) undocumented.push(`${method.toUpperCase()} ${template}`);
      }
    }
    expect(await statusOf('/api/predictions/accuracy?category=politics')).toBe(400);
    expect(undocumented).toEqual([]);
  });
});

describe('X-Snapshot is documented on every answer that carries it', () => {
  it('the front door sets it on every response once a snapshot is loaded: every documented response lists it (QA: only JSON 200s and the export did)', async () => {
    const doc = (await get(server, '/api/openapi.json')).body as { paths: Record<string, Record<string, { responses: Record<string, { headers?: Record<string, unknown> }> }>> };
    const snapshot = (await get(server, '/healthz')).res.headers.get('X-Snapshot');
    expect(snapshot).toBeTruthy();
    for (const url of ['/healthz', '/api/webhooks/?x[]=1', '/api/predictions/nope:nope']) {
      expect((await get(server, url, { headers: { 'X-API-Key': key } })).res.headers.get('X-Snapshot'), url).toBe(snapshot);
    }
    const missing: string[] = [];
    for (const [template, item] of Object.entries(doc.paths)) {
      for (const [method, op] of Object.entries(item)) {
        for (const [status, r] of Object.entries(op.responses)) if (!r.headers?.['X-Snapshot']) missing.push(`${method.toUpperCase()} ${template} ${status}`);
      }
    }
    // the 304s too (QA: a 304 documented no header at all)
    expect(missing.slice(0, 5)).toEqual([]);
  });
});

describe('the quota headers are documented on the problems that carry them', () => {
  it('a charged request refused (400, 403, 404, 405) carries X-RateLimit-Remaining, and its documented response lists the quota headers (QA: only 200 and 429 did)', async () => {
    const doc = (await get(server, '/api/openapi.json')).body as { paths: Record<string, Record<string, { responses: Record<string, { headers?: Record<string, unknown> }> }>> };
    const cases: Array<[string, string, string, number]> = [
      ['/api/leaderboard/', 'get', '/api/leaderboard/?mode[]=blind', 400],
      ['/api/predictions/{market_id}', 'get', '/api/predictions/nope:nope', 404],
      ['/api/probability/{request_id}', 'get', '/api/probability/prq_0', 403],
      ['/api/webhooks/', 'post', '/api/webhooks/', 405],
    ];
    for (const [template, method, url, status] of cases) {
      const res = await fetch(`${server.url}${url}`, { method: status === 405 ? 'PUT' : 'GET', headers: { 'X-API-Key': key } });
      await res.arrayBuffer();
      expect(res.status, url).toBe(status);
      expect(res.headers.get('X-RateLimit-Remaining'), url).toBeTruthy();
      const headers = doc.paths[template]![method]!.responses[String(status)]!.headers ?? {};
      for (const h of ['X-RateLimit-Remaining', 'RateLimit', 'RateLimit-Policy']) expect(Object.keys(headers), `${template} ${status}`).toContain(h);
    }
  });
});

/** Whether a JSON-schema string `schema` (type, pattern, minLength, maxLength) takes `v`. */
function takes(schema: Record<string, unknown>, v: string): boolean {
  if (schema.type !== 'string') return false;
  if (typeof schema.minLength === 'number' && v.length < schema.minLength) return false;
  if (typeof schema.maxLength === 'number' && v.length > schema.maxLength) return false;
  return typeof schema.pattern !== 'string' || new RegExp(schema.pattern, 'u').test(v);
}

describe('the documented grammar of Idempotency-Key is the server\'s', () => {
  const KEYS = ['retry-1', 'A'.repeat(200), '~!{}', '', 'a b', 'clé', 'A'.repeat(201)];
  const future = new Date(Date.now() + 90 * 86_400_000).toISOString();
  // a body each route takes up to its Idempotency-Key check (the webhook's http URL is refused after it)
  const ROUTES = [
    { path: '/api/probability/', key: () => scoped, body: { question: 'Will the idempotency test event happen before the close date?', close_date: future, category: 'science', market_probability: 0.4 } },
    { path: '/api/webhooks/', key: () => key, body: { url: 'http://127.0.0.1:9/hook' } },
  ];

  it('the header schema of both POST routes takes exactly the keys the server takes', async () => {
    const doc = (await get(server, '/api/openapi.json')).body as { paths: Record<string, Record<string, Operation>> };
    for (const route of ROUTES) {
      const param = doc.paths[route.path]!.post!.parameters!.find((p) => p.name === 'Idempotency-Key')!;
      expect(param.in).toBe('header');
      for (const [i, k] of KEYS.entries()) {
        const res = await fetch(`${server.url}${route.path}`, {
          method: 'POST',
          headers: { 'X-API-Key': route.key(), 'Content-Type': 'application/json', 'Idempotency-Key': k },
          body: JSON.stringify({ ...route.body, ...(route.path === '/api/probability/' ? { question: `${route.body.question} (${i})` } : {}) }),
        });
        const problem = res.status === 400 ? ((await res.json()) as { parameter?: string }) : (await res.arrayBuffer(), null);
        const refused = problem?.parameter === 'Idempotency-Key';
        if (route.path === '/api/probability/' && !refused) expect(res.status, `${route.path} ${JSON.stringify(k)}`).toBe(200);
        if (route.path === '/api/webhooks/' && !refused) expect(problem?.parameter, `${route.path} ${JSON.stringify(k)}`).toBe('url');
        expect(takes(param.schema, k), `${route.path}: the document on Idempotency-Key ${JSON.stringify(k)}`).toBe(!refused);
      }
    }
  });
});
