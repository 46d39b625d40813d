/**
 * `startServer({ port, dataDir })`: createApp + an HTTP listener. Port 0 picks a free port; the
 * host defaults to 127.0.0.1 (pass `host: '0.0.0.0'` to listen on every interface).
 *
 * Options not given are read from the environment (pipeline/config.ts: QUORUM_PUBLIC_BETA,
 * QUORUM_LIMIT_*, QUORUM_CORS_ORIGINS, QUORUM_TRUST_PROXY, QUORUM_SHUTDOWN_TIMEOUT_MS, QUORUM_MAX_PRICE_AGE_HOURS,
 * QUORUM_SCHEDULE for Cache-Control), so `quorum serve`/`start` need no extra wiring.
 *
 * `close()` is the graceful shutdown: stop accepting connections, answer in-flight requests
 * (including streaming exports) with `Connection: close`, drop idle keep-alive sockets, wait up to
 * `shutdownTimeoutMs` (then cut what is left), flush usage counters, close DuckDB.
 *
 * Once listening it logs one line saying where, with the address as bound (server.address()), and
 * records itself in `<dataDir>/server.json` (./server-record.ts; removed again by close()), so
 * `quorum keys` can tell whether a server reads the directory it writes.
 */
import { createServer, ServerResponse, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import cron from 'node-cron';
import type { Logger } from 'pino';
import { loadConfig, type QuorumConfig } from '../pipeline/config.ts';
import { createApp, type AppHandle, type CreateAppOptions } from './app.ts';
import { declaresOversizeBody } from './http/body-error.ts';
import { TUNNEL_REQUEST } from './http/client-error.ts';
import { expectationMet } from './http/front.ts';
import { createLogger } from './logging/logger.ts';
import { removeServerRecord, writeServerRecord } from './server-record.ts';

/**
 * How long a keep-alive connection may sit idle between a response and the client's next request:
 * announced in every answer as `Keep-Alive: timeout=5` (README, "The API": connections). Node's default,
 * set here explicitly because clients size their own idle timeouts by it.
 */
export const KEEP_ALIVE_TIMEOUT_MS = 5_000;

export interface StartServerOptions extends Omit<CreateAppOptions, 'logger'> {
  port: number;
  host?: string;
  logger?: Logger;
  /** Cron expression of the pipeline schedule (default QUORUM_SCHEDULE) → Cache-Control max-age. */
  schedule?: string | null;
  /** How long close() waits for in-flight requests before cutting connections (default 10 s). */
  shutdownTimeoutMs?: number;
  /** Record this server in `<dataDir>/server.json` while it listens (default true). */
  recordServer?: boolean;
  /** How long a request's line, headers and body may take to arrive (default 60 s: a 408 after it). */
  requestTimeoutMs?: number;
}

export interface ServerHandle {
  url: string;
  port: number;
  app: AppHandle;
  /** Requests currently being answered. */
  readonly inFlight: number;
  close(): Promise<void>;
}

function envConfig(): QuorumConfig | null {
  try {
    return loadConfig();
  } catch {
    return null;
  }
}

/** A memoized "next run" of a cron expression (UTC), recomputed once the cached time has passed. */
export function nextRunFromCron(expr: string): { nextRunAt: () => Date | null; stop: () => void } {
  const task = cron.createTask(expr, () => undefined, { timezone: 'UTC', name: `quorum-next-run-${process.pid}-${Date.now()}` });
  let next: Date | null = null;
  return {
    nextRunAt: () => {
      if (next === null || next.getTime() <= Date.now()) next = task.getNextRuns(1)[0] ?? null;
      return next;
    },
    stop: () => {
      void Promise.resolve(task.destroy()).catch(() => undefined);
    },
  };
}

export async function startServer(opts: StartServerOptions): Promise<ServerHandle> {
  const logger = opts.logger ?? createLogger();
  const host = opts.host ?? '127.0.0.1';
  const cfg = envConfig();
  const schedule = opts.schedule === undefined ? (cfg?.schedule ?? null) : opts.schedule;
  const cronNext = opts.nextRunAt === undefined && schedule ? nextRunFromCron(schedule) : null;
  const shutdownTimeoutMs = opts.shutdownTimeoutMs ?? cfg?.shutdownTimeoutMs ?? 10_000;

  const handle = await createApp({
    ...opts,
    logger,
    publicBeta: opts.publicBeta ?? cfg?.publicBeta,
    limits: opts.limits ?? cfg?.limits,
    corsOrigins: opts.corsOrigins ?? cfg?.corsOrigins,
    trustProxy: opts.trustProxy ?? cfg?.trustProxy,
    maxPriceAgeHours: opts.maxPriceAgeHours ?? cfg?.maxPriceAgeHours,
    nextRunAt: opts.nextRunAt ?? cronNext?.nextRunAt,
  });

  let inFlight = 0;
  const onRequest = (req: IncomingMessage, res: ServerResponse) => {
    inFlight++;
    res.once('close', () => inFlight--); // emitted once per response, finished or aborted
    handle.app(req, res);
  };
  // The whole request (line, headers and body: at most 64 kB) must arrive within 60 s, like its
  // headers (Node's headersTimeout): a client that sends a body's Content-Length and then stalls
  // held its connection for Node's default of 300 s (QA). Responses (exports, the stream) are not
  // bounded by it. Node checks those deadlines every connectionsCheckingInterval (30 s by default),
  // so a trickling client was cut up to 30 s late, at 74 s in an outside test: checked every second.
  const requestTimeout = opts.requestTimeoutMs ?? 60_000;
  // Node's own check answered an HTTP/1.1 request without Host with a bare 400 (no body, no log
  // line, no metric: QA); the front door answers it instead (api/http/front.ts, hostProblem).
  const server: Server = createServer(
    {
      requireHostHeader: false,
      requestTimeout,
      headersTimeout: Math.min(60_000, requestTimeout),
      connectionsCheckingInterval: Math.min(1_000, requestTimeout),
    },
    onRequest,
  );
  server.keepAliveTimeout = KEEP_ALIVE_TIMEOUT_MS;
  // The idle timer of a keep-alive connection is judged when the event loop gets to it, and a busy
  // loop runs its overdue timers before it reads the sockets: a request that had arrived, waiting
  // unread in the kernel, had its connection closed from under it, a reset the client sees as
  // ECONNRESET (test/api/openapi-responses.test.ts under CPU load: its own checks held the loop it
  // shares with the server for 9-18 s; and a non-idempotent request cannot be safely retried).
  // The close is decided one turn of the loop later, after the sockets are read: a connection that
  // received bytes meanwhile has its request answered, and its idle timer starts again after the
  // answer. With this listener Node no longer closes the connection itself; the socket timer here
  // is only ever the keep-alive one (server.timeout is 0, no route sets one).
  server.on('timeout', (socket: Socket) => {
    const bytesRead = socket.bytesRead;
    setImmediate(() => {
      if (!socket.destroyed && socket.bytesRead === bytesRead) socket.destroy();
    });
  });
  server.on('clientError', handle.clientError);
  // `Expect: 100-continue`: the body is invited only when it may be read. One declared over the
  // body limit is answered 413 at once, and the connection closed (the app: api/app.ts), instead
  // of a 100 Continue for a body the server then reads only to refuse (outside test).
  server.on('checkContinue', (req: IncomingMessage, res: ServerResponse) => {
    // (nor one the front door refuses with a 417: `100-continue` beside another expectation, which
    // Node hands here too: outside review, 100 Continue and then the 417)
    if (!declaresOversizeBody(req) && expectationMet(req)) res.writeContinue();
    onRequest(req, res);
  });
  // Any other expectation: the app's 417 problem (api/http/front.ts), not Node's bare 417.
  server.on('checkExpectation', onRequest);
  // CONNECT goes to `connect` listeners only; with none, Node closed the connection without a
  // byte (outside test). To a path it is answered like any other method there (405 with Allow, or
  // 404); to a host and port (a tunnel) it is a 400: this server is not a proxy.
  server.on('connect', (req: IncomingMessage, socket: Socket) => {
    // Node no longer tracks the socket (no timeout, not closed by closeAllConnections): it is
    // destroyed once the answer is sent, not only ended, which left it half open for as long as
    // the client kept its side open (outside review: the response's 'close' never came, so the
    // request was never logged nor counted, inFlight stayed 1, and a shutdown never finished).
    const closeWhenSent = () => (socket.writableFinished ? socket.destroy() : socket.once('finish', () => socket.destroy()));
    if (!req.url?.startsWith('/')) {
      const err = Object.assign(new Error('CONNECT to a host'), { code: TUNNEL_REQUEST, rawPacket: Buffer.from(`CONNECT ${req.url ?? ''} `, 'latin1') });
      handle.clientError(err, socket);
      closeWhenSent();
      return;
    }
    const res = new ServerResponse(req);
    res.shouldKeepAlive = false;
    res.assignSocket(socket);
    // the socket is no HTTP connection any more: closed after this one answer (its 'close' is the response's)
    res.once('finish', () => {
      socket.end();
      closeWhenSent();
    });
    onRequest(req, res);
  });
  // Connections that have not yet sent a byte (a browser's preconnect, the spare socket a client
  // pool opens after an aborted body). Node's closeIdleConnections() does not count them as idle, so
  // a shutdown waited the whole shutdownTimeoutMs for them; they carry no request and are closed.
  const silent = new Set<Socket>();
  // (a socket that has read a byte is skipped at the sweep: no per-request bookkeeping)
  server.on('connection', (socket: Socket) => {
    silent.add(socket);
    socket.once('close', () => silent.delete(socket));
  });
  /** Closes keep-alive connections between responses and connections that never sent a byte. */
  const closeQuietConnections = () => {
    server.closeIdleConnections();
    for (const socket of silent) if (socket.bytesRead === 0) socket.destroy();
  };
  try {
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(opts.port, host, () => {
        server.off('error', reject);
        resolve();
      });
    });
  } catch (err) {
    cronNext?.stop();
    await handle.close();
    throw err;
  }
  const bound = server.address() as AddressInfo;
  const { port } = bound;
  const address = `http://${bound.family === 'IPv6' ? `[${bound.address}]` : bound.address}:${port}`;
  // The bind address may be every interface; the URL is one this host can reach it on.
  const urlHost = bound.address === '0.0.0.0' ? '127.0.0.1' : bound.address === '::' ? '[::1]' : bound.family === 'IPv6' ? `[${bound.address}]` : bound.address;
  const url = `http://${urlHost}:${port}`;
  // The record is written before the start-up line: whoever waits for that line finds it.
  const recorded = opts.recordServer ?? true;
  if (recorded) {
    try {
      writeServerRecord(opts.dataDir, { port, address, url });
    } catch (err) {
      // A read-only data directory still serves; `quorum keys` will then warn that no server uses it.
      logger.warn({ err: (err as Error).message, dataDir: opts.dataDir }, 'could not record the server in the data directory');
    }
  }
  logger.info({ address, url, dataDir: opts.dataDir }, `api listening on ${address}`);

  let closing: Promise<void> | null = null;
  return {
    url,
    port,
    app: handle,
    get inFlight() {
      return inFlight;
    },
    close() {
      closing ??= (async () => {
        if (recorded) {
          try {
            removeServerRecord(opts.dataDir, port);
          } catch (err) {
            logger.warn({ err: (err as Error).message }, 'could not remove the server record');
          }
        }
        handle.beginShutdown();
        const started = Date.now();
        await new Promise<void>((resolve) => {
          server.close(() => resolve());
          closeQuietConnections();
          // Keep-alive sockets become idle once their response is done: drop them as they do.
          const sweep = setInterval(closeQuietConnections, 50);
          const deadline = setTimeout(() => {
            if (inFlight > 0) logger.warn({ inFlight }, 'shutdown deadline reached; closing remaining connections');
            server.closeAllConnections();
          }, shutdownTimeoutMs);
          deadline.unref();
          server.once('close', () => {
            clearInterval(sweep);
            clearTimeout(deadline);
          });
        });
        logger.info({ ms: Date.now() - started }, 'http server closed');
        cronNext?.stop();
        await handle.close();
      })();
      return closing;
    },
  };
}
