/**
 * Metaculus adapter (API, posts).
 *
 * Discovery: `GET {base}/posts/?offset=&limit=100&statuses=open&forecast_type=binary&with_cp=true&order_by=-hotness`,
 * following `next` until it is null. `next` is an absolute URL chosen by the server; only its query
 * is kept and re-applied to the configured base, so traffic never leaves the configured host. A
 * `next` leading to a page already read is a pagination loop.
 * Tracked posts the discovery did not return: `GET {base}/posts/{id}/` (404 = not found).
 * `QUORUM_METACULUS_TOKEN`, when set, is sent as `Authorization: Token …`. Metaculus answers only
 * authenticated requests since March 2026 (403 `{"detail": "The API is only available to
 * authenticated users."}`): a 401/403 fails the venue with Metaculus's reason and what to set.
 *
 * Semantics:
 *  - question_id = `metaculus:<post id>`. Only posts holding one question of type "binary" are
 *    kept (groups, conditionals, notebooks and other types are skipped as non-binary).
 *  - probability = `question.aggregations[default_aggregation_method].latest.centers[0]` (the
 *    community prediction as Metaculus shows it; `recency_weighted` when no default is named:
 *    bot-tournament questions default to `unweighted`, and Metaculus then may send no
 *    recency_weighted at all); when missing (hidden or no forecasts yet) no price is recorded but
 *    the question is still tracked. An aggregate whose `end_time` has passed (its forecasters'
 *    forecasts withdrawn or expired, and none since) is no current prediction: no price, not the
 *    old figure recorded as observed now. forecasters = `nr_forecasters`; no volume, liquidity or book.
 *  - `question.status`: upcoming → not yet open; open; closed → closed; resolved → `resolution`
 *    yes → 1, no → 0, annulled / ambiguous → annulled. Other statuses or resolutions are skipped.
 */
import { z } from 'zod';
import {
  DriverSettings,
  lookupEach,
  paginationLoop,
  runVenueSync,
  type AdapterOptions,
  type DiscoveryControl,
  type MarketSnapshot,
  type Normalized,
  type RawPage,
  type VenueDriver,
} from './core.ts';
import type { VenueAdapter, VenueSyncContext } from './types.ts';
import { blankToNull, clip, firstIssue, readClose, toDate, toProbability } from './util.ts';
import { SourceHttpError } from '../sources/http-client.ts';

export interface MetaculusAdapterOptions extends AdapterOptions {
  baseUrl: string;
  /** API token (sent as `Authorization: Token <token>`). */
  token?: string;
}

export const METACULUS_PAGE_SIZE = 100;

/**
 * The aggregate Metaculus last computed (questions/serializers/aggregate_forecasts.py,
 * `serialize_aggregate_forecast`): `end_time` (unix seconds) is when it stopped holding, null while
 * it still does.
 */
const Latest = z
  .object({ centers: z.array(z.number()).nullish(), forecaster_count: z.number().nullish(), end_time: z.number().nullish() })
  .nullish();
/** One aggregation method's entry; only the default method's is read (and so checked). */
const Aggregation = z.object({ latest: Latest }).nullish();

const MetaculusQuestion = z.object({
  id: z.number().int(),
  title: z.string().nullish(),
  description: z.string().nullish(),
  resolution_criteria: z.string().nullish(),
  fine_print: z.string().nullish(),
  type: z.string().min(1),
  status: z.string().nullish(),
  resolution: z.string().nullish(),
  open_time: z.string().nullish(),
  scheduled_close_time: z.string().nullish(),
  actual_close_time: z.string().nullish(),
  actual_resolve_time: z.string().nullish(),
  /** The aggregation Metaculus shows as the community prediction (absent: recency_weighted). */
  default_aggregation_method: z.string().nullish(),
  /** Keyed by aggregation method; the default one is always there, others only when computed. */
  aggregations: z.record(z.string(), z.unknown()).nullish(),
});

const MetaculusPost = z.object({
  id: z.number().int().positive(),
  title: z.string().min(1),
  slug: z.string().nullish(),
  created_at: z.string().nullish(),
  published_at: z.string().nullish(),
  open_time: z.string().nullish(),
  scheduled_close_time: z.string().nullish(),
  actual_close_time: z.string().nullish(),
  status: z.string().nullish(),
  nr_forecasters: z.number().int().nullish(),
  question: MetaculusQuestion.nullish(),
});
type MetaculusPost = z.infer<typeof MetaculusPost>;

const MetaculusPage = z.object({ next: z.string().nullish(), results: z.array(z.unknown()) });

