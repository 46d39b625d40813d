/**
 * The HTTP front door as a hostile or unusual client meets it, on raw sockets: request methods Node
 * hands to no request listener (CONNECT), `Expect` headers, a body declared over the 64 KiB limit,
 * requests that trickle in past the request timeout, and a kept-alive connection whose next request
 * arrived while the server was too busy to read it. Each refusal is a problem the README
 * documents, sent when the server knows it (not after reading what it will refuse), and the server
 * keeps serving.
 */
import { connect } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BODY_LIMIT_BYTES } from '../../api/app.ts';
import { KEEP_ALIVE_TIMEOUT_MS, type ServerHandle } from '../../api/server.ts';
import { capturingLogger, fixtureDir, newKey, serve } from './helpers.ts';

interface RawExchange {
  /** Everything the server sent, as latin1 text. */
  text: string;
  /** The status lines, in order (a 100 Continue included). */
  statuses: number[];
  /** Milliseconds from the first byte written to the close (or to `untilMs`). */
  ms: number;
  closed: boolean;
}

/**
 * Writes `payload` on a fresh connection and reads until the server closes it or `untilMs` has
 * passed. `onData` may write more (a body after a 100 Continue).
 */
function exchange(port: number, payload: string, untilMs: number, onData?: (got: string, write: (s: string) => void) => void): Promise<RawExchange> {
  return new Promise((resolve) => {
    const socket = connect(port, '127.0.0.1');
    const t0 = Date.now();
    let text = '';
    const done = (closed: boolean) => {
      clearTimeout(timer);
      const statuses = [...text.matchAll(/(?:^|\r\n)HTTP\/1\.1 (\d{3}) /g)].map((m) => Number(m[1]));
      resolve({ text, statuses, ms: Date.now() - t0, closed });
    };
    const timer = setTimeout(() => {
      socket.removeAllListeners('close');
      socket.destroy();
      done(false);
    }, untilMs);
    socket.on('data', (d) => {
      text += d.toString('latin1');
      onData?.(text, (s) => socket.write(s));
    });
    socket.on('error', () => undefined); // a reset after the answer is not the finding
    socket.on('close', () => done(true));
    socket.write(payload);
  });
}

/** The JSON body of the last answer in an exchange. */
function lastBody(text: string): Record<string, unknown> {
  const at = text.lastIndexOf('\r\n\r\n');
  return JSON.parse(text.slice(at + 4)) as Record<string, unknown>;
}

/**
 * A server over a fixture directory for one describe block: started before its tests (after
 * `prepare` has written what it needs into the directory, a key say), closed after them.
 */
function fixtureServer(opts: Parameters<typeof serve>[1] = {}, prepare?: (dir: string) => void): { server: ServerHandle } {
  const served = {} as { server: ServerHandle; cleanup?: () => Promise<void> };
  beforeAll(async () => {
    const { dir, cleanup } = await fixtureDir();
    served.cleanup = cleanup;
    prepare?.(dir);
    served.server = await serve(dir, opts);
  });
  afterAll(async () => {
    await served.server?.close();
    await served.cleanup?.();
  });
  return served;
}

