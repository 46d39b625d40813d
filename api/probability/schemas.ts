/**
 * The probability endpoint's shapes (one zod schema per shape: request validation, the published
 * precision of the answer, and the OpenAPI document all come from these).
 */
import { z } from 'zod';
import { CATEGORIES, MODES } from '../../pipeline/warehouse/tables.ts';
import { CALIBRATIONS_APPLIED } from './calibration.ts';
import { parseTimestampValue, TIMESTAMP_MAX } from '../http/params.ts';
import { count, isoTime, marketStale, prob, zProb } from '../openapi/common.ts';

/**
 * `close_date`: the API's one grammar of instants (api/http/params.ts, as the query parameters):
 * a date (midnight UTC) or a date-time, no offset meaning UTC, up to year 9999 once in UTC (a later
 * instant cannot be stored nor shown as a 4-digit year). Checked here, converted by the service.
 */
const closeDate = z
  .string()
  .refine((s) => s.length <= 40 && parseTimestampValue(s) !== null, {
    message:
      'must be an ISO 8601 date (2027-12-31) or date-time (2027-12-31T12:00:00Z; with an offset such as +02:00, ' +
      `or none for UTC), at most ${TIMESTAMP_MAX} in UTC.`,
  });

const lang = z.string().regex(/^[a-z]{2,3}(-[A-Za-z0-9]{2,8})?$/, 'a language code like en, fr, pt-BR');

/** POST /api/probability/ body. `close_date` is checked to be in the future by the service. */
export const ProbabilityRequest = z
  .object({
    question: z.string().trim().min(10).max(1000).meta({ description: 'The forward-looking yes/no question (10-1,000 characters).' }),
    resolution_criteria: z.string().trim().min(1).max(4000).optional().meta({ description: 'How the question resolves YES.' }),
    close_date: closeDate.meta({
      description:
        'ISO 8601 date or date-time (UTC unless an offset is given) at which the question closes; must be in the future ' +
        `and at most ${TIMESTAMP_MAX} in UTC.`,
      example: '2027-01-01T00:00:00Z',
    }),
    category: z.enum(CATEGORIES).meta({ description: 'One of the nine categories.' }),
    market: z
      .object({ venue: z.string().min(1).max(40), market_id: z.string().min(1).max(200) })
      .strict()
      .optional()
      .meta({ description: 'A market Quorum tracks: its latest price goes into the prompt. Not with `market_probability`.' }),
    market_probability: z
      .number()
      .min(0)
      .max(1)
      .optional()
      .meta({ description: 'A market probability to show the models instead of a tracked `market` (not both).' }),
    mode: z.enum(MODES).optional().meta({
      description:
        'What the models are shown (its calibration applies). Default: augmented when evidence was found, else informed when a market ' +
        'price is given, else blind. Asked explicitly, a mode the request cannot honour is a 400 (informed without a market; ' +
        'augmented with no evidence provider configured or no evidence found).',
    }),
    langs: z.array(lang).min(1).max(8).optional().meta({ description: 'Reasoning languages (first = main). Default: the server\'s.' }),
  })
  .strict()
  // The two are alternatives: silently preferring one would answer a question the partner did not ask.
  .superRefine((r, ctx) => {
    if (r.market !== undefined && r.market_probability !== undefined) {
      ctx.addIssue({
        code: 'custom',
        path: ['market_probability'],
        message: 'market and market_probability are alternatives: give a tracked market or a probability, not both.',
      });
    }
  })
  .meta({
    id: 'ProbabilityRequest',
    example: {
      question: 'Will the WHO declare a new public health emergency of international concern before 2028?',
      resolution_criteria: 'Resolves YES if the WHO Director-General declares a PHEIC between now and the close date.',
      close_date: '2027-12-31T23:59:59Z',
      category: 'science',
      market_probability: 0.3,
    },
  });
export type ProbabilityRequest = z.infer<typeof ProbabilityRequest>;

