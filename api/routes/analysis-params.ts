/**
 * Query parameters shared by the scoring-analysis routes (leaderboard, rankings, analysis/*):
 * `mode`, `rounds` and one cell filter (`category`, `domain` or `horizon`), parsed strictly with
 * api/http/params.ts (every failure is a 400 naming the parameter and what is allowed).
 */
import type { Request } from 'express';
import { z } from 'zod';
import { DOMAINS, HORIZON_BUCKETS, MODES, type Mode } from '../../pipeline/warehouse/tables.ts';
import { ApiError } from '../errors/problem.ts';
import { queryCategory, queryEnum } from '../http/params.ts';
import { categoryParam, zProb } from '../openapi/common.ts';

export const ROUNDS = ['latest', 'all'] as const;
export type Rounds = (typeof ROUNDS)[number];

export function queryMode(req: Request): Mode | undefined {
  return queryEnum(req, 'mode', MODES);
}

export function queryRounds(req: Request): Rounds {
  return queryEnum(req, 'rounds', ROUNDS) ?? 'latest';
}

/** The cell a request asks for: overall, or one category, domain or horizon bucket (at most one). */
export interface Cell {
  dimension: 'overall' | 'category' | 'domain' | 'horizon';
  key: string;
}

export function queryCell(req: Request): Cell {
  const category = queryCategory(req);
  const domain = queryEnum(req, 'domain', DOMAINS);
  const horizon = queryEnum(req, 'horizon', HORIZON_BUCKETS);
  const given = [category && 'category', domain && 'domain', horizon && 'horizon'].filter(Boolean);
  if (given.length > 1) {
    throw ApiError.invalidParameter(
      String(given[1]),
      'Give at most one of category, domain and horizon: figures are published per cell of one dimension.',
    );
  }
  if (category) return { dimension: 'category', key: category };
  if (domain) return { dimension: 'domain', key: domain };
  if (horizon) return { dimension: 'horizon', key: horizon };
  return { dimension: 'overall', key: 'all' };
}

/** Documentation of the shared query parameters. */
export const analysisQuery = {
  mode: z.enum(MODES).optional().meta({ description: 'Only this information mode (default: every mode).' }),
  rounds: z
    .enum(ROUNDS)
    .default('latest')
    .optional()
    .meta({
      description:
        '`latest` (default): each question\'s latest forecast before its cutoff. `all`: every round\'s forecast before ' +
        'the cutoff (runs dated at the same time are one round, the greater run id\'s), averaged per question first so ' +
        'that questions weigh equally (ForecastBench\'s convention).',
    }),
  category: categoryParam.optional(),
  domain: z.enum(DOMAINS).optional().meta({ description: 'Only questions of this domain.' }),
  horizon: z
    .enum(HORIZON_BUCKETS)
    .optional()
    .meta({ description: 'Only forecasts this many days before resolution (bucket of the scored consensus).' }),
};

/** A 95% bootstrap interval [lo, hi], or null when it cannot be computed. */
export const ci95 = z
  .tuple([zProb, zProb])
  .nullable()
  .meta({
    description:
      '95% percentile bootstrap interval [lo, hi]: 1,000 replicates resampling questions with a fixed seed ' +
      '(tables bootstrap_groups and bootstrap_weights of the snapshot); null when not computable (the leaderboard\'s ' +
      'and rankings\' intervals: unless the questions sit in two bootstrap groups or more; one question, or ' +
      'questions sharing one group, would give every replicate the point figure).',
  });

/** [lo, hi] from two nullable numbers (null when either is missing). */
export function interval(lo: unknown, hi: unknown): [number, number] | null {
  return typeof lo === 'number' && typeof hi === 'number' ? [lo, hi] : null;
}

export function numOrNull(v: unknown): number | null {
  return typeof v === 'number' ? v : null;
}
