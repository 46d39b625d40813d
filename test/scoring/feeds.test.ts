/**
 * sql/derive/87_latest_forecasts.sql, 88_evidence_used.sql and 89_active_predictions.sql on a small
 * hand-built fixture (as_of 2025-06-01), with the expected rows worked out by hand.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { DuckDBConnection } from '@duckdb/node-api';
import { derive, forecast, insert, openDb, question, resolution, rows, ts } from './fixture.ts';

describe('prediction feed tables (as_of 2025-06-01)', () => {
  let conn: DuckDBConnection;
  let close: () => void;
  beforeAll(async () => {
    ({ conn, close } = await openDb());
    await insert(conn, 'questions', [
      question('P1', { tags: ['fed', 'rates'], lang: 'en' }),
      question('P2', { category: 'crypto', domain: 'crypto' }),
      question('P3', { close_time: '2025-05-01' }), // resolved below: not active
      question('P4'), // active, never forecast
      question('P5', { close_time: '2025-05-15' }), // closed
      question('P6', { created_at: '2025-07-01' }), // created after as_of: invisible
    ]);
    const t = (reasoning: string, lang: string | null, key_factors: string[], evidence_ids: string[], translation_of: string | null = null) => ({
      reasoning, lang, key_factors, evidence_ids, translation_of,
    });
    await insert(conn, 'forecasts', [
      // P1 augmented: r1 is older; r2 (2025-05-20) is the latest run, answered in en and fr.
      forecast('P1', 'a', 'augmented', 'r1', '2025-05-01', 0.2, t('old', 'en', [], ['e1'])),
      forecast('P1', 'b', 'augmented', 'r1', '2025-05-01', 0.4, t('old', 'en', [], [])),
      forecast('P1', 'a', 'augmented', 'r2', '2025-05-20', 0.6, t('a en', 'en', ['k1', 'k2'], ['e1', 'e2'])),
      forecast('P1', 'a', 'augmented', 'r2', '2025-05-20', 0.6, t('a fr', 'fr', ['k1 fr'], ['e1', 'e2'], 'en')),
      forecast('P1', 'b', 'augmented', 'r2', '2025-05-20', 0.8, t('b en', 'en', [], ['e2', 'e3', 'e9'])),
      forecast('P1', 'b', 'augmented', 'r2', '2025-05-20', 0.8, t('b fr', 'fr', [], ['e2', 'e3', 'e9'], 'en')),
      // P1 blind: the latest blind run is r3 (later than the augmented one; the headline stays augmented).
      forecast('P1', 'a', 'blind', 'r2', '2025-05-20', 0.5, t('blind r2', 'en', [], [])),
      forecast('P1', 'a', 'blind', 'r3', '2025-05-25', 0.3, t('blind r3', 'en', [], ['e1'])),
      // After as_of: invisible (its consensus too).
      forecast('P1', 'a', 'augmented', 'r9', '2025-07-01', 0.99, t('future', 'en', [], ['e4'])),
      // P2 informed: r2 is the latest run; model d answered only in r1. c recorded no language.
      forecast('P2', 'd', 'informed', 'r1', '2025-05-01', 0.9, t('d de', 'de', [], [])),
      forecast('P2', 'a', 'informed', 'r2', '2025-05-21', 0.3, t('a de', 'de', [], [])),
      forecast('P2', 'b', 'informed', 'r2', '2025-05-21', 0.5, t('b de', 'de', [], [])),
      forecast('P2', 'c', 'informed', 'r2', '2025-05-21', 0.4, t('c ?', null, [], [])),
      // Not active: no latest forecasts. P3 is resolved: its scored forecast (r2, the latest before
      // its close on 05-01) and that forecast's translation are its scored_forecast_texts; the older
      // r1 and the r3 made after the close are not.
      forecast('P3', 'a', 'augmented', 'r1', '2025-04-10', 0.6, t('p3 old', 'en', [], ['e2'])),
      forecast('P3', 'a', 'augmented', 'r2', '2025-04-20', 0.7, t('p3', 'en', ['k p3'], ['e1'])),
      forecast('P3', 'a', 'augmented', 'r2', '2025-04-20', 0.7, t('p3 fr', 'fr', ['k p3 fr'], ['e1'], 'en')),
      forecast('P3', 'a', 'augmented', 'r3', '2025-05-01 12:00:00', 0.9, t('p3 late', 'en', [], ['e2'])),
      forecast('P5', 'a', 'augmented', 'r2', '2025-05-10', 0.7, t('p5', 'en', [], ['e1'])),
      forecast('P6', 'a', 'augmented', 'r2', '2025-05-20', 0.7, t('p6', 'en', [], ['e1'])),
    ]);
    await insert(conn, 'resolutions', [resolution('P3', 1, '2025-05-02')]);
    await insert(conn, 'market_prices', [
      { question_id: 'P1', observed_at: '2025-05-30', probability: 0.55 },
      { question_id: 'P1', observed_at: '2025-06-02', probability: 0.1 }, // after as_of
    ]);
    await insert(conn, 'evidence', [
      // e1 stored twice: the latest retrieval wins.
      { evidence_id: 'e1', question_id: 'P1', retrieved_at: '2025-05-10', title: 'e1 old', url: 'https://x/1', published_at: '2025-05-09', snippet: 's1', source_slug: 'fred' },
      { evidence_id: 'e1', question_id: 'P1', retrieved_at: '2025-05-19', title: 'e1 new', url: 'https://x/1', published_at: '2025-05-09', snippet: 's1', source_slug: 'fred' },
      // e2 has no published_at: it counts from its retrieval.
      { evidence_id: 'e2', question_id: 'P1', retrieved_at: '2025-05-19', title: 'e2', url: 'https://x/2', published_at: null, snippet: 's2', source_slug: 'news' },
      // e3 is published after as_of: never shown.
      { evidence_id: 'e3', question_id: 'P1', retrieved_at: '2025-05-19', title: 'e3', url: 'https://x/3', published_at: '2025-07-01', snippet: 's3', source_slug: 'fred' },
      // e4 is cited only by an invisible forecast; e5 by nothing.
      { evidence_id: 'e4', question_id: 'P1', retrieved_at: '2025-05-19', title: 'e4', url: null, published_at: '2025-05-01', snippet: null, source_slug: null },
      { evidence_id: 'e5', question_id: 'P1', retrieved_at: '2025-05-19', title: 'e5', url: null, published_at: '2025-05-01', snippet: null, source_slug: null },
    ]);
    await insert(conn, 'sources', [{ source_slug: 'fred', name: 'FRED', kind: 'government', url: 'https://fred' }]);
    await derive(conn, ts('2025-06-01'));
  });
  afterAll(() => close());

  it('latest_forecasts: the latest run of each active question and mode, one row per model and language', async () => {
    const lf = await rows(
      conn,
      `SELECT question_id, mode, model, lang, run_id, probability, reasoning, key_factors, evidence_ids, provider, translation_of
       FROM latest_forecasts ORDER BY question_id, mode, model, lang NULLS LAST`,
    );
    expect(lf).toEqual([
      { question_id: 'P1', mode: 'augmented', model: 'a', lang: 'en', run_id: 'r2', probability: 0.6, reasoning: 'a en', key_factors: ['k1', 'k2'], evidence_ids: ['e1', 'e2'], provider: 'simulated', translation_of: null },
      { question_id: 'P1', mode: 'augmented', model: 'a', lang: 'fr', run_id: 'r2', probability: 0.6, reasoning: 'a fr', key_factors: ['k1 fr'], evidence_ids: ['e1', 'e2'], provider: 'simulated', translation_of: 'en' },
      { question_id: 'P1', mode: 'augmented', model: 'b', lang: 'en', run_id: 'r2', probability: 0.8, reasoning: 'b en', key_factors: [], evidence_ids: ['e2', 'e3', 'e9'], provider: 'simulated', translation_of: null },
      { question_id: 'P1', mode: 'augmented', model: 'b', lang: 'fr', run_id: 'r2', probability: 0.8, reasoning: 'b fr', key_factors: [], evidence_ids: ['e2', 'e3', 'e9'], provider: 'simulated', translation_of: 'en' },
      { question_id: 'P1', mode: 'blind', model: 'a', lang: 'en', run_id: 'r3', probability: 0.3, reasoning: 'blind r3', key_factors: [], evidence_ids: ['e1'], provider: 'simulated', translation_of: null },
      { question_id: 'P2', mode: 'informed', model: 'a', lang: 'de', run_id: 'r2', probability: 0.3, reasoning: 'a de', key_factors: [], evidence_ids: [], provider: 'simulated', translation_of: null },
      { question_id: 'P2', mode: 'informed', model: 'b', lang: 'de', run_id: 'r2', probability: 0.5, reasoning: 'b de', key_factors: [], evidence_ids: [], provider: 'simulated', translation_of: null },
      { question_id: 'P2', mode: 'informed', model: 'c', lang: null, run_id: 'r2', probability: 0.4, reasoning: 'c ?', key_factors: [], evidence_ids: [], provider: 'simulated', translation_of: null },
    ]);
    const created = await rows(conn, `SELECT DISTINCT created_at FROM latest_forecasts WHERE question_id = 'P2'`);
    expect(created).toEqual([{ created_at: '2025-05-21 00:00:00' }]);
  });

  it('scored_forecast_texts: every language of each scored forecast of a resolved question', async () => {
    const st = await rows(
      conn,
      `SELECT question_id, mode, model, lang, run_id, probability, reasoning, key_factors, evidence_ids, translation_of
       FROM scored_forecast_texts ORDER BY question_id, mode, model, lang`,
    );
    expect(st).toEqual([
      { question_id: 'P3', mode: 'augmented', model: 'a', lang: 'en', run_id: 'r2', probability: 0.7, reasoning: 'p3', key_factors: ['k p3'], evidence_ids: ['e1'], translation_of: null },
      { question_id: 'P3', mode: 'augmented', model: 'a', lang: 'fr', run_id: 'r2', probability: 0.7, reasoning: 'p3 fr', key_factors: ['k p3 fr'], evidence_ids: ['e1'], translation_of: 'en' },
    ]);
  });

  it('evidence_used: cited by the latest forecasts, published by as_of, the latest stored version', async () => {
    const ev = await rows(
      conn,
      `SELECT question_id, evidence_id, title, published_at, retrieved_at, source_slug, source_name, source_kind, n_forecasts, modes
       FROM evidence_used ORDER BY question_id, evidence_id`,
    );
    expect(ev).toEqual([
      // e1: cited by a's augmented r2 forecast (its fr translation is the same forecast: not counted
      // again) and a's blind r3; r1's citation is not the latest run's.
      { question_id: 'P1', evidence_id: 'e1', title: 'e1 new', published_at: '2025-05-09 00:00:00', retrieved_at: '2025-05-19 00:00:00', source_slug: 'fred', source_name: 'FRED', source_kind: 'government', n_forecasts: 2, modes: ['blind', 'augmented'] },
      // e2: no published_at, retrieved before as_of; cited by both augmented r2 forecasts (a and b,
      // each in en and fr: four rows, two forecasts).
      { question_id: 'P1', evidence_id: 'e2', title: 'e2', published_at: null, retrieved_at: '2025-05-19 00:00:00', source_slug: 'news', source_name: null, source_kind: null, n_forecasts: 2, modes: ['augmented'] },
      // e3 (published after as_of), e4 (cited only after as_of), e5 (not cited), e9 (no row): absent.
      // P3 (resolved): e1, cited by its scored forecast (shown in en and fr: one forecast); e2 (older
      // run, later run) is not.
      { question_id: 'P3', evidence_id: 'e1', title: 'e1 new', published_at: '2025-05-09 00:00:00', retrieved_at: '2025-05-19 00:00:00', source_slug: 'fred', source_name: 'FRED', source_kind: 'government', n_forecasts: 1, modes: ['augmented'] },
    ]);
  });

  it('active_predictions: the headline consensus of every active question with its languages, newest first', async () => {
    const ap = await rows(
      conn,
      `SELECT question_id, mode, run_id, forecast_at, consensus, n_models, disagreement_sd, disagreement_range,
              market_probability, market_observed_at, langs, category, tags
       FROM active_predictions`,
    );
    expect(ap.map((r) => r.question_id)).toEqual(['P2', 'P1']); // forecast_at 05-21, then 05-20
    const [p2, p1] = ap as Record<string, any>[];
    // P2: informed r2, mean (0.3 + 0.5 + 0.4) / 3 = 0.4, sd = sqrt(((0.1)² + (0.1)² + 0) / 3), range 0.2; no price.
    expect(p2).toMatchObject({ mode: 'informed', run_id: 'r2', n_models: 3, market_probability: null, langs: ['de'], category: 'crypto' });
    expect(p2.consensus).toBeCloseTo(0.4, 12);
    expect(p2.disagreement_sd).toBeCloseTo(Math.sqrt(0.02 / 3), 12);
    expect(p2.disagreement_range).toBeCloseTo(0.2, 12);
    // P1: augmented (headline order augmented, informed, blind) r2: mean of 0.6 and 0.8 = 0.7, two
    // models (the fr rows are translations); market 0.55 observed 2025-05-30 (the 06-02 price is after as_of).
    expect(p1).toMatchObject({ mode: 'augmented', run_id: 'r2', n_models: 2, forecast_at: '2025-05-20 00:00:00', market_probability: 0.55, market_observed_at: '2025-05-30 00:00:00', langs: ['en', 'fr'], tags: ['fed', 'rates'] });
    expect(p1.consensus).toBeCloseTo(0.7, 12);
  });

  it('headline order is configurable: blind first picks P1\'s blind run', async () => {
    const { conn: c2, close: close2 } = await openDb();
    try {
      await insert(c2, 'questions', [question('P1')]);
      await insert(c2, 'forecasts', [
        forecast('P1', 'a', 'augmented', 'r2', '2025-05-20', 0.6, { lang: 'en' }),
        forecast('P1', 'a', 'blind', 'r3', '2025-05-25', 0.3, { lang: 'es' }),
      ]);
      await derive(c2, ts('2025-06-01'), ['blind', 'augmented']);
      const ap = await rows(c2, `SELECT question_id, mode, run_id, consensus, langs FROM active_predictions`);
      expect(ap).toEqual([{ question_id: 'P1', mode: 'blind', run_id: 'r3', consensus: 0.3, langs: ['es'] }]);
      const lf = await rows(c2, `SELECT mode, lang FROM latest_forecasts ORDER BY mode`);
      expect(lf).toEqual([{ mode: 'augmented', lang: 'en' }, { mode: 'blind', lang: 'es' }]);
    } finally {
      close2();
    }
  });
});
