/**
 * `GET /api/events/lang/{lang}/`: active binary forecasts with reasoning in `lang`, most recent
 * first (by the headline consensus created_at, then question_id), each with the four-model
 * consensus, disagreement, market probability and the models' forecasts in that language.
 *
 * Path: `lang` as for `/api/predictions/lang/{lang}` (400 malformed, 404 unavailable listing the
 * available ones). Query: `limit` (1..500, default 20: the spec's feed example; digits only, so
 * 0, -1, 501, abc, 1e3 are 400s), `cursor` (the previous page's next_cursor), `category` and
 * `venue` (as on /api/predictions/lang/{lang}).
 * Body: { events: [FeedPrediction], count, total (active forecasts with reasoning in lang, all pages
 * together), lang, next_cursor, as_of }.
 */
import { z } from 'zod';
import { queryCategory, queryInt, queryString } from '../http/params.ts';
import { jsonRoute } from '../http/registry.ts';
import { categoryParam, count, DOC, published, snapshotCursorParam } from '../openapi/common.ts';
import { assertCursorSnapshot, bigintKey, cursorQuestionId, decodeSnapshotKeyset, encodeSnapshotKeyset, int64String } from '../http/cursor.ts';
import { FeedPrediction, feedItem, resolveLang } from './prediction-feed.ts';
import { langParam, pathLang, queryVenue, staleParams, venueParam } from './prediction-params.ts';

export const EVENTS_LANG_LIMIT = { min: 1, max: 500, default: 20 } as const;
const CURSOR_KIND = 'events.lang';
const cursorShape = z.tuple([int64String, cursorQuestionId]);

export const EventsLangPage = z
  .object({
    events: z.array(FeedPrediction).meta({ description: 'This page of active forecasts with reasoning in the language, most recent consensus first (then by question_id).' }),
    count: count.meta({ description: DOC.count }),
    total: count.meta({ description: 'Active forecasts with reasoning in the language (and the category and venue, when asked), on every page.' }),
    lang: z.string().meta({ description: 'The language, as the snapshot records it.' }),
    next_cursor: z.string().nullable().meta({ description: 'Pass as `cursor` for the next page; null on the last.' }),
  })
  .meta({ id: 'EventsLangPage' });

export const eventsLangRoute = jsonRoute({
  id: 'events.lang',
  path: '/api/events/lang/{lang}/',
  summary: 'Active binary forecasts in one language, most recent first',
  description:
    'Active binary forecasts with the four-model headline consensus and each model\'s reasoning in `lang`, most ' +
    'recent consensus first; keyset-paginated.',
  tags: ['events'],
  params: z.object({ lang: langParam }),
  query: z.object({
    limit: z.int().min(EVENTS_LANG_LIMIT.min).max(EVENTS_LANG_LIMIT.max).default(EVENTS_LANG_LIMIT.default).optional(),
    cursor: snapshotCursorParam.optional(),
    category: categoryParam.optional(),
    venue: venueParam.optional(),
  }),
  response: EventsLangPage,
  errors: [400, 404, 410],
  cache: true,
  input: (req) => {
    const lang = pathLang(req);
    const limit = queryInt(req, 'limit', EVENTS_LANG_LIMIT);
    const cursor = queryString(req, 'cursor', 1024) ?? null;
    const after = cursor === null ? null : decodeSnapshotKeyset(cursor, CURSOR_KIND, cursorShape);
    // the filters of /api/predictions/lang/{lang} (the same feed, other order), ignored here before (QA)
    const category = queryCategory(req) ?? null;
    const venue = queryVenue(req);
    return { lang, limit, after, category, venue };
  },
  data: async (snap, { lang, limit, after, category, venue }) => {
    snap.require('active_predictions', 'latest_forecasts');
    // ordered by the time of the latest consensus, which every run rewrites: a cursor is a position in one snapshot's order
    if (after !== null) assertCursorSnapshot(after.snapshot, snap.id);
    const stored = await resolveLang(snap, lang);
    const [rows, counted] = await Promise.all([
      snap.query('feed-events-page', {
        langs: stored.codes,
        category,
        venue,
        after: after !== null,
        after_at_us: after === null ? null : BigInt(after.key[0]),
        after_question_id: after?.key[1] ?? null,
        limit: limit + 1,
        ...staleParams(snap),
      }),
      snap.query('feed-predictions-count', { langs: stored.codes, category, venue }),
    ]);
    const page = rows.slice(0, limit);
    const last = page[page.length - 1];
    const key = last ? bigintKey(last.cursor_at_us) : null;
    const events = page.map(feedItem);
    return published(EventsLangPage, {
      events,
      count: events.length,
      total: typeof counted[0]?.total === 'number' ? counted[0].total : 0,
      lang: stored.lang,
      next_cursor: rows.length > limit && last && key !== null ? encodeSnapshotKeyset(CURSOR_KIND, [key, String(last.question_id)], snap.id) : null,
    });
  },
});
