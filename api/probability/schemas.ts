/**
 * The probability endpoint's shapes (one zod schema per shape: request validation, the published
 * precision of the answer, and the OpenAPI document all come from these).
 */
import { z } from 'zod';
import { CATEGORIES, MODES } from '../../pipeline/warehouse/tables.ts';
import { languageKey, languageTag } from '../../pipeline/models/prompts.ts';
import { CALIBRATIONS_APPLIED, MODEL_CALIBRATIONS_APPLIED, OutOfSample } from './calibration.ts';
import { parseTimestampValue, TIMESTAMP_MAX } from '../http/params.ts';
import { count, isoTime, marketStale, prob } from '../openapi/common.ts';

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

const lang = languageTag('a language code like en, fr, pt-BR (any case)');

/**
 * The close date of the document's examples: the end of next year, from when the process started
 * (at least a year ahead then). QA: they were written in (2027-01-01, 2027-12-31), so the example
 * request that /docs sends, and a generated client's, became a 400 "close_date must be in the
 * future" once the date passed.
 */
const EXAMPLE_YEAR = new Date().getUTCFullYear() + 1;
const EXAMPLE_CLOSE_DATE = `${EXAMPLE_YEAR}-12-31T23:59:59Z`;

/** Only whitespace, control and format characters (a zero-width space): as a venue title with nothing to read (pipeline/venues/core.ts). */
const BLANK = /^[\s\p{Cc}\p{Cf}]*$/u;
/** A surrogate not in a pair (with the u flag a pair is one code point, so only an unpaired one is Cs). */
const UNPAIRED_SURROGATE = /\p{Cs}/u;

/**
 * The text checks of `question` and `resolution_criteria` beyond their lengths. QA: an unpaired
 * UTF-16 surrogate is valid JSON here and was sent to every model, whose providers refuse such a
 * body (Anthropic: 400 "no low surrogate in string"; DeepSeek: 400), so the partner was charged and
 * told to retry a 503; 20 zero-width spaces passed the 10-character minimum and were forecast.
 */
const readable = <T extends z.ZodString>(s: T) =>
  s
    .refine((v) => !UNPAIRED_SURROGATE.test(v), 'must be well-formed Unicode: it has an unpaired surrogate (\\uD800-\\uDFFF), which model providers refuse')
    .refine((v) => !BLANK.test(v), 'has nothing to read: only invisible (control or format) characters');

/** POST /api/probability/ body. `close_date` is checked to be in the future by the service. */
export const ProbabilityRequest = z
  .object({
    // Lengths count after trimming: the document and the 400 say so (QA: minLength 10 of the string
    // as sent, and "expected >=10 characters" for 14 characters around an 8-character question).
    question: readable(
      z
        .string()
        .trim()
        .min(10, 'must have 10 characters or more besides surrounding whitespace')
        .max(1000, 'must have 1,000 characters or fewer besides surrounding whitespace'),
    ).meta({ description: 'The forward-looking yes/no question (10-1,000 characters; surrounding whitespace is trimmed and not counted; well-formed Unicode, not only invisible characters).' }),
    resolution_criteria: readable(
      z
        .string()
        .trim()
        .min(1, 'must not be empty: surrounding whitespace is trimmed')
        .max(4000, 'must have 4,000 characters or fewer besides surrounding whitespace'),
    )
      .optional()
      .meta({ description: 'How the question resolves YES (1-4,000 characters; surrounding whitespace is trimmed and not counted; well-formed Unicode, not only invisible characters).' }),
    close_date: closeDate.meta({
      description:
        'ISO 8601 date or date-time (UTC unless an offset is given) at which the question closes; must be in the future ' +
        `and at most ${TIMESTAMP_MAX} in UTC.`,
      example: EXAMPLE_CLOSE_DATE,
    }),
    // Optional, as DESIGN §7 gives the body ({question, resolution_criteria?, close_date?, category?}):
    // the prompts say "unspecified" without one, and the calibration is per model and mode, not
    // per category (QA: a body without a category was a 400, so a partner had to classify its question first).
    category: z
      .enum(CATEGORIES)
      .optional()
      .meta({ description: 'One of the nine categories, shown to the models (optional: without one they are told it is unspecified).' }),
    market: z
      .object({
        venue: z.string().min(1).max(40).meta({ description: 'The venue of the tracked market (e.g. polymarket; any case).' }),
        market_id: z.string().min(1).max(200).meta({ description: 'The market\'s id on that venue (the venue_market_id).' }),
      })
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
    langs: z.array(lang).min(1).max(8).optional().meta({
      description:
        'Reasoning languages (first = main), 1-8 codes: an ISO 639 language, optionally a script and a region (pt-BR, zh-Hant, es-419), ' +
        'each listed once (case-insensitive: pt-br is pt-BR; an alias is the language it names: eng is en). Default: the server\'s.',
    }),
  })
  .strict()
  // The two are alternatives: silently preferring one would answer a question the partner did not ask.
  .superRefine((r, ctx) => {
    // a language listed twice would be asked for again (a translation into the main language);
    // tags are compared case-insensitively, as BCP 47 says (pt-br is pt-BR), and by canonical
    // form: eng is en, iw is he (QA: ["en", "eng"] asked every model for a translation into English)
    const folded = r.langs?.map(languageKey);
    folded?.forEach((l, i) => {
      const first = folded.indexOf(l);
      if (first < i) {
        const same = r.langs![first]!.toLowerCase() === r.langs![i]!.toLowerCase() ? '' : ` (the same language as ${r.langs![first]})`;
        ctx.addIssue({ code: 'custom', path: ['langs', i], message: `${r.langs![i]} is listed twice in langs${same}.` });
      }
    });
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
      question: `Will the WHO declare a new public health emergency of international concern before ${EXAMPLE_YEAR + 1}?`,
      resolution_criteria: 'Resolves YES if the WHO Director-General declares a PHEIC between now and the close date.',
      close_date: EXAMPLE_CLOSE_DATE,
      category: 'science',
      market_probability: 0.3,
    },
  });
