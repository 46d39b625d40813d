/**
 * The events' payloads, one zod schema per event type: what `sql/events/` builds (its
 * `json_object`s), what a webhook POSTs (`{type, timestamp, data}`) and what a stream frame's
 * `data` holds (`{id, seq, type, timestamp, data}`). The OpenAPI document publishes them (its
 * `webhooks`, and the `StreamEvent` component); the event tests parse every event a real run
 * derives with them, strictly, so a field added in SQL without its schema here fails a test.
 *
 * A field is nullable where its SQL can give NULL (a LEFT JOIN's side, a price or source that may
 * be missing). Probabilities and their differences are rounded to 6 decimals; instants are ISO
 * 8601 UTC with milliseconds and Z (sql/events/00_candidates.sql).
 */
import { z } from 'zod';
import type { ZodOpenApiPathsObject } from 'zod-openapi';
import { EVENT_TYPES, type EventType } from '../../pipeline/events/event-types.ts';

const d = (description: string) => ({ description });
const prob = z.number().min(0).max(1);
const signed = z.number().min(-1).max(1);
/** An instant (format date-time, as the API's other times). */
const instant = (description: string) => z.string().meta({ format: 'date-time', description: `${description} ISO 8601 UTC with milliseconds and Z.` });
const questionId = z.string().meta(d('The tracked question (`<venue>:<market id>`), as in /api/predictions/{market_id}.'));
const title = z.string().meta(d("The question's title."));
const category = z.string().nullable().meta(d("The question's category (politics, economics, …)."));
const mode = z.enum(['blind', 'informed', 'augmented']).meta(d('The headline mode of the consensus (blind, informed, augmented).'));
const outcome = prob.meta(d('1: it happened, 0: it did not.'));
const brier = (whose: string) => z.number().min(0).max(1).meta(d(`Brier score of ${whose}: (probability − outcome)².`));
const threshold = (name: string) => prob.meta(d(`The threshold in force (${name}).`));

const consensusUpdated = z.strictObject({
  question_id: questionId,
  title,
  category,
  mode,
  previous_mode: z.enum(['blind', 'informed', 'augmented']).optional()
    .meta(d('The headline mode of the previous consensus: the headline mode can change between runs (a move across modes is not a move of one forecast). Absent from events written before it was announced (the stream, a replay or an older version\'s run during a rolling upgrade can send those).')),
  consensus: prob.meta(d('The headline consensus now (mean of the models).')),
  previous: prob.meta(d('The headline consensus in the previous snapshot.')),
  change: signed.meta(d('consensus − previous; |change| ≥ QUORUM_EVENTS_CONSENSUS_THRESHOLD.')),
  n_models: z.int().min(1).meta(d('Models in the consensus now.')),
  disagreement_sd: z.number().min(0).nullable().meta(d("Standard deviation of the models' probabilities.")),
  market_probability: prob.nullable().meta(d('The latest market price; null without one.')),
  run_id: z.string().meta(d('The run whose consensus this is.')),
  previous_run_id: z.string().meta(d('The run of the previous consensus.')),
});

const edgeOpened = z.strictObject({
  question_id: questionId,
  title,
  category,
  mode,
  edge: signed.meta(d('consensus − market.')),
  abs_edge: prob.meta(d('|edge|, at least the threshold.')),
  direction: z.enum(['ai_above_market', 'ai_below_market', 'none']).meta(d('Which side of the market the consensus is on.')),
  consensus: prob.meta(d('The headline consensus.')),
  market_probability: prob.meta(d('The market price it is compared with.')),
  market_observed_at: instant('When that price was observed.'),
  previous_edge: signed.nullable().meta(d('The edge in the previous snapshot; null when the question had none. Of the other sign when the edge reversed (it was at least the threshold on the other side of the market).')),
  threshold: threshold('QUORUM_EVENTS_EDGE_THRESHOLD'),
});

const edgeClosed = z.strictObject({
  question_id: questionId,
  title,
  category,
  edge: signed.nullable().meta(d('The edge now; null when the question left the edges.')),
  abs_edge: prob.nullable().meta(d('|edge| now, below the threshold; null when the question left the edges.')),
  previous_edge: signed.meta(d('The edge in the previous snapshot (at least the threshold).')),
  threshold: threshold('QUORUM_EVENTS_EDGE_THRESHOLD'),
  reason: z.enum(['below_threshold', 'closed', 'resolved', 'annulled', 'no_edge'])
    .meta(d('below_threshold, or why the question left the edges: closed, resolved, annulled, or no_edge (no price or consensus any more).')),
});

