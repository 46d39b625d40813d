/**
 * Resolves question-file threshold questions ({@link ThresholdSpec}) from FRED.
 *
 * For each spec: value = transform(series at observation_date), where
 *  - level:   the observation's value;
 *  - yoy_pct: 100 × (v / v₋₁₂ − 1), v₋₁₂ = the observation 12 months earlier (same day of month,
 *             clamped to the month's last day: 2028-02-29 → 2027-02-28);
 *  - mom_pct: 100 × (v / v₋₁ − 1), one month earlier.
 * The value is computed in double precision and taken to 12 significant digits (removing binary
 * noise, so a value exactly on the threshold compares equal), then rounded to `round` decimals
 * (half away from zero) when the spec asks, as agencies publish e.g. CPI YoY to one decimal.
 * outcome = 1 when `value <operator> threshold` holds, else 0.
 *
 * Which values: the question is decided by the data as first published. FRED is asked for every
 * vintage (see fred.ts); the observation for observation_date is its first release (the earliest
 * vintage with a value), and the comparison period's value (yoy/mom) is the one that was current
 * on that same day, as the agency's own release computed it. The outcome therefore does not depend
 * on when Quorum resolves it (later revisions change nothing), and a backfill gets the same answer.
 * A series ALFRED does not have (SP500: fred.ts) has no vintages: its current values are read as
 * if first published the day FRED showed them (resolved_at that day, the excerpt says so).
 *
 * Published means: a first release exists by `now` (vintage realtime_start ≤ now's UTC date), and
 * for yoy/mom the comparison value was published by then too. A missing observation or FRED's "."
 * leaves the question open, listed in `skipped` with a reason starting "not yet published" (a "."
 * followed by a published later period is a skipped period and says so; a comparison value that
 * was "." or missing on the release day can never change, and the reason says the question cannot
 * resolve). A spec
 * whose observation_date is after `now` is skipped without a request (a period cannot be
 * published before it starts). An observation_date the series does not have (a monthly series
 * dated 2026-09-30) is told apart once a later period is published: its reason says so instead
 * of "not yet published" (the question would otherwise wait for ever under that reason).
 *
 * resolved_at: the first-release date (realtime_start), at 00:00 UTC, never later than `now`.
 * FRED dates carry no time of day, so the start of the publication day is used: conservative for
 * scoring (no forecast made on the release day counts as made before the resolution). For a run
 * dated in the past (`--as-of`), a value released later on its release day is treated as known
 * from that day's start. retrieved_at = `now`.
 *
 * Requests: one per series (specs grouped by series_id; the date range covering all of them,
 * comparison periods included, is fetched once). A failed request or a malformed payload skips
 * that series' questions with the reason and is counted in `failed_requests` (the caller decides
 * whether FRED failed); the other series go on. With no API key every spec is
 * skipped with a reason naming QUORUM_FRED_API_KEY and nothing is requested.
 */
import type { Logger } from '../log.ts';
import type { Row } from './registry.ts';
import type { SourceClient } from './http-client.ts';
import type { Operator, ThresholdSpec } from '../questions/question-file.ts';
import { FRED_API_KEY_ENV, FredError, fetchFredObservations, firstRelease, fredSeriesUrl, realtimeStartFor, redactKey, valueAsOf, type FredSeriesData } from './fred.ts';

export interface ResolveContext {
  client: SourceClient;
  baseUrl: string;
  apiKey?: string;
  now: Date;
  logger: Pick<Logger, 'debug' | 'info' | 'warn'>;
  signal?: AbortSignal;
}

export interface SkippedQuestion {
  question_id: string;
  reason: string;
}

export interface ThresholdResolutions {
  resolutions: Row<'resolutions'>[];
  lifecycle_events: Row<'lifecycle_events'>[];
  skipped: SkippedQuestion[];
  /**
   * FRED requests made (one per series asked) and the ones that failed for good, the request or
   * its payload, with the reason: what the caller judges FRED's own health by (a bad key or an
   * outage fails them all), as questions skipped for "not yet published" say nothing about it.
   */
  requests: number;
  failed_requests: { series_id: string; reason: string }[];
}

