/**
 * Zod building blocks shared by route schemas (documentation, response-shape tests and the
 * published precision of every JSON answer).
 *
 * Published precision (issue 9 §12): `prob`/`zProb` fields (probabilities, Brier, log loss, edges,
 * disagreement, shares, and differences of them such as coherence gaps) are rounded to 6 decimals and `pct`/`zPct` fields (percentages) to 2, by a
 * zod `overwrite` on the field. A route applies it in one place, `published(Schema, body)`, which
 * parses its body with the schema: the schema that documents a field also decides its precision.
 * The Parquet snapshot keeps full precision.
 */
import { z } from 'zod';
import 'zod-openapi';
import { CATEGORIES } from '../../pipeline/warehouse/tables.ts';
import { roundFine, roundPercent, roundProbability } from '../http/precision.ts';

export const zNum = z.number().nullable();
export const count = z.number().int().min(0);
export const isoTime = z.string().meta({ format: 'date-time', description: 'ISO 8601 UTC time.', example: '2025-04-02T00:00:00.000Z' });
/**
 * A time a caller sends (query parameters): an ISO 8601 date (midnight UTC) or date-time, so no
 * `format: date-time` (which would make generated clients refuse a plain date the API accepts).
 */
export const isoTimeParam = z.string().meta({
  description: 'ISO 8601 date (2025-03-01, midnight UTC) or date-time (2025-03-01T12:00:00Z; no offset: UTC).',
  example: '2025-03-01',
});

/** A probability-scale figure, published rounded to 6 decimals. */
export const prob = z.number().overwrite((v) => roundProbability(v));
export const zProb = prob.nullable();
/** A log-odds figure (a logit), published to 6 decimals like the probabilities it stands for. */
export const zLogit = z.number().overwrite((v) => roundProbability(v)).nullable();
/** A duration in hours, published to 2 decimals (36 s). */
export const zHours = z.number().overwrite((v) => roundPercent(v)).nullable();
/** A value in its own unit (a claim's value, error or tolerance), published to 6 decimals. */
export const zFine = z.number().overwrite((v) => roundFine(v)).nullable();
/** A duration in days, published to 6 decimals (under a tenth of a second): a zFine. */
export const zDays = zFine;
/** A percentage, published rounded to 2 decimals. */
export const pct = z.number().overwrite((v) => roundPercent(v));
export const zPct = pct.nullable();

/**
 * The body a route publishes: `body` parsed with its response schema, which applies the published
 * precision of every `prob`/`pct` field and drops nothing the schema documents. A body that does not
 * match its schema is a programming error (500), caught by the route tests.
 */
export function published<S extends z.ZodObject>(schema: S, body: Record<string, unknown>): Record<string, unknown> {
  return schema.parse(body) as Record<string, unknown>;
}

/**
 * Definitions of the question and consensus fields that many bodies repeat, so that every route
 * words them alike: `z.string().nullable().meta({ description: DOC.venue })`.
 */
export const DOC = {
  question_id: 'Venue-qualified question id `<venue>:<venue market id>` (e.g. `metaculus:1554`).',
  venue:
    'The venue listing the question: polymarket, kalshi, manifold, metaculus, infer (ForecastBench imports) ' +
    'or quorum (hand-written questions).',
  venue_market_id: 'The market\'s id on its venue.',
  title: 'The question\'s title: the question as asked.',
  description: 'The question\'s background text (null: none).',
  resolution_criteria: 'The rules by which the question resolves (null: none stated).',
  url: 'The question\'s page on its venue (null: none recorded).',
  category:
    'Taxonomy category, one of the nine (politics, world, finance, economics, crypto, tech, science, sports, ' +
    'climate): from the rule-based classifier, or as a hand-written question sets it (null: none).',
  domain:
    'Taxonomy domain (earnings, macro, rates, crypto, commodities, trade, central-banks, policy, other), from the ' +
    'classifier or the hand-written question (null: none).',
  tags: 'Taxonomy tags: the names of the classifier rules the question matched, in rule-file order (or a hand-written question\'s own).',
  created_at: 'When the question was created, as its venue (or question file) records it (null: unknown).',
  close_time: 'The market\'s scheduled close (null: none).',
  status:
    'Status at as_of: active; closed (close_time passed, no visible resolution); resolved (outcome known); ' +
    'annulled (resolved without an outcome, excluded from every score).',
  mode: 'The information mode the models were shown: blind, informed (+ market price) or augmented (+ retrieved evidence).',
  headline_mode:
    'The headline mode of the consensus: the first of headline_modes (default augmented, informed, blind) with a consensus of the question.',
  run_id: 'The pipeline run that made the consensus.',
  forecast_at: 'When the consensus was made: the latest created_at of the forecasts it averages.',
  n_models: 'Models whose forecast the consensus averages.',
  providers: 'The distinct providers of the forecasts in the consensus, sorted (`simulated`: the bundled model simulator).',
  market_probability: 'The market\'s latest price (probability of YES) observed at or before as_of (null: no price).',
  market_observed_at: 'When that market price was observed (null: no price).',
  liquidity: 'The market\'s liquidity at that observation, in the venue\'s unit (USDC on Polymarket, dollars on Kalshi, mana on Manifold; null: not published).',
  volume: 'The market\'s traded volume at that observation, in the venue\'s unit (USDC on Polymarket, contracts on Kalshi, mana on Manifold; null: not published).',
  count: 'Items on this page.',
  source_slug: 'The resolution source\'s slug (e.g. a venue, `fred`, `bls`).',
  source_name: 'The source\'s name (null: the source is not in the sources registry).',
  source_url: 'The address of the source\'s record of this resolution.',
  evidence_excerpt: 'An excerpt of the source\'s record that shows the outcome.',
  retrieved_at: 'When Quorum retrieved the resolution from its source.',
} as const;

