/**
 * lookupEach (pipeline/venues/core.ts): tracked-market lookups in parallel chunks. A real failure
 * stops the rest of its chunk at once and is the error thrown (not the echo of the requests it
 * stopped); a 404 is "not found"; the caller's signal stops everything.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { createSourceClient, SourceHttpError } from '../../pipeline/sources/http-client.ts';
import { lookupEach, type RawPage } from '../../pipeline/venues/core.ts';
import { json, startReplayServer, type ReplayServer } from '../helpers/replay-server.ts';

const FAST = { requestsPerInterval: 1000, intervalMs: 1000, retries: 0, backoffMs: 5, timeoutMs: 10_000 };
let server: ReplayServer | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
});

async function collect(pages: AsyncIterable<RawPage>): Promise<RawPage[]> {
  const out: RawPage[] = [];
  for await (const p of pages) out.push(p);
  return out;
}

describe('lookupEach', () => {
  it('a failure stops its chunk at once and is what is thrown; 404s are not found', async () => {
    server = await startReplayServer([
      { path: '/m/ok', responses: [json({ id: 'ok' })] },
      { path: '/m/gone', responses: [json({ error: 'not found' }, 404)] },
      { path: '/m/broken', responses: [{ status: 500, body: { error: 'internal' }, delayMs: 50 }] },
      { path: '/m/slow', responses: [{ body: { id: 'slow' }, delayMs: 5000 }] },
    ]);
    const client = createSourceClient(FAST);
    const fetchOne = (id: string, signal: AbortSignal) => client.getRaw(`${server!.url}/m/${id}`, signal);

    const pages = await collect(lookupEach(['ok', 'gone'], 4, fetchOne, (id) => `test:${id}`));
    expect(pages).toEqual([
      { items: [{ id: 'ok' }], origin: 'test:ok' },
      { items: [], origin: 'test:gone', notFound: ['gone'] },
    ]);

    const t0 = Date.now();
    const err = await collect(lookupEach(['slow', 'broken', 'ok'], 4, fetchOne, (id) => `test:${id}`)).catch((e: unknown) => e);
    expect(Date.now() - t0).toBeLessThan(3000); // the slow lookup was stopped, not awaited
    expect(err).toBeInstanceOf(SourceHttpError);
    expect(err).toMatchObject({ kind: 'server_error', status: 500 });
  });

  it("the caller's signal stops the lookups: kind aborted", async () => {
    server = await startReplayServer([{ path: '/m/slow', responses: [{ body: { id: 'slow' }, delayMs: 5000 }] }]);
    const client = createSourceClient(FAST);
    const caller = new AbortController();
    setTimeout(() => caller.abort(new Error('sync stopped')), 100);
    const t0 = Date.now();
    const err = await collect(
      lookupEach(['slow', 'slow'], 2, (id, signal) => client.getRaw(`${server!.url}/m/${id}`, signal), (id) => `test:${id}`, caller.signal),
    ).catch((e: unknown) => e);
    expect(Date.now() - t0).toBeLessThan(3000);
    expect(err).toMatchObject({ kind: 'aborted' });
  });
});
