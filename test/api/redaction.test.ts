/**
 * Keys are never echoed or logged (issue 9, point 8): a key placed in the path, the query string,
 * a header other than the auth ones, or a cursor is absent from the HTTP answer (body and headers)
 * and from every captured log line. The server is given a plain pino logger (no redaction of its
 * own), as the CLI gives it the pipeline's: the API must redact whatever logger it is handed.
 */
import fc from 'fast-check';
import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { generateKey } from '../../api/auth/keys.ts';
import { rawRoute } from '../../api/http/registry.ts';
import { redactDeep, redactKeys } from '../../api/logging/redact.ts';
import type { ServerHandle } from '../../api/server.ts';
import { fixtureData, withFeeds } from './fixtures.ts';
import { fixtureDir, get, linesStream, newKey, serve, type Got } from './helpers.ts';

const b64url = (json: unknown) => Buffer.from(JSON.stringify(json), 'utf8').toString('base64url');
/** Every character percent-encoded. */
const pct = (s: string) => [...Buffer.from(s, 'utf8')].map((b) => `%${b.toString(16).toUpperCase().padStart(2, '0')}`).join('');

describe('redactKeys', () => {
  const key = generateKey();

  it('replaces the key literally, inside longer text, percent-encoded (any case) and inside base64', () => {
    expect(redactKeys(`/api/${key}/x`)).toBe('/api/qrm_[redacted]/x');
    expect(redactKeys(`abc${key}def`)).toBe('abcqrm_[redacted]'); // the whole base62 run goes
    expect(redactKeys(`abc${key}.def`)).toBe('abcqrm_[redacted].def');
    expect(redactKeys(pct(key))).toBe('qrm_[redacted]');
    expect(redactKeys(pct(key).toLowerCase())).toBe('qrm_[redacted]');
    expect(redactKeys(`q${pct(key).slice(3, 30)}${key.slice(10)}`)).toBe('qrm_[redacted]');
    for (const pad of ['', 'a', 'ab', 'abc']) {
      const token = b64url({ v: 1, k: 'edges', a: [pad, key] });
      expect(redactKeys(`cursor=${token}&x=1`)).toBe('cursor=[redacted]&x=1');
      expect(redactKeys(`"path":"/api/x/${Buffer.from(pad + key).toString('base64')}"`)).not.toContain(Buffer.from(pad + key).toString('base64'));
    }
    // a key cut short (a detail quoting a value cut at 64 characters) is still replaced
    expect(redactKeys(`got "${'x'.repeat(40)}${key}`.slice(0, 64) + '…"')).toBe(`got "${'x'.repeat(40)}qrm_[redacted]…"`);
    expect(redactKeys(`${key}XYZ`)).toBe('qrm_[redacted]');
    expect(redactDeep({ detail: `got ${key}`, allowed: [key, 1], n: 2 })).toEqual({
      detail: 'got qrm_[redacted]', allowed: ['qrm_[redacted]', 1], n: 2,
    });
  });

  it('finds the key in base64 of any JSON around it, between any separators (property)', () => {
    fc.assert(
      fc.property(fc.jsonValue(), fc.string({ maxLength: 20 }), fc.constantFrom('', ' ', '"', '=', '&', '/', '?cursor='), (json, pad, sep) => {
        const k = generateKey();
        const token = Buffer.from(JSON.stringify([json, pad, k]), 'utf8').toString(pad.length % 2 === 0 ? 'base64url' : 'base64');
        const out = redactKeys(`${sep}${token}${sep}`);
        expect(out).not.toContain(token);
        expect(out).not.toContain(k);
      }),
      { numRuns: 300 },
    );
    fc.assert(
      fc.property(fc.string({ maxLength: 300 }), (s) => {
        if (!/qrm_|%|[A-Za-z0-9+/_-]{48}/.test(s)) expect(redactKeys(s)).toBe(s);
      }),
    );
  });

  it('leaves text without a key alone', () => {
    for (const s of [
      '/api/predictions/accuracy', 'qrm_short', 'qrm_1234567', 'QRM_ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789', '550e8400-e29b-41d4-a716-446655440000',
      b64url({ v: 1, k: 'events.lang', a: ['1735689600000000', 'metaculus:1554'] }), '%E0%A4%A', '',
    ]) {
      expect(redactKeys(s)).toBe(s);
    }
  });
});