export type ProbabilityRequest = z.infer<typeof ProbabilityRequest>;

const Fit = z.object({
  intercept: z.number().meta({ description: 'a in calibrated log-odds = a + b · logit(p) (p clipped to [0.001, 0.999] in the log-odds).' }),
  slope: z.number().meta({ description: 'b in calibrated log-odds = a + b · logit(p) (p clipped to [0.001, 0.999] in the log-odds).' }),
  n_questions: count.meta({
    description:
      'Resolved questions of the cell (the mode for the pool, the model in the mode for a model); 0: the model is not in the ' +
      'fit\'s history (newly configured, or real models after a first start on the simulated sample).',
  }),
  method: z.string().meta({
    description:
      'platt (the pool), platt_shrunk (a model\'s own fit), identity_insufficient_data (a = 0, b = 1: fewer than 50 resolved ' +
      'questions, a model with none, newly configured, included) or identity_no_fit (a = 0, b = 1).',
  }),
});

/**
 * A failed call's cost. QA: a reply that was not JSON, asked again, was paid twice and counted in
 * the answer's `cost_usd`, which was then more than the sum of `models[].cost_usd` with nothing in
 * the answer saying where the rest went.
 */
export const FAILED_CALL_COST =
  'What the call\'s replies cost in USD (a refusal, or a reply that was not usable and was asked again, is paid; null: ' +
  'no reply or tokens unknown). The answer\'s `cost_usd` is the sum of the models\' and the failed calls\' costs.';