/** Whether a market price `ageHours` old is stale under `maxHours` (null: no price). */
export const marketStale = z
  .boolean()
  .nullable()
  .meta({
    description:
      'true when the market price is older than QUORUM_MAX_PRICE_AGE_HOURS (default 48) at the reference time: ' +
      'the snapshot\'s as_of for current prices, the forecast\'s created_at for the comparator of a scored forecast. ' +
      'null when no price is shown.',
  });

/** Where the summarised forecasts came from (top level of the summary endpoints). */
export const provenance = {
  providers: z
    .array(z.string())
    .meta({ description: 'The distinct providers of the forecasts summarised, sorted (e.g. ["simulated"]).' }),
  simulated: z.boolean().meta({
    description: 'true when any forecast summarised came from the bundled model simulator (provider `simulated`).',
  }),
};

/**
 * A question as a member of a structure (a thesis's members, a factor's leaves): its identity and
 * its status, first in the member's object, worded as everywhere (DOC).
 */
export const MEMBER_QUESTION_FIELDS = {
  question_id: z.string().meta({ description: DOC.question_id }),
  title: z.string().nullable().meta({ description: DOC.title }),
  venue: z.string().nullable().meta({ description: DOC.venue }),
  url: z.string().nullable().meta({ description: DOC.url }),
  category: z.string().nullable().meta({ description: DOC.category }),
  status: z.string().nullable().meta({ description: 'active | closed | resolved | annulled, as of the snapshot.' }),
};

/** `{ providers, simulated }` of a provider query's rows (`provider` column). */
export function provenanceOf(rows: ReadonlyArray<Record<string, unknown>>): { providers: string[]; simulated: boolean } {
  const providers = [...new Set(rows.map((r) => r.provider).filter((p): p is string => typeof p === 'string' && p !== ''))].sort();
  return { providers, simulated: providers.includes('simulated') };
}

/** The `cursor` of a list whose order each run rewrites (api/http/cursor.ts decodeSnapshotKeyset). */
export const snapshotCursorParam = z.string().max(1024).meta({
  description: 'The previous page\'s next_cursor, on the snapshot that issued it: this list\'s order changes with each run, so after a newer snapshot it is a 410 cursor_expired (start again).',
});

/**
 * A `category` parameter (query or path): one of the nine, as its enum (the server refuses any
 * other value with a 400 listing them; a category path, a 404). Case-insensitive on input.
 */
export const categoryParam = z
  .enum(CATEGORIES)
  .meta({
    description: `One of the nine categories (case-insensitive): ${CATEGORIES.join(', ')}.`,
    example: 'politics',
  });

/** The snapshot's headline modes (`headline_modes` of the summary endpoints). */
export const headlineModes = z.array(z.string()).meta({
  description:
    'The headline modes in order of preference (default augmented, informed, blind): a question\'s headline ' +
    'consensus is its consensus in the first of these modes that has one.',
});

/** The calibration figures of a (forecaster, mode) over the 10 equal-width bins of p (calibration_summary). */
export const calibrationMetrics = {
  ece: zProb.meta({ description: 'Expected calibration error Σ_k (n_k/N)·|ō_k − p̄_k| over the 10 equal-width bins of p.' }),
  reliability: zProb.meta({ description: 'Murphy reliability Σ_k (n_k/N)·(p̄_k − ō_k)² over the same bins (lower is better).' }),
  resolution: zProb.meta({
    description: 'Murphy resolution Σ_k (n_k/N)·(ō_k − ō)² (higher is better); brier ≈ reliability − resolution + uncertainty.',
  }),
  uncertainty: zProb.meta({ description: 'Murphy uncertainty ō(1 − ō), ō the share of the forecasts whose question resolved YES.' }),
};

/** The scores of a set of scored forecasts (one per resolved, non-annulled question), over its n. */
export const scoreMetrics = {
  brier: zProb.meta({ description: 'Mean Brier score (p − o)² over the n forecasts.' }),
  log_loss: zProb.meta({ description: 'Mean log loss −(o·ln p + (1−o)·ln(1−p)) over the n forecasts, p clipped to [0.001, 0.999].' }),
  accuracy_pct: zPct.meta({ description: '100 × correct / directional (null: no directional forecast).' }),
  n_directional: count.meta({ description: 'Forecasts with a direction (p, rounded to 9 decimals, ≠ 0.5).' }),
  n_correct: count.meta({ description: 'Directional forecasts that were right: p > 0.5 and the outcome YES, or p < 0.5 and NO.' }),
  n_no_direction: count.meta({ description: 'Forecasts at p = 0.5 (rounded to 9 decimals): no direction, left out of accuracy_pct.' }),
};

/** Metric columns of one accuracy bucket. */
export const bucketMetrics = {
  key: z.string().meta({ description: 'The bucket\'s value (the same as the field named after the dimension).' }),
  n: count.meta({ description: 'Scored forecasts in the bucket (one per resolved, non-annulled question).' }),
  ...scoreMetrics,
};
