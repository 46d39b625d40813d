/**
 * `GET /api/predictions/lang/{lang}`: active predictions with the four-model headline consensus,
 * the market probability, the disagreement and each model's reasoning in `lang` (from the latest
 * run of each active question: active_predictions + latest_forecasts), by question_id,
 * keyset-paginated.
 *
 * Path: `lang`, a BCP 47 tag (`en`, `fr`, `pt-BR`; case-insensitive). A malformed tag is a 400; a
 * language no active prediction of the snapshot has is a 404 listing the available ones
 * (`allowed`). Query: `limit` (1..500, default 50), `cursor`, `category` (one of the nine), `venue`
 * (one of VENUES, case-insensitive).
 * Body: { predictions: [FeedPrediction], count, total (matching predictions in this snapshot),
 * lang (the stored form), next_cursor, as_of } — item: see prediction-feed.ts.
 */
import { z } from 'zod';
import { queryCategory, queryInt, queryString } from '../http/params.ts';
import { jsonRoute } from '../http/registry.ts';
import { categoryParam, count, DOC, published } from '../openapi/common.ts';
import { cursorQuestionId, decodeKeyset, encodeKeyset } from '../http/cursor.ts';
import { FeedPrediction, feedItem, resolveLang } from './prediction-feed.ts';
import { langParam, pathLang, queryVenue, staleParams, venueParam } from './prediction-params.ts';

export const PREDICTIONS_LANG_LIMIT = { min: 1, max: 500, default: 50 } as const;
const CURSOR_KIND = 'predictions.lang';
const cursorShape = z.tuple([cursorQuestionId]);

export const PredictionsLangPage = z
  .object({
    predictions: z.array(FeedPrediction).meta({ description: 'This page of active predictions with reasoning in the language, by question_id.' }),
    count: count.meta({ description: DOC.count }),
    total: count.meta({ description: 'Active predictions with reasoning in the language (and the category and venue, when asked), on every page.' }),
    lang: z.string().meta({ description: 'The language, as the snapshot records it.' }),
    next_cursor: z.string().nullable().meta({ description: 'Pass as `cursor` for the next page; null on the last.' }),
  })
  .meta({ id: 'PredictionsLangPage' });

export const predictionsLangRoute = jsonRoute({
  id: 'predictions.lang',
  path: '/api/predictions/lang/{lang}',
  summary: 'Active predictions with per-model reasoning in one language',
  description:
    'Active predictions with the four-model headline consensus, the market probability, the disagreement and each ' +
    'model\'s reasoning and key factors in `lang`, from each question\'s latest run; ordered by question_id, ' +
    'keyset-paginated.',
  tags: ['predictions'],
  params: z.object({ lang: langParam }),
  query: z.object({
    limit: z.int().min(PREDICTIONS_LANG_LIMIT.min).max(PREDICTIONS_LANG_LIMIT.max).default(PREDICTIONS_LANG_LIMIT.default).optional(),
    cursor: z.string().max(1024).optional().meta({ description: 'The previous page\'s next_cursor.' }),
    category: categoryParam.optional(),
    venue: venueParam.optional(),
  }),
  response: PredictionsLangPage,
  errors: [400, 404],
  cache: true,
  input: (req) => {
    const lang = pathLang(req);
    const limit = queryInt(req, 'limit', PREDICTIONS_LANG_LIMIT);
    const cursor = queryString(req, 'cursor', 1024) ?? null;
    const after = cursor === null ? null : decodeKeyset(cursor, CURSOR_KIND, cursorShape)[0];
    const category = queryCategory(req) ?? null;
    const venue = queryVenue(req);
    return { lang, limit, after, category, venue };
  },
  data: async (snap, { lang, limit, after, category, venue }) => {
    snap.require('active_predictions', 'latest_forecasts');
    const stored = await resolveLang(snap, lang);
    const [rows, counted] = await Promise.all([
      snap.query('feed-predictions-page', {
        langs: stored.codes,
        category,
        venue,
        after: after !== null,
        after_question_id: after,
        limit: limit + 1,
        ...staleParams(snap),
      }),
      snap.query('feed-predictions-count', { langs: stored.codes, category, venue }),
    ]);
    const page = rows.slice(0, limit);
    const last = page[page.length - 1];
    const predictions = page.map(feedItem);
    return published(PredictionsLangPage, {
      predictions,
      count: predictions.length,
      total: typeof counted[0]?.total === 'number' ? counted[0].total : 0,
      lang: stored.lang,
      next_cursor: rows.length > limit && last ? encodeKeyset(CURSOR_KIND, [String(last.question_id)]) : null,
    });
  },
});