/** `YYYY-MM-DD` shifted by `months` (negative = earlier), day clamped to the target month's length. */
export function shiftMonths(date: string, months: number): string {
  const [y, m, d] = date.split('-').map(Number) as [number, number, number];
  const index = y * 12 + (m - 1) + months;
  const ty = Math.floor(index / 12);
  const tm = index - ty * 12;
  const last = new Date(Date.UTC(ty, tm + 1, 0)).getUTCDate();
  const day = Math.min(d, last);
  return `${String(ty).padStart(4, '0')}-${String(tm + 1).padStart(2, '0')}-${String(day).padStart(2, '0')}`;
}

/** The comparison period of a transform, or null for level. */
export function comparisonDate(spec: Pick<ThresholdSpec, 'observation_date' | 'transform'>): string | null {
  if (spec.transform === 'yoy_pct') return shiftMonths(spec.observation_date, -12);
  if (spec.transform === 'mom_pct') return shiftMonths(spec.observation_date, -1);
  return null;
}

/** Takes a double to 12 significant digits (drops binary floating-point noise). */
const denoise = (x: number): number => (x === 0 ? 0 : Number(x.toPrecision(12)));

/** Rounds half away from zero to `decimals` places (robust to binary representation: 1.005 → 1.01). */
export function roundHalfAway(x: number, decimals: number): number {
  const f = 10 ** decimals;
  const scaled = denoise(Math.abs(x) * f);
  return (Math.sign(x) * Math.round(scaled)) / f || 0;
}

export function compare(value: number, operator: Operator, threshold: number): boolean {
  switch (operator) {
    case '>':
      return value > threshold;
    case '>=':
      return value >= threshold;
    case '<':
      return value < threshold;
    case '<=':
      return value <= threshold;
  }
}

const formatThreshold = (t: number) => (Number.isInteger(t) ? t.toFixed(1) : String(t));

/** Fewest decimals (≥ 2) that show the value without changing how it compares with the threshold. */
function formatComputed(value: number, spec: ThresholdSpec): string {
  if (spec.round !== null) return value.toFixed(spec.round);
  const holds = compare(value, spec.operator, spec.threshold);
  for (let d = 2; d < 12; d++) {
    const shown = Number(value.toFixed(d));
    if (compare(shown, spec.operator, spec.threshold) === holds && (shown === spec.threshold) === (value === spec.threshold)) {
      return value.toFixed(d);
    }
  }
  return String(value);
}

const utcDate = (date: string) => new Date(`${date}T00:00:00.000Z`);
const isoDay = (d: Date) => d.toISOString().slice(0, 10);

type Evaluation =
  | { ok: true; outcome: 0 | 1; excerpt: string; publishedDay: string }
  | { ok: false; reason: string };

/**
 * Evaluates one spec against the fetched vintages, as the data stood on the day the observation
 * was first published (by `today`, YYYY-MM-DD): the first release of observation_date, and the
 * comparison period's value as published that day.
 */
