/**
 * FRED (Federal Reserve Bank of St. Louis) series observations adapter.
 *
 * One request: `GET {base}/fred/series/observations?series_id=&api_key=&file_type=json
 * &observation_start=&observation_end=` through the shared source client (rate limit, retries on
 * 429/5xx, deadline). FRED answers
 * `{ realtime_start, realtime_end, observation_start, observation_end, units, output_type,
 *    file_type, order_by, sort_order, count, offset, limit, observations: [{ realtime_start,
 *    realtime_end, date, value }] }`
 * where `value` is a decimal string, or "." when the series has no value for that date.
 *
 * Configuration: `QUORUM_FRED_URL` (default https://api.stlouisfed.org) and `QUORUM_FRED_API_KEY`
 * (FRED keys are 32 lower-case letters and digits); `QUORUM_FRED_RETRIES` (4) and
 * `QUORUM_FRED_TIMEOUT_MS` (30000) for the client. The key only ever travels in the request URL:
 * every error this module raises has it removed, nothing here logs it, and what is stored as a
 * source is the public series page `https://fred.stlouisfed.org/series/<ID>` ({@link fredSeriesUrl}).
 *
 * Real time: FRED's default real-time period is "today", and then every observation comes back
 * with realtime_start = realtime_end = the request date, which says nothing about when a value was
 * published. This adapter therefore asks for every vintage from the first observation date wanted
 * on (`realtime_start=<observation_start>&realtime_end=9999-12-31`): each observation then comes
 * once per vintage, with the real-time period in which that value was the published one
 * (realtime_start = the day it was published, realtime_end = the day before it was revised, or
 * 9999-12-31). {@link firstRelease} and {@link valueAsOf} read the vintages. Not FRED's whole
 * real-time period (`1776-07-04`): FRED refuses a request whose real-time period holds more than
 * 2,000 vintage dates with a 400 ("There are 2004 vintage dates in the specified real-time period:
 * 1776-07-04 to 9999-12-31.  This exceeds the maximum number of vintage dates allowed (2000)."),
 * which every daily series in ALFRED (DFF, T10Y2Y, ...) has, so no question on one ever resolved.
 * A vintage from before observation_start cannot hold a first release of a period that starts
 * later, and the vintage current on a later day is still returned (its period clipped to start at
 * observation_start), so nothing read here changes. Dates carry no time of
 * day. Series that ALFRED keeps no vintage history for come back with one period whose start is
 * the earliest date FRED has them, which can be later than the publication (never earlier).
 * Series that ALFRED does not have at all (SP500 and other daily market series FRED has) are
 * refused with a real-time period: a 400 "The series does not exist in ALFRED but may exist in
 * FRED." For those the request is made once more without one (FRED's default, today): the current
 * values, each with realtime_start = realtime_end = FRED's today, and `vintages` false (no first
 * release can be told from a revision; what is read is dated the day it was seen).
 */
import { z } from 'zod';
import { baseUrlProblem, envSettings, shownValue, wholeNumber } from '../env.ts';
import { SourceHttpError, type SourceClient } from './http-client.ts';

export const FRED_URL_ENV = 'QUORUM_FRED_URL';
export const FRED_API_KEY_ENV = 'QUORUM_FRED_API_KEY';
export const FRED_DEFAULT_URL = 'https://api.stlouisfed.org';
/**
 * The FRED client's retries and deadline, as the venues' (QUORUM_VENUE_RETRIES, _TIMEOUT_MS): a
 * FRED that is down costs each series its retries' backoff (250 ms doubling, ~3.75 s with 4), which
 * an operator could not shorten (QA).
 */
const FredClientSettings = z.object({
  QUORUM_FRED_RETRIES: wholeNumber(0, 10).default(4),
  QUORUM_FRED_TIMEOUT_MS: wholeNumber(100, 600_000).default(30_000),
});
/** FRED's documented request limit is 120 per minute per key. */
export const FRED_REQUESTS_PER_MINUTE = 120;

export type FredErrorKind = 'missing_api_key' | 'invalid_config' | 'request_failed' | 'malformed_payload';

