/**
 * A deterministic 45-question fixture for the scoring analyses (leaderboard, disagreement, value of
 * information, anchoring, resolution sources): four models forecast in three modes, moving toward the
 * market by a known share once it is shown (informed: 0.4 + 0.1 × model index, augmented: 0.7), with
 * an earlier round at 0.5; markets lie on the side of the outcome.
 */
import type { DuckDBConnection } from '@duckdb/node-api';
import { forecast, insert, question, resolution, type Row } from './fixture.ts';

export const MODELS = ['m1', 'm2', 'm3', 'm4'];
export const MODES = ['blind', 'informed', 'augmented'] as const;
const CATS = ['politics', 'finance', 'sports'];

/** Deterministic pseudo-random value in [0, 1) of (i, j, k). */
function u(...xs: number[]): number {
  let h = 2166136261;
  for (const x of xs) h = Math.imul(h ^ (x + 0x9e3779b9), 16777619) >>> 0;
  h ^= h >>> 13;
  h = Math.imul(h, 0x5bd1e995) >>> 0;
  return (h >>> 0) / 2 ** 32;
}

/** 45 questions; forecasts in three modes by four models; the market sits near the outcome. */
export function analysisFixture(): { questions: Row[]; forecasts: Row[]; prices: Row[]; resolutions: Row[] } {
  const questions: Row[] = [];
  const forecasts: Row[] = [];
  const prices: Row[] = [];
  const resolutions: Row[] = [];
  for (let i = 0; i < 45; i++) {
    const id = `Q${String(i).padStart(2, '0')}`;
    const o = u(i, 1) < 0.5 ? 1 : 0;
    const market = Math.round((o === 1 ? 0.35 + 0.6 * u(i, 2) : 0.05 + 0.6 * u(i, 2)) * 100) / 100;
    questions.push(question(id, { category: CATS[i % 3], domain: i % 2 ? 'macro' : 'policy' }));
    resolutions.push(resolution(id, o, i % 4 === 0 ? '2025-03-05' : '2025-04-20', { source_slug: i % 5 === 0 ? 'bls' : 'fred' }));
    prices.push({ question_id: id, observed_at: '2025-02-28', probability: market });
    for (const [k, model] of MODELS.entries()) {
      const blind = Math.round((0.2 + 0.6 * u(i, k, 3)) * 100) / 100;
      const pull: Record<(typeof MODES)[number], number> = { blind: 0, informed: 0.4 + 0.1 * k, augmented: 0.7 };
      for (const mode of MODES) {
        const p = Math.round((blind + pull[mode] * (market - blind)) * 1000) / 1000;
        forecasts.push(forecast(id, model, mode, 'r2', '2025-03-01', p));
        forecasts.push(forecast(id, model, mode, 'r1', '2025-02-01', 0.5));
      }
    }
  }
  return { questions, forecasts, prices, resolutions };
}

/** Inserts the fixture (and its two resolution sources) into the raw tables of conn. */
export async function insertAnalysisFixture(conn: DuckDBConnection): Promise<void> {
  const f = analysisFixture();
  await insert(conn, 'questions', f.questions);
  await insert(conn, 'forecasts', f.forecasts);
  await insert(conn, 'market_prices', f.prices);
  await insert(conn, 'resolutions', f.resolutions);
  await insert(conn, 'sources', [
    { source_slug: 'fred', name: 'FRED', kind: 'government', url: 'https://fred' },
    { source_slug: 'bls', name: 'BLS', kind: 'government', url: 'https://bls' },
  ]);
}
