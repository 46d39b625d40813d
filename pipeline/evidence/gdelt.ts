/**
 * GDELT DOC 2.0 (https://blog.gdeltproject.org/gdelt-doc-2-0-api-debuts/): a live, keyless news
 * search. One request per question:
 *   GET {base}/api/v2/doc/doc?query=<keywords>&mode=ArtList&format=json&maxrecords=<n>
 *       &startdatetime=<as-of − lookback>&enddatetime=<as-of>&sort=DateDesc
 * → { "articles": [{ url, url_mobile, title, seendate: "20251015T123000Z", socialimage, domain,
 *                    language, sourcecountry }] }   (no "articles" key when nothing matched)
 *
 * The base URL is `QUORUM_GDELT_URL` (default https://api.gdeltproject.org). Requests go through
 * the shared source HTTP client (rate limit, retries on 429/5xx/cut-off bodies, Retry-After up to a
 * cap, a total deadline). GDELT asks for at most one request every 5 seconds: that is the default
 * pacing (`minIntervalMs`).
 *
 * Turns: questions take turns (one retrieval at a time, in the order asked) and a request's
 * deadline starts with its turn. Started together, as `gatherEvidence` starts 8, each request's
 * deadline (20 s) also covered its wait behind the others in the client's pacing queue, so with
 * the 5 s pacing every question past the fourth timed out without being sent. A caller waiting for
 * its answer (`interactive`: the probability endpoint, whose evidence deadline is 10 s) takes the
 * next turn, before the questions of a run still waiting (8 of them: 40 s).
 *
 * Outages: after `breakAfter` (3) requests in a row fail for want of GDELT (timeout, network
 * error, 5xx or 429 after the retries), GDELT is not asked for `pauseMs` (10 min) and every
 * question meanwhile fails at once with kind `paused`, naming the last failure (the run logs the
 * count per kind); the first request after the pause decides whether it stays paused. Taking
 * turns, a silent GDELT would otherwise cost each question its 20 s deadline.
 *
 * GDELT's answers ({@link parseGdeltJson}): its JSON is not always valid (a title can carry an
 * escape JSON does not have, `\'`, alex9smith/gdelt-doc-api#26 "Invalid \escape", or a raw control
 * character), which made the whole answer unreadable; such a body is read leniently. A headline's
 * own quotes written unescaped (abresler/gdeltr2#13, jeroen/jsonlite#331) cost that article only:
 * a whole answer still not JSON is read article by article. GDELT answers
 * a query it refuses with a 200 and a plain-text message (gdelt-doc-api: "Sometimes the API
 * responds to an invalid request with a 200 status code and a text/html content type"): the
 * question gets no GDELT evidence, an error of kind `refused` quoting the message, and the
 * request is not repeated (it was retried twice as a cut-off body, 10 s of pacing for nothing).
 * Its rate-limit notice ("Please limit requests to one every 5 seconds…") comes with a 429 or with
 * a 200: either way it is kind `rate_limited`, retried, and counts towards a pause (the 200 was a
 * `refused` query, asked once, and never paused GDELT).
 *
 * Duplicates: an article listed twice (same URL) and the copies of a wire story other outlets ran
 * (same headline, case and spacing aside) are shown once, the newest.
 *
 * As of: the request ends at the run's as-of time and every article whose `seendate` is after it
 * (or unreadable) is dropped, whatever the server returned. GDELT only searches a rolling window
 * of about three months, so backfills older than that find nothing here (local files still work).
 * Articles have no text excerpt in ArtList mode: the snippet says where the article appeared.
 */
import PQueue from 'p-queue';
import { z } from 'zod';
import { createSourceClient, RateLimitNotice, type SourceClient } from '../sources/http-client.ts';
import type { TaskQuestion } from '../models/prompts.ts';
import { evidenceId, publishedBy, type EvidenceProvider, type EvidenceRow, type RetrieveOptions } from './types.ts';

export const DEFAULT_GDELT_URL = 'https://api.gdeltproject.org';
export const GDELT_SOURCE_SLUG = 'gdelt';