/** A FRED failure. Its message never contains the API key. */
export class FredError extends Error {
  override readonly name = 'FredError';
  constructor(
    readonly kind: FredErrorKind,
    message: string,
    readonly seriesId: string | null = null,
    /** For request_failed: the source client's error kind (rate_limited, client_error, ...). */
    readonly httpKind: string | null = null,
    readonly status: number | null = null,
  ) {
    super(message);
  }
}

/** Where FRED is asked, and with which key. */
export interface FredEndpoint {
  baseUrl: string;
  apiKey?: string;
}

/** FRED's settings: its endpoint, and its client's (pipeline/sources/http-client.ts). */
export interface FredConfig extends FredEndpoint {
  /** Retries of a request after its first attempt (on 429, 5xx and network errors). */
  retries: number;
  /** One request's total deadline, retries and backoff included (ms). */
  timeoutMs: number;
}

const FRED_KEY_RE = /^[a-z0-9]{32}$/;

/**
 * FRED settings from the environment. A missing key is allowed here (questions needing FRED are
 * then skipped with a reason naming the variable); a malformed URL or key is a FredError naming the
 * variable (the key's value is never echoed).
 */
export function fredConfigFromEnv(env: NodeJS.ProcessEnv = process.env): FredConfig {
  const rawUrl = env[FRED_URL_ENV]?.trim() || FRED_DEFAULT_URL;
  let url: URL;
  try {
    url = new URL(rawUrl);
  } catch {
    throw new FredError('invalid_config', `${FRED_URL_ENV}: not a URL: ${JSON.stringify(shownValue(rawUrl))}`);
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') {
    throw new FredError('invalid_config', `${FRED_URL_ENV}: expected an http(s) URL, got ${JSON.stringify(shownValue(rawUrl))}`);
  }
  const problem = baseUrlProblem(rawUrl);
  if (problem) throw new FredError('invalid_config', `${FRED_URL_ENV}: ${problem}, got ${JSON.stringify(shownValue(rawUrl))}`);
  const apiKey = env[FRED_API_KEY_ENV]?.trim() || undefined;
  if (apiKey !== undefined && !FRED_KEY_RE.test(apiKey)) {
    throw new FredError(
      'invalid_config',
      `${FRED_API_KEY_ENV}: a FRED API key is 32 lower-case letters and digits (value not shown, ${apiKey.length} characters)`,
    );
  }
  let client: z.infer<typeof FredClientSettings>;
  try {
    client = envSettings(FredClientSettings, env);
  } catch (err) {
    throw new FredError('invalid_config', (err as Error).message);
  }
  return { baseUrl: rawUrl.replace(/\/+$/, ''), ...(apiKey ? { apiKey } : {}), retries: client.QUORUM_FRED_RETRIES, timeoutMs: client.QUORUM_FRED_TIMEOUT_MS };
}

/** The public page of a series: what resolutions store as source_url (never the API URL). */
export function fredSeriesUrl(seriesId: string): string {
  return `https://fred.stlouisfed.org/series/${encodeURIComponent(seriesId)}`;
}

/** FRED's latest real-time date: every vintage up to now. */
export const FRED_REALTIME_LAST = '9999-12-31';

export interface FredObservationsQuery {
  seriesId: string;
  /** First observation date wanted, YYYY-MM-DD. */
  start: string;
  /** Last observation date wanted, YYYY-MM-DD. */
  end: string;
  /**
   * First day of the real-time period (default `start`). FRED refuses one after its own today
   * ("Variable realtime_start can not be after today's date"), which is US Central time, a day
   * behind UTC in the first hours of a UTC day: see {@link realtimeStartFor}.
   */
  realtimeStart?: string;
}

/**
 * The real-time period's first day for observations from `start`, asked at `now`: `start`, but
 * never after the day before now's UTC date (FRED's today, US Central, is never earlier), so a
 * daily series' question dated today is not a 400 between 00:00 UTC and midnight in St. Louis.
 */
export function realtimeStartFor(start: string, now: Date): string {
  const yesterday = new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), now.getUTCDate() - 1)).toISOString().slice(0, 10);
  return start < yesterday ? start : yesterday;
}

