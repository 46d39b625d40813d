import { Writable } from 'node:stream';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { pino } from 'pino';
import { createSourceClient, type SourceClient } from '../../pipeline/sources/http-client.ts';
import {
  FRED_API_KEY_ENV,
  FredError,
  fetchFredObservations,
  fredConfigFromEnv,
  fredSeriesUrl,
  firstRelease,
  valueAsOf,
} from '../../pipeline/sources/fred.ts';
import { compare, resolveThresholdQuestions, roundHalfAway, shiftMonths } from '../../pipeline/sources/resolve-threshold.ts';
import { parseQuestionFile, type Operator, type ThresholdSpec, type Transform } from '../../pipeline/questions/question-file.ts';
import { startFredReplay, type FredReplay, type Vintage } from '../fixtures/fred/replay-server.ts';

const KEY = 'abcdef0123456789abcdef0123456789';
const NOW = new Date('2026-11-21T12:00:00Z');

let fred: FredReplay;
let client: SourceClient;
let logLines: string[];
let logger: ReturnType<typeof pino>;

beforeAll(async () => {
  fred = await startFredReplay({ apiKey: KEY, today: '2026-11-21' });
});
afterAll(() => fred.close());
beforeEach(() => {
  fred.requests.length = 0;
  client = createSourceClient({ retries: 2, backoffMs: 5, timeoutMs: 5_000 });
  logLines = [];
  logger = pino(
    { level: 'debug' },
    new Writable({
      write(chunk, _enc, cb) {
        logLines.push(String(chunk));
        cb();
      },
    }),
  );
});

function spec(
  series_id: string,
  observation_date: string,
  transform: Transform,
  operator: Operator,
  threshold: number,
  extra: Partial<ThresholdSpec> = {},
): ThresholdSpec {
  const question_id = extra.question_id ?? `quorum:${series_id.toLowerCase()}-${observation_date}-${transform}-${operator}-${threshold}`;
  return { question_id, source: 'fred', series_id, observation_date, transform, operator, threshold, round: null, file: 'test.yaml', ...extra };
}

const ctx = (over: Partial<Parameters<typeof resolveThresholdQuestions>[1]> = {}) => ({
  client,
  baseUrl: fred.url,
  apiKey: KEY,
  now: NOW,
  logger,
  ...over,
});

/** Resolves specs and returns the outcome per question_id (undefined when skipped). */
async function outcomes(specs: ThresholdSpec[], now = NOW) {
  const r = await resolveThresholdQuestions(specs, ctx({ now }));
  return { r, by: Object.fromEntries(r.resolutions.map((x) => [x.question_id!, x.outcome])) as Record<string, number | null> };
}

describe('helpers', () => {
  it('shifts months, clamping the day', () => {
    expect(shiftMonths('2026-10-01', -12)).toBe('2025-10-01');
    expect(shiftMonths('2026-01-01', -1)).toBe('2025-12-01');
    expect(shiftMonths('2026-03-31', -1)).toBe('2026-02-28');
    expect(shiftMonths('2028-02-29', -12)).toBe('2027-02-28');
    expect(shiftMonths('2026-12-31', -12)).toBe('2025-12-31');
  });
  it('rounds half away from zero without binary surprises', () => {
    expect(roundHalfAway(1.005, 2)).toBe(1.01);
    expect(roundHalfAway(3.05, 1)).toBe(3.1);
    expect(roundHalfAway(-3.05, 1)).toBe(-3.1);
    expect(roundHalfAway(3.0463, 1)).toBe(3);
    expect(roundHalfAway(2.5, 0)).toBe(3);
  });
  it('compares with each operator', () => {
    expect([compare(3, '>', 3), compare(3, '>=', 3), compare(3, '<', 3), compare(3, '<=', 3)]).toEqual([false, true, false, true]);
  });
  it('reads the config from the environment', () => {
    expect(fredConfigFromEnv({})).toEqual({ baseUrl: 'https://api.stlouisfed.org', retries: 4, timeoutMs: 30_000 });
    expect(fredConfigFromEnv({ QUORUM_FRED_URL: 'http://127.0.0.1:9/', QUORUM_FRED_API_KEY: KEY, QUORUM_FRED_RETRIES: '0', QUORUM_FRED_TIMEOUT_MS: ' 2500 ' })).toEqual({
      baseUrl: 'http://127.0.0.1:9',
      apiKey: KEY,
      retries: 0,
      timeoutMs: 2500,
    });
    expect(() => fredConfigFromEnv({ QUORUM_FRED_API_KEY: 'not-a-key-SECRETVALUE' })).toThrow(/QUORUM_FRED_API_KEY: a FRED API key is 32/);
    try {
      fredConfigFromEnv({ QUORUM_FRED_API_KEY: 'not-a-key-SECRETVALUE' });
    } catch (e) {
      expect((e as Error).message).not.toContain('SECRETVALUE');
    }
    expect(() => fredConfigFromEnv({ QUORUM_FRED_URL: 'ftp://x' })).toThrow(/QUORUM_FRED_URL/);
  });
  it('refuses retries and deadlines that are not whole numbers in range, naming the variable and the value', () => {
    for (const [name, value] of [['QUORUM_FRED_RETRIES', '11'], ['QUORUM_FRED_RETRIES', '-1'], ['QUORUM_FRED_RETRIES', '1e1'], ['QUORUM_FRED_TIMEOUT_MS', '99'], ['QUORUM_FRED_TIMEOUT_MS', '30s']] as const) {
      expect(() => fredConfigFromEnv({ [name]: value }), `${name}=${value}`).toThrow(new RegExp(`^${name}: .*got "${value}"$`));
    }
  });
});

