/**
 * Cache priming: once a snapshot is loaded (at start and after each publish) the server caches the
 * responses a first visit reads (FIRST_READS: the dashboard overview's requests), so the first
 * reader is answered from memory. The primed bodies must be exactly what a reader gets from a
 * server that does not prime (same input parsing, same cache key), and a server closed while
 * priming closes cleanly.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FIRST_READS } from '../../api/app.ts';
import { ResponseCache } from '../../api/cache/response-cache.ts';
import type { ServerHandle } from '../../api/server.ts';
import { PREDICTIONS_PAGE_LIMIT } from '../../dashboard/src/first-reads.ts';
import { fixtureData, publish, withFeeds, withoutEnglish, writeSnapshot } from './fixtures.ts';
import { SNAP, fixtureDir, get, newKey, serve } from './helpers.ts';

/** The URL a reader would send for a primed request (its path values read from the server's snapshot when they come from it). */
async function urlOf(server: ServerHandle, r: (typeof FIRST_READS)[number]): Promise<string> {
  const def = server.app.routes.find((d) => d.id === r.id && (d.method ?? 'get') === 'get')!;
  const read = r.params;
  const params = typeof read === 'function' ? await server.app.snapshots.withSnapshot((snap) => read(snap)) : read;
  const p = def.path.replace(/\{(\w+)\}/g, (_m, name: string) => encodeURIComponent(params?.[name] ?? ''));
  const q = new URLSearchParams(r.query ?? {}).toString();
  return q ? `${p}?${q}` : p;
}

describe('cache priming', () => {
  const dirs: { dir: string; cleanup: () => Promise<void> }[] = [];
  let primed: ServerHandle;
  let plain: ServerHandle;

  beforeAll(async () => {
    dirs.push(await fixtureDir(), await fixtureDir());
    primed = await serve(dirs[0]!.dir, { primeCache: FIRST_READS });
    plain = await serve(dirs[1]!.dir, { primeCache: false });
  });
  afterAll(async () => {
    await primed?.close();
    await plain?.close();
    for (const d of dirs) await d.cleanup();
  });

  it('caches every first read at start, exactly as a reader would get it', async () => {
    await primed.app.primed();
    expect(plain.app.services.cache.size).toBe(0);
    // an api-plan key: the leaderboard and the analyses are primed too (one cache entry serves every
    // caller the route admits)
    const keyed = (dir: string) => ({ headers: { 'X-API-Key': newKey(dir, 'api').key } });
    const [asPrimed, asPlain] = [keyed(dirs[0]!.dir), keyed(dirs[1]!.dir)];
    let answered = 0;
    for (const r of FIRST_READS) {
      const url = await urlOf(primed, r);
      const b = await get(plain, url, asPlain);
      const hitsBefore = primed.app.services.cache.hits;
      const a = await get(primed, url, asPrimed);
      expect(a.res.status, url).toBe(b.res.status);
      expect(a.text, url).toBe(b.text);
      if (b.res.status !== 200) continue; // e.g. this fixture has no reasoning in English: a 404, not primed
      answered++;
      expect(primed.app.services.cache.hits, `${url} answered from the primed cache`).toBe(hitsBefore + 1);
      expect(a.res.headers.get('etag'), url).toBe(b.res.headers.get('etag'));
      expect(a.res.headers.get('x-snapshot')).toBe(SNAP);
    }
    expect(answered).toBeGreaterThanOrEqual(FIRST_READS.length - 1);
    expect(primed.app.services.cache.size).toBe(answered);
  });

  it('primes the new snapshot after a publish, and drops the old snapshot\'s answers (never served again) at once', async () => {
    const before = primed.app.services.cache.size;
    expect(before).toBeGreaterThan(0);
    const next = 'r20250403T000000Z-bb02';
    await writeSnapshot(dirs[0]!.dir, next, fixtureData(2));
    await publish(dirs[0]!.dir, next);
    await primed.app.snapshots.reload();
    await primed.app.primed();
    // only the new snapshot's first reads are held (QA soak: the old ones stayed until the LRU
    // pushed them out, up to the whole byte bound)
    expect(primed.app.services.cache.size).toBeLessThanOrEqual(FIRST_READS.length);
    expect(primed.app.services.cache.size).toBeGreaterThan(0);
    const hitsBefore = primed.app.services.cache.hits;
    const a = await get(primed, '/api/predictions/accuracy');
    expect(a.res.headers.get('x-snapshot')).toBe(next);
    expect(a.body.total_resolved).toBe(40);
    expect(primed.app.services.cache.hits).toBe(hitsBefore + 1);
  });

  it('a server closed while it primes closes cleanly; a request that cannot be answered is skipped', async () => {
    const tmp = await fixtureDir();
    try {
      // an unknown route id and a bad parameter are skipped, the rest is primed
      const s = await serve(tmp.dir, {
        primeCache: [{ id: 'predictions.resolved', query: { limit: 'many' } }, { id: 'predictions.accuracy' }],
      });
      await s.app.primed();
      expect(s.app.services.cache.size).toBe(1);
      await s.close();
      const t = await serve(tmp.dir, { primeCache: FIRST_READS });
      await t.close(); // at once: priming stops between requests and close waits for the one running
      expect(t.app.services.cache.size).toBeLessThanOrEqual(FIRST_READS.length);
    } finally {
      await tmp.cleanup();
    }
  });
});

describe('cache priming on a service run without English (QUORUM_LANGS=pt-BR,zh-Hant)', () => {
  // The predictions page's first read was primed as /api/predictions/lang/en, a 404 there: the page
  // asks for the snapshot's main language (service_stats `languages`, first), and so does priming.
  it('primes the feed of the snapshot\'s main language, the one service_stats lists first', async () => {
    const tmp = await fixtureDir(withoutEnglish(withFeeds(fixtureData(1))));
    const s = await serve(tmp.dir, { primeCache: FIRST_READS });
    try {
      await s.app.primed();
      const stats = await get(s, '/api/events/service_stats/');
      expect(stats.body.languages[0].lang).toBe('pt-BR');
      const hitsBefore = s.app.services.cache.hits;
      const feed = await get(s, `/api/predictions/lang/pt-BR?limit=${PREDICTIONS_PAGE_LIMIT}`);
      expect(feed.res.status).toBe(200);
      expect(feed.body.lang).toBe('pt-BR');
      expect(s.app.services.cache.hits, 'answered from the primed cache').toBe(hitsBefore + 1);
      expect((await get(s, '/api/predictions/lang/en')).res.status).toBe(404);
    } finally {
      await s.close();
      await tmp.cleanup();
    }
  });
});

describe('ResponseCache.retainOnly', () => {
  it('drops every other snapshot\'s entries and their bytes, keeps the one named', () => {
    const cache = new ResponseCache({ maxEntries: 10, maxBytes: 1000 });
    cache.set(ResponseCache.key('old', 'a', ''), 'old', Buffer.alloc(100));
    cache.set(ResponseCache.key('old', 'b', ''), 'old', Buffer.alloc(200));
    cache.set(ResponseCache.key('new', 'a', ''), 'new', Buffer.alloc(50));
    expect([cache.size, cache.bytes]).toEqual([3, 350]);
    expect(cache.retainOnly('new')).toBe(2);
    expect([cache.size, cache.bytes]).toEqual([1, 50]);
    expect(cache.get(ResponseCache.key('new', 'a', ''))?.body.length).toBe(50);
    expect(cache.get(ResponseCache.key('old', 'a', ''))).toBeUndefined();
  });
});