/** Validates one Metaculus post and maps it to a snapshot (see the module doc for the rules). */
export function normalizeMetaculus(raw: unknown, now: Date): Normalized {
  const idHint = raw && typeof raw === 'object' && typeof (raw as { id?: unknown }).id === 'number' ? String((raw as { id: number }).id) : null;
  const parsed = MetaculusPost.safeParse(raw);
  if (!parsed.success) return { ok: false, id: idHint, reason: `schema: ${firstIssue(parsed.error)}` };
  const p: MetaculusPost = parsed.data;
  const id = String(p.id);
  const q = p.question;
  if (!q) return { ok: false, id, reason: 'non-binary post: no single question (group, conditional or notebook)' };
  if (q.type !== 'binary') return { ok: false, id, reason: `non-binary question: type ${JSON.stringify(q.type)}` };
  const status = (q.status ?? p.status ?? '').toLowerCase();
  const method = blankToNull(q.default_aggregation_method) ?? 'recency_weighted';
  const aggregation = Aggregation.safeParse(q.aggregations?.[method]);
  if (!aggregation.success) return { ok: false, id, reason: `schema: question.aggregations.${method}: ${firstIssue(aggregation.error)}` };
  const latest = aggregation.data?.latest;
  // An aggregate that ended (end_time past) held until then, not now: no price (see the module doc).
  const ended = latest?.end_time != null && latest.end_time * 1000 <= now.getTime();
  const centers = ended ? null : latest?.centers;
  const criteria = [blankToNull(q.resolution_criteria), blankToNull(q.fine_print)].filter((s): s is string => s !== null).join('\n\n');
  const close = readClose(q.actual_close_time, q.scheduled_close_time, p.actual_close_time, p.scheduled_close_time);
  const base: MarketSnapshot = {
    id,
    title: (blankToNull(q.title) ?? p.title).trim(),
    description: blankToNull(q.description),
    resolution_criteria: criteria === '' ? null : criteria,
    url: `https://www.metaculus.com/questions/${id}/`,
    created_at: toDate(q.open_time) ?? toDate(p.open_time) ?? toDate(p.published_at) ?? toDate(p.created_at),
    close_time: close.close,
    close_unreadable: close.unreadable,
    state: 'open',
    state_reason: 'open on Metaculus',
    probability: centers && centers.length > 0 ? toProbability(centers[0]) : null,
    best_bid: null,
    best_ask: null,
    volume: null,
    liquidity: null,
    forecasters: p.nr_forecasters ?? null,
  };
  switch (status) {
    case 'open':
      return { ok: true, market: base };
    case 'upcoming':
      return { ok: true, market: { ...base, state: 'upcoming', probability: null, state_reason: 'upcoming on Metaculus' } };
    case 'closed':
      return { ok: true, market: { ...base, state: 'closed', probability: null, state_reason: 'closed on Metaculus, awaiting resolution' } };
    case 'resolved':
      break;
    default:
      return { ok: false, id, reason: `unknown Metaculus status ${JSON.stringify(q.status ?? p.status ?? null)}` };
  }
  const resolution = (q.resolution ?? '').toLowerCase();
  const resolved_at = toDate(q.actual_resolve_time);
  const excerpt = clip(
    `Metaculus question ${q.id} (post ${id}): status=${q.status ?? p.status}; resolution=${JSON.stringify(q.resolution ?? null)}; actual_resolve_time=${q.actual_resolve_time ?? 'null'}`,
    500,
  );
  // method: the resolution Metaculus recorded (metaculus:resolved_yes / _no / _annulled / _ambiguous).
  const res = (outcome: 1 | 0 | null, annulled_reason: string | null) => ({
    outcome,
    resolved_at,
    evidence_excerpt: excerpt,
    method: `metaculus:resolved_${resolution}`,
    annulled_reason,
  });
  const common = { ...base, probability: null };
  switch (resolution) {
    case 'yes':
    case 'no':
      return { ok: true, market: { ...common, state: 'resolved', state_reason: `resolved ${resolution.toUpperCase()} on Metaculus`, resolution: res(resolution === 'yes' ? 1 : 0, null) } };
    case 'annulled':
      return { ok: true, market: { ...common, state: 'annulled', state_reason: 'annulled on Metaculus', resolution: res(null, 'annulled on Metaculus: the question was voided (e.g. its premise failed)') } };
    case 'ambiguous':
      return { ok: true, market: { ...common, state: 'annulled', state_reason: 'resolved ambiguous on Metaculus', resolution: res(null, 'resolved ambiguous on Metaculus: no clear YES/NO outcome') } };
    default:
      return { ok: false, id, reason: `unknown Metaculus resolution ${JSON.stringify(q.resolution ?? null)}` };
  }
}