describe('fetchFredObservations', () => {
  it('asks once, with every vintage since the first date wanted, and parses them', async () => {
    const data = await fetchFredObservations(client, { baseUrl: fred.url, apiKey: KEY }, { seriesId: 'CPIAUCSL', start: '2025-10-01', end: '2026-10-01' });
    expect(fred.requests).toHaveLength(1);
    const q = fred.requests[0]!.searchParams;
    expect(Object.fromEntries(q)).toMatchObject({
      series_id: 'CPIAUCSL',
      api_key: KEY,
      file_type: 'json',
      observation_start: '2025-10-01',
      observation_end: '2026-10-01',
      realtime_start: '2025-10-01',
      realtime_end: '9999-12-31',
    });
    expect(data.observations.get('2025-10-01')!.map((v) => v.raw)).toEqual(['314.100', '314.540']);
    expect(firstRelease(data, '2026-10-01', '2026-11-21')).toMatchObject({ value: 324.122, realtime_start: '2026-11-13' });
    expect(firstRelease(data, '2026-10-01', '2026-11-12')).toBeUndefined();
    expect(valueAsOf(data, '2025-10-01', '2026-01-01')!.raw).toBe('314.100');
    expect(valueAsOf(data, '2025-10-01', '2026-11-13')!.raw).toBe('314.540');
  });

  it('without a key: a clear error naming the variable, and no request', async () => {
    const err = await fetchFredObservations(client, { baseUrl: fred.url }, { seriesId: 'UNRATE', start: '2026-09-01', end: '2026-09-01' }).catch((e) => e);
    expect(err).toBeInstanceOf(FredError);
    expect(err.kind).toBe('missing_api_key');
    expect(err.message).toContain(FRED_API_KEY_ENV);
    expect(fred.requests).toHaveLength(0);
  });

  it("errors never contain the key (FRED's 400 for an unknown series)", async () => {
    const err = await fetchFredObservations(client, { baseUrl: fred.url, apiKey: KEY }, { seriesId: 'NOSUCH', start: '2026-01-01', end: '2026-01-01' }).catch((e) => e);
    expect(err).toBeInstanceOf(FredError);
    expect(err.kind).toBe('request_failed');
    expect(err.status).toBe(400);
    expect(JSON.stringify({ ...err, message: err.message })).not.toContain(KEY);
    expect(err.message).toContain('https://fred.stlouisfed.org/series/NOSUCH');
  });

  it('retries a 429 and then succeeds', async () => {
    fred.fail('UNRATE', 429);
    const data = await fetchFredObservations(client, { baseUrl: fred.url, apiKey: KEY }, { seriesId: 'UNRATE', start: '2026-09-01', end: '2026-09-01' });
    expect(firstRelease(data, '2026-09-01', '2026-11-21')!.raw).toBe('4.5');
    expect(fred.requests).toHaveLength(2);
    expect(client.stats.retries).toBe(1);
  });

  it('a malformed payload is a malformed_payload error without the key', async () => {
    const err = await fetchFredObservations(client, { baseUrl: fred.url, apiKey: KEY }, { seriesId: 'MALFORMED', start: '2026-09-01', end: '2026-09-01' }).catch((e) => e);
    expect(err.kind).toBe('malformed_payload');
    expect(err.message).toMatch(/observations\.0\.value/);
    expect(err.message).not.toContain(KEY);
  });
});