const resolution = {
  question_id: questionId,
  title,
  category,
  venue: z.string().meta(d('The venue the question comes from.')),
  resolved_at: instant('When it was resolved (or annulled).').nullable().meta(d('When it was resolved (or annulled); ISO 8601 UTC.')),
  method: z.string().nullable().meta(d('How the resolution was obtained (api, manual, …).')),
  source: z.strictObject({
    slug: z.string().nullable().meta(d("The source's slug, as in /api/analysis/resolution-sources/.")),
    name: z.string().nullable().meta(d("The source's name.")),
    kind: z.string().nullable().meta(d('government, central_bank, regulatory, primary_financial, secondary_reporting, market or analyst.')),
    url: z.string().nullable().meta(d('Where the resolution can be checked.')),
    evidence_excerpt: z.string().nullable().meta(d('The passage of the source that settles it.')),
  }).meta(d('The authoritative source that settled it.')),
  previous_status: z.enum(['active', 'closed', 'resolved', 'annulled']).nullable()
    .meta(d('Its status in the previous snapshot; null when the question is new in this one.')),
  previous_outcome: z.union([z.literal(0), z.literal(1)]).nullable().optional()
    .meta(d('The outcome this announcement replaces, when the question was resolved before and its venue amended the resolution (reversed it, or annulled it); null otherwise. Absent from events written before amendments were announced (a replay or resume can send those).')),
};

const questionResolved = z.strictObject({
  ...resolution,
  status: z.literal('resolved').meta(d('resolved')),
  outcome,
  annulled_reason: z.null().meta(d('Always null here.')),
});

const questionAnnulled = z.strictObject({
  ...resolution,
  status: z.literal('annulled').meta(d('annulled')),
  outcome: z.null().meta(d('Always null: an annulled question has no outcome.')),
  annulled_reason: z.string().nullable().meta(d('Why it was annulled, as the venue or source says.')),
});

const scorePosted = z.strictObject({
  question_id: questionId,
  category,
  outcome,
  resolved_at: instant('When it was resolved.').nullable().meta(d('When it was resolved; ISO 8601 UTC.')),
  mode,
  consensus: z.strictObject({
    probability: prob.meta(d('The scored headline consensus (the latest before the cutoff).')),
    brier: brier('the consensus'),
    n_models: z.int().min(1).meta(d('Models in it.')),
  }).meta(d('The headline consensus and its score.')),
  market: z.strictObject({
    probability: prob.nullable().meta(d('The market comparator; null when there was no fresh price.')),
    brier: brier('the market').nullable().meta(d('Brier score of the market comparator; null without one.')),
    status: z.enum(['ok', 'stale', 'none']).meta(d('The market comparator: ok (fresh), stale (too old, not scored) or none.')),
  }).meta(d('The market comparator and its score.')),
  models: z.array(z.strictObject({
    model: z.string().meta(d('The model.')),
    probability: prob.meta(d('Its scored forecast in that mode.')),
    brier: brier('the model'),
  })).meta(d('Each model in the headline mode, by name.')),
});

const runCompleted = z.looseObject({
  run_id: z.string().meta(d('The run.')),
  as_of: instant('The time the run is dated.'),
  status: z.literal('completed').meta(d('completed')),
  snapshot: z.string().meta(d('The snapshot it published (its run id).')),
  questions: z.int().min(0).optional().meta(d('Questions forecast. Absent only from a run recovered from an events marker an older version wrote.')),
  forecasts: z.int().min(0).optional().meta(d('Forecasts written. Absent only from a run recovered from an events marker an older version wrote.')),
  calls: z.int().min(0).optional().meta(d('Model calls of the run. Absent only from a run recovered from an events marker an older version wrote.')),
  failed_calls: z.int().min(0).optional().meta(d('Calls that failed. Absent only from a run recovered from an events marker an older version wrote.')),
  cost_usd: z.number().min(0).optional().meta(d('What the calls cost, in US dollars. Absent only from a run recovered from an events marker an older version wrote.')),
  recovered: z.literal(true).optional().meta(d('Present when the next run derived these events: this run was stopped between its publish and its events.')),
  events: z.partialRecord(z.enum(EVENT_TYPES), z.int().min(1)).meta(d('How many events of each type this run found (this one excluded).')),
}).meta(d('The run summary, as `quorum run` prints it without its sync report, notes and timing, and the number of events by type.'));