const Fit = z.object({ intercept: z.number(), slope: z.number(), method: z.string() });

export const ProbabilityAnswer = z
  .object({
    request_id: z.string(),
    created_at: isoTime,
    question: z.string(),
    mode: z.enum(MODES).meta({
      description: 'What the models were shown, and the mode whose calibration applies: augmented only with evidence, informed only with a market price.',
    }),
    probability: prob.meta({ description: 'The probability of YES: as `calibration.applied` says (calibrated, pooled in log-odds and extremized, by default).' }),
    consensus: z.object({ mean: prob, median: prob, logit_mean: prob }).meta({ description: 'Of the raw model answers.' }),
    disagreement: z.object({
      sd: prob.meta({ description: 'Population standard deviation of the raw probabilities.' }),
      range: prob,
      sd_logit: prob.meta({ description: 'Population standard deviation of the log-odds (6 decimals, as the other disagreement figures).' }),
    }),
    n_models: count.meta({ description: 'Models that answered.' }),
    models: z.array(
      z.object({
        model: z.string(),
        provider: z.string(),
        probability: prob.meta({ description: 'The model\'s raw answer.' }),
        calibrated_probability: prob.meta({ description: 'The answer through its Platt fit; the raw answer when `calibration.applied` is not `platt`.' }),
        reasoning: z.string(),
        key_factors: z.array(z.string()),
        translations: z.record(z.string(), z.object({ reasoning: z.string(), key_factors: z.array(z.string()) })),
        latency_ms: z.number(),
        attempts: count,
        tokens_in: z.number().int().nullable(),
        tokens_out: z.number().int().nullable(),
        cost_usd: z.number().nullable(),
      }),
    ),
    failed: z.array(z.object({ model: z.string(), error_kind: z.string(), latency_ms: z.number() })),
    evidence: z.array(
      z.object({ evidence_id: z.string(), title: z.string().nullable(), url: z.string().nullable(), published_at: isoTime.nullable(), source_slug: z.string() }),
    ),
    market: z
      .object({
        probability: prob,
        observed_at: isoTime.nullable().meta({ description: 'When the tracked market\'s price was observed; null for a `market_probability` of the request.' }),
        stale: marketStale.meta({
          description:
            'true when the price is older than QUORUM_MAX_PRICE_AGE_HOURS (default 48) at `created_at`, when the models were shown it ' +
            '(they see its date); null for a `market_probability` of the request (its age is unknown: shown as current).',
        }),
        question_id: z.string().nullable(),
      })
      .nullable(),
    calibration: z.object({
      method: z.string().meta({ description: 'The snapshot\'s fit for the mode: `platt_shrunk_logit_pool` when fitted; `identity_insufficient_data` (fewer than 50 resolved questions) or `identity_no_fit` (no snapshot fit) otherwise.' }),
      applied: z.enum(CALIBRATIONS_APPLIED).meta({
        description:
          'What `probability` is: `platt` the fit (per-model Platt, pooled in log-odds, extremized); `raw_mean` the raw consensus ' +
          'mean, because the fit\'s own out-of-sample Brier is worse than the raw consensus\'s (`out_of_sample`); `identity` the raw ' +
          'answers pooled in log-odds (no fit: `method` identity_*).',
      }),
      fitted_on: z.object({
        resolved_questions: count,
        snapshot: z.string().nullable(),
        as_of: isoTime.nullable(),
        fitted_through: isoTime.nullable(),
      }),
      parameters: z.object({ extremize: z.number(), extremize_method: z.string(), pool: Fit, models: z.record(z.string(), Fit) }),
      out_of_sample: z.object({ brier_raw: zProb, brier_calibrated: zProb, n: count, folds: count }),
    }),
    cost_usd: z.number().meta({ description: 'Cost of this request\'s model calls (USD).' }),
    latency_ms: z.number(),
  })
  .meta({ id: 'ProbabilityAnswer' });
export type ProbabilityAnswer = z.input<typeof ProbabilityAnswer>;