describe('resolveThresholdQuestions: hand-computed outcomes', () => {
  it('level at each operator, equality included (UNRATE 2026-09 = 4.5)', async () => {
    const specs = [
      spec('UNRATE', '2026-09-01', 'level', '>', 4.5),
      spec('UNRATE', '2026-09-01', 'level', '>=', 4.5),
      spec('UNRATE', '2026-09-01', 'level', '<', 4.5),
      spec('UNRATE', '2026-09-01', 'level', '<=', 4.5),
      spec('UNRATE', '2026-09-01', 'level', '>', 4.4),
      spec('UNRATE', '2026-09-01', 'level', '<', 4.6),
    ];
    const { r } = await outcomes(specs);
    expect(r.resolutions.map((x) => x.outcome)).toEqual([0, 1, 0, 1, 1, 1]);
    expect(r.skipped).toEqual([]);
    expect(fred.requests).toHaveLength(1); // one request per series
    expect(r.resolutions[1]!.evidence_excerpt).toBe('UNRATE 2026-09-01 = 4.5; 4.5 >= 4.5 → YES (as published 2026-10-02)');
    expect(r.resolutions[0]!.evidence_excerpt).toBe('UNRATE 2026-09-01 = 4.5; 4.5, not > 4.5 → NO (as published 2026-10-02)');
  });

  it('yoy_pct and mom_pct exactly on the threshold (QTEST 2026-01 = +2.5% on both)', async () => {
    const ops: Operator[] = ['>', '>=', '<', '<='];
    const specs = [...ops.map((o) => spec('QTEST', '2026-01-01', 'yoy_pct', o, 2.5)), ...ops.map((o) => spec('QTEST', '2026-01-01', 'mom_pct', o, 2.5))];
    const { r } = await outcomes(specs);
    expect(r.resolutions.map((x) => x.outcome)).toEqual([0, 1, 0, 1, 0, 1, 0, 1]);
    expect(r.resolutions[1]!.evidence_excerpt).toBe('QTEST 2026-01-01 = 102.5; 2025-01-01 = 100; YoY +2.50% >= 2.5 → YES (as published 2026-02-11)');
    expect(r.resolutions[4]!.evidence_excerpt).toBe('QTEST 2026-01-01 = 102.5; 2025-12-01 = 100; MoM +2.50%, not > 2.5 → NO (as published 2026-02-11)');
    expect(r.resolutions.map((x) => x.method)).toEqual([...ops.map(() => 'threshold:yoy_pct'), ...ops.map(() => 'threshold:mom_pct')]);
    expect(fred.requests).toHaveLength(1);
    expect(fred.requests[0]!.searchParams.get('observation_start')).toBe('2025-01-01');
    expect(fred.requests[0]!.searchParams.get('observation_end')).toBe('2026-11-21'); // up to today
  });

  it('CPI YoY for October 2026: 324.122 / 314.540 (the year-earlier value as published on 2026-11-13) = +3.05%', async () => {
    const id = 'quorum:cpi-yoy-above-3-oct-2026';
    const { r } = await outcomes([spec('CPIAUCSL', '2026-10-01', 'yoy_pct', '>', 3.0, { question_id: id })]);
    expect(r.resolutions).toEqual([
      {
        question_id: id,
        outcome: 1,
        resolved_at: new Date('2026-11-13T00:00:00Z'),
        source_slug: 'fred',
        source_url: 'https://fred.stlouisfed.org/series/CPIAUCSL',
        evidence_excerpt: 'CPIAUCSL 2026-10-01 = 324.122; 2025-10-01 = 314.540; YoY +3.05% > 3.0 → YES (as published 2026-11-13)',
        retrieved_at: NOW,
        method: 'threshold:yoy_pct',
        annulled_reason: null,
      },
    ]);
    expect(r.lifecycle_events).toEqual([
      { question_id: id, state: 'resolved', at: new Date('2026-11-13T00:00:00Z'), reason: expect.stringMatching(/^resolved YES from FRED CPIAUCSL: /) },
    ]);
  });

  it('rounding as published: +3.046% rounded to one decimal is 3.0, not > 3.0', async () => {
    const { r } = await outcomes([spec('CPIAUCSL', '2026-10-01', 'yoy_pct', '>', 3.0, { round: 1 }), spec('CPIAUCSL', '2026-10-01', 'yoy_pct', '>=', 3.0, { round: 1 })]);
    expect(r.resolutions.map((x) => x.outcome)).toEqual([0, 1]);
    expect(r.resolutions[0]!.evidence_excerpt).toBe(
      'CPIAUCSL 2026-10-01 = 324.122; 2025-10-01 = 314.540; YoY +3.0% (rounded to 1 decimal), not > 3.0 → NO (as published 2026-11-13)',
    );
  });

  it('MoM shows enough decimals to keep the comparison visible (+0.301% > 0.3)', async () => {
    const { r } = await outcomes([spec('CPIAUCSL', '2026-10-01', 'mom_pct', '>', 0.3), spec('CPIAUCSL', '2026-10-01', 'mom_pct', '<', 0.3)]);
    expect(r.resolutions.map((x) => x.outcome)).toEqual([1, 0]);
    expect(r.resolutions[0]!.evidence_excerpt).toContain('MoM +0.301% > 0.3 → YES');
  });

  it('decides on the first release: later revisions and later runs change nothing', async () => {
    const s = spec('CPIAUCSL', '2026-10-01', 'yoy_pct', '>', 3.0);
    const later = new Date('2027-06-01T00:00:00Z');
    const { r } = await outcomes([s], later);
    expect(r.resolutions[0]!.outcome).toBe(1);
    expect(r.resolutions[0]!.resolved_at).toEqual(new Date('2026-11-13T00:00:00Z'));
    expect(r.resolutions[0]!.evidence_excerpt).toContain('324.122');
    expect(r.resolutions[0]!.retrieved_at).toEqual(later);
  });

  it('resolved_at is never after now', async () => {
    // DFF for 2026-11-20 is published 2026-11-21; a run at 00:00 that day sees it at the same instant.
    const now = new Date('2026-11-21T00:00:00Z');
    const { r } = await outcomes([spec('DFF', '2026-11-20', 'level', '<', 4.0)], now);
    expect(r.resolutions[0]!.resolved_at).toEqual(now);
    expect(r.resolutions[0]!.outcome).toBe(1);
  });
});

