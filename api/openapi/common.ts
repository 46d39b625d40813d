/** Zod building blocks shared by route schemas (documentation and response-shape tests). */
import { z } from 'zod';
import 'zod-openapi';
import { CATEGORIES } from '../../pipeline/warehouse/tables.ts';

export const zNum = z.number().nullable();
export const count = z.number().int().min(0);
export const isoTime = z.string().meta({ description: 'ISO 8601 UTC time.', example: '2025-04-02T00:00:00.000Z' });

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
  brier: zNum,
  log_loss: zNum,
  accuracy_pct: zNum.meta({ description: '100 × correct / directional (null: no directional forecast).' }),
  n_directional: count,
  n_correct: count,
  n_no_direction: count,
};
