/**
 * Request bodies the JSON parser cannot read, against a real server: each is an `invalid_body` (or
 * `payload_too_large`) problem about the body, never a problem about the request's path or query.
 */
import { connect } from 'node:net';
import { gzipSync } from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ServerHandle } from '../../api/server.ts';
import { expectProblem, fixtureDir, get, newKey, serve } from './helpers.ts';

let cleanup: () => Promise<void>;
let server: ServerHandle;
let dir: string;

beforeAll(async () => {
  ({ dir, cleanup } = await fixtureDir());
  server = await serve(dir);
});

afterAll(async () => {
  await server?.close();
  await cleanup?.();
});

const post = (p: string, body: Buffer<ArrayBuffer> | string, headers: Record<string, string>) =>
  get(server, p, { method: 'POST', body, headers: { 'Content-Type': 'application/json', ...headers } });

describe('a body whose Content-Encoding does not decode', () => {
  it('is a 400 invalid_body naming the coding (QA: a 400 invalid_parameter "path": "The request path or query is malformed.")', async () => {
    for (const p of ['/api/predictions/accuracy', '/api/nope']) {
      for (const coding of ['gzip', 'deflate', 'br']) {
        const r = await post(p, 'these bytes are not compressed', { 'Content-Encoding': coding });
        expectProblem(r, 400, 'invalid_body');
        expect(r.body.parameter, `${p} ${coding}`).toBeUndefined();
        expect(r.body.detail).toContain(`Content-Encoding "${coding}"`);
      }
    }
  });

  it('a body that does decode is read as before: the route answers (405 here), and a bomb past the limit is a 413', async () => {
    const ok = await post('/api/predictions/accuracy', gzipSync('{"x":1}'), { 'Content-Encoding': 'gzip' });
    expectProblem(ok, 405, 'method_not_allowed');
    const bomb = await post('/api/predictions/accuracy', gzipSync(JSON.stringify({ x: 'a'.repeat(1_000_000) })), { 'Content-Encoding': 'gzip' });
    expectProblem(bomb, 413, 'payload_too_large');
  });
});

/** A raw HTTP/1.1 request (fetch always sends a Content-Length with a POST): status line and body. */
function rawRequest(head: string): Promise<{ status: number; body: any }> {
  return new Promise((resolve, reject) => {
    const socket = connect(server.port, '127.0.0.1', () => socket.write(`${head}\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n`));
    let text = '';
    socket.on('data', (d) => (text += d.toString('utf8')));
    socket.on('error', reject);
    socket.on('end', () => {
      const [headers, body] = text.split('\r\n\r\n');
      resolve({ status: Number(headers!.split(' ')[1]), body: JSON.parse(body!) });
    });
  });
}

describe('a POST with no body at all', () => {
  it('is a 400 invalid_body saying there is no body (QA: it asked for the Content-Type the request had sent)', async () => {
    const { key } = newKey(dir, 'enterprise');
    const r = await rawRequest(`POST /api/webhooks/ HTTP/1.1\r\nX-API-Key: ${key}\r\nContent-Type: application/json`);
    expect(r.status).toBe(400);
    expect(r.body.code).toBe('invalid_body');
    expect(r.body.detail).toMatch(/has no body/);
    // an empty body that is sent (Content-Length: 0) is an empty object, missing its fields
    const empty = await get(server, '/api/webhooks/', { method: 'POST', body: '', headers: { 'X-API-Key': key, 'Content-Type': 'application/json' } });
    expectProblem(empty, 400, 'invalid_parameter');
    expect(empty.body.parameter).toBe('url');
    // a body of another type still names the type it came with
    const text = await get(server, '/api/webhooks/', { method: 'POST', body: '{}', headers: { 'X-API-Key': key, 'Content-Type': 'text/plain' } });
    expectProblem(text, 400, 'invalid_body');
    expect(text.body.detail).toContain('(got "text/plain")');
  });
});