describe('resolveThresholdQuestions: open questions and failures', () => {
  it('not yet published: the period has not begun (no request), or FRED has no observation yet', async () => {
    const a = spec('DFF', '2026-12-31', 'level', '<', 4.0);
    const b = spec('CPIAUCSL', '2026-11-01', 'yoy_pct', '>', 3.0);
    const c = spec('CPIAUCSL', '2026-10-01', 'yoy_pct', '>', 3.0);
    const { r } = await outcomes([a, b, c], new Date('2026-11-12T12:00:00Z')); // the day before October's CPI
    expect(r.resolutions).toEqual([]);
    expect(r.lifecycle_events).toEqual([]);
    expect(r.skipped.map((s) => s.question_id)).toEqual([a.question_id, b.question_id, c.question_id]);
    for (const s of r.skipped) expect(s.reason).toMatch(/^not yet published/);
    expect(fred.requests.map((u) => u.searchParams.get('series_id'))).toEqual(['CPIAUCSL']);
  });

  it('an observation_date the series does not have (UNRATE 2026-08-31) says so, not "not yet published" for ever', async () => {
    const { r } = await outcomes([spec('UNRATE', '2026-08-31', 'level', '>=', 4.5), spec('UNRATE', '2026-09-01', 'level', '>=', 4.5)]);
    expect(r.resolutions).toHaveLength(1);
    expect(r.skipped).toEqual([
      {
        question_id: spec('UNRATE', '2026-08-31', 'level', '>=', 4.5).question_id,
        reason: expect.stringMatching(/^no UNRATE observation dated 2026-08-31, though a later one is published \(2026-09-01\): observation_date is not a date of this series/),
      },
    ]);
    expect(fred.requests).toHaveLength(1);
  });

  it('"." is no value: the question stays open', async () => {
    const { r } = await outcomes([spec('UNRATE', '2025-10-01', 'level', '>=', 4.5), spec('UNRATE', '2025-11-01', 'mom_pct', '>', 0)]);
    expect(r.resolutions).toEqual([]);
    // UNRATE's October 2025 is a gap (a later period is published): see the describe block below.
    expect(r.skipped[0]!.reason).toMatch(/^no value for UNRATE 2025-10-01 in FRED \("\."\), though a later period is published \(2025-11-01\)/);
    expect(r.skipped[1]!.reason).toMatch(/^cannot compute mom_pct: UNRATE month-earlier observation 2025-10-01 had no value \("\."\)/);
  });

  it('"." as the latest period is not yet published', async () => {
    const latest = await startFredReplay({ apiKey: KEY, today: '2026-11-21', series: { DOTSER: [{ date: '2026-10-01', value: '.', realtime_start: '2026-11-13', realtime_end: '9999-12-31' }] } });
    try {
      const r = await resolveThresholdQuestions([spec('DOTSER', '2026-10-01', 'level', '>', 1)], ctx({ baseUrl: latest.url }));
      expect(r.skipped.map((s) => s.reason)).toEqual(['not yet published: DOTSER 2026-10-01 is "." (no value) in FRED']);
    } finally {
      await latest.close();
    }
  });

  it('a comparison value of 0 cannot be divided by', async () => {
    const { r } = await outcomes([spec('QTEST', '2026-03-01', 'mom_pct', '>', 0)]);
    expect(r.skipped[0]!.reason).toMatch(/cannot compute mom_pct: QTEST 2026-02-01 is 0/);
  });

  it('no API key: every question skipped with a reason naming the variable, nothing requested', async () => {
    const r = await resolveThresholdQuestions([spec('UNRATE', '2026-09-01', 'level', '>=', 4.5)], ctx({ apiKey: undefined }));
    expect(r.resolutions).toEqual([]);
    expect(r.skipped[0]!.reason).toContain('QUORUM_FRED_API_KEY');
    expect(fred.requests).toHaveLength(0);
    expect(logLines.join('')).toContain('QUORUM_FRED_API_KEY');
  });

  it('a 429 then success resolves normally', async () => {
    fred.fail('UNRATE', 429);
    const { r } = await outcomes([spec('UNRATE', '2026-09-01', 'level', '>=', 4.5)]);
    expect(r.resolutions.map((x) => x.outcome)).toEqual([1]);
    expect(fred.requests).toHaveLength(2);
  });

  it("a malformed payload or an unknown series skips that series' questions only", async () => {
    const bad = spec('MALFORMED', '2026-09-01', 'level', '>', 1);
    const unknown = spec('NOSUCH', '2026-09-01', 'level', '>', 1);
    const good = spec('UNRATE', '2026-09-01', 'level', '>=', 4.5);
    const { r } = await outcomes([bad, unknown, good]);
    expect(r.resolutions.map((x) => x.question_id)).toEqual([good.question_id]);
    expect(r.skipped).toEqual([
      { question_id: bad.question_id, reason: expect.stringMatching(/^FRED MALFORMED: malformed payload: /) },
      { question_id: unknown.question_id, reason: expect.stringMatching(/^FRED NOSUCH: request failed: client_error: HTTP 400: Bad Request\. The series does not exist\. \(/) },
    ]);
    // The failed requests are counted apart from questions merely not yet published (sync judges FRED by them).
    expect(r.requests).toBe(3);
    expect(r.failed_requests.map((f) => f.series_id)).toEqual(['MALFORMED', 'NOSUCH']);
  });

  it('a rejected key fails every request, each counted; no request made counts none', async () => {
    const r = await resolveThresholdQuestions(
      [spec('UNRATE', '2026-09-01', 'level', '>=', 4.5), spec('CPIAUCSL', '2026-10-01', 'yoy_pct', '>', 3), spec('UNRATE', '2027-09-01', 'level', '>=', 4.5)],
      ctx({ apiKey: '0123456789abcdef0123456789abcdef' }),
    );
    expect(r.requests).toBe(2); // the 2027 period has not begun: not asked
    // FRED's own reason is in it: a key it does not know is not an unknown series or an outage.
    expect(r.failed_requests).toEqual([
      { series_id: 'CPIAUCSL', reason: expect.stringMatching(/client_error: HTTP 400: Bad Request\. The value for variable api_key is not registered\./) },
      { series_id: 'UNRATE', reason: expect.stringMatching(/client_error: HTTP 400: Bad Request\. The value for variable api_key is not registered\./) },
    ]);
    expect(JSON.stringify(r)).not.toContain('0123456789abcdef0123456789abcdef');
    const none = await resolveThresholdQuestions([spec('UNRATE', '2026-09-01', 'level', '>=', 4.5)], ctx({ apiKey: undefined }));
    expect(none).toMatchObject({ requests: 0, failed_requests: [] });
  });

  it('the key is never in source_url, rows, reasons or log output (also across retries and errors)', async () => {
    fred.fail('CPIAUCSL', 429, 503);
    const r = await resolveThresholdQuestions(
      [
        spec('CPIAUCSL', '2026-10-01', 'yoy_pct', '>', 3),
        spec('UNRATE', '2026-09-01', 'level', '>=', 4.5),
        spec('NOSUCH', '2026-09-01', 'level', '>', 1),
        spec('MALFORMED', '2026-09-01', 'level', '>', 1),
      ],
      ctx(),
    );
    expect(r.resolutions).toHaveLength(2);
    for (const row of r.resolutions) expect(row.source_url).toMatch(/^https:\/\/fred\.stlouisfed\.org\/series\/[A-Z]+$/);
    expect(logLines.length).toBeGreaterThan(0);
    const everything = JSON.stringify(r) + logLines.join('');
    expect(everything).not.toContain(KEY);
    expect(everything).not.toContain('api_key=');
    expect(fred.requests.every((u) => u.searchParams.get('api_key') === KEY)).toBe(true);
  });

  it('a refused connection is a request failure, not a crash', async () => {
    const dead = await startFredReplay({ apiKey: KEY, today: '2026-11-21' });
    const url = dead.url;
    await dead.close();
    const r = await resolveThresholdQuestions([spec('UNRATE', '2026-09-01', 'level', '>=', 4.5)], ctx({ baseUrl: url, client: createSourceClient({ retries: 1, backoffMs: 5, timeoutMs: 2_000 }) }));
    expect(r.skipped[0]!.reason).toMatch(/^FRED UNRATE: request failed: network/);
    expect(r.skipped[0]!.reason).not.toContain(KEY);
  });

  it('source_url is the public series page', () => {
    expect(fredSeriesUrl('CPIAUCSL')).toBe('https://fred.stlouisfed.org/series/CPIAUCSL');
  });
});

describe('a daily series with years of vintages (DFF in ALFRED)', () => {
  /** One observation a day since 2018, each published the next day and never revised, as DFF is. */
  function dailyVintages(): Vintage[] {
    const out: Vintage[] = [];
    for (let t = Date.UTC(2018, 0, 1); t <= Date.UTC(2026, 10, 20); t += 86_400_000) {
      out.push({ date: new Date(t).toISOString().slice(0, 10), realtime_start: new Date(t + 86_400_000).toISOString().slice(0, 10), realtime_end: '9999-12-31', value: '3.88' });
    }
    return out;
  }

  it('resolves: the request stays under FRED\'s cap of 2,000 vintage dates (from 1776-07-04 it was a 400)', async () => {
    const daily = await startFredReplay({ apiKey: KEY, today: '2026-11-21', series: { DFFD: dailyVintages() } });
    try {
      const r = await resolveThresholdQuestions(
        [spec('DFFD', '2026-11-20', 'level', '<', 4), spec('DFFD', '2026-11-19', 'yoy_pct', '<=', 0)],
        ctx({ baseUrl: daily.url }),
      );
      expect(r.failed_requests).toEqual([]);
      expect(r.skipped).toEqual([]);
      expect(r.resolutions.map((x) => [x.outcome, x.resolved_at, x.evidence_excerpt])).toEqual([
        [1, new Date('2026-11-21T00:00:00Z'), 'DFFD 2026-11-20 = 3.88; 3.88 < 4.0 → YES (as published 2026-11-21)'],
        [1, new Date('2026-11-20T00:00:00Z'), 'DFFD 2026-11-19 = 3.88; 2025-11-19 = 3.88; YoY 0.00% <= 0.0 → YES (as published 2026-11-20)'],
      ]);
      expect(daily.requests).toHaveLength(1);
      expect(daily.requests[0]!.searchParams.get('realtime_start')).toBe('2025-11-19');
    } finally {
      await daily.close();
    }
  });

  it("a question dated today UTC, asked while it is still yesterday in St. Louis, is not a 400 (FRED's today is US Central)", async () => {
    // 03:00 UTC on 2026-11-21 is 21:00 on 2026-11-20 in St. Louis: FRED's today is 2026-11-20.
    const stLouis = await startFredReplay({ apiKey: KEY, today: '2026-11-20', series: { DFFD: dailyVintages() } });
    try {
      const r = await resolveThresholdQuestions([spec('DFFD', '2026-11-21', 'level', '<', 4)], ctx({ baseUrl: stLouis.url, now: new Date('2026-11-21T03:00:00Z') }));
      expect(r.failed_requests).toEqual([]);
      expect(r.skipped).toEqual([{ question_id: spec('DFFD', '2026-11-21', 'level', '<', 4).question_id, reason: 'not yet published: no DFFD observation for 2026-11-21' }]);
      expect(stLouis.requests[0]!.searchParams.get('realtime_start')).toBe('2026-11-20');
    } finally {
      await stLouis.close();
    }
  });
});

describe('data/questions/example.yaml end to end against the replay', () => {
  it('resolves what is published and leaves the rest open', async () => {
    const { specs } = parseQuestionFile('data/questions/example.yaml', { now: NOW });
    const r = await resolveThresholdQuestions(specs, ctx());
    expect(r.resolutions.map((x) => [x.question_id, x.outcome, x.resolved_at])).toEqual([
      // +3.046% rounded to one decimal is 3.0: not above 3.0.
      ['quorum:cpi-yoy-above-3-oct-2026', 0, new Date('2026-11-13T00:00:00Z')],
      ['quorum:unrate-at-or-above-4-5-sep-2026', 1, new Date('2026-10-02T00:00:00Z')],
    ]);
    expect(r.skipped).toEqual([{ question_id: 'quorum:effr-below-4-on-2026-12-31', reason: 'not yet published: DFF 2026-12-31 is after 2026-11-21' }]);
    expect(fred.requests).toHaveLength(2);
  });
});

describe('a period the agency never published (FRED\'s "." for October 2025, the shutdown month)', () => {
  // Modelled on FRED's CPIAUCSL and UNRATE after the 2025 shutdown: BLS never published October
  // 2025, and FRED serves 2025-10-01 as "." from the day November's figure came out (the gap that
  // tzhangwps/Recession-Predictor#26 meets in FRED's answers). The values are illustrative.
  const GAP: Vintage[] = [
    { date: '2025-09-01', value: '324.368', realtime_start: '2025-10-24', realtime_end: '9999-12-31' },
    { date: '2025-10-01', value: '.', realtime_start: '2025-12-18', realtime_end: '9999-12-31' },
    { date: '2025-11-01', value: '324.122', realtime_start: '2025-12-18', realtime_end: '9999-12-31' },
    { date: '2026-09-01', value: '333.100', realtime_start: '2026-10-15', realtime_end: '9999-12-31' },
    { date: '2026-10-01', value: '334.000', realtime_start: '2026-11-13', realtime_end: '9999-12-31' },
  ];

  it('says the question cannot resolve as written instead of "not yet published" for ever', async () => {
    const gap = await startFredReplay({ apiKey: KEY, today: '2026-11-21', series: { CPIGAP: GAP } });
    try {
      const yoy = spec('CPIGAP', '2026-10-01', 'yoy_pct', '>', 3, { round: 1 });
      const mom = spec('CPIGAP', '2025-11-01', 'mom_pct', '>', 0.2);
      const level = spec('CPIGAP', '2025-10-01', 'level', '>', 320);
      const r = await resolveThresholdQuestions([yoy, mom, level], ctx({ baseUrl: gap.url }));
      expect(r.resolutions).toEqual([]);
      expect(r.failed_requests).toEqual([]);
      const reason = Object.fromEntries(r.skipped.map((s) => [s.question_id, s.reason]));
      // October 2026 is published (2026-11-13); its year-earlier value was "." that day and, the
      // rule being "as first published", stays so: the YoY can never be computed.
      expect(reason[yoy.question_id]).toBe(
        'cannot compute yoy_pct: CPIGAP year-earlier observation 2025-10-01 had no value (".") in FRED on 2026-11-13, ' +
          'when 2026-10-01 was first published: the question cannot resolve as written',
      );
      expect(reason[mom.question_id]).toBe(
        'cannot compute mom_pct: CPIGAP month-earlier observation 2025-10-01 had no value (".") in FRED on 2025-12-18, ' +
          'when 2025-11-01 was first published: the question cannot resolve as written',
      );
      // A later period is published: the "." is a gap in the series, not a figure to come.
      expect(reason[level.question_id]).toBe(
        'no value for CPIGAP 2025-10-01 in FRED ("."), though a later period is published (2025-11-01): ' +
          'the period was skipped; the question stays open unless FRED gives it a value',
      );
    } finally {
      await gap.close();
    }
  });
});

describe('a weekly series dated by its week (ICSA: Saturdays)', () => {
  // ICSA (initial claims, weekly, ending Saturday) dates every week by its Saturday, so the same
  // day a year earlier is no date of the series: 2026-10-03 is a Saturday, 2025-10-03 a Friday.
  const WEEKLY: Vintage[] = [
    { date: '2025-09-27', value: '218000', realtime_start: '2025-10-02', realtime_end: '9999-12-31' },
    { date: '2025-10-04', value: '224000', realtime_start: '2025-10-09', realtime_end: '9999-12-31' },
    { date: '2026-10-03', value: '231000', realtime_start: '2026-10-08', realtime_end: '9999-12-31' },
  ];

  it('a YoY whose year-earlier date is not one of the series cannot resolve, and says so rather than "not yet published" for ever', async () => {
    const weekly = await startFredReplay({ apiKey: KEY, today: '2026-11-21', series: { ICSAW: WEEKLY } });
    try {
      const r = await resolveThresholdQuestions([spec('ICSAW', '2026-10-03', 'yoy_pct', '>', 0)], ctx({ baseUrl: weekly.url }));
      expect(r.resolutions).toEqual([]);
      expect(r.skipped.map((s) => s.reason)).toEqual([
        'cannot compute yoy_pct: no ICSAW year-earlier observation dated 2025-10-03 in FRED on 2026-10-08, when 2026-10-03 was first published ' +
          '(the same day of the month a year earlier is not a date of this series): the question cannot resolve as written',
      ]);
    } finally {
      await weekly.close();
    }
  });
});

describe('a series FRED has but ALFRED keeps no vintages of (SP500)', () => {
  // FRED answers a real-time period for such a series with a 400, "The series does not exist in
  // ALFRED but may exist in FRED." (quoted by FRED clients that fall back to the current values,
  // among them one that met it on SP500); without one (FRED's default period, today) it answers
  // the current values, realtime_start = realtime_end = its today on every row. SP500 closes as FRED
  // lists them: a value a weekday, "." on a market holiday (2025-11-27, Thanksgiving).
  const sp500: Vintage[] = [
    { date: '2025-11-20', realtime_start: '2025-11-21', realtime_end: '9999-12-31', value: '6538.76' },
    { date: '2025-11-27', realtime_start: '2025-11-28', realtime_end: '9999-12-31', value: '.' },
    { date: '2026-11-20', realtime_start: '2026-11-21', realtime_end: '9999-12-31', value: '6712.34' },
  ];

  it('resolves from the current values, dated the day FRED showed them, and says there is no vintage history (every sync failed the series)', async () => {
    const replay = await startFredReplay({ apiKey: KEY, today: '2026-11-21', series: { SP500: sp500 }, notInAlfred: ['SP500'] });
    try {
      const r = await resolveThresholdQuestions(
        [spec('SP500', '2026-11-20', 'level', '>', 6600), spec('SP500', '2026-11-20', 'yoy_pct', '>=', 3), spec('SP500', '2025-11-27', 'level', '>', 6600)],
        ctx({ baseUrl: replay.url }),
      );
      expect(r.failed_requests).toEqual([]);
      expect(r.requests).toBe(1);
      expect(r.resolutions.map((x) => [x.outcome, x.resolved_at, x.evidence_excerpt])).toEqual([
        [1, new Date('2026-11-21T00:00:00Z'), 'SP500 2026-11-20 = 6712.34; 6712.34 > 6600.0 → YES (as FRED showed it on 2026-11-21: no vintages of SP500 in ALFRED)'],
        [0, new Date('2026-11-21T00:00:00Z'), 'SP500 2026-11-20 = 6712.34; 2025-11-20 = 6538.76; YoY +2.65%, not >= 3.0 → NO (as FRED showed it on 2026-11-21: no vintages of SP500 in ALFRED)'],
      ]);
      expect(r.skipped.map((s) => s.reason)).toEqual([
        'no value for SP500 2025-11-27 in FRED ("."), though a later period is published (2026-11-20): the period was skipped; the question stays open unless FRED gives it a value',
      ]);
      // the vintage request first, then the current values once, without a real-time period
      expect(replay.requests.map((u) => [u.searchParams.get('realtime_start'), u.searchParams.get('realtime_end')])).toEqual([
        ['2025-11-20', '9999-12-31'],
        [null, null],
      ]);
    } finally {
      await replay.close();
    }
  });

  it('another 400 is still a failed request, not asked again', async () => {
    const err = await fetchFredObservations(client, { baseUrl: fred.url, apiKey: KEY }, { seriesId: 'NOSUCH', start: '2026-01-01', end: '2026-01-01' }).catch((e) => e);
    expect(err.kind).toBe('request_failed');
    expect(fred.requests).toHaveLength(1);
  });
});