describe('a key sent anywhere but the auth headers is neither echoed nor logged', () => {
  let dir: string;
  let cleanup: () => Promise<void>;
  let server: ServerHandle;
  const lines: string[] = [];
  let key: string;
  let enterprise: string;

  // a route that fails with the caller's input in its error message (logged as an internal error)
  const boom = rawRoute({
    id: 'raw.tables',
    path: '/api/test-boom/',
    summary: 'test stand-in',
    tags: ['test'],
    responses: { 'application/json': { schema: z.object({}) } },
    handle: (req) => {
      throw new Error(`cannot handle ${String(req.headers['x-custom'])}`);
    },
  });

  beforeAll(async () => {
    ({ dir, cleanup } = await fixtureDir(withFeeds(fixtureData(1))));
    server = await serve(dir, { logger: pino({ level: 'debug' }, linesStream(lines)), extraRoutes: [boom] });
    key = newKey(dir, 'pro').key; // a real, valid key
    enterprise = newKey(dir, 'enterprise').key;
  });
  afterAll(async () => {
    await server?.close();
    await cleanup?.();
  });

  /** Forms in which the key must not appear. */
  function forms(k: string): string[] {
    return [k, k.slice(4), pct(k), encodeURIComponent(k)];
  }

  function expectClean(got: Got, k: string, also: string[] = []): void {
    const headers = [...got.res.headers.entries()].map(([n, v]) => `${n}: ${v}`).join('\n');
    for (const f of [...forms(k), ...also]) {
      expect(got.text, `body ${got.text.slice(0, 200)}`).not.toContain(f);
      expect(headers).not.toContain(f);
    }
  }

  function expectLogsClean(k: string, also: string[] = []): void {
    const all = lines.join('');
    expect(all.length).toBeGreaterThan(0);
    for (const f of [...forms(k), ...also]) expect(all).not.toContain(f);
  }

  it('in the path: 404/400 details and the request log carry a placeholder', async () => {
    for (const k of [key, generateKey()]) {
      const before = lines.length;
      for (const p of [`/api/${k}`, `/api/predictions/${k}`, `/api/predictions/lang/${k}`, `/api/predictions/lifecycle/${k}/`, `/${pct(k)}`, `/api/events/lang/${pct(k)}/`]) {
        const got = await get(server, p);
        expect(got.res.status, p).toBeGreaterThanOrEqual(400);
        expect(got.res.status, p).toBeLessThan(500);
        expectClean(got, k);
      }
      expectLogsClean(k);
      const logged = lines.slice(before).join('');
      expect(logged).toContain('qrm_[redacted]');
      expect(logged).toContain('"path":"/api/qrm_[redacted]"');
    }
  });

  it('in the query string: parameters that are echoed, ignored or malformed', async () => {
    const k = generateKey();
    for (const q of [`category=${k}`, `venue=${k}`, `limit=${k}`, `unknown=${k}`, `lang=${pct(k)}`, `x=1&${k}=1`]) {
      for (const p of ['/api/predictions/resolved', '/api/predictions/edges/', '/api/events/lang/en/', '/api/export/predictions/']) {
        const got = await get(server, `${p}?${q}`, { headers: { 'X-API-Key': enterprise } });
        expect(got.res.status, `${p}?${q}`).toBeLessThan(500);
        expectClean(got, k);
      }
    }
    expectLogsClean(k);
    expect(lines.join('')).toMatch(/"query":"[^"]*qrm_\[redacted\]/);
  });

  it('in a key parameter (api_key, apikey, api-key): the 401 refuses it and the request log drops its value, key-shaped or not (QA: `?api_key=<the key without qrm_>` was logged in clear, while the 401 says URLs are kept in logs)', async () => {
    const k = generateKey();
    const secrets = [k.slice(4), 'sk-live-4f9a1c2e7b', 'hunter2 secret'];
    const before = lines.length;
    const queries = [
      `api_key=${k.slice(4)}`, `limit=5&APIKEY=${encodeURIComponent('sk-live-4f9a1c2e7b')}`, `Api-Key=hunter2+secret`,
      `api%5Fkey=${k.slice(4)}&x=1`, `api_key=${k.slice(4)}&api_key=sk-live-4f9a1c2e7b`,
    ];
    for (const q of queries) {
      const got = await get(server, `/api/predictions/accuracy?${q}`);
      expect(got.res.status, q).toBe(401);
      expectClean(got, k, secrets);
    }
    await new Promise((r) => setTimeout(r, 20));
    const logged = lines.slice(before).join('');
    expect(logged).toContain('"query":"api_key=[redacted]"');
    expect(logged).toContain('"query":"limit=5&APIKEY=[redacted]"');
    expect(logged).toContain('"query":"api%5Fkey=[redacted]&x=1"');
    expectLogsClean(k, [...secrets, 'hunter2+secret', 'hunter2']);
  });

  it('in headers other than the auth ones', async () => {
    const k = generateKey();
    const got = await get(server, '/api/predictions/accuracy', {
      headers: {
        'User-Agent': `curl ${k}`, Referer: `https://example.org/?key=${k}`, 'X-Request-Id': k, 'X-Forwarded-For': k,
        Cookie: `session=${k}`, Origin: `https://${k}.example.org`, 'X-Custom': k, 'If-None-Match': `"${k}"`,
      },
    });
    expect(got.res.status).toBe(200);
    expectClean(got, k);
    expect(got.res.headers.get('x-request-id')).not.toBe(k);
    // the key in base64url is a well-formed request id: replaced too, not echoed
    const encoded = Buffer.from(k).toString('base64url');
    const again = await get(server, '/api/predictions/accuracy', { headers: { 'X-Request-Id': encoded } });
    expect(again.res.headers.get('x-request-id')).not.toBe(encoded);
    expectClean(again, k, [encoded]);
    expectLogsClean(k, [encoded]);
  });

  it('in a cursor: never echoed, nor the cursor that carries it', async () => {
    const k = generateKey();
    const cursors = [
      b64url({ v: 1, k: 'events.lang', a: ['abc', k] }),
      b64url({ v: 1, k: 'predictions.lang', a: [k] }), // well-formed: decodes, pages after that id
      b64url({ v: 1, r: null, q: k }),
      b64url({ note: `here is my key ${k}` }),
    ];
    for (const c of cursors) {
      for (const p of ['/api/events/lang/en/', '/api/predictions/lang/en', '/api/predictions/resolved', '/api/predictions/edges/']) {
        const got = await get(server, `${p}?cursor=${c}`);
        expect(got.res.status, `${p} ${c}`).toBeLessThan(500);
        expectClean(got, k, [c]);
      }
    }
    expectLogsClean(k, cursors);
  });

  it('in an error message: the internal error is logged with the key redacted, answered without it', async () => {
    const k = generateKey();
    const got = await get(server, '/api/test-boom/', { headers: { 'X-API-Key': enterprise, 'X-Custom': k } });
    expect(got.res.status).toBe(500);
    expectClean(got, k);
    const all = lines.join('');
    expect(all).toContain('cannot handle qrm_[redacted]');
    expectLogsClean(k);
  });

  it('the valid key itself, sent in X-API-Key, is never logged either', async () => {
    const got = await get(server, '/api/predictions/accuracy', { headers: { 'X-API-Key': key } });
    expect(got.res.status).toBe(200);
    expectLogsClean(key);
    expect(lines.join('')).toContain('"route":"predictions.accuracy"');
  });
});
