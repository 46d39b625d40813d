/**
 * The bundled datasets (data/sample/fte-pollster-raw-polls, fte-election-forecasts,
 * cbo-budget-projections) imported and scored, checked against the figures their own README.txt
 * files state (row counts, resolved counts, rightcall counts, pollsters, baselines) and against
 * Brier scores and errors recomputed here straight from the CSV files (issue 11 point 6).
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ServerHandle } from '../../api/server.ts';
import { get, newKey, serve, auth } from '../api/helpers.ts';
import { REPO } from '../helpers/cli.ts';
import { tempDir } from '../helpers/temp-dir.ts';
import { importBundledClaims } from '../../pipeline/bootstrap.ts';
import { publishScores } from './helpers.ts';
import { withConnection } from '../../pipeline/warehouse/duckdb.ts';
import { readCurrent } from '../../pipeline/warehouse/snapshot.ts';

const SAMPLE = join(REPO, 'data', 'sample');

/** A plain CSV (no quoted commas: true of the 2018 and CBO files) as objects. */
function plainCsv(path: string): Record<string, string>[] {
  const [header, ...lines] = readFileSync(path, 'utf8').trim().split('\n');
  const cols = header!.split(',');
  return lines.map((l) => Object.fromEntries(l.split(',').map((v, i) => [cols[i], v])));
}