export interface GdeltOptions {
  /** Default https://api.gdeltproject.org (no trailing path). */
  baseUrl?: string;
  /** Days before the as-of time searched. Default 30. */
  lookbackDays?: number;
  /** Pacing between requests (ms). Default 5,000 (GDELT's published limit). */
  minIntervalMs?: number;
  /** Total deadline of one request, retries included. Default 20 s. */
  timeoutMs?: number;
  /** Retries after the first attempt. Default 2. */
  retries?: number;
  /** Backoff base when no Retry-After (ms). Default 500. */
  backoffMs?: number;
  /** Requests failing in a row for want of GDELT after which it is paused. Default 3. */
  breakAfter?: number;
  /** How long GDELT is not asked once paused (ms). Default 600,000 (10 min). */
  pauseMs?: number;
  /** Inject a client (tests); otherwise one is created from the options above. */
  client?: SourceClient;
}

/** GDELT's plain-text answer to a query it refuses (kind `refused`); not retried. */
export class GdeltRefusal extends Error {
  override readonly name = 'GdeltRefusal';
  readonly kind = 'refused';
  constructor(readonly said: string) {
    super(`GDELT refused the query: ${said || '(empty answer)'}`);
  }
}

/** A question not sent to GDELT while it is paused after an outage (kind `paused`). */
export class GdeltPausedError extends Error {
  override readonly name = 'GdeltPausedError';
  readonly kind = 'paused';
}

/** Failures that say GDELT is unreachable or overloaded, not that one query was bad. */
const OUTAGE_KINDS = new Set(['timeout', 'network', 'server_error', 'rate_limited']);

const articleSchema = z.object({
  url: z.string().min(1),
  url_mobile: z.string().nullish(),
  title: z.string().nullish(),
  seendate: z.string().regex(/^\d{8}T\d{6}Z$/),
  socialimage: z.string().nullish(),
  domain: z.string().nullish(),
  language: z.string().nullish(),
  sourcecountry: z.string().nullish(),
});

/**
 * GDELT's body as JSON, tolerating its known defects: an invalid escape (a backslash before a
 * character JSON does not escape, as in `Fed\'s`) keeps the character without the backslash, and
 * a raw control character becomes a space. A body that is not JSON at all (neither empty nor
 * starting with `{` or `[`) is GDELT's message refusing the query: a {@link GdeltRefusal}, returned
 * (the provider throws it), so the client does not ask again; but GDELT's rate-limit notice throws
 * a {@link RateLimitNotice} (a 429 to the client: retried). A body still not JSON (cut off, or
 * empty) throws, as JSON.parse does, and the client retries it.
 */