/** The `data` of each event type. */
export const EVENT_DATA = {
  'consensus.updated': consensusUpdated,
  'edge.opened': edgeOpened,
  'edge.closed': edgeClosed,
  'question.resolved': questionResolved,
  'question.annulled': questionAnnulled,
  'score.posted': scorePosted,
  'run.completed': runCompleted,
} as const satisfies Record<EventType, z.ZodType>;

/** A webhook delivery's body for one event type (the POST's JSON). */
export function webhookBody(type: EventType) {
  return z.strictObject({
    type: z.literal(type).meta(d('The event type.')),
    timestamp: instant('When the event was written.'),
    data: EVENT_DATA[type].meta(d(`What the ${type} event says.`)),
  });
}

/** A stream frame's `data`: the event with its id and sequence number. */
export const streamEvent = z
  .union(
    EVENT_TYPES.map((type) =>
      z.strictObject({
        id: z.string().meta(d('Derived from (run, type, subject); the same on every delivery.')),
        seq: z.int().min(1).meta(d('Increases by one per event; the SSE `id`.')),
        type: z.literal(type).meta(d('The event type (the frame\'s `event`).')),
        timestamp: instant('When the event was written.'),
        data: EVENT_DATA[type].meta(d(`What the ${type} event says (as a webhook's \`data\`).`)),
      }),
    ),
  )
  .meta({ id: 'StreamEvent', description: 'The `data` of a `GET /api/stream/` frame whose `event` is an event type.' });

/** The stream's own notices: `stream.overflow` (a slow client, disconnected) and `stream.gap`. */
export const streamOverflow = z
  .strictObject({
    reason: z.literal('slow_client').meta(d('slow_client')),
    detail: z.string().meta(d('What happened and how to resume.')),
    last_event_id: z.string().meta(d('Send it as Last-Event-ID to resume without a gap.')),
    since: z.int().min(0).meta(d('The same, for ?since=.')),
  })
  .meta({ id: 'StreamOverflow', description: 'The `data` of a final `stream.overflow` frame.' });

export const streamGap = z
  .strictObject({
    reason: z.literal('retention').meta(d('retention')),
    detail: z.string().meta(d('Which events cannot be replayed, and where the stream resumes.')),
    missing_from: z.int().min(1).meta(d('The first sequence number past retention.')),
    missing_to: z.int().min(1).meta(d('The last one.')),
  })
  .meta({ id: 'StreamGap', description: 'The `data` of a `stream.gap` frame: events past retention that cannot be replayed.' });

const WEBHOOK_HEADERS = z.object({
  'webhook-id': z.string().meta(d('One per event and subscription, the same on every retry: deduplicate on it.')),
  'webhook-timestamp': z.string().meta(d('Seconds since the epoch, when this attempt was signed.')),
  'webhook-signature': z.string().meta(d('`v1,<base64 HMAC-SHA256 of "<id>.<timestamp>.<body>">` keyed with the bytes the base64 part of the secret decodes to (after `whsec_`, as Standard Webhooks does); one more, space-separated, per secret still inside its 24 h after a rotation.')),
});

/**
 * The OpenAPI document's `webhooks`: one POST per event type, its body and signature headers, and
 * what the receiver's status means (README, "Webhooks").
 */
export function webhooksDocument(): ZodOpenApiPathsObject {
  return Object.fromEntries(
    EVENT_TYPES.map((type) => [
      type,
      {
        post: {
          operationId: `webhook_${type.replace('.', '_')}`,
          summary: `The ${type} event, POSTed to each subscription that takes it`,
          tags: ['events'],
          requestParams: { header: WEBHOOK_HEADERS },
          requestBody: { content: { 'application/json': { schema: webhookBody(type) } } },
          responses: {
            '2XX': { description: 'Delivered.' },
            '410': { description: 'Gone: the subscription is disabled.' },
            '429': { description: 'Retried later (after Retry-After when given), as 5xx and network errors are, for QUORUM_WEBHOOKS_RETRY_WINDOW_MS.' },
            '4XX': { description: 'Any other 4xx fails this delivery (not retried).' },
          },
        },
      },
    ]),
  );
}

/** The stream frames' payloads, as components (`GET /api/stream/` names them). */
export const STREAM_SCHEMAS = { StreamEvent: streamEvent, StreamOverflow: streamOverflow, StreamGap: streamGap };
