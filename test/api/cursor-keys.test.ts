/**
 * Every cursor a list issues is accepted back by that list, whatever the key it carries (QA of
 * keyset pagination over a real data directory). Quorum's own claims are named after their
 * question (`forecast:<question_id>:<model>:<mode>`, `consensus:<question_id>:<mode>`), and a
 * question id is what its source gave: `quorum import forecastbench` takes any non-empty `id`, so
 * a ForecastBench extract with the id '🚀rocket' (or one with a space, a comma, a quote, a slash)
 * made the claim `forecast:manifold:🚀rocket:sim-gemini:augmented`. The claims cursor checked its
 * claim id against the grammar of imported claim ids, and a page ending on such a claim issued a
 * next_cursor that the same list answered with a 400: the walk could not get past it.
 * Below: a next_cursor reused with other query parameters, on every list with a fixture here.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ServerHandle } from '../../api/server.ts';
import { fixtureData, withFeeds, type FixtureData } from './fixtures.ts';
import { auth, expectProblem, fixtureDir, get, newKey, serve } from './helpers.ts';

/** Claim ids as sql/derive/90_claims.sql names Quorum's claims, over hostile question ids. */
const QUESTION_IDS = ['manifold:🚀rocket', 'manifold:日本語の質問', 'manifold:é-ünïcødé', 'manifold:with space', 'manifold:x,y "q"', 'manifold:pct%2F/seg', 'metaculus:1554'];
const CLAIM_IDS = QUESTION_IDS.flatMap((q) => [`forecast:${q}:sim-gpt:augmented`, `forecast:${q}:sim-claude:augmented`, `consensus:${q}:augmented`]);

function claimRow(claimId: string, i: number): Record<string, unknown> {
  const question = claimId.split(':').slice(1, 3).join(':');
  return {
    claim_id: claimId,
    source_slug: claimId.startsWith('consensus:') ? 'quorum-consensus' : `ai-${claimId.split(':').at(-2)}`,
    // two made_at values only: most rows tie on the sort key and are ordered by claim_id
    made_at: i % 3 === 0 ? '2026-03-06T00:00:00Z' : '2025-10-16T00:00:00Z',
    question_id: question, subject: question, subject_key: question, category: 'tech', kind: 'probability',
    probability: 0.6, side: 'yes', outcome: 1, resolved_at: '2026-01-01T00:00:00Z', resolved: true, hit: 1, brier: 0.16,
    provenance_dataset: 'quorum', provenance_file: 'scored_forecasts', origin: 'quorum',
  };
}

/**
 * Six sources: ranks 5, 1, 3, unranked, 2, unranked; kinds and categories alternate; n_resolved
 * 10..15 and accuracy and Brier rising and falling with the index, so every sort orders them
 * differently.
 */
const SOURCES = [5, 1, 3, null, 2, null].map((rank, i) => ({
  source_slug: `src-${i}`, name: `Source ${i}`, kind: i % 2 ? 'pollster' : 'forecaster', n_claims: 20, n_resolved: 10 + i,
  ranked: rank !== null, rank, accuracy_score: 0.5 + i / 20, brier: 0.3 - i / 50, categories: i % 2 ? ['politics'] : ['economics'],
}));

let server: ServerHandle;
let cleanup: () => Promise<void>;
let key: string;

beforeAll(async () => {
  const data: FixtureData = {
    ...withFeeds(fixtureData(1)),
    claims: CLAIM_IDS.map(claimRow) as FixtureData['claims'],
    track_records: SOURCES as FixtureData['track_records'],
  };
  const tmp = await fixtureDir(data);
  cleanup = tmp.cleanup;
  key = newKey(tmp.dir, 'enterprise').key;
  server = await serve(tmp.dir);
});
afterAll(async () => {
  await server?.close();
  await cleanup?.();
});

