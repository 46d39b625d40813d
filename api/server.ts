/**
 * `startServer({ port, dataDir })`: createApp + an HTTP listener. Port 0 picks a free port; the
 * host defaults to 127.0.0.1 (pass `host: '0.0.0.0'` to listen on every interface).
 * `close()` stops accepting, drops idle keep-alive sockets, then closes the DuckDB instance.
 */
import type { AddressInfo } from 'node:net';
import { createServer, type Server } from 'node:http';
import type { Logger } from 'pino';
import { createApp } from './app.ts';
import { createLogger } from './logging/logger.ts';

export interface StartServerOptions {
  port: number;
  host?: string;
  dataDir: string;
  logger?: Logger;
  pollMs?: number;
  poolSize?: number;
}

export interface ServerHandle {
  url: string;
  port: number;
  close(): Promise<void>;
}

export async function startServer(opts: StartServerOptions): Promise<ServerHandle> {
  const logger = opts.logger ?? createLogger();
  const host = opts.host ?? '127.0.0.1';
  const handle = await createApp({ dataDir: opts.dataDir, logger, pollMs: opts.pollMs, poolSize: opts.poolSize });
  const server: Server = createServer(handle.app);
  try {
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(opts.port, host, () => {
        server.off('error', reject);
        resolve();
      });
    });
  } catch (err) {
    await handle.close();
    throw err;
  }
  const { port } = server.address() as AddressInfo;
  const urlHost = host.includes(':') ? `[${host}]` : host === '0.0.0.0' ? '127.0.0.1' : host;
  const url = `http://${urlHost}:${port}`;
  logger.info({ url, dataDir: opts.dataDir }, 'api listening');

  let closing: Promise<void> | null = null;
  return {
    url,
    port,
    close() {
      closing ??= (async () => {
        await new Promise<void>((resolve) => {
          server.close(() => resolve());
          server.closeIdleConnections();
          setTimeout(() => server.closeAllConnections(), 2000).unref();
        });
        await handle.close();
      })();
      return closing;
    },
  };
}
