/**
 * `GET /api/taxonomy/history/{question_id}/` (taxonomy.history, api plan: the spec's "full taxonomy
 * history"): how one question's taxonomy (category, domain, tags) changed over its stored versions,
 * oldest first, from the `taxonomy_history` table (sql/derive/12_taxonomy_history.sql): the first
 * stored version, then each version whose taxonomy differs from the one before, saying whether the
 * question's text changed with it (`edited`: a question file's edit, a later ForecastBench round) or
 * only the rules did (`reclassified`: each sync applies the current rules to the stored questions,
 * pipeline/taxonomy/reclassify.ts). The last change is the question's taxonomy now.
 *
 * `question_id` as the lifecycle endpoint takes it (venue-qualified, or a bare venue market id that
 * one question has); malformed: 400 `invalid_parameter`; unknown: 404 `not_found`. A snapshot
 * published before the table existed: 503 `not_ready` (the next run adds it).
 * Body: { question_id, title, category, domain, tags, changes: [TaxonomyChange], as_of }.
 */
import { z } from 'zod';
import type { JsonRow } from '../db/convert.ts';
import { fromColumns } from '../db/cells.ts';
import { jsonRoute } from '../http/registry.ts';
import { count, DOC, isoTime, published } from '../openapi/common.ts';
import { findQuestion, pathMarketRef, questionPathParams } from './prediction-params.ts';
import { stringList } from './predictions-lifecycle.ts';

export const TaxonomyChange = z
  .object({
    seq: count.meta({ description: 'Position in the history, from 1 (the first stored version), oldest first.' }),
    since: isoTime.nullable().meta({ description: 'When Quorum stored the version that brought this taxonomy (its ingested_at).' }),
    change: z.enum(['first_stored', 'reclassified', 'edited']).meta({
      description:
        'first_stored: the question as first stored; reclassified: the taxonomy rules changed and the question\'s text ' +
        '(title, description, resolution criteria) did not; edited: the text changed too (a question file\'s edit, a later ' +
        'ForecastBench round).',
    }),
    category: z.string().nullable().meta({ description: DOC.category }),
    domain: z.string().nullable().meta({ description: DOC.domain }),
    tags: z.array(z.string()).meta({ description: DOC.tags }),
    previous_category: z.string().nullable().meta({ description: 'The category before this change (null for first_stored).' }),
    previous_domain: z.string().nullable().meta({ description: 'The domain before this change (null for first_stored).' }),
    previous_tags: z.array(z.string()).meta({ description: 'The tags before this change ([] for first_stored).' }),
  })
  .meta({ id: 'TaxonomyChange' });

export const TaxonomyHistory = z
  .object({
    question_id: z.string().meta({ description: DOC.question_id }),
    title: z.string().nullable().meta({ description: DOC.title }),
    category: z.string().nullable().meta({ description: `Now: ${DOC.category}` }),
    domain: z.string().nullable().meta({ description: `Now: ${DOC.domain}` }),
    tags: z.array(z.string()).meta({ description: `Now: ${DOC.tags}` }),
    changes: z.array(TaxonomyChange).meta({ description: 'Every change of the question\'s taxonomy, oldest first; the last is its taxonomy now.' }),
  })
  .meta({ id: 'TaxonomyHistory' });

/** A `taxonomy_history` row as its schema reads it (the plain columns by type; the enum and the lists given). */
const change = (r: JsonRow) =>
  fromColumns(TaxonomyChange, r, {
    change: r.change as z.input<typeof TaxonomyChange>['change'],
    tags: stringList(r.tags),
    previous_tags: stringList(r.previous_tags),
  });

export const taxonomyHistoryRoute = jsonRoute({
  id: 'taxonomy.history',
  path: '/api/taxonomy/history/{question_id}/',
  summary: 'Taxonomy history of one question',
  description:
    'How the question\'s category, domain and tags changed over its stored versions, oldest first: as first stored, then ' +
    'each change, reclassified (the rules changed) or edited (its text changed too).',
  tags: ['predictions'],
  params: questionPathParams,
  response: TaxonomyHistory,
  errors: [400, 404],
  cache: true,
  input: (req) => pathMarketRef(req, 'question_id'),
  data: async (snap, ref) => {
    snap.require('questions', 'taxonomy_history');
    const q = await findQuestion(snap, ref, 'question_id');
    const rows = await snap.query('taxonomy-history', { question_id: String(q.question_id) });
    return published(
      TaxonomyHistory,
      fromColumns(TaxonomyHistory, q, { tags: stringList(q.tags), changes: rows.map(change) }),
    );
  },
});