describe('requests Node routes around the app', () => {
  let server: ServerHandle;
  let cleanup: () => Promise<void>;
  let port: number;
  let key: string;
  const lines: string[] = [];

  beforeAll(async () => {
    let dir: string;
    ({ dir, cleanup } = await fixtureDir());
    key = newKey(dir, 'enterprise', ['probability']).key;
    server = await serve(dir, { logger: capturingLogger(lines) });
    port = server.port;
  });
  afterAll(async () => {
    await server?.close();
    await cleanup?.();
  });

  it('CONNECT is answered with a problem, never a dropped connection (outside test: the socket was closed without a byte, nothing logged)', async () => {
    // to a path: the same 405 (with Allow) or 404 any other unsupported method gets there
    const onRoute = await exchange(port, 'CONNECT /api/predictions/accuracy HTTP/1.1\r\nHost: x\r\n\r\n', 5_000);
    expect(onRoute.statuses, onRoute.text).toEqual([405]);
    expect(onRoute.text).toMatch(/\r\nAllow: GET, HEAD, OPTIONS\r\n/i);
    expect(onRoute.text).toMatch(/\r\nContent-Type: application\/problem\+json/i);
    expect(onRoute.text).toMatch(/\r\nX-Request-Id: /i);
    expect(lastBody(onRoute.text)).toMatchObject({ status: 405, code: 'method_not_allowed' });
    expect(onRoute.closed).toBe(true);
    const unknown = await exchange(port, 'CONNECT /nowhere HTTP/1.1\r\nHost: x\r\n\r\n', 5_000);
    expect(unknown.statuses).toEqual([404]);
    expect(lastBody(unknown.text)).toMatchObject({ code: 'not_found' });
    // to a host and port (a tunnel, as to a proxy): this server is none
    for (const target of ['127.0.0.1:22', 'example.com:443', '[::1]:80']) {
      const tunnel = await exchange(port, `CONNECT ${target} HTTP/1.1\r\nHost: ${target}\r\n\r\n`, 5_000);
      expect(tunnel.statuses, tunnel.text).toEqual([400]);
      expect(tunnel.text).toMatch(/\r\nContent-Type: application\/problem\+json/i);
      expect(lastBody(tunnel.text)).toMatchObject({ status: 400, code: 'malformed_request' });
      expect(String(lastBody(tunnel.text).detail)).toMatch(/not a proxy/);
      expect(tunnel.closed).toBe(true);
    }
    const logged = lines.map((l) => JSON.parse(l) as Record<string, unknown>).filter((l) => l.msg === 'request' && l.method === 'CONNECT');
    expect(logged.map((l) => l.status)).toEqual([405, 404, 400, 400, 400]);
    expect((await fetch(`${server.url}/healthz`)).status).toBe(200);
  });

  it('an Expect other than 100-continue is a 417 problem (outside test: Node\'s bare 417, no body, no request id, not logged)', async () => {
    const answer = await exchange(port, 'GET /api/predictions/accuracy HTTP/1.1\r\nHost: x\r\nExpect: something-else\r\nConnection: close\r\n\r\n', 5_000);
    expect(answer.statuses, answer.text).toEqual([417]);
    expect(answer.text).toMatch(/\r\nContent-Type: application\/problem\+json/i);
    expect(answer.text).toMatch(/\r\nX-Request-Id: /i);
    expect(lastBody(answer.text)).toMatchObject({ status: 417, code: 'expectation_failed' });
    expect(lines.map((l) => JSON.parse(l) as Record<string, unknown>).some((l) => l.msg === 'request' && l.status === 417)).toBe(true);
  });

  it('the 417 comes before authentication and the plan check, after the Host check, as the OpenAPI document says', async () => {
    const anonymous = await exchange(port, 'GET /api/webhooks/ HTTP/1.1\r\nHost: x\r\nExpect: something-else\r\nConnection: close\r\n\r\n', 5_000);
    expect(anonymous.statuses, anonymous.text.slice(0, 200)).toEqual([417]);
    const badKey = await exchange(port, 'GET /api/webhooks/ HTTP/1.1\r\nHost: x\r\nX-API-Key: qrm_nope\r\nExpect: something-else\r\nConnection: close\r\n\r\n', 5_000);
    expect(badKey.statuses, badKey.text.slice(0, 200)).toEqual([417]);
    const noHost = await exchange(port, 'GET /api/webhooks/ HTTP/1.1\r\nExpect: something-else\r\nConnection: close\r\n\r\n', 5_000);
    expect(noHost.statuses, noHost.text.slice(0, 200)).toEqual([400]);
    const doc = (await (await fetch(`${server.url}/api/openapi.json`)).json()) as { paths: Record<string, Record<string, { responses: Record<string, { description: string }> }>> };
    expect(doc.paths['/api/webhooks/']!.get!.responses['417']!.description).toMatch(/before authentication and the quota .*Host header is a 400 first/);
  });

  it('the OpenAPI document lists the 417 on every operation, and the 413 on every one that takes a method with a body (outside review: neither was documented; a DELETE declared over 64 kB is a 413)', async () => {
    const doc = (await (await fetch(`${server.url}/api/openapi.json`)).json()) as { paths: Record<string, Record<string, { responses: Record<string, unknown> }>> };
    const ops = Object.entries(doc.paths).flatMap(([p, item]) => Object.entries(item).map(([method, op]) => ({ at: `${method} ${p}`, method, op })));
    expect(ops.filter((o) => !('417' in o.op.responses)).map((o) => o.at)).toEqual([]);
    const withBody = ops.filter((o) => o.method !== 'get');
    expect(withBody.map((o) => o.method)).toContain('delete');
    expect(withBody.filter((o) => !('413' in o.op.responses)).map((o) => o.at)).toEqual([]);
    const del = await exchange(port, `DELETE /api/webhooks/wh_nope/ HTTP/1.1\r\nHost: x\r\nX-API-Key: ${key}\r\nContent-Length: 70000\r\nConnection: close\r\n\r\n`, 5_000);
    expect(del.statuses, del.text.slice(0, 300)).toEqual([413]);
  });

  it('100-continue beside another expectation is a 417 without a 100 Continue first, the body not invited and the connection closed (outside review: Node hands it to checkContinue, which sent 100 Continue, and the 417 came after)', async () => {
    for (const expectation of ['100-continue, something-else', 'something-else, 100-continue']) {
      let invited = false;
      const answer = await exchange(
        port,
        `POST /api/probability/ HTTP/1.1\r\nHost: x\r\nX-API-Key: ${key}\r\nContent-Type: application/json\r\nContent-Length: 2\r\nExpect: ${expectation}\r\n\r\n`,
        5_000,
        (got, write) => {
          if (!invited && /^HTTP\/1\.1 100 /.test(got)) {
            invited = true;
            write('{}');
          }
        },
      );
      expect(answer.statuses, `${expectation}: ${answer.text.slice(0, 200)}`).toEqual([417]);
      expect(invited).toBe(false);
      expect(lastBody(answer.text)).toMatchObject({ status: 417, code: 'expectation_failed' });
      expect(answer.text).toMatch(/\r\nConnection: close\r\n/i);
      expect(answer.closed, expectation).toBe(true);
    }
  });

  it('a body announced with Expect: 100-continue over the limit is refused at once with a 413, without inviting it (outside test: 100 Continue, then the 413 once the whole body was read)', async () => {
    const size = BODY_LIMIT_BYTES + 1024;
    let sent = false;
    const answer = await exchange(
      port,
      `POST /api/probability/ HTTP/1.1\r\nHost: x\r\nX-API-Key: ${key}\r\nContent-Type: application/json\r\nContent-Length: ${size}\r\nExpect: 100-continue\r\n\r\n`,
      5_000,
      (got, write) => {
        if (!sent && /^HTTP\/1\.1 100 /.test(got)) {
          sent = true;
          write(' '.repeat(size));
        }
      },
    );
    expect(answer.statuses, answer.text.slice(0, 300)).toEqual([413]);
    expect(sent).toBe(false);
    expect(lastBody(answer.text)).toMatchObject({ status: 413, code: 'payload_too_large', limit_bytes: BODY_LIMIT_BYTES });
    expect(answer.text).toMatch(/\r\nConnection: close\r\n/i);
    expect(answer.closed).toBe(true);
    // a body within the limit is invited, and read
    let invited = false;
    const small = JSON.stringify({ question: 'Will it rain in Paris?', close_date: '2030-01-01' });
    const ok = await exchange(
      port,
      `POST /api/probability/ HTTP/1.1\r\nHost: x\r\nX-API-Key: ${key}\r\nContent-Type: application/json\r\nContent-Length: ${Buffer.byteLength(small)}\r\nExpect: 100-continue\r\nConnection: close\r\n\r\n`,
      20_000,
      (got, write) => {
        if (!invited && /^HTTP\/1\.1 100 /.test(got)) {
          invited = true;
          write(small);
        }
      },
    );
    expect(invited).toBe(true);
    expect(ok.statuses[0]).toBe(100);
    expect(ok.statuses[1], ok.text.slice(0, 400)).not.toBe(413);
  });

  it('a body declared over the limit is a 413 as soon as its headers arrive, not after the server read it all (outside test: 200 MB read and thrown away first)', async () => {
    for (const path of ['/api/probability/', '/api/webhooks/', '/nowhere']) {
      const answer = await exchange(
        port,
        `POST ${path} HTTP/1.1\r\nHost: x\r\nX-API-Key: ${key}\r\nContent-Type: application/json\r\nContent-Length: 200000000\r\n\r\n`,
        3_000,
      );
      expect(answer.statuses, `${path}: ${answer.text.slice(0, 200)}`).toEqual([413]);
      expect(lastBody(answer.text)).toMatchObject({ code: 'payload_too_large' });
    }
    // a caller who may not use the route still gets its 403 first, whatever the body
    const anonymous = await exchange(port, 'POST /api/webhooks/ HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 200000000\r\n\r\n', 3_000);
    expect(anonymous.statuses).toEqual([403]);
    expect((await fetch(`${server.url}/healthz`)).status).toBe(200);
  });
});

