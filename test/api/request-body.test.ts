/**
 * Request bodies the JSON parser cannot read, against a real server: each is an `invalid_body` (or
 * `payload_too_large`) problem about the body, never a problem about the request's path or query.
 */
import { gzipSync } from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ServerHandle } from '../../api/server.ts';
import { expectProblem, fixtureDir, get, serve } from './helpers.ts';

let cleanup: () => Promise<void>;
let server: ServerHandle;

beforeAll(async () => {
  let dir: string;
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