/**
 * The API request URL (contains the key: never log or store it). The real-time period starts at
 * the first observation date wanted (see the header: FRED's cap of 2,000 vintage dates);
 * `currentOnly`: no real-time period (FRED's default, today), for a series ALFRED does not have.
 */
export function fredObservationsUrl(baseUrl: string, apiKey: string, q: FredObservationsQuery, currentOnly = false): URL {
  const url = new URL(`${baseUrl.replace(/\/+$/, '')}/fred/series/observations`);
  url.searchParams.set('series_id', q.seriesId);
  url.searchParams.set('api_key', apiKey);
  url.searchParams.set('file_type', 'json');
  url.searchParams.set('observation_start', q.start);
  url.searchParams.set('observation_end', q.end);
  if (!currentOnly) {
    url.searchParams.set('realtime_start', q.realtimeStart ?? q.start);
    url.searchParams.set('realtime_end', FRED_REALTIME_LAST);
  }
  return url;
}

const fredDate = z.string().regex(/^\d{4}-\d{2}-\d{2}$/, 'expected YYYY-MM-DD');
const fredValue = z.string().regex(/^(?:\.|-?\d+(?:\.\d+)?(?:[eE][-+]?\d+)?)$/, 'expected a decimal string or "."');

/** FRED's observations payload (extra members are ignored; those read here are checked). */
export const FredObservationsSchema = z.object({
  realtime_start: fredDate.optional(),
  realtime_end: fredDate.optional(),
  count: z.number().int().nonnegative().optional(),
  offset: z.number().int().nonnegative().optional(),
  limit: z.number().int().nonnegative().optional(),
  observations: z.array(
    z.object({
      realtime_start: fredDate,
      realtime_end: fredDate,
      date: fredDate,
      value: fredValue,
    }),
  ),
});

/** One vintage of one observation: the value published for `date` during [realtime_start, realtime_end]. */
export interface FredObservation {
  date: string;
  /** The value as FRED wrote it ("." when missing). */
  raw: string;
  /** The value as a number; null for ".". */
  value: number | null;
  /** First day this value was the published one, YYYY-MM-DD. */
  realtime_start: string;
  /** Last day it was (9999-12-31 while current), YYYY-MM-DD. */
  realtime_end: string;
}

export interface FredSeriesData {
  seriesId: string;
  /**
   * false when ALFRED has no vintages of the series: the observations are FRED's current values,
   * seen on their realtime_start (FRED's today), not first releases.
   */
  vintages: boolean;
  /** Vintages by observation date, each list in real-time order. */
  observations: Map<string, FredObservation[]>;
}

/**
 * The first published value of an observation, among vintages published by `asOfDay`
 * (YYYY-MM-DD): the earliest vintage with a value (not "."). undefined when none.
 */
export function firstRelease(data: FredSeriesData, date: string, asOfDay: string): FredObservation | undefined {
  return data.observations.get(date)?.find((v) => v.value !== null && v.realtime_start <= asOfDay);
}

/** The vintage of an observation that was the published one on `day` (may be "."); undefined when none. */
export function valueAsOf(data: FredSeriesData, date: string, day: string): FredObservation | undefined {
  return data.observations.get(date)?.find((v) => v.realtime_start <= day && day <= v.realtime_end);
}

/** Replaces every occurrence of the key (raw or URL-encoded) in a text. */
export function redactKey(text: string, apiKey: string | undefined): string {
  if (!apiKey) return text;
  return text.split(apiKey).join('[redacted]').split(encodeURIComponent(apiKey)).join('[redacted]');
}

/**
 * FRED's reason in an error body (`{"error_code":400,"error_message":"Bad Request.  The series does
 * not exist."}`), whitespace collapsed and cut to 300 characters; null when the body has none.
 */
export function fredErrorMessage(body: string | undefined): string | null {
  if (!body) return null;
  try {
    const m = (JSON.parse(body) as { error_message?: unknown })?.error_message;
    return typeof m === 'string' && m.trim() !== '' ? m.replace(/\s+/g, ' ').trim().slice(0, 300) : null;
  } catch {
    return null;
  }
}