export function evaluateSpec(spec: ThresholdSpec, data: FredSeriesData, today: string): Evaluation {
  const id = spec.series_id;
  const main = firstRelease(data, spec.observation_date, today);
  if (!main) {
    const known = data.observations.get(spec.observation_date)?.some((v) => v.realtime_start <= today);
    const later = laterPublished(data, spec.observation_date, today);
    if (known) {
      // "." with a later period published: a period the agency skipped (October 2025, the
      // shutdown), not one to come; the question would otherwise read "not yet published" for ever.
      return {
        ok: false,
        reason: later
          ? `no value for ${id} ${spec.observation_date} in FRED ("."), though a later period is published (${later}): ` +
            'the period was skipped; the question stays open unless FRED gives it a value'
          : `not yet published: ${id} ${spec.observation_date} is "." (no value) in FRED`,
      };
    }
    return {
      ok: false,
      reason: later
        ? `no ${id} observation dated ${spec.observation_date}, though a later one is published (${later}): ` +
          'observation_date is not a date of this series (monthly series: the 1st of the month; weekly: the day the series dates its weeks)'
        : `not yet published: no ${id} observation for ${spec.observation_date}`,
    };
  }
  const day = main.realtime_start;
  let value: number;
  let label = '';
  let parts = `${id} ${main.date} = ${main.raw}`;
  const lagDate = comparisonDate(spec);
  if (lagDate === null) {
    value = denoise(main.value!);
  } else {
    const lag = valueAsOf(data, lagDate, day);
    const what = spec.transform === 'yoy_pct' ? 'year-earlier' : 'month-earlier';
    if (!lag) {
      // Fixed for good too (the day is the first release's): a weekly series dated by its
      // weekday has no observation on the same day of the month a year earlier.
      const when = spec.transform === 'yoy_pct' ? 'a year' : 'a month';
      return {
        ok: false,
        reason:
          `cannot compute ${spec.transform}: no ${id} ${what} observation dated ${lagDate} in FRED on ${day}, when ${spec.observation_date} was first published ` +
          `(the same day of the month ${when} earlier is not a date of this series): the question cannot resolve as written`,
      };
    }
    if (lag.value === null) {
      // Fixed for good: the comparison value is the one current on the first release's day.
      return {
        ok: false,
        reason:
          `cannot compute ${spec.transform}: ${id} ${what} observation ${lagDate} had no value (".") in FRED on ${day}, ` +
          `when ${spec.observation_date} was first published: the question cannot resolve as written`,
      };
    }
    if (lag.value === 0) return { ok: false, reason: `cannot compute ${spec.transform}: ${id} ${lagDate} is 0` };
    value = denoise((main.value! / lag.value - 1) * 100);
    label = spec.transform === 'yoy_pct' ? 'YoY ' : 'MoM ';
    parts += `; ${lag.date} = ${lag.raw}`;
  }
  if (spec.round !== null) value = roundHalfAway(value, spec.round);
  const holds = compare(value, spec.operator, spec.threshold);
  const shown = lagDate === null && spec.round === null ? main.raw : formatComputed(value, spec);
  const signed = lagDate === null ? shown : `${value > 0 ? '+' : ''}${shown}%`;
  const rounded = spec.round !== null ? ` (rounded to ${spec.round} decimal${spec.round === 1 ? '' : 's'})` : '';
  const t = formatThreshold(spec.threshold);
  const relation = holds ? ` ${spec.operator} ${t}` : `, not ${spec.operator} ${t}`;
  const seen = data.vintages ? `as published ${day}` : `as FRED showed it on ${day}: no vintages of ${id} in ALFRED`;
  const excerpt = `${parts}; ${label}${signed}${rounded}${relation} → ${holds ? 'YES' : 'NO'} (${seen})`;
  return { ok: true, outcome: holds ? 1 : 0, excerpt, publishedDay: day };
}

/** The first observation date after `date` with a value published by `today`, or null. */
function laterPublished(data: FredSeriesData, date: string, today: string): string | null {
  let first: string | null = null;
  for (const [d, vintages] of data.observations) {
    if (d > date && (first === null || d < first) && vintages.some((v) => v.value !== null && v.realtime_start <= today)) first = d;
  }
  return first;
}

/**
 * Resolves the specs whose data FRED has published; the others stay open and are listed in
 * `skipped` with the reason. Never throws for a per-series problem (the reason is in `skipped`,
 * without the API key, and the failed request in `failed_requests`); rows are in spec order.
 */
