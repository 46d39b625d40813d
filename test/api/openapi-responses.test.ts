/**
 * Every answer matches the OpenAPI document the service publishes (`GET /api/openapi.json`):
 * partners generate clients from it, so an answer that breaks it breaks them.
 *
 * A partner's engineer with a generated client, on the bundled sample: every path and method of
 * the document is requested with real ids from the data (questions, sources, theses, factors,
 * scenarios, claims, languages, probability requests, webhook subscriptions), every documented enum
 * value of each filter, paged (a few cursors walked), in every documented format, as every plan
 * (anonymous, pro, api, enterprise, a key with the `probability` scope), with the public beta on
 * and off (against each server's own document); 304 (the ETag sent back); and refused: 400, 401,
 * 403, 404, 405, 410 (a cursor of another snapshot), 413, 422, 429 (a quota of one, a second
 * stream), 503 (no snapshot yet; the stream, webhooks and probability endpoint off).
 * Each answer is checked against its operation in the document:
 *
 * - its status is one the operation lists;
 * - its Content-Type is one of the response's `content` media types (none on a 204 or 304);
 * - its JSON body validates against the response's schema with ajv (JSON Schema 2020-12, as
 *   OpenAPI 3.1: `required`, types and null unions, enums, formats, closed objects);
 * - every header the response declares `required` is there, every declared one it carries matches
 *   its schema, and the headers a client acts on (ETag, RateLimit*, Retry-After, Link, Allow,
 *   WWW-Authenticate, X-Snapshot …) are declared on the response that carries them.
 * - the export's rows, in JSON and NDJSON, each validate as the table's Export<Table>Row, its CSV
 *   header is that schema's columns in order, its Parquet a Parquet file; the stream's frames are
 *   StreamEvents.
 *
 * The crawl is derived from the document itself (its paths, parameters and enums), so a route
 * added later is crawled without editing this file; a path parameter with no known source of real
 * values fails the test until one is given here.
 */
import { cpSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { Ajv2020, type ValidateFunction } from 'ajv/dist/2020.js';
import addFormatsModule from 'ajv-formats';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import type { ServerHandle } from '../../api/server.ts';
import { loadModelsConfig } from '../../pipeline/models/config.ts';
import { startSimulator, type Simulator } from '../../pipeline/simulator/server.ts';
import { bootstrapIfEmpty } from '../../pipeline/bootstrap.ts';
import { loadConfig } from '../../pipeline/config.ts';
import { createLogger } from '../../pipeline/log.ts';
import { closeDuckdb } from '../../pipeline/warehouse/duckdb.ts';
import { memTempDir } from '../helpers/mem-temp-dir.ts';
import { newKey, serve } from './helpers.ts';
import { tempDataDir } from './fixtures.ts';

const addFormats = addFormatsModule as unknown as (ajv: Ajv2020) => void;

type Schema = Record<string, unknown>;
interface Header { required?: boolean; schema?: Schema }
interface DocResponse { headers?: Record<string, Header>; content?: Record<string, { schema?: Schema }> }
interface Parameter { name: string; in: 'path' | 'query' | 'header'; required?: boolean; schema: Schema }
interface Operation { operationId: string; parameters?: Parameter[]; responses: Record<string, DocResponse>; requestBody?: unknown }
interface Document { paths: Record<string, Record<string, Operation>>; components: { schemas: Record<string, Schema> } }

/** One request made and what the document says of it. */
interface Answer { method: string; url: string; status: number; problems: string[] }

const SAMPLE = path.resolve(import.meta.dirname, '..', '..', 'data', 'sample', 'forecastbench');

let dataDir: string;
let cleanupData: () => void;
let sim: Simulator;
let server: ServerHandle;
let doc: Document;
let ajv: Ajv2020;
const keys: Record<string, string | null> = {};

/** Headers a client reads: when an answer carries one, its response in the document must declare it. */
const CLIENT_HEADERS = [
  'ETag', 'RateLimit', 'RateLimit-Policy', 'X-RateLimit-Remaining', 'Retry-After', 'Link', 'Allow', 'WWW-Authenticate',
  'X-Snapshot', 'Content-Disposition', 'Last-Modified', 'Idempotent-Replayed', 'Cache-Control',
];

beforeAll(async () => {
  // The bundled sample as a first start makes it (its two dated runs and one now, the bundled
  // claims, theses, factors and scenarios), the models forecasting six questions a run in English:
  // every kind of answer, with many of its figures null, in a few seconds.
  ({ dir: dataDir, cleanup: cleanupData } = memTempDir('quorum-openapi-responses-'));
  const config = loadConfig({
    QUORUM_DATA_DIR: dataDir, QUORUM_SAMPLE_DIR: SAMPLE, QUORUM_VENUES: 'none', QUORUM_MAX_QUESTIONS: '6', QUORUM_LANGS: 'en', LOG_LEVEL: 'silent',
  });
  const runs = await bootstrapIfEmpty(config, createLogger('silent'));
  expect(runs.map((r) => r.status)).toEqual(['completed', 'completed', 'completed']);
  await closeDuckdb();
  sim = await startSimulator({ port: 0 });
  const models = loadModelsConfig({ env: {}, simulatorUrl: sim.url, simulator: { priceInPerMtok: 1, priceOutPerMtok: 1 } });
  server = await serve(dataDir, {
    probability: { models, timeoutMs: 5000, evidenceProviders: [] },
    events: { pollMs: 50, webhooks: { allowPrivate: true, backoffMs: 30, maxBackoffMs: 100, timeoutMs: 300, retryWindowMs: 1000 } },
    nextRunAt: () => new Date(Date.now() + 3_600_000),
  });
  keys.anonymous = null;
  keys.pro = newKey(dataDir, 'pro').key;
  keys.api = newKey(dataDir, 'api').key;
  keys.enterprise = newKey(dataDir, 'enterprise').key;
  keys.probability = newKey(dataDir, 'pro', ['probability']).key;
  doc = (await (await fetch(`${server.url}/api/openapi.json`)).json()) as Document;
  ajv = new Ajv2020({ strict: false, allErrors: true, validateFormats: true });
  addFormats(ajv);
  // OpenAPI's `#/components/schemas/X` refs resolve against the document: components under an id.
  ajv.addSchema({ $id: 'oas', components: doc.components });
}, 180_000);

afterAll(async () => {
  await server?.close();
  await sim?.close();
  cleanupData?.();
});

const validators = new Map<string, ValidateFunction>();
function validatorOf(schema: Schema, cacheKey: string): ValidateFunction {
  let v = validators.get(cacheKey);
  if (!v) {
    const rewritten = JSON.parse(JSON.stringify(schema).replaceAll('"#/components/', '"oas#/components/')) as Schema;
    v = ajv.compile(rewritten);
    validators.set(cacheKey, v);
  }
  return v;
}

/** The operation of `method` `template`. */
function op(template: string, method: string): Operation {
  const o = doc.paths[template]?.[method];
  if (!o) throw new Error(`no ${method} ${template} in the document`);
  return o;
}

/**
 * The mismatches between an answer and the document's operation: status, content type, body
 * (ajv), declared and required headers.
 */
function conformance(o: Operation, res: { status: number; headers: Headers }, text: string, opKey: string): string[] {
  const problems: string[] = [];
  const documented = o.responses[String(res.status)] ?? o.responses.default;
  if (!documented) return [`status ${res.status} is not documented (${Object.keys(o.responses).join(', ')}); body: ${text.slice(0, 200)}`];
  const type = res.headers.get('content-type')?.split(';')[0]?.trim() ?? null;
  const content = documented.content ?? {};
  if (Object.keys(content).length === 0) {
    if (text !== '') problems.push(`${res.status}: a body where the document has none: ${text.slice(0, 100)}`);
  } else if (type === null || !(type in content)) {
    problems.push(`${res.status}: Content-Type ${type} is not documented (${Object.keys(content).join(', ')})`);
  } else if ((type === 'application/json' || type.endsWith('+json')) && content[type]!.schema) {
    let body: unknown;
    try {
      body = JSON.parse(text);
    } catch {
      problems.push(`${res.status} ${type}: not JSON: ${text.slice(0, 100)}`);
    }
    if (body !== undefined) {
      const validate = validatorOf(content[type]!.schema!, `${opKey} ${res.status} ${type}`);
      if (!validate(body)) {
        const errs = (validate.errors ?? []).slice(0, 6).map((e) => {
          const at = e.instancePath.split('/').slice(0, 8).join('/');
          let value: unknown = body;
          for (const seg of e.instancePath.split('/').slice(1)) value = (value as Record<string, unknown>)?.[seg];
          return `${at} ${e.message}${e.params && Object.keys(e.params).length ? ` ${JSON.stringify(e.params)}` : ''} (value ${JSON.stringify(value)?.slice(0, 80)})`;
        });
        problems.push(`${res.status} body: ${errs.join('; ')}`);
      }
    }
  }
  const declared = documented.headers ?? {};
  const declaredLower = new Map(Object.entries(declared).map(([k, h]) => [k.toLowerCase(), h]));
  for (const [name, h] of Object.entries(declared)) {
    if (h.required && !res.headers.has(name)) problems.push(`${res.status}: required header ${name} missing`);
  }
  for (const name of CLIENT_HEADERS) {
    if (res.headers.has(name) && !declaredLower.has(name.toLowerCase())) problems.push(`${res.status}: header ${name} (${res.headers.get(name)}) is not declared`);
  }
  for (const [name, h] of declaredLower) {
    const v = res.headers.get(name);
    if (v === null || !h.schema) continue;
    const validate = validatorOf(h.schema, `${opKey} ${res.status} header ${name}`);
    if (!validate(v)) problems.push(`${res.status}: header ${name}: ${JSON.stringify(v)} ${validate.errors?.[0]?.message}`);
  }
  return problems;
}

/** The answers of the running test (each test reports its own). */
const answers: Answer[] = [];
beforeEach(() => {
  answers.length = 0;
});

/** Requests `url` as the operation `template`/`method` and records its mismatches; returns the answer. */
async function call(
  template: string,
  method: string,
  url: string,
  init: { key?: string | null; headers?: Record<string, string>; body?: unknown; on?: ServerHandle } = {},
): Promise<{ status: number; headers: Headers; text: string; body: any }> {
  const s = init.on ?? server;
  const headers: Record<string, string> = { ...(init.headers ?? {}) };
  if (init.key) headers['X-API-Key'] = init.key;
  if (init.body !== undefined) headers['content-type'] = 'application/json';
  const ac = new AbortController();
  const res = await fetch(`${s.url}${url}`, {
    method: method.toUpperCase(),
    headers,
    body: init.body === undefined ? undefined : JSON.stringify(init.body),
    signal: ac.signal,
  });
  let text: string;
  if (res.headers.get('content-type')?.startsWith('text/event-stream')) {
    ac.abort();
    text = '';
  } else if (/parquet/.test(res.headers.get('content-type') ?? '')) {
    text = `<${(await res.arrayBuffer()).byteLength} bytes>`;
  } else text = await res.text();
  const o = op(template, method);
  // (a stream's or a Parquet file's body is not text: its media type is what is checked)
  const problems = conformance(o, res, /event-stream|parquet/.test(res.headers.get('content-type') ?? '') ? '' : text, `${method} ${template}`);
  answers.push({ method: method.toUpperCase(), url, status: res.status, problems });
  let body: any = null;
  try {
    body = JSON.parse(text);
  } catch {
    body = text;
  }
  return { status: res.status, headers: res.headers, text, body };
}

/** The mismatches found so far, one line each (at most `n`). */
function report(n = 60): string[] {
  const lines = answers.filter((a) => a.problems.length).map((a) => `${a.method} ${a.url} → ${a.status}: ${a.problems.join(' | ')}`);
  return lines.slice(0, n);
}


/** Values of a path parameter: where the data's real ids are read (a list route and its field). */
const ID_SOURCES: Record<string, { url: string; list: string; field: string }> = {
  question_id: { url: '/api/predictions/lang/en?limit=30', list: 'predictions', field: 'question_id' },
  market_id: { url: '/api/predictions/resolved?limit=30', list: 'predictions', field: 'question_id' },
  source_slug: { url: '/api/track-records/?limit=50', list: 'sources', field: 'slug' },
  claim_id: { url: '/api/claims/?limit=20', list: 'claims', field: 'claim_id' },
  thesis_id: { url: '/api/clusters/?limit=50&vintages=0', list: 'clusters', field: 'thesis_id' },
  scenario_id: { url: '/api/scenarios/?limit=50', list: 'scenarios', field: 'scenario_id' },
  factor_id: { url: '/api/factors/?limit=50', list: 'factors', field: 'factor_id' },
};

/** A valid value of a query parameter that is not an enum (by name, else from its schema). */
function queryValues(p: Parameter, ids: Record<string, string[]>): string[] {
  const byName: Record<string, string[]> = {
    limit: ['2'],
    days: ['1', '90'],
    min_edge: ['0', '0.2'],
    source: ids.source_slug!.slice(0, 2),
    question_id: ids.question_id!.slice(0, 2),
    types: ['consensus.updated,run.completed'],
    since: p.schema.type === 'integer' ? ['0'] : ['2025-01-01', '2026-03-01T12:00:00Z'],
  };
  if (p.name.endsWith('cursor')) return []; // walked from the answers
  if (byName[p.name]) return byName[p.name]!;
  if (p.name.endsWith('_since')) return ['2025-01-01', '2026-03-01T12:00:00Z'];
  if (p.name.endsWith('_limit')) return ['1'];
  const s = p.schema;
  if (s.type === 'boolean') return ['true', 'false'];
  if (s.type === 'integer') return [String(s.minimum ?? 1), String(s.default ?? 1)];
  if (typeof s.example === 'string') return [s.example];
  throw new Error(`no valid value known for query parameter ${p.name} (${JSON.stringify(s)})`);
}

const TEMPLATE_PARAM = /\{([A-Za-z_][A-Za-z0-9_]*)\}/g;
const fill = (template: string, values: Record<string, string>) =>
  template.replace(TEMPLATE_PARAM, (_m, n: string) => encodeURIComponent(values[n] ?? 'x'));
const withQuery = (url: string, q: Record<string, string>) => {
  const qs = new URLSearchParams(q).toString();
  return qs ? `${url}?${qs}` : url;
};

/** Every GET operation of the document: template, its operation. */
function getOperations(): Array<[string, Operation]> {
  return Object.entries(doc.paths).flatMap(([t, item]) => (item.get ? [[t, item.get] as [string, Operation]] : []));
}

/** The cursor fields of a body (`next_cursor` → `cursor`, `next_vintages_cursor` → `vintages_cursor`). */
function cursorsOf(body: any): Array<[string, string]> {
  if (!body || typeof body !== 'object') return [];
  return Object.entries(body)
    .filter(([k, v]) => /^next_(\w+_)?cursor$/.test(k) && typeof v === 'string')
    .map(([k, v]) => [k.slice('next_'.length), v as string]);
}

let ids: Record<string, string[]>;
/** Cursors walked in the crawl: each one's operation, page request and parameter. */
const walked: Array<{ template: string; url: string; query: Record<string, string>; param: string; cursor: string }> = [];
let pathValues: Record<string, string[]>;

describe('every answer matches the OpenAPI document', () => {
  it('the data has real ids for every path parameter', async () => {
    ids = {};
    for (const [name, src] of Object.entries(ID_SOURCES)) {
      const got = await call(src.url.includes('/lang/') ? '/api/predictions/lang/{lang}' : Object.keys(doc.paths).find((t) => fill(t, {}) === src.url.split('?')[0])!, 'get', src.url, { key: keys.enterprise });
      ids[name] = (got.body[src.list] ?? []).map((x: any) => x[src.field]);
      expect(ids[name]!.length, `${name} from ${src.url}`).toBeGreaterThan(0);
    }
    ids.question_id = [...new Set([...ids.question_id!, ...ids.market_id!])];
    ids.market_id = ids.question_id;
    // languages: those a detail lists
    const detail = await call('/api/predictions/{market_id}', 'get', `/api/predictions/${encodeURIComponent(ids.question_id[0]!)}`, { key: keys.enterprise });
    ids.lang = detail.body.langs ?? ['en'];
    // a probability request (the simulator's models) and a webhook subscription
    const asked = await call('/api/probability/', 'post', '/api/probability/', {
      key: keys.probability,
      body: { question: 'Will the conformance test event happen before the close date?', close_date: new Date(Date.now() + 90 * 86_400_000).toISOString(), category: 'science', market_probability: 0.4 },
    });
    expect(asked.status, asked.text.slice(0, 300)).toBe(200);
    ids.request_id = [asked.body.request_id ?? asked.headers.get('X-Probability-Request-Id')];
    const sub = await call('/api/webhooks/', 'post', '/api/webhooks/', { key: keys.enterprise, body: { url: 'http://127.0.0.1:9/hook', types: ['run.completed'], description: 'conformance' } });
    expect(sub.status, sub.text.slice(0, 300)).toBe(201);
    ids.id = [sub.body.id];
    pathValues = { ...ids };
    for (const [t, o] of Object.entries(doc.paths).flatMap(([t, item]) => Object.values(item).map((o) => [t, o] as const))) {
      for (const p of o.parameters ?? []) {
        if (p.in !== 'path') continue;
        if (Array.isArray(p.schema.enum)) pathValues[p.name] = p.schema.enum as string[];
        expect(pathValues[p.name], `${t}: no real values of path parameter ${p.name}`).toBeDefined();
      }
    }
    expect(report()).toEqual([]);
  });

  it('every GET operation with every documented filter value, paged, as every plan', async () => {
    for (const [template, o] of getOperations()) {
      const params = o.parameters ?? [];
      const pathParams = params.filter((p) => p.in === 'path');
      // each path parameter through its values (a few), the others at their first
      const combos: Array<Record<string, string>> = [{}];
      for (const p of pathParams) {
        const values = pathValues[p.name]!.slice(0, p.schema.enum ? undefined : 3);
        const base = combos[0]!;
        combos.splice(0, combos.length, ...values.map((v) => ({ ...base, [p.name]: v })));
      }
      for (const values of combos) {
        const url = fill(template, values);
        const stream = template === '/api/stream/';
        // as every plan
        for (const key of Object.values(keys)) await call(template, 'get', url, { key });
        // every filter value (enums, and a valid value of the others)
        for (const p of params.filter((x) => x.in === 'query')) {
          const vals = Array.isArray(p.schema.enum) ? (p.schema.enum as string[]) : queryValues(p, ids);
          for (const v of vals) await call(template, 'get', withQuery(url, { [p.name]: v }), { key: keys.enterprise });
        }
        if (stream) continue;
        // paged: a few cursors walked
        const limitName = params.find((p) => p.in === 'query' && /(^|_)limit$/.test(p.name) && p.name !== 'limit')?.name ?? (params.some((p) => p.name === 'limit') ? 'limit' : null);
        const q: Record<string, string> = limitName ? { [limitName]: '2' } : {};
        for (const lim of params.filter((p) => p.in === 'query' && /(^|_)limit$/.test(p.name))) q[lim.name] = '2';
        let page = await call(template, 'get', withQuery(url, q), { key: keys.enterprise });
        for (let i = 0; i < 3; i++) {
          const next = cursorsOf(page.body).filter(([name]) => params.some((p) => p.name === name));
          if (next.length === 0) break;
          walked.push({ template, url, query: q, param: next[0]![0], cursor: next[0]![1] });
          page = await call(template, 'get', withQuery(url, { ...q, [next[0]![0]]: next[0]![1] }), { key: keys.enterprise });
        }
        // conditional: the ETag sent back
        const etag = page.headers.get('ETag');
        if (etag) {
          for (const key of [keys.enterprise, keys.anonymous]) await call(template, 'get', withQuery(url, q), { key, headers: { 'If-None-Match': etag } });
        }
      }
    }
    expect(report()).toEqual([]);
  });

  it('refusals: 400, 401, 403, 404, 405, 410, 413, 422 are documented problems', async () => {
    const ops = Object.entries(doc.paths).flatMap(([t, item]) => Object.entries(item).map(([m, o]) => [t, m, o] as const));
    for (const [template, method, o] of ops) {
      const open = !Object.keys(o.responses).includes('401');
      const values = Object.fromEntries(Object.entries(pathValues).map(([k, v]) => [k, v[0]!]));
      const url = fill(template, values);
      const body = method === 'post' ? {} : undefined;
      const as = template.startsWith('/api/probability/') ? keys.probability : keys.enterprise;
      // 400: a parameter in bracket form, an out-of-range limit, a value not in an enum, a bad cursor
      await call(template, method, `${url}?x[]=1`, { key: as, body });
      for (const p of (o.parameters ?? []).filter((x) => x.in === 'query')) {
        if (/(^|_)limit$/.test(p.name) || p.name === 'days') await call(template, method, withQuery(url, { [p.name]: '0' }), { key: as, body });
        if (Array.isArray(p.schema.enum)) await call(template, method, withQuery(url, { [p.name]: 'nope' }), { key: as, body });
        if (p.name.endsWith('cursor')) await call(template, method, withQuery(url, { [p.name]: 'bm9wZQ' }), { key: as, body });
      }
      // 401: an unknown key
      if (!open) await call(template, method, url, { key: 'qk_live_unknownunknownunknown', body });
      // 404: path parameters that name nothing
      for (const p of (o.parameters ?? []).filter((x) => x.in === 'path')) {
        const nope = p.name.endsWith('_id') && p.name !== 'request_id' && !/thesis|scenario|factor|claim/.test(p.name) ? 'nope:nope' : p.name === 'request_id' ? 'prq_0123456789abcdef0123456789abcdef' : p.name === 'id' ? 'wh_nope' : 'nope-nope';
        await call(template, method, fill(template, { ...values, [p.name]: nope }), { key: as, body });
      }
    }
    // 405 itself: PUT on every path (documented on each operation of the path)
    for (const template of Object.keys(doc.paths)) {
      const values = Object.fromEntries(Object.entries(pathValues).map(([k, v]) => [k, v[0]!]));
      const method = Object.keys(doc.paths[template]!)[0]!;
      const res = await fetch(`${server.url}${fill(template, values)}`, { method: 'PUT', headers: { 'X-API-Key': keys.enterprise! } });
      const text = await res.text();
      const problems = conformance(op(template, method), res, text, `${method} ${template}`);
      answers.push({ method: 'PUT', url: fill(template, values), status: res.status, problems: res.status === 405 ? problems : [`PUT answered ${res.status}`, ...problems] });
    }
    // 410: every cursor walked, as if issued on another snapshot
    for (const w of walked) {
      const decoded = JSON.parse(Buffer.from(w.cursor, 'base64url').toString('utf8')) as { a?: unknown[] };
      if (!Array.isArray(decoded.a) || !/^r\d{8}T/.test(String(decoded.a.at(-1)))) continue;
      decoded.a[decoded.a.length - 1] = 'r20200101T000000Z-older000';
      const forged = Buffer.from(JSON.stringify(decoded), 'utf8').toString('base64url');
      const got = await call(w.template, 'get', withQuery(w.url, { ...w.query, [w.param]: forged }), { key: keys.enterprise });
      expect(got.status, `${w.template} ${w.param} of another snapshot`).toBe(410);
    }
    // 413 and 422: the POST operations' bodies
    const big = { question: 'x'.repeat(70_000) };
    await call('/api/probability/', 'post', '/api/probability/', { key: keys.probability, body: big });
    await call('/api/webhooks/', 'post', '/api/webhooks/', { key: keys.enterprise, body: { url: 'x'.repeat(70_000) } });
    const idem = { 'Idempotency-Key': 'conformance-1' };
    await call('/api/webhooks/', 'post', '/api/webhooks/', { key: keys.enterprise, headers: idem, body: { url: 'http://127.0.0.1:9/a' } });
    await call('/api/webhooks/', 'post', '/api/webhooks/', { key: keys.enterprise, headers: idem, body: { url: 'http://127.0.0.1:9/b' } });
    // 400 invalid_body: not JSON
    for (const template of ['/api/probability/', '/api/webhooks/']) {
      const key = template === '/api/probability/' ? keys.probability! : keys.enterprise!;
      const res = await fetch(`${server.url}${template}`, { method: 'POST', headers: { 'X-API-Key': key, 'content-type': 'application/json' }, body: '{not json' });
      answers.push({ method: 'POST', url: `${template} (malformed)`, status: res.status, problems: conformance(op(template, 'post'), res, await res.text(), `post ${template}`) });
      expect(res.status).toBe(400);
    }
    expect(report()).toEqual([]);
  });

  it('webhooks: a subscription created, its secret rotated, replayed, its deliveries paged, deleted', async () => {
    const created = await call('/api/webhooks/', 'post', '/api/webhooks/', { key: keys.enterprise, body: { url: 'http://127.0.0.1:9/hook2' } });
    const id = created.body.id as string;
    await call('/api/webhooks/{id}/rotate-secret', 'post', `/api/webhooks/${id}/rotate-secret`, { key: keys.enterprise });
    const replay = await call('/api/webhooks/{id}/replay', 'post', `/api/webhooks/${id}/replay?since=0`, { key: keys.enterprise });
    expect(replay.status, replay.text).toBe(202);
    let page = await call('/api/webhooks/{id}/deliveries', 'get', `/api/webhooks/${id}/deliveries?limit=1`, { key: keys.enterprise });
    for (let i = 0; i < 3 && typeof page.body.next_cursor === 'string'; i++) {
      page = await call('/api/webhooks/{id}/deliveries', 'get', `/api/webhooks/${id}/deliveries?limit=1&cursor=${encodeURIComponent(page.body.next_cursor)}`, { key: keys.enterprise });
    }
    expect((await call('/api/webhooks/{id}/', 'delete', `/api/webhooks/${id}/`, { key: keys.enterprise })).status).toBe(204);
    expect(report()).toEqual([]);
  });

  it('the export in every format: each JSON row and NDJSON line is its table\'s documented row, the CSV header its columns', async () => {
    const o = op('/api/export/{table}/', 'get');
    const tables = o.parameters!.find((p) => p.name === 'table')!.schema.enum as string[];
    const problems: string[] = [];
    for (const table of tables) {
      const rowName = `Export${table.split('_').map((w) => w[0]!.toUpperCase() + w.slice(1)).join('')}Row`;
      const rowSchema = doc.components.schemas[rowName];
      expect(rowSchema, rowName).toBeDefined();
      const validate = validatorOf({ $ref: `#/components/schemas/${rowName}` }, rowName);
      const base = `/api/export/${table}/?limit=40`;
      const json = await call('/api/export/{table}/', 'get', `${base}&output=json`, { key: keys.enterprise });
      expect(Array.isArray(json.body), `${table} json`).toBe(true);
      for (const row of json.body) if (!validate(row)) problems.push(`${table} json row: ${ajv.errorsText(validate.errors)}`);
      const jsonl = await call('/api/export/{table}/', 'get', `${base}&output=jsonl`, { key: keys.enterprise });
      for (const line of jsonl.text.split('\n').filter(Boolean)) if (!validate(JSON.parse(line))) problems.push(`${table} jsonl line: ${ajv.errorsText(validate.errors)}`);
      const csv = await call('/api/export/{table}/', 'get', `${base}&output=csv`, { key: keys.enterprise });
      const header = csv.text.split(/\r?\n/)[0]!.split(',');
      const columns = Object.keys((rowSchema as { properties: Record<string, unknown> }).properties);
      if (JSON.stringify(header) !== JSON.stringify(columns)) problems.push(`${table} csv header ${header.join(',')} ≠ ${columns.join(',')}`);
      const parquet = await fetch(`${server.url}${base}&output=parquet`, { headers: { 'X-API-Key': keys.enterprise! } });
      const bytes = Buffer.from(await parquet.arrayBuffer());
      if (bytes.subarray(0, 4).toString() !== 'PAR1') problems.push(`${table} parquet: not a Parquet file`);
    }
    expect(problems.slice(0, 20)).toEqual([]);
    expect(report()).toEqual([]);
  });

  it('the event stream\'s frames are documented StreamEvents', async () => {
    const ac = new AbortController();
    const res = await fetch(`${server.url}/api/stream/?since=0`, { headers: { 'X-API-Key': keys.enterprise! }, signal: ac.signal });
    expect(res.status).toBe(200);
    const reader = res.body!.getReader();
    let buf = '';
    const started = Date.now();
    while (Date.now() - started < 1500 && (buf.match(/\n\n/g) ?? []).length < 30) {
      const t = setTimeout(() => ac.abort(), 1500);
      const chunk = await reader.read().catch(() => ({ done: true, value: undefined }));
      clearTimeout(t);
      if (chunk.done) break;
      buf += Buffer.from(chunk.value!).toString('utf8');
    }
    ac.abort();
    const problems: string[] = [];
    let n = 0;
    for (const frame of buf.split('\n\n')) {
      const event = /^event: (.+)$/m.exec(frame)?.[1];
      const data = [...frame.matchAll(/^data: (.*)$/gm)].map((m) => m[1]).join('\n');
      if (!data) continue;
      n++;
      const name = event === 'stream.overflow' ? 'StreamOverflow' : event === 'stream.gap' ? 'StreamGap' : 'StreamEvent';
      const validate = validatorOf({ $ref: `#/components/schemas/${name}` }, name);
      if (!validate(JSON.parse(data))) problems.push(`${event}: ${ajv.errorsText(validate.errors)}: ${data.slice(0, 200)}`);
    }
    expect(n, 'events streamed').toBeGreaterThan(0);
    expect(problems.slice(0, 10)).toEqual([]);
    // a second stream of a key that may have one open: 429 streams_per_key
    const s = await serve(dataDir, { probability: false, events: { maxPerKey: 1 } });
    const held = new AbortController();
    try {
      const first = await fetch(`${s.url}/api/stream/`, { headers: { 'X-API-Key': keys.enterprise! }, signal: held.signal });
      expect(first.status).toBe(200);
      expect((await call('/api/stream/', 'get', '/api/stream/', { key: keys.enterprise, on: s })).status).toBe(429);
    } finally {
      held.abort();
      await s.close();
    }
    expect(report()).toEqual([]);
  });

  /** Every operation once with `key` on `on` (path values real, a POST with a valid body). */
  async function everyOperation(on: ServerHandle, key: string | null): Promise<Map<string, number>> {
    const statuses = new Map<string, number>();
    const values = Object.fromEntries(Object.entries(pathValues).map(([k, v]) => [k, v[0]!]));
    for (const [template, item] of Object.entries(doc.paths)) {
      for (const method of Object.keys(item)) {
        const body = template === '/api/probability/' ? { question: 'Will the conformance event happen before the close date?', close_date: new Date(Date.now() + 90 * 86_400_000).toISOString(), category: 'science' }
          : template === '/api/webhooks/' && method === 'post' ? { url: 'http://127.0.0.1:9/hook3' }
          : method === 'post' ? {} : undefined;
        const got = await call(template, method, fill(template, values), { key, body, on });
        statuses.set(`${method} ${template}`, got.status);
      }
    }
    return statuses;
  }

  it('429: every operation refused by a used-up quota answers a documented problem with Retry-After', async () => {
    const copy = mkdtempSync(path.join(tmpdir(), 'quorum-openapi-responses-quota-'));
    cpSync(dataDir, copy, { recursive: true });
    const s = await serve(copy, { probability: false, limits: { anonymousPerHour: 1, proPerDay: 1, apiPerDay: 1, enterprisePerDay: 1, probabilityPerDay: 1 } });
    try {
      let limited = 0;
      for (const plan of ['anonymous', 'pro', 'api', 'enterprise'] as const) {
        const key = plan === 'anonymous' ? null : newKey(copy, plan).key;
        await fetch(`${s.url}/api/predictions/accuracy`, { headers: key ? { 'X-API-Key': key } : {} }).then((r) => r.arrayBuffer());
        const statuses = await everyOperation(s, key);
        limited += [...statuses.values()].filter((st) => st === 429).length;
      }
      expect(limited).toBeGreaterThan(40);
    } finally {
      await s.close();
      rmSync(copy, { recursive: true, force: true });
    }
    expect(report()).toEqual([]);
  });

  it('503: no snapshot yet, and the stream, webhooks and probability endpoint off, are documented problems', async () => {
    const empty = await tempDataDir();
    const s = await serve(empty.dir, { probability: false, events: false });
    try {
      const statuses = await everyOperation(s, newKey(empty.dir, 'enterprise').key);
      expect([...statuses.values()].filter((st) => st === 503).length).toBeGreaterThan(30);
      // the probability endpoint's own routes, with its scope
      await everyOperation(s, newKey(empty.dir, 'enterprise', ['probability']).key);
    } finally {
      await s.close();
      await empty.cleanup();
    }
    expect(report()).toEqual([]);
  });

  it('with the public beta off, anonymous and pro callers get what that server\'s own document says', async () => {
    const s = await serve(dataDir, { probability: false, publicBeta: false });
    try {
      const betaOff = (await (await fetch(`${s.url}/api/openapi.json`)).json()) as Document;
      const values = Object.fromEntries(Object.entries(pathValues).map(([k, v]) => [k, v[0]!]));
      for (const [template, item] of Object.entries(betaOff.paths)) {
        const o = item.get;
        if (!o || template === '/api/stream/') continue;
        for (const key of [null, keys.pro]) {
          const url = fill(template, values);
          const res = await fetch(`${s.url}${url}`, { headers: key ? { 'X-API-Key': key } : {} });
          const text = /parquet/.test(res.headers.get('content-type') ?? '') ? '' : await res.text();
          answers.push({ method: 'GET', url: `${url} (beta off, ${key ? 'pro' : 'anonymous'})`, status: res.status, problems: conformance(o, res, text, `beta-off get ${template}`) });
        }
      }
    } finally {
      await s.close();
    }
    expect(report()).toEqual([]);
  });
});