/** FRED's reason for refusing a real-time period of a series that ALFRED does not have. */
const NOT_IN_ALFRED = /does not exist in ALFRED/i;

/**
 * Fetches the observations of one series between two dates (one request, retried by the client on
 * 429/5xx; a second one without a real-time period when FRED says ALFRED does not have the series). Throws FredError: missing_api_key when no key is configured, request_failed when the
 * request fails for good, malformed_payload when the body is not FRED's shape (bad value strings,
 * overlapping vintages of one date, or fewer observations than `count` says).
 */
export async function fetchFredObservations(
  client: SourceClient,
  config: FredEndpoint,
  query: FredObservationsQuery,
  signal?: AbortSignal,
): Promise<FredSeriesData> {
  const { seriesId } = query;
  if (!config.apiKey) {
    throw new FredError('missing_api_key', `FRED API key not configured: set ${FRED_API_KEY_ENV} (needed for series ${seriesId})`, seriesId);
  }
  let body: z.infer<typeof FredObservationsSchema>;
  let vintages = true;
  try {
    try {
      body = await client.getJson(fredObservationsUrl(config.baseUrl, config.apiKey, query), FredObservationsSchema, signal);
    } catch (e) {
      if (!(e instanceof SourceHttpError && e.status === 400 && NOT_IN_ALFRED.test(fredErrorMessage(e.body) ?? ''))) throw e;
      vintages = false;
      body = await client.getJson(fredObservationsUrl(config.baseUrl, config.apiKey, query, true), FredObservationsSchema, signal);
    }
  } catch (e) {
    const where = `${fredSeriesUrl(seriesId)} ${query.start}..${query.end}`;
    if (e instanceof SourceHttpError) {
      // The client's message ends with the request URL, which holds the key: rebuild it without,
      // adding FRED's own reason for a refusal (a key it does not know, an unknown series, ...).
      const said = fredErrorMessage(e.body);
      const detail = redactKey(`${e.message.replace(/\s*\((?:https?:)?\/\/[^)]*\)\s*$/, '')}${said ? `: ${said}` : ''}`, config.apiKey);
      const kind = e.kind === 'invalid_payload' ? 'malformed_payload' : 'request_failed';
      throw new FredError(kind, `FRED ${seriesId}: ${kind === 'malformed_payload' ? 'malformed payload' : 'request failed'}: ${detail} (${where})`, seriesId, e.kind, e.status ?? null);
    }
    throw new FredError('request_failed', `FRED ${seriesId}: request failed: ${redactKey(String((e as Error)?.message ?? e), config.apiKey)} (${where})`, seriesId);
  }
  const observations = new Map<string, FredObservation[]>();
  for (const o of body.observations) {
    if (o.realtime_end < o.realtime_start) {
      throw new FredError('malformed_payload', `FRED ${seriesId}: malformed payload: observation ${o.date} has realtime_end before realtime_start`, seriesId);
    }
    const list = observations.get(o.date) ?? [];
    list.push({
      date: o.date,
      raw: o.value,
      value: o.value === '.' ? null : Number(o.value),
      realtime_start: o.realtime_start,
      realtime_end: o.realtime_end,
    });
    observations.set(o.date, list);
  }
  for (const [date, list] of observations) {
    list.sort((a, b) => (a.realtime_start < b.realtime_start ? -1 : a.realtime_start > b.realtime_start ? 1 : 0));
    for (let i = 1; i < list.length; i++) {
      if (list[i]!.realtime_start <= list[i - 1]!.realtime_end) {
        throw new FredError('malformed_payload', `FRED ${seriesId}: malformed payload: overlapping real-time periods for observation ${date}`, seriesId);
      }
    }
  }
  if (body.count !== undefined && body.count > (body.offset ?? 0) + body.observations.length) {
    throw new FredError(
      'malformed_payload',
      `FRED ${seriesId}: truncated payload: count ${body.count} but ${body.observations.length} observations from offset ${body.offset ?? 0}`,
      seriesId,
    );
  }
  return { seriesId, vintages, observations };
}