describe('bundled claims datasets', () => {
  const tmp = tempDir('quorum-claims-bundled-');
  let server: ServerHandle;
  let key: string;
  let results: Awaited<ReturnType<typeof importBundledClaims>>;
  let data = '';

  beforeAll(async () => {
    data = join(tmp.dir, 'data');
    // The first start's own import (pipeline/bootstrap.ts): every bundled folder beside the sample.
    results = await importBundledClaims(data, SAMPLE);
    await publishScores(data);
    server = await serve(data);
    key = newKey(data, 'api').key;
  }, 180_000);

  afterAll(async () => {
    await server?.close();
    tmp.cleanup();
  });

  async function source(slug: string) {
    const got = await get(server, `/api/track-records/sources/${slug}/`);
    expect(got.res.status, got.text.slice(0, 200)).toBe(200);
    return got.body.source;
  }

  it('imports every row the READMEs count', () => {
    // polls: 11,475 rows, 517 pollsters; 2018: 1,518 rows + Senate 103 races; CBO: 347 rows per file
    expect(results.map((r) => [r.format, r.claims.written, r.sources.written])).toEqual([
      ['fte-polls', 11_475, 517],
      ['fte-forecasts', 1_518 + 103, 4],
      ['cbo', 2 * 347, 1],
    ]);
  });

  it('polls: the count that called the winner (rightcall 1 = 8,940, 0 = 2,108, 0.5 = 427)', async () => {
    const got = await get(server, '/api/track-records/?kind=pollster&limit=500', auth.x(key));
    const pages = [got.body];
    let cursor = got.body.next_cursor;
    while (cursor) {
      const next = await get(server, `/api/track-records/?kind=pollster&limit=500&cursor=${cursor}`, auth.x(key));
      pages.push(next.body);
      cursor = next.body.next_cursor;
    }
    const all = pages.flatMap((p) => p.sources);
    expect(all).toHaveLength(517);
    expect(got.body.total).toBe(517);
    const n = all.reduce((s: number, x: { n_directional: number }) => s + x.n_directional, 0);
    const hits = all.reduce((s: number, x: { accuracy_score: number; n_directional: number }) => s + (x.accuracy_score / 100) * x.n_directional, 0);
    expect(n).toBe(11_475);
    expect(hits).toBeCloseTo(8_940 + 0.5 * 427, 0);
    // 91 pollsters with >= 20 polls (README); all with >= 10 resolved are ranked
    expect(all.filter((x: { n_resolved: number }) => x.n_resolved >= 20)).toHaveLength(91);
    expect(all.every((x: { ranked: boolean; n_resolved: number }) => x.ranked === x.n_resolved >= 10)).toBe(true);
    const surveyusa = await source('surveyusa');
    expect(surveyusa).toMatchObject({ name: 'SurveyUSA', kind: 'pollster', n_claims: 856, n_resolved: 856 });
    expect(surveyusa.attribution).toContain('CC BY 4.0');
    expect(surveyusa.relative_skill.n_value).toBeGreaterThan(0);
    // the non-ASCII name folds: "Øptimus Analytics"
    expect((await source('optimus-analytics')).name).toBe('Øptimus Analytics');
    const ties = await get(server, '/api/claims/?source=surveyusa&limit=500', auth.x(key));
    expect(ties.body.total).toBe(856);
    // capitals A-Z read as lower case, as in /api/track-records/sources/SurveyUSA/ (QA: a 400 here)
    const capitals = await get(server, '/api/claims/?source=SurveyUSA&limit=1', auth.x(key));
    expect(capitals.res.status, capitals.text).toBe(200);
    expect(capitals.body.total).toBe(856);
    // a slug no claim has (a name written as a slug): a 400 naming the closest, not an empty list read as "no claims"
    const typo = await get(server, '/api/claims/?source=survey-usa', auth.x(key));
    expect(typo.res.status).toBe(400);
    expect(typo.body).toMatchObject({ code: 'invalid_parameter', parameter: 'source' });
    expect(typo.body.closest).toContain('surveyusa');
    expect(typo.body.detail).toMatch(/^No source 'survey-usa' has claims in this snapshot\. Closest slugs: .*surveyusa/);
    // a known source whose claims the other filters leave out is an empty list
    const none = await get(server, '/api/claims/?source=surveyusa&made_since=2099-01-01', auth.x(key));
    expect([none.res.status, none.body.total]).toEqual([200, 0]);
  });

  it('2018: three model versions on the same 504 resolved races (6 uncalled), Brier as recomputed from the file', async () => {
    const rows = plainCsv(join(SAMPLE, 'fte-election-forecasts', 'forecast_results_2018.csv'));
    for (const version of ['lite', 'classic', 'deluxe']) {
      const resolved = rows.filter((r) => r.version === version && r.uncalled === '0');
      const brier = resolved.reduce((s, r) => s + (Number(r.Democrat_WinProbability) - Number(r.Democrat_Won)) ** 2, 0) / resolved.length;
      const s = await source(`fivethirtyeight-${version}`);
      expect(s).toMatchObject({ kind: 'forecaster', n_claims: 506, n_resolved: 504 });
      expect(s.probability.n).toBe(504);
      expect(s.probability.brier).toBeCloseTo(brier, 6);
    }
    // deluxe < classic < lite, as FiveThirtyEight reported for its versions
    const [lite, classic, deluxe] = await Promise.all(['lite', 'classic', 'deluxe'].map((v) => source(`fivethirtyeight-${v}`)));
    expect(deluxe.probability.brier).toBeLessThan(classic.probability.brier);
    expect(classic.probability.brier).toBeLessThan(lite.probability.brier);
    const uncalled = await get(server, '/api/claims/?source=fivethirtyeight-deluxe&resolved=false', auth.x(key));
    expect(uncalled.body.claims.map((c: { claim_id: string }) => c.claim_id).sort()).toEqual(['fte-2018:deluxe:CA-21', 'fte-2018:deluxe:NC-9']);
  });

  it('Senate 2008-2012: 103 races (67/73/67 rows), one claim per race on the favourite', async () => {
    const s = await source('fivethirtyeight');
    expect(s).toMatchObject({ n_claims: 103, n_resolved: 103 });
    const trends = (await get(server, '/api/track-records/sources/fivethirtyeight/trends/', auth.x(key))).body.trends;
    expect(trends.map((t: { year: number }) => t.year)).toEqual([2008, 2010, 2012]);
    // AK 2010 (three rows, "Loss" and "Lose"): the favourite Miller (0.71) lost
    const ak = (await get(server, '/api/claims/fte-senate:2010:alaska', auth.x(key))).body.claim;
    expect(ak).toMatchObject({ side: 'Miller', probability: 0.71, outcome: 0, hit: 0 });
    // SD 2010 has a single row (uncontested)
    expect((await get(server, '/api/claims/fte-senate:2010:south-dakota', auth.x(key))).body.claim).toMatchObject({ probability: 1, outcome: 1 });
  });

  it('every accuracy score lies in its own Wilson interval, 10 of 10 included (QA: a hi of 99.99999999999999 against 100)', async () => {
    const file = (t: string) => join(data, 'snapshots', readCurrent(data)!, `${t}.parquet`).replaceAll("'", "''");
    for (const table of ['track_records', 'track_record_trends']) {
      const [row] = await withConnection(async (conn) =>
        (await conn.runAndReadAll(
          `SELECT count(*) FILTER (WHERE accuracy_score < accuracy_ci95_lo OR accuracy_score > accuracy_ci95_hi)::INTEGER AS outside,
                  count(*) FILTER (WHERE accuracy_score = 100)::INTEGER AS perfect,
                  count(*) FILTER (WHERE accuracy_score = 0)::INTEGER AS none
           FROM read_parquet('${file(table)}')`,
        )).getRowObjectsJS(),
      );
      expect(row, table).toMatchObject({ outside: 0 });
      expect(Number(row!.perfect) + Number(row!.none), table).toBeGreaterThan(0); // the edge cases are there
    }
  });

  it('CBO: 42 baselines, horizons 1-11 years, errors = projection − actual in each file\'s own sign', async () => {
    const deficit = plainCsv(join(SAMPLE, 'cbo-budget-projections', 'deficit_projection_errors.csv'));
    const debt = plainCsv(join(SAMPLE, 'cbo-budget-projections', 'debt_projection_errors.csv'));
    expect(new Set(deficit.map((r) => r.baseline_date)).size).toBe(42);
    const all = [...deficit, ...debt];
    const mae = all.reduce((s, r) => s + Math.abs(Number(r.value) - Number(r.actual_value)), 0) / all.length;
    const bias = all.reduce((s, r) => s + (Number(r.value) - Number(r.actual_value)), 0) / all.length;
    const s = await source('congressional-budget-office');
    expect(s).toMatchObject({ kind: 'institution', n_claims: 694, n_resolved: 694, accuracy_score: null, ranked: false });
    expect(s.value.n).toBe(694);
    expect(s.value.mae).toBeCloseTo(mae, 4);
    expect(s.value.bias).toBeCloseTo(bias, 4);
    expect(s.horizons.map((h: { horizon_bucket: string }) => h.horizon_bucket)).toEqual(['91-365', ...Array.from({ length: 10 }, (_, i) => `${i + 2}y`)]);
    const trends = (await get(server, '/api/track-records/sources/congressional-budget-office/trends/', auth.x(key))).body.trends;
    expect(trends).toHaveLength(42);
    // Answered whole: a page size or cursor would be ignored, so it is refused (outside test: ?limit=2 gave all 42).
    for (const q of ['limit=2', 'cursor=abc']) {
      const r = await get(server, `/api/track-records/sources/congressional-budget-office/trends/?${q}`, auth.x(key));
      expect(r.res.status, q).toBe(400);
      expect(r.body.detail, q).toContain('answered whole, in one page');
    }
  });
  it("the published track_records file is in rank order, the unranked after by slug, so an export's limit or cap takes the same sources on every rescore (QA: the hash join's order)", async () => {
    const file = join(data, 'snapshots', readCurrent(data)!, 'track_records.parquet');
    const rows = await withConnection(async (conn) =>
      (await conn.runAndReadAll(`SELECT source_slug, rank FROM read_parquet('${file}')`)).getRowObjectsJS(),
    );
    // ranks are unique (row_number); slugs are ASCII, so < is DuckDB's order
    const key = (r: (typeof rows)[number]) => [r.rank === null ? Infinity : Number(r.rank), String(r.source_slug)] as const;
    const sorted = [...rows].sort((a, b) => {
      const [ra, sa] = key(a);
      const [rb, sb] = key(b);
      return ra !== rb ? ra - rb : sa < sb ? -1 : sa > sb ? 1 : 0;
    });
    expect(rows.length).toBeGreaterThan(500);
    expect(rows.map((r) => r.source_slug)).toEqual(sorted.map((r) => r.source_slug));
  });
});
