/**
 * Loopback servers that never finish an answer, for deadline tests (127.0.0.1, port 0):
 *  - `silent`: accepts the TCP connection and never writes a byte (node:net);
 *  - `stall`: sends the status line and headers (a Content-Length it never honours) and one
 *    byte of body, then nothing (node:http);
 *  - `trickle`: sends headers, then one byte of JSON whitespace every second, forever (chunked).
 * Each counts the sockets it accepted and the ones still open, so a test can check the client
 * closed every connection it gave up on.
 */
import { createServer as createHttpServer, type ServerResponse } from 'node:http';
import { createServer as createTcpServer, type AddressInfo, type Server, type Socket } from 'node:net';

export const BAD_KINDS = ['silent', 'stall', 'trickle'] as const;
export type BadKind = (typeof BAD_KINDS)[number];

export interface BadServer {
  kind: BadKind;
  /** http://127.0.0.1:<port> */
  url: string;
  /** Connections accepted so far. */
  accepted(): number;
  /** Connections still open on the server side. */
  open(): number;
  /**
   * Waits until every connection is closed and none arrived for `quietMs` (true), or `ms` passed
   * (false). A client that gave up while still connecting may finish its handshake afterwards
   * (the server accepts it late on a busy loop): it must close that connection too.
   */
  drained(ms: number, quietMs?: number): Promise<boolean>;
  close(): Promise<void>;
}

export async function startBadServer(kind: BadKind): Promise<BadServer> {
  const sockets = new Set<Socket>();
  let accepted = 0;
  const timers = new Set<NodeJS.Timeout>();
  let server: Server;
  if (kind === 'silent') {
    server = createTcpServer((socket) => {
      socket.on('error', () => {});
      // Reads whatever the client sends (so its writes never block) and answers nothing.
      socket.resume();
    });
  } else {
    server = createHttpServer((_req, res: ServerResponse) => {
      res.on('error', () => {});
      if (kind === 'stall') {
        res.writeHead(200, { 'content-type': 'application/json', 'content-length': '100000' });
        res.write('[');
        return;
      }
      res.writeHead(200, { 'content-type': 'application/json' });
      res.write(' ');
      const t = setInterval(() => res.write(' '), 1000);
      timers.add(t);
      res.on('close', () => {
        clearInterval(t);
        timers.delete(t);
      });
    });
    (server as ReturnType<typeof createHttpServer>).keepAliveTimeout = 60_000;
    (server as ReturnType<typeof createHttpServer>).headersTimeout = 0;
    (server as ReturnType<typeof createHttpServer>).requestTimeout = 0;
  }
  server.on('connection', (socket: Socket) => {
    accepted++;
    sockets.add(socket);
    socket.on('error', () => {});
    socket.on('close', () => sockets.delete(socket));
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => resolve());
  });
  const { port } = server.address() as AddressInfo;
  return {
    kind,
    url: `http://127.0.0.1:${port}`,
    accepted: () => accepted,
    open: () => sockets.size,
    drained: async (ms, quietMs = 300) => {
      const until = Date.now() + ms;
      let seen = accepted;
      let quietSince = Date.now();
      for (;;) {
        if (accepted !== seen) {
          seen = accepted;
          quietSince = Date.now();
        }
        if (sockets.size === 0 && Date.now() - quietSince >= quietMs) return true;
        if (Date.now() >= until) return false;
        await new Promise((r) => setTimeout(r, 10));
      }
    },
    close: () =>
      new Promise<void>((resolve) => {
        for (const t of timers) clearInterval(t);
        for (const s of sockets) s.destroy();
        server.close(() => resolve());
      }),
  };
}

/** One server of each kind. */
export async function startBadServers(): Promise<Record<BadKind, BadServer>> {
  const [silent, stall, trickle] = await Promise.all(BAD_KINDS.map((k) => startBadServer(k)));
  return { silent: silent!, stall: stall!, trickle: trickle! };
}
