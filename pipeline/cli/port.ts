/**
 * `quorum start` binds its port only after the first-start bootstrap (the sample's import and
 * three pipeline runs, a minute or two): a port already in use was found only then (QA). The
 * probe binds and releases it before anything runs. (Another process can still take it in
 * between; the server's own listen then fails as before.)
 */
import { createServer } from 'node:net';

/**
 * Resolves when `host:port` can be bound now; rejects with an error naming both otherwise. Port 0
 * (any free port) is probed too: HOST must still be an address of this machine (QA: with PORT=0 a
 * HOST that does not resolve was found only by the server's own listen, after `start`'s whole
 * bootstrap, as `getaddrinfo ENOTFOUND` naming no variable, with server.lock left behind).
 */
export async function assertPortFree(host: string, port: number): Promise<void> {
  const probe = createServer();
  try {
    await new Promise<void>((resolve, reject) => {
      probe.once('error', reject);
      probe.listen({ port, host, exclusive: true }, () => resolve());
    });
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code ?? 'error';
    throw new Error(`cannot listen on ${host}:${port} (${code}: ${(err as Error).message}); set PORT or HOST, nothing was run`);
  }
  await new Promise<void>((resolve) => probe.close(() => resolve()));
}
