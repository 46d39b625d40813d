/**
 * A small loopback HTTP replay server for venue tests and benchmarks.
 *
 * Routes (first match wins) map a request (method, pathname, required query values) to scripted
 * responses: served in order, the last one repeating, or computed by a function of the request.
 * A response can set the status, headers (e.g. Retry-After), a JSON or raw body, a delay, and a
 * truncation: `end` sends the first bytes and ends the response normally (a cut-off JSON body),
 * `destroy` advertises the full Content-Length and cuts the socket mid-body. Every request is
 * logged. Unmatched requests get a 404 JSON body. Listens on 127.0.0.1, port 0 (ephemeral).
 */
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface ScriptedResponse {
  status?: number;
  headers?: Record<string, string>;
  /** A Buffer or string is sent as is; anything else as JSON. */
  body?: unknown;
  /** Send only the first `bytes` bytes of the body. */
  truncate?: { bytes: number; mode?: 'end' | 'destroy' };
  delayMs?: number;
}

export interface ReplayRequest {
  method: string;
  path: string;
  query: URLSearchParams;
  url: string;
  at: number;
  /** Index of the matching route, or null. */
  route: number | null;
  status: number;
}

export interface ReplayRoute {
  method?: string;
  /** Exact pathname, or a pattern tested against it. */
  path: string | RegExp;
  /** Query parameters that must have exactly these values (null: must be absent). */
  query?: Record<string, string | null>;
  responses: ScriptedResponse[] | ((req: ReplayRequest) => ScriptedResponse);
}

export interface ReplayServer {
  /** Base URL, e.g. http://127.0.0.1:41234 (no trailing slash). */
  url: string;
  log: ReplayRequest[];
  /** Requests that matched route `i`. */
  hits(i: number): number;
  close(): Promise<void>;
}

/** A JSON response (200 unless told). */
export function json(body: unknown, status = 200, headers: Record<string, string> = {}): ScriptedResponse {
  return { status, body, headers };
}

function matches(route: ReplayRoute, method: string, path: string, query: URLSearchParams): boolean {
  if ((route.method ?? 'GET') !== method) return false;
  if (typeof route.path === 'string' ? route.path !== path : !route.path.test(path)) return false;
  for (const [k, v] of Object.entries(route.query ?? {})) {
    if (v === null ? query.has(k) : query.get(k) !== v) return false;
  }
  return true;
}

function encode(body: unknown): Buffer {
  if (body === undefined) return Buffer.alloc(0);
  if (Buffer.isBuffer(body)) return body;
  if (typeof body === 'string') return Buffer.from(body);
  return Buffer.from(JSON.stringify(body));
}

/** Starts the server on 127.0.0.1 with an ephemeral port. */
export async function startReplayServer(routes: ReplayRoute[]): Promise<ReplayServer> {
  const log: ReplayRequest[] = [];
  const counts = routes.map(() => 0);

  const send = (res: ServerResponse, r: ScriptedResponse) => {
    const status = r.status ?? 200;
    const body = encode(r.body);
    const headers: Record<string, string | number> = { 'content-type': 'application/json', ...r.headers };
    const cut = r.truncate;
    if (cut && cut.mode === 'destroy') {
      res.writeHead(status, { ...headers, 'content-length': body.length });
      res.write(body.subarray(0, cut.bytes), () => res.socket?.destroy());
      return;
    }
    const out = cut ? body.subarray(0, cut.bytes) : body;
    res.writeHead(status, { ...headers, 'content-length': out.length });
    res.end(out);
  };

  const server = createServer((req: IncomingMessage, res: ServerResponse) => {
    const u = new URL(req.url ?? '/', 'http://127.0.0.1');
    const method = req.method ?? 'GET';
    const i = routes.findIndex((r) => matches(r, method, u.pathname, u.searchParams));
    const entry: ReplayRequest = { method, path: u.pathname, query: u.searchParams, url: req.url ?? '/', at: Date.now(), route: i === -1 ? null : i, status: 404 };
    log.push(entry);
    if (i === -1) {
      send(res, { status: 404, body: { error: 'not found', path: u.pathname } });
      return;
    }
    const route = routes[i]!;
    const n = counts[i]!;
    counts[i] = n + 1;
    const r = typeof route.responses === 'function' ? route.responses(entry) : route.responses[Math.min(n, route.responses.length - 1)]!;
    entry.status = r.status ?? 200;
    if (r.delayMs) setTimeout(() => send(res, r), r.delayMs);
    else send(res, r);
  });
  server.keepAliveTimeout = 5000;
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => resolve());
  });
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    log,
    hits: (i) => counts[i] ?? 0,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