/**
 * A request Metaculus refused as unauthenticated (401/403): the same error with Metaculus's reason
 * (its `detail`) and what to do about the token (never the token itself); anything else as is.
 */
function explainRefusal(err: unknown, hasToken: boolean): unknown {
  if (!(err instanceof SourceHttpError) || (err.status !== 401 && err.status !== 403)) return err;
  let reason = '';
  try {
    const detail = (JSON.parse(err.body ?? '') as { detail?: unknown }).detail;
    if (typeof detail === 'string' && detail.trim() !== '') reason = `: ${clip(detail.trim(), 200)}`;
  } catch {
    // not JSON: the status alone
  }
  const hint = hasToken
    ? 'Metaculus refused QUORUM_METACULUS_TOKEN: check or renew the token'
    : 'QUORUM_METACULUS_TOKEN is not set: Metaculus answers only authenticated requests; set it to your Metaculus API token, or leave metaculus out of QUORUM_VENUES';
  return new SourceHttpError(err.kind, err.url, `HTTP ${err.status}${reason} (${hint})`, err.status, err.body);
}

/** Which page a URL asks for: its query, parameters in a fixed order (the server may reorder them). */
function pageKey(url: URL): string {
  const params = new URLSearchParams(url.search);
  params.sort();
  return params.toString();
}

class MetaculusDriver extends DriverSettings implements VenueDriver {
  readonly venue = 'metaculus' as const;
  readonly name = 'Metaculus';

  private readonly hasToken: boolean;

  constructor(opts: MetaculusAdapterOptions) {
    const headers = opts.token ? { authorization: `Token ${opts.token}` } : undefined;
    super(opts.baseUrl, opts, {
      pageSize: METACULUS_PAGE_SIZE,
      parallel: 2,
      client: { requestsPerInterval: 1, intervalMs: 1000, concurrency: 2, ...(headers ? { headers } : {}) },
    });
    this.hasToken = Boolean(opts.token);
  }

  async *discover(ctx: VenueSyncContext, control: DiscoveryControl): AsyncIterable<RawPage> {
    const first = new URL(`${this.base}/posts/`);
    const q = first.searchParams;
    q.set('offset', '0');
    q.set('limit', String(this.pageSize));
    q.set('statuses', 'open');
    q.set('forecast_type', 'binary');
    q.set('with_cp', 'true');
    q.set('order_by', '-hotness');
    let url: URL | null = first;
    const read = new Set<string>([pageKey(first)]);
    let page = 0;
    for (; url && page < this.maxPages && control.wantMore(); page++) {
      const body: z.infer<typeof MetaculusPage> = await this.client.getJson(url, MetaculusPage, ctx.signal).catch((err: unknown) => {
        throw explainRefusal(err, this.hasToken);
      });
      yield { items: body.results, origin: `metaculus:${this.base}/posts/` };
      const next: URL | null = body.next && body.results.length > 0 ? this.rebase(body.next) : null;
      if (next && read.has(pageKey(next))) throw paginationLoop(this.name, url, page + 1, next.search);
      if (next) read.add(pageKey(next));
      url = next;
    }
    if (url && control.wantMore()) control.pageCapped(page);
  }

  /** The server's `next` link with its query kept and its origin and path replaced by ours. */
  private rebase(next: string): URL | null {
    let parsed: URL;
    try {
      parsed = new URL(next, `${this.base}/posts/`);
    } catch {
      return null;
    }
    const url = new URL(`${this.base}/posts/`);
    url.search = parsed.search;
    return url;
  }

  lookup(ids: string[], ctx: VenueSyncContext): AsyncIterable<RawPage> {
    return lookupEach(
      ids,
      this.parallel,
      (id, signal) =>
        this.client.getRaw(`${this.base}/posts/${encodeURIComponent(id)}/`, signal).catch((err: unknown) => {
          throw explainRefusal(err, this.hasToken);
        }),
      () => `metaculus:${this.base}/posts/{id}/`,
      ctx.signal,
    );
  }

  normalize(raw: unknown, now: Date): Normalized {
    return normalizeMetaculus(raw, now);
  }
}

/** The Metaculus adapter (offset/next discovery, community prediction, annulled/ambiguous). */
export function createMetaculusAdapter(opts: MetaculusAdapterOptions): VenueAdapter {
  const driver = new MetaculusDriver(opts);
  return { venue: 'metaculus', sync: (ctx) => runVenueSync(driver, ctx, opts) };
}