describe('CONNECT from a client that keeps its side of the connection open', () => {
  it('is closed by the server once answered: logged, counted out of the requests in flight, and no obstacle to a shutdown (outside review: the socket was only ended, so it stayed half open, the 404 was never logged, inFlight stayed 1 and close() never finished)', async () => {
    const { dir, cleanup } = await fixtureDir();
    const lines: string[] = [];
    const server = await serve(dir, { logger: capturingLogger(lines), shutdownTimeoutMs: 1_000 });
    try {
      for (const payload of ['CONNECT /nowhere HTTP/1.1\r\nHost: x\r\n\r\n', 'CONNECT example.com:443 HTTP/1.1\r\nHost: x\r\n\r\n']) {
        const socket = connect({ port: server.port, host: '127.0.0.1', allowHalfOpen: true });
        socket.on('error', () => undefined);
        let text = '';
        socket.on('data', (d: Buffer) => (text += d.toString('latin1')));
        const ended = new Promise<void>((resolve) => socket.once('end', () => resolve()));
        socket.write(payload);
        await ended;
        expect(text, payload).toMatch(/^HTTP\/1\.1 (404|400) /);
        // the client keeps its side open: the server must still let go of the connection
        await new Promise((r) => setTimeout(r, 300));
        expect(server.inFlight, payload).toBe(0);
      }
      const logged = lines.map((l) => JSON.parse(l) as Record<string, unknown>).filter((l) => l.msg === 'request' && l.method === 'CONNECT');
      expect(logged.map((l) => l.status)).toEqual([404, 400]);
      const t0 = Date.now();
      const closed = await Promise.race([server.close().then(() => true), new Promise<boolean>((r) => setTimeout(() => r(false), 5_000))]);
      expect(closed, 'close() finished').toBe(true);
      expect(Date.now() - t0).toBeLessThan(1_000);
    } finally {
      await cleanup();
    }
  }, 30_000);
});

