/**
 * What each plan may export (DESIGN §7 entitlements), and how the export reads the caller's plan.
 *
 * The auth middleware (api/auth, not this folder) sets `res.locals.auth = { plan, keyId, scopes }`
 * before the routes run; no (or an unrecognised) value counts as anonymous.
 * - anonymous: no export (401 unauthorized: export needs a key);
 * - pro: CSV only, at most `proRowCap` rows (default 10,000) per export;
 * - api: CSV, JSON, JSONL, Parquet, no row cap;
 * - enterprise: as api, plus the raw forecasts table (model output with reasoning).
 */
import type { Response } from 'express';
import type { ExportFormat } from './formats.ts';

export const PLANS = ['anonymous', 'pro', 'api', 'enterprise'] as const;
export type Plan = (typeof PLANS)[number];

export interface AuthContext {
  plan: Plan;
  keyId: string | null;
  scopes: string[];
}

const RANK: Record<Plan, number> = { anonymous: 0, pro: 1, api: 2, enterprise: 3 };

/** The default row cap of a pro export. */
export const DEFAULT_PRO_ROW_CAP = 10_000;

export interface PlanExportRules {
  formats: readonly ExportFormat[];
  /** true: capped at the configured pro row cap; false: no cap. */
  capped: boolean;
}

export const PLAN_EXPORT_RULES: Readonly<Record<Exclude<Plan, 'anonymous'>, PlanExportRules>> = {
  pro: { formats: ['csv'], capped: true },
  api: { formats: ['csv', 'json', 'jsonl', 'parquet'], capped: false },
  enterprise: { formats: ['csv', 'json', 'jsonl', 'parquet'], capped: false },
};

/** The caller's auth context from `res.locals.auth` (absent or malformed: anonymous). */
export function authOf(res: Response): AuthContext {
  const raw = (res.locals as Record<string, unknown>).auth as Partial<AuthContext> | undefined;
  if (!raw || typeof raw !== 'object' || !(PLANS as readonly unknown[]).includes(raw.plan)) {
    return { plan: 'anonymous', keyId: null, scopes: [] };
  }
  return {
    plan: raw.plan as Plan,
    keyId: typeof raw.keyId === 'string' ? raw.keyId : null,
    scopes: Array.isArray(raw.scopes) ? raw.scopes.filter((s): s is string => typeof s === 'string') : [],
  };
}

/** Whether `plan` is at least `required`. */
export function planAtLeast(plan: Plan, required: Plan): boolean {
  return RANK[plan] >= RANK[required];
}

/** The least plan that may export `format` (for the 403 problem). */
export function leastPlanForFormat(format: ExportFormat): Exclude<Plan, 'anonymous'> {
  for (const plan of ['pro', 'api', 'enterprise'] as const) {
    if (PLAN_EXPORT_RULES[plan].formats.includes(format)) return plan;
  }
  return 'enterprise';
}