describe('claims cursors over claim ids named after any question id', () => {

  for (const limit of [1, 7, 500]) {
    it(`limit=${limit}: every claim once, newest first, ties by claim_id`, async () => {
      const walked: { claim_id: string; made_at: string }[] = [];
      let url: string | null = `/api/claims/?limit=${limit}`;
      while (url !== null) {
        const got = await get(server, url, auth.x(key));
        expect(got.res.status, `${url}: ${JSON.stringify(got.body)}`).toBe(200);
        walked.push(...got.body.claims);
        url = got.body.next_cursor === null ? null : `/api/claims/?limit=${limit}&cursor=${encodeURIComponent(got.body.next_cursor)}`;
      }
      const expected = CLAIM_IDS.map((id, i) => ({ id, at: claimRow(id, i).made_at as string }))
        .sort((a, b) => (a.at !== b.at ? (a.at < b.at ? 1 : -1) : Buffer.compare(Buffer.from(a.id), Buffer.from(b.id))))
        .map((r) => r.id);
      expect(walked.map((c) => c.claim_id)).toEqual(expected);
    });
  }
});

/**
 * A next_cursor reused with other query parameters than the request that issued it. Only
 * `/api/track-records/` has more than one order (`sort`): there a cursor is the key of one order
 * (a rank, an accuracy, a Brier) and means nothing in another, so another sort is a 400 naming
 * `cursor` that says so (the detail said the cursor was not one "this endpoint issued", which it
 * was). Every other list has one fixed order whatever its filters and language; a filter narrows
 * the set, so a cursor reused with another filter or language is the same position in that one
 * order: the new query's items after it, none repeated, none out of order.
 */