describe('the request timeout', () => {
  const served = fixtureServer({ requestTimeoutMs: 1_000 });

  it('cuts a trickled request at the timeout, not up to 30 s later (outside test: slowloris sockets held 74 s against the documented 60 s)', async () => {
    const { port } = served.server;
    const trickled = exchange(port, 'GET /healthz HTTP/1.1\r\nHost: x\r\n', 8_000, () => undefined);
    const silent = exchange(port, '', 8_000);
    const slowBody = exchange(port, 'POST /api/webhooks/ HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n{', 8_000);
    for (const answer of await Promise.all([trickled, silent, slowBody])) {
      expect(answer.closed, answer.text).toBe(true);
      expect(answer.ms).toBeLessThan(4_000);
      expect(answer.statuses).toEqual([408]);
      expect(lastBody(answer.text)).toMatchObject({ code: 'request_timeout' });
    }
  });
});

describe('HEAD of the event stream', () => {
  let key: string;
  const served = fixtureServer({}, (dir) => {
    key = newKey(dir, 'enterprise').key;
  });

  it('has the GET\'s headers and no body (outside test: no `Cache-Control: no-cache, no-transform`, no `X-Accel-Buffering`)', async () => {
    const ac = new AbortController();
    const got = await fetch(`${served.server.url}/api/stream/`, { headers: { 'X-API-Key': key }, signal: ac.signal });
    expect(got.status).toBe(200);
    const getHeaders = Object.fromEntries(got.headers);
    ac.abort();
    const head = await fetch(`${served.server.url}/api/stream/`, { method: 'HEAD', headers: { 'X-API-Key': key } });
    expect(head.status).toBe(200);
    expect(await head.text()).toBe('');
    for (const name of ['content-type', 'cache-control', 'x-accel-buffering']) {
      expect(head.headers.get(name), name).toBe(getHeaders[name]);
    }
  });

  it('is private to the key that asked, GET and HEAD, as every answer to a keyed request (README, Caching; review: `no-cache, no-transform`, the front door\'s `private` dropped)', async () => {
    for (const method of ['GET', 'HEAD']) {
      const ac = new AbortController();
      const got = await fetch(`${served.server.url}/api/stream/`, { method, headers: { 'X-API-Key': key }, signal: ac.signal });
      expect(got.status).toBe(200);
      expect(got.headers.get('cache-control'), method).toBe('private, no-cache, no-transform');
      ac.abort();
    }
  });
});