export async function resolveThresholdQuestions(specs: ThresholdSpec[], ctx: ResolveContext): Promise<ThresholdResolutions> {
  const { now, logger } = ctx;
  const today = isoDay(now);
  const outcome = new Map<number, Evaluation>();

  if (specs.length > 0 && !ctx.apiKey) {
    const reason = `FRED API key not configured: set ${FRED_API_KEY_ENV}`;
    logger.warn({ questions: specs.length, variable: FRED_API_KEY_ENV }, 'FRED questions skipped: no API key configured');
    return {
      resolutions: [],
      lifecycle_events: [],
      skipped: specs.map((s) => ({ question_id: s.question_id, reason: `${reason} (series ${s.series_id})` })),
      requests: 0,
      failed_requests: [],
    };
  }

  // Group by series; periods that have not begun are not asked for.
  const groups = new Map<string, number[]>();
  const failedRequests: ThresholdResolutions['failed_requests'] = [];
  specs.forEach((spec, i) => {
    if (spec.observation_date > today) {
      outcome.set(i, { ok: false, reason: `not yet published: ${spec.series_id} ${spec.observation_date} is after ${today}` });
      return;
    }
    const list = groups.get(spec.series_id) ?? [];
    list.push(i);
    groups.set(spec.series_id, list);
  });

  await Promise.all(
    [...groups].map(async ([seriesId, indexes]) => {
      const dates = indexes.flatMap((i) => [specs[i]!.observation_date, comparisonDate(specs[i]!) ?? specs[i]!.observation_date]);
      const start = dates.reduce((a, b) => (b < a ? b : a));
      // Up to today, not the last observation_date: a later period already published tells a
      // date the series does not have (2026-09-30 of a monthly series) from one not published yet.
      const end = today;
      let data: FredSeriesData;
      try {
        data = await fetchFredObservations(ctx.client, { baseUrl: ctx.baseUrl, apiKey: ctx.apiKey }, { seriesId, start, end, realtimeStart: realtimeStartFor(start, now) }, ctx.signal);
      } catch (e) {
        const reason = e instanceof FredError ? e.message : redactKey(`FRED ${seriesId}: ${String((e as Error)?.message ?? e)}`, ctx.apiKey);
        logger.warn({ series_id: seriesId, source_url: fredSeriesUrl(seriesId), questions: indexes.length, reason }, 'FRED series skipped');
        failedRequests.push({ series_id: seriesId, reason });
        for (const i of indexes) outcome.set(i, { ok: false, reason });
        return;
      }
      for (const i of indexes) outcome.set(i, evaluateSpec(specs[i]!, data, today));
      logger.info(
        { series_id: seriesId, source_url: fredSeriesUrl(seriesId), start, end, observations: data.observations.size, questions: indexes.length },
        'FRED series fetched',
      );
    }),
  );

  const out: ThresholdResolutions = {
    resolutions: [],
    lifecycle_events: [],
    skipped: [],
    requests: groups.size,
    failed_requests: failedRequests.sort((x, y) => x.series_id.localeCompare(y.series_id)),
  };
  specs.forEach((spec, i) => {
    const ev = outcome.get(i)!;
    if (!ev.ok) {
      out.skipped.push({ question_id: spec.question_id, reason: ev.reason });
      return;
    }
    const published = utcDate(ev.publishedDay);
    const resolvedAt = published.getTime() > now.getTime() ? new Date(now) : published;
    out.resolutions.push({
      question_id: spec.question_id,
      outcome: ev.outcome,
      resolved_at: resolvedAt,
      source_slug: 'fred',
      source_url: fredSeriesUrl(spec.series_id),
      evidence_excerpt: ev.excerpt,
      retrieved_at: new Date(now),
      method: `threshold:${spec.transform}`,
      annulled_reason: null,
    });
    out.lifecycle_events.push({
      question_id: spec.question_id,
      state: 'resolved',
      at: resolvedAt,
      reason: `resolved ${ev.outcome === 1 ? 'YES' : 'NO'} from FRED ${spec.series_id}: ${ev.excerpt}`,
    });
  });
  logger.info({ resolved: out.resolutions.length, open: out.skipped.length }, 'FRED threshold questions');
  return out;
}