describe('a cursor reused with other query parameters', () => {
  type Item = Record<string, any>;
  const LIST_FIELDS = ['sources', 'claims', 'predictions', 'events', 'edges'] as const;
  const items = (body: any): Item[] => body[LIST_FIELDS.find((f) => Array.isArray(body?.[f]))!];
  const idOf = (it: Item): string => it.slug ?? it.claim_id ?? it.question_id;
  const with_ = (url: string, extra: string) => `${url}${url.includes('?') ? '&' : '?'}${extra}`;
  async function ok(url: string): Promise<any> {
    const got = await get(server, url, auth.x(key));
    expect(got.res.status, `${url}: ${got.text.slice(0, 300)}`).toBe(200);
    return got.body;
  }

  it('GET /api/track-records/: another sort is a 400 naming cursor that says the sort differs', async () => {
    const byRank = await ok('/api/track-records/?limit=2');
    const bySlug = await ok('/api/track-records/?limit=2&sort=slug');
    expect(byRank.next_cursor).toEqual(expect.any(String));
    for (const [cursor, sorts] of [[byRank.next_cursor, ['accuracy', 'n_resolved', 'brier', 'mae', 'slug']], [bySlug.next_cursor, ['rank', 'accuracy']]] as const) {
      for (const sort of sorts) {
        const got = await get(server, `/api/track-records/?limit=2&sort=${sort}&cursor=${cursor}`, auth.x(key));
        expectProblem(got, 400, 'invalid_parameter');
        expect(got.body.parameter).toBe('cursor');
        expect(got.body.detail, sort).toMatch(/another sort/);
        expect(got.body.detail).not.toContain(cursor);
      }
    }
    // the default sort is rank: a cursor of ?sort=rank continues the list without sort as with it
    const continued = await ok(`/api/track-records/?limit=2&sort=rank&cursor=${byRank.next_cursor}`);
    expect((await ok(`/api/track-records/?limit=2&cursor=${byRank.next_cursor}`)).sources).toEqual(continued.sources);
    // a cursor of another route is still "not a cursor this endpoint issued"
    const claims = await ok('/api/claims/?limit=1');
    const other = await get(server, `/api/track-records/?cursor=${claims.next_cursor}`, auth.x(key));
    expectProblem(other, 400, 'invalid_parameter');
    expect(other.body.detail).toMatch(/not a cursor this endpoint issued/);
  });

  it('a slug-sorted cursor issued before the sort check (the same envelope) is still taken', async () => {
    // {"v":1,"k":"track_records:slug","a":[0,<slug>,<snapshot>]}: what the route has issued since cursors named their snapshot
    const issued = Buffer.from(JSON.stringify({ v: 1, k: 'track_records:slug', a: [0, 'src-1', 'r19990101T000000Z-old'] })).toString('base64url');
    expect((await ok(`/api/track-records/?sort=slug&cursor=${issued}`)).sources.map(idOf)).toEqual(['src-2', 'src-3', 'src-4', 'src-5']);
  });

  /**
   * Each list's one order: the URL of its whole unfiltered list (positions read from it), or whether
   * item `a` comes after `b` (the lists by language, which have no list of every language).
   */
  const after = {
    byQuestionId: (a: Item, b: Item) => Buffer.compare(Buffer.from(a.question_id), Buffer.from(b.question_id)) > 0,
    newestFirst: (a: Item, b: Item) => (a.forecast_at !== b.forecast_at ? a.forecast_at < b.forecast_at : a.question_id > b.question_id),
  };
  const CASES: Array<{ first: string; others: string[]; order: string | ((a: Item, b: Item) => boolean) }> = [
    { first: '/api/track-records/?limit=2', others: ['kind=pollster', 'category=politics', 'min_resolved=13', 'kind=forecaster&category=economics'], order: '/api/track-records/?limit=500' },
    { first: '/api/track-records/?limit=2&sort=brier', others: ['sort=brier&kind=pollster', 'sort=brier&min_resolved=14'], order: '/api/track-records/?limit=500&sort=brier' },
    { first: '/api/claims/?limit=4', others: ['source=quorum-consensus', 'kind=probability', 'question_id=metaculus%3A1554'], order: '/api/claims/?limit=500' },
    { first: '/api/predictions/resolved?limit=3', others: ['category=politics', 'venue=polymarket', 'category=economics'], order: '/api/predictions/resolved?limit=500' },
    { first: '/api/predictions/edges/?limit=1&include_stale=true&min_edge=0', others: ['include_stale=false', 'min_edge=0.2&include_stale=true'], order: '/api/predictions/edges/?limit=500&include_stale=true&min_edge=0' },
    { first: '/api/predictions/lang/en?limit=3', others: ['@fr', '@pt-BR', '@en&category=crypto', '@en&venue=manifold'], order: after.byQuestionId },
    { first: '/api/events/lang/en/?limit=2', others: ['@fr', '@pt-BR', '@de'], order: after.newestFirst },
  ];

  for (const c of CASES) {
    it(`${c.first}: another filter or language continues at the same position of its one order`, async () => {
      const first = await ok(c.first);
      expect(first.next_cursor, c.first).toEqual(expect.any(String));
      const last = items(first).at(-1)!;
      const orderIds = typeof c.order === 'string' ? items(await ok(c.order)).map(idOf) : null;
      const isAfter = (it: Item): boolean =>
        orderIds ? orderIds.indexOf(idOf(it)) > orderIds.indexOf(idOf(last)) : (c.order as (a: Item, b: Item) => boolean)(it, last);
      let reached = 0;
      for (const other of c.others) {
        // '@xx...': the language in the path, the rest as query parameters
        const url = other.startsWith('@')
          ? c.first.replace(/\/lang\/en(\/?)\?/, `/lang/${other.slice(1).split('&')[0]}$1?`) + other.slice(1).split('&').slice(1).map((p) => `&${p}`).join('')
          : with_(c.first.replace(/&?(include_stale|min_edge|sort)=[^&]*/g, ''), other);
        const allOfIt = items(await ok(url.replace(/limit=\d+/, 'limit=500')));
        if (orderIds) for (const it of allOfIt) expect(orderIds, idOf(it)).toContain(idOf(it));
        const expected = allOfIt.filter(isAfter).map(idOf);
        const walked: string[] = [];
        let next: string | null = first.next_cursor;
        while (next !== null) {
          const page = await ok(with_(url, `cursor=${encodeURIComponent(next)}`));
          walked.push(...items(page).map(idOf));
          next = page.next_cursor;
        }
        expect(walked, `${url} from ${idOf(last)}`).toEqual(expected);
        reached += expected.length;
      }
      expect(reached, 'the cases reach items after the cursor').toBeGreaterThan(0);
    });
  }
});
