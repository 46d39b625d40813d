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
import { roundPercent, roundProbability } from '../http/precision.ts';

export const zNum = z.number().nullable();
export const count = z.number().int().min(0);
export const isoTime = z.string().meta({ description: 'ISO 8601 UTC time.', example: '2025-04-02T00:00:00.000Z' });

/** A probability-scale figure, published rounded to 6 decimals. */
export const prob = z.number().overwrite((v) => roundProbability(v));
export const zProb = prob.nullable();
/** A log-odds figure (a logit), published to 6 decimals like the probabilities it stands for. */
export const zLogit = z.number().overwrite((v) => roundProbability(v)).nullable();
/** A duration in hours, published to 2 decimals (36 s). */
export const zHours = z.number().overwrite((v) => roundPercent(v)).nullable();
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

/** `{ providers, simulated }` of a provider query's rows (`provider` column). */
export function provenanceOf(rows: ReadonlyArray<Record<string, unknown>>): { providers: string[]; simulated: boolean } {
  const providers = [...new Set(rows.map((r) => r.provider).filter((p): p is string => typeof p === 'string' && p !== ''))].sort();
  return { providers, simulated: providers.includes('simulated') };
}

export const categoryParam = z
  .string()
  .meta({
    description: `One of the nine categories (case-insensitive): ${CATEGORIES.join(', ')}.`,
    example: 'politics',
  });

/** Metric columns of one accuracy bucket. */
export const bucketMetrics = {
  key: z.string(),
  n: count,
  brier: zProb,
  log_loss: zProb,
  accuracy_pct: zPct.meta({ description: '100 × correct / directional (null: no directional forecast).' }),
  n_directional: count,
  n_correct: count,
  n_no_direction: count,
};