export const ProbabilityAnswer = z
  .object({
    request_id: z.string().meta({ description: 'The request id (`prq_` + 32 hex digits): GET /api/probability/{request_id} shows it again.' }),
    created_at: isoTime.meta({ description: 'The time the models were asked as of (the start of the request\'s work).' }),
    question: z.string().meta({ description: 'The question asked (trimmed).' }),
    mode: z.enum(MODES).meta({
      description: 'What the models were shown, and the mode whose calibration applies: augmented only with evidence, informed only with a market price.',
    }),
    probability: prob.meta({ description: 'The probability of YES: as `calibration.applied` says (calibrated, pooled in log-odds and extremized, by default).' }),
    consensus: z
      .object({
        mean: prob.meta({ description: 'Mean of the models\' raw probabilities.' }),
        median: prob.meta({ description: 'Median of the models\' raw probabilities.' }),
        logit_mean: prob.meta({ description: 'Inverse logit of their mean log-odds (p clipped to [0.001, 0.999]).' }),
      })
      .meta({ description: 'Of the raw model answers.' }),
    disagreement: z.object({
      sd: prob.meta({ description: 'Population standard deviation of the raw probabilities.' }),
      range: prob.meta({ description: 'max − min of the raw probabilities.' }),
      sd_logit: prob.meta({ description: 'Population standard deviation of the log-odds (6 decimals, as the other disagreement figures).' }),
    }).meta({ description: 'Cross-model disagreement of the raw answers.' }),
    n_models: count.meta({ description: 'Models that answered.' }),
    models: z.array(
      z.object({
        model: z.string().meta({ description: 'The model id (as configured).' }),
        provider: z.string().meta({ description: 'The model\'s provider (`simulated`: the bundled model simulator).' }),
        probability: prob.meta({ description: 'The model\'s raw answer.' }),
        calibrated_probability: prob.meta({
          description:
            'The answer through its own Platt fit (`calibration_applied` platt); else the answer as given, unclipped (the clip to ' +
            '[0.001, 0.999] is only to take the log-odds that `probability` pools).',
        }),
        calibration_applied: z.enum(MODEL_CALIBRATIONS_APPLIED).meta({
          description:
            'What gave `calibrated_probability`: `platt` the model\'s own fit (`calibration.parameters.models`); `identity` none, the ' +
            'answer as given: the model has no fit of its own (its cell has fewer than 50 resolved questions, or none: not in the ' +
            'fit\'s history), or `calibration.applied` is not `platt`.',
        }),
        reasoning: z.string().meta({ description: 'The model\'s reasoning, in the first language of `langs`.' }),
        key_factors: z.array(z.string()).meta({ description: 'The key factors the model named, in the first language of `langs`.' }),
        translations: z
          .record(z.string(), z.object({
            reasoning: z.string().meta({ description: 'The reasoning in that language.' }),
            key_factors: z.array(z.string()).meta({ description: 'The key factors in that language.' }),
          }))
          .meta({
            description:
              'The same reasoning and key factors in each further language of `langs` the model translated into, keyed by its code ' +
              'as the request wrote it. A language it gave no usable translation in, asked again, is absent here and listed in ' +
              '`translations_missing` (its forecast is kept).',
          }),
        translations_missing: z.array(z.string()).meta({
          description:
            'The further languages of `langs` (codes as the request wrote them) that the model gave no usable translation in, ' +
            'asked once more; absent from `translations`. Empty when every language came.',
        }),
        latency_ms: z.number().meta({ description: 'Milliseconds from the call leaving the model\'s queue to its answer, retries included.' }),
        attempts: count.meta({ description: 'HTTP requests sent for the call (the SDK\'s retries plus at most one content retry).' }),
        tokens_in: z.number().int().nullable().meta({ description: 'Prompt tokens, summed over the responses (null: not reported).' }),
        tokens_out: z.number().int().nullable().meta({ description: 'Completion tokens, summed over the responses (null: not reported).' }),
        cost_usd: z.number().nullable().meta({ description: 'The call\'s cost in USD from its tokens and the model\'s prices (null: tokens unknown).' }),
      }),
    ).meta({ description: 'Each model that answered.' }),
    failed: z
      .array(z.object({
        model: z.string().meta({ description: 'The model id.' }),
        error_kind: z.string().meta({
          description:
            'Why it gave no usable answer: rate_limited, server_error, timeout, invalid_json, schema_violation, truncated, ' +
            'truncated_body, network, budget_exhausted, quota_exhausted, refused or other.',
        }),
        latency_ms: z.number().meta({ description: 'Milliseconds until the call gave up, retries included.' }),
        cost_usd: z.number().nullable().meta({ description: FAILED_CALL_COST }),
      }))
      .meta({ description: 'The models asked that gave no usable answer.' }),
    evidence: z
      .array(z.object({
        evidence_id: z.string().meta({ description: 'The evidence item\'s id.' }),
        title: z.string().nullable().meta({ description: 'The item\'s title.' }),
        url: z.string().nullable().meta({ description: 'Where the item was found.' }),
        published_at: isoTime.nullable().meta({ description: 'When the item was published (null: unknown).' }),
        source_slug: z.string().meta({ description: 'The slug of the evidence provider that found it.' }),
      }))
      .meta({ description: 'The evidence retrieved for the question and shown to the models (augmented mode; empty otherwise).' }),
    evidence_errors: z
      .array(z.object({
        provider: z.string().meta({ description: 'The evidence provider (e.g. gdelt, local).' }),
        kind: z.string().meta({ description: 'How it failed (e.g. rate_limited, server_error, timeout, network).' }),
      }))
      .meta({
        description:
          'The evidence providers that failed for the question: with none listed an empty `evidence` means none was found; ' +
          'with some, `mode` may be informed or blind for want of evidence that could exist.',
      }),
    market: z
      .object({
        probability: prob.meta({ description: 'The market probability of YES shown to the models.' }),
        observed_at: isoTime.nullable().meta({ description: 'When the tracked market\'s price was observed; null for a `market_probability` of the request.' }),
        stale: marketStale.meta({
          description:
            'true when the price is older than QUORUM_MAX_PRICE_AGE_HOURS (default 48) at `created_at`, when the models were shown it ' +
            '(they see its date); null for a `market_probability` of the request (its age is unknown: shown as current).',
        }),
        question_id: z.string().nullable().meta({ description: 'The tracked question of the request\'s `market` (null for a `market_probability`).' }),
      })
      .nullable()
      .meta({
        description:
          'The market price of the request (a tracked market\'s latest price in the snapshot, or the request\'s ' +
          '`market_probability`), shown to the models in informed and augmented modes; null without one.',
      }),
    calibration: z.object({
      method: z.string().meta({ description: 'The snapshot\'s fit for the mode: `platt_shrunk_logit_pool` when fitted; `identity_insufficient_data` (fewer than 50 resolved questions) or `identity_no_fit` (no snapshot fit) otherwise.' }),
      applied: z.enum(CALIBRATIONS_APPLIED).meta({
        description:
          'What `probability` is: `platt` the fit (each model\'s own Platt fit, the identity for a model without one: ' +
          '`models[].calibration_applied`; pooled in log-odds, extremized by `parameters.extremize`); `raw_mean` the raw consensus ' +
          'mean, because the fit\'s own out-of-sample Brier is worse than the raw consensus\'s (`out_of_sample`); `identity` the raw ' +
          'answers pooled in log-odds (p clipped to [0.001, 0.999]), not extremized: the mode has no fit (`method` identity_*), or ' +
          'none of the answering models is in the fit\'s history (`parameters.models` n_questions 0), whose extremizing factor ' +
          'was fitted on other models\' forecasts. With `raw_mean` and `identity`, `parameters` describe the fit, not applied.',
      }),
      fitted_on: z.object({
        resolved_questions: count.meta({ description: 'Resolved questions the mode\'s fit used (0: no fit).' }),
        snapshot: z.string().nullable().meta({ description: 'The snapshot whose fit was used (null: none loaded).' }),
        as_of: isoTime.nullable().meta({ description: 'The as_of of that fit (its snapshot\'s run).' }),
        fitted_through: isoTime.nullable().meta({ description: 'The latest resolution the fit used.' }),
      }).meta({ description: 'What the fit was made on.' }),
      parameters: z
        .object({
          extremize: z.number().meta({ description: 'The extremizing factor d in probability = sigmoid(d · mean calibrated log-odds) (1: none).' }),
          extremize_method: z.string().meta({ description: '`cv` (chosen out of fold), `identity_insufficient_data` or `identity_no_fit` (d = 1).' }),
          pool: Fit.meta({ description: 'The mode\'s pooled Platt fit: the prior each model\'s own fit is shrunk toward (a model without its own, one newly configured, gets the identity, not this fit).' }),
          models: z.record(z.string(), Fit).meta({ description: 'Each answering model\'s fit in the mode, by model id (applied as `models[].calibration_applied` says).' }),
        })
        .meta({ description: 'The fit\'s parameters (the mode\'s).' }),
      out_of_sample: OutOfSample,
    }).meta({ description: 'How `probability` was obtained from the raw answers, and whether the fit beats the raw consensus out of sample.' }),
    cost_usd: z.number().meta({ description: 'Cost of this request\'s model calls (USD): the sum of `models[].cost_usd` and `failed[].cost_usd`.' }),
    latency_ms: z.number().meta({ description: 'Milliseconds from the start of the request\'s work (evidence retrieval included) to the answer.' }),
  })
  .meta({ id: 'ProbabilityAnswer' });
export type ProbabilityAnswer = z.input<typeof ProbabilityAnswer>;
