/**
 * Every cursor a list issues is accepted back by that list, whatever the key it carries (QA of
 * keyset pagination over a real data directory). Quorum's own claims are named after their
 * question (`forecast:<question_id>:<model>:<mode>`, `consensus:<question_id>:<mode>`), and a
 * question id is what its source gave: `quorum import forecastbench` takes any non-empty `id`, so
 * a ForecastBench extract with the id '🚀rocket' (or one with a space, a comma, a quote, a slash)
 * made the claim `forecast:manifold:🚀rocket:sim-gemini:augmented`. The claims cursor checked its
 * claim id against the grammar of imported claim ids, and a page ending on such a claim issued a
 * next_cursor that the same list answered with a 400: the walk could not get past it.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ServerHandle } from '../../api/server.ts';
import { fixtureData, type FixtureData } from './fixtures.ts';
import { auth, fixtureDir, get, newKey, serve } from './helpers.ts';

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

describe('claims cursors over claim ids named after any question id', () => {
  let server: ServerHandle;
  let cleanup: () => Promise<void>;
  let key: string;

  beforeAll(async () => {
    const data: FixtureData = { ...fixtureData(1), claims: CLAIM_IDS.map(claimRow) as FixtureData['claims'] };
    const tmp = await fixtureDir(data);
    cleanup = tmp.cleanup;
    key = newKey(tmp.dir, 'api').key;
    server = await serve(tmp.dir);
  });
  afterAll(async () => {
    await server?.close();
    await cleanup?.();
  });

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