describe('a keep-alive connection whose next request arrived while the server was busy', () => {
  const served = fixtureServer();

  it('is answered, not reset, when the server gets to it only after its idle timeout (a flaky ECONNRESET under CPU load: the idle timer, overdue after a busy event loop, closed the connection before the request waiting on it was read)', async () => {
    const socket = connect(served.server.port, '127.0.0.1');
    let text = '';
    let failure: string | null = null;
    let closed = false;
    socket.on('data', (d) => (text += d.toString('latin1')));
    socket.on('error', (err: NodeJS.ErrnoException) => (failure = err.code ?? err.message));
    socket.on('close', () => (closed = true));
    /** The statuses of the whole answers received so far (each a head and its Content-Length of body), in order. */
    const answers = () => {
      const statuses: number[] = [];
      for (let at = 0; ;) {
        const headEnd = text.indexOf('\r\n\r\n', at);
        if (headEnd < 0) return statuses;
        const head = text.slice(at, headEnd);
        const end = headEnd + 4 + Number(/\r\nContent-Length: (\d+)/i.exec(head)?.[1] ?? 0);
        if (text.length < end) return statuses;
        statuses.push(Number(/^HTTP\/1\.1 (\d{3}) /.exec(head)?.[1]));
        at = end;
      }
    };
    /** Resolves once `n` whole answers have arrived, or the connection closed. */
    const answered = (n: number) => new Promise<void>((resolve) => {
      const check = () => {
        if (answers().length < n && !closed) return;
        socket.off('data', check);
        socket.off('close', check);
        resolve();
      };
      socket.on('data', check);
      socket.on('close', check);
      check();
    });
    const request = 'GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n';
    socket.write(request);
    await answered(1);
    expect(answers()).toEqual([200]);
    expect(text).toMatch(new RegExp(`\\r\\nKeep-Alive: timeout=${KEEP_ALIVE_TIMEOUT_MS / 1000}\\r\\n`, 'i'));
    // The next request is on the wire (the kernel holds it) while the event loop is held past the
    // idle timeout (and Node's own margin over it, at most 2 s): when the loop runs again, the
    // server's overdue idle timer comes before the read of that request.
    socket.write(request);
    Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, KEEP_ALIVE_TIMEOUT_MS + 2_000);
    await answered(2);
    expect({ answers: answers(), failure }).toEqual({ answers: [200, 200], failure: null });
    // and the connection, idle again, is still closed by the server, by its idle timer (Node allows
    // a second over the timeout; the bound leaves room for the answer reaching this client late)
    const idleSince = Date.now();
    await new Promise<void>((resolve) => (closed ? resolve() : socket.once('close', () => resolve())));
    expect(Date.now() - idleSince).toBeGreaterThanOrEqual(KEEP_ALIVE_TIMEOUT_MS - 1_000);
    expect(failure).toBeNull();
  }, 30_000);
});