export function parseGdeltJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch (err) {
    // GDELT's message for a query it refuses: not JSON at all (a cut-off body starts like JSON).
    // Its start only: tags stripped from a whole long page ('<' after '<' without a '>') took time
    // quadratic in its length (8 s for 150,000), with the event loop blocked.
    if (text.trim() !== '' && !/^\s*[[{]/.test(text)) {
      const said = text.slice(0, 2_000).replace(/<[^>]*>/g, ' ').replace(/\s+/g, ' ').trim().slice(0, 300);
      // GDELT's throttling notice, which it serves with a 429 or a 200: a rate limit, not a refusal.
      if (GDELT_RATE_LIMIT_NOTICE.test(said)) throw new RateLimitNotice(said);
      return new GdeltRefusal(said);
    }
    const repaired = text
      .replace(/\\(?:["\\/bfnrt]|u[0-9a-fA-F]{4})|\\/g, (m) => (m.length > 1 ? m : ''))
      .replace(/[\u0000-\u001f]/g, ' ');
    try {
      return JSON.parse(repaired);
    } catch {
      const salvaged = salvageArticles(repaired);
      if (salvaged) return salvaged;
      throw err;
    }
  }
}

/**
 * A whole ArtList answer (it ends as it began, `{"articles": [` … `]}`) that is still not JSON,
 * read article by article: GDELT writes a headline's own quotes unescaped (abresler/gdeltr2#13,
 * jeroen/jsonlite#331), and the article that carries them is left out, not the others with it.
 * Null for anything else (a body cut off is retried).
 */
function salvageArticles(text: string): { articles: unknown[] } | null {
  if (!/^\s*\{\s*"articles"\s*:\s*\[/.test(text) || !/\]\s*\}\s*$/.test(text)) return null;
  const articles: unknown[] = [];
  for (const m of text.matchAll(/\{[^{}]*\}/g)) {
    try {
      articles.push(JSON.parse(m[0]));
    } catch {
      // the garbled article: left out
    }
  }
  return { articles };
}

/** GDELT's throttling notice ("Please limit requests to one every 5 seconds or contact …"). */
const GDELT_RATE_LIMIT_NOTICE = /^please limit requests\b/i;

/** "20251015T123000Z" → Date (UTC), or null; an impossible one (20250230…, hour 24) is null, not rolled over. */
export function parseSeenDate(s: string): Date | null {
  const m = /^(\d{4})(\d{2})(\d{2})T(\d{2})(\d{2})(\d{2})Z$/.exec(s);
  if (!m) return null;
  const d = new Date(Date.UTC(+m[1]!, +m[2]! - 1, +m[3]!, +m[4]!, +m[5]!, +m[6]!));
  if (Number.isNaN(d.getTime())) return null;
  return d.toISOString().replace(/[-:]/g, '').replace(/\.\d{3}/, '') === s ? d : null;
}

/** Date → "YYYYMMDDHHMMSS" (UTC), GDELT's startdatetime/enddatetime format. */
export function gdeltDateTime(d: Date): string {
  return d.toISOString().replace(/[-:T]/g, '').slice(0, 14);
}

const STOP = new Set(
  ('the a an and or of in on at to for by with from as is are be been will would shall should can could may might ' +
    'this that these those it its than then there their what which who whom whose when where how why whether ' +
    'before after during until between above below over under more less most least any each every all some no not ' +
    'yes does did do done has have had being end year years month months week day days date next first last ' +
    'happen happens occur occurs resolve resolves resolved question market markets reach exceed least least ' +
    'price above below higher lower new per one two three').split(/\s+/),
);

/** Shortest quoted phrase GDELT runs: shorter ones fail the whole query ("The specified phrase is too short."). */
const MIN_PHRASE_CHARS = 5;

/**
 * The GDELT query of a question: up to `max` distinctive words of its title (proper nouns first,
 * then longer words), ANDed. Words shorter than 3 characters, stop words and bare numbers are left
 * out (GDELT rejects too-short terms). A word with punctuation inside is sent as a quoted phrase,
 * and left out when shorter than 5 characters: GDELT refuses the whole query for a short quoted
 * phrase, and "U.S." (as `"U.S"`) is in many titles. Returns null when nothing usable is left.
 */
export function gdeltQuery(title: string, max = 4): string | null {
  const words = (title.match(/[\p{L}\p{N}][\p{L}\p{N}'’.-]*/gu) ?? [])
    .map((w) => w.replace(/['’.-]+$/u, '').replace(/['’]s$/u, ''))
    .filter((w) => w.length >= 3 && !STOP.has(w.toLowerCase()) && !/^\d+([.,]\d+)?%?$/.test(w))
    .filter((w) => !/[^\p{L}\p{N}]/u.test(w) || w.replace(/"/g, '').length >= MIN_PHRASE_CHARS);
  const seen = new Set<string>();
  const unique = words.filter((w) => !seen.has(w.toLowerCase()) && seen.add(w.toLowerCase()));
  const ranked = unique
    .map((w, i) => ({ w, i, score: (/^\p{Lu}/u.test(w) ? 100 : 0) + Math.min(w.length, 12) }))
    .sort((a, b) => b.score - a.score || a.i - b.i)
    .slice(0, max)
    .sort((a, b) => a.i - b.i)
    .map((x) => (/[^\p{L}\p{N}]/u.test(x.w) ? `"${x.w.replace(/"/g, '')}"` : x.w));
  return ranked.length > 0 ? ranked.join(' ') : null;
}

export interface GdeltProvider extends EvidenceProvider {
  readonly client: SourceClient;
}

export function createGdeltProvider(opts: GdeltOptions = {}): GdeltProvider {
  const base = (opts.baseUrl ?? DEFAULT_GDELT_URL).replace(/\/+$/, '');
  const lookbackMs = (opts.lookbackDays ?? 30) * 86_400_000;
  const client =
    opts.client ??
    createSourceClient({
      requestsPerInterval: 1,
      intervalMs: opts.minIntervalMs ?? 5000,
      concurrency: 1,
      retries: opts.retries ?? 2,
      backoffMs: opts.backoffMs ?? 500,
      timeoutMs: opts.timeoutMs ?? 20_000,
      maxRetryAfterMs: 30_000,
      headers: { 'user-agent': 'quorum-forecasting/0.1 (+evidence retrieval)' },
      parseJson: parseGdeltJson,
    });

  // One retrieval at a time: a request's deadline must not run while it waits for the others.
  const turns = new PQueue({ concurrency: 1 });
  const breakAfter = opts.breakAfter ?? 3;
  const pauseMs = opts.pauseMs ?? 600_000;
  let failuresInARow = 0;
  let pausedUntil = 0;
  let lastFailure = '';

  /** One question's turn: skipped while paused; an outage-kind failure counts towards a pause. */
  async function turn(question: TaskQuestion, query: string, o: RetrieveOptions): Promise<EvidenceRow[]> {
    if (Date.now() < pausedUntil) {
      throw new GdeltPausedError(`GDELT paused until ${new Date(pausedUntil).toISOString()} after ${failuresInARow} failed requests in a row (last: ${lastFailure})`);
    }
    try {
      const rows = await fetchArticles(question, query, o);
      failuresInARow = 0;
      return rows;
    } catch (err) {
      const kind = (err as { kind?: unknown })?.kind;
      if (typeof kind === 'string' && OUTAGE_KINDS.has(kind)) {
        failuresInARow++;
        lastFailure = (err instanceof Error ? err.message : String(err)).replace(/\s*\(https?:\/\/[^)]*\)$/, '').slice(0, 200);
        if (failuresInARow >= breakAfter) pausedUntil = Date.now() + pauseMs;
      }
      throw err;
    }
  }

  return {
    name: GDELT_SOURCE_SLUG,
    client,
    async retrieve(question: TaskQuestion, o: RetrieveOptions): Promise<EvidenceRow[]> {
      const query = gdeltQuery(question.title);
      if (!query || o.limit <= 0) return [];
      // An interactive caller (the probability endpoint) goes before a run's questions still waiting.
      return turns.add(() => turn(question, query, o), { signal: o.signal, priority: o.interactive ? 1 : 0 });
    },
  };

  async function fetchArticles(question: TaskQuestion, query: string, o: RetrieveOptions): Promise<EvidenceRow[]> {
    const url = new URL(`${base}/api/v2/doc/doc`);
    url.searchParams.set('query', query);
    url.searchParams.set('mode', 'ArtList');
    url.searchParams.set('format', 'json');
    url.searchParams.set('maxrecords', String(Math.min(250, Math.max(o.limit * 3, 10))));
    url.searchParams.set('startdatetime', gdeltDateTime(new Date(o.asOf.getTime() - lookbackMs)));
    url.searchParams.set('enddatetime', gdeltDateTime(o.asOf));
    url.searchParams.set('sort', 'DateDesc');
    const body = await client.getRaw(url, o.signal);
    if (body instanceof GdeltRefusal) throw body;
    const articles = (body && typeof body === 'object' && Array.isArray((body as { articles?: unknown }).articles))
      ? ((body as { articles: unknown[] }).articles)
      : [];
    const now = new Date();
    const rows: EvidenceRow[] = [];
    for (const raw of articles) {
      const a = articleSchema.safeParse(raw);
      if (!a.success) continue;
      const published = parseSeenDate(a.data.seendate);
      const row: EvidenceRow = {
        evidence_id: evidenceId(GDELT_SOURCE_SLUG, question.question_id, a.data.url),
        question_id: question.question_id,
        retrieved_at: now,
        title: a.data.title?.trim() || null,
        url: a.data.url,
        published_at: published,
        snippet: a.data.domain
          ? `Reported by ${a.data.domain}${a.data.sourcecountry ? ` (${a.data.sourcecountry})` : ''}.`
          : null,
        source_slug: GDELT_SOURCE_SLUG,
      };
      if (publishedBy(row, o.asOf)) rows.push(row);
    }
    rows.sort((x, y) => y.published_at!.getTime() - x.published_at!.getTime());
    // Each article once (by URL), and each headline once: GDELT lists every outlet's copy of a wire
    // story as an article of its own, and they took every slot. The newest copy is kept.
    const seen = new Set<string>();
    const out: EvidenceRow[] = [];
    for (const row of rows) {
      const headline = row.title ? `title:${row.title.normalize('NFKC').toLowerCase().replace(/\s+/g, ' ')}` : null;
      if (seen.has(`url:${row.url}`) || (headline !== null && seen.has(headline))) continue;
      seen.add(`url:${row.url}`);
      if (headline !== null) seen.add(headline);
      out.push(row);
    }
    return out.slice(0, o.limit);
  }
}
