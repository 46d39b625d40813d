/**
 * Plans, scopes and their request limits (DESIGN §7, spec "Limits").
 *
 * - `anonymous`: no key; limited per client IP per clock hour (in memory: a restart forgets it).
 * - `pro`, `api`, `enterprise`: keyed; limited per key per UTC day (durable, api/limits/usage-store.ts).
 * - scope `probability`: the probability endpoint, with its own per-key daily limit on top of the plan's.
 * A limit of `null` is unlimited. Defaults are the spec's; every one is configurable (pipeline/config.ts).
 */

export const PLANS = ['anonymous', 'pro', 'api', 'enterprise'] as const;
export type Plan = (typeof PLANS)[number];
/** The plans a key can carry. */
export const KEY_PLANS = ['pro', 'api', 'enterprise'] as const;
export type KeyPlan = (typeof KEY_PLANS)[number];

export const SCOPES = ['probability'] as const;
export type Scope = (typeof SCOPES)[number];

/** Rank of a plan: a plan includes everything of the plans ranked below it. */
export const PLAN_RANK: Readonly<Record<Plan, number>> = { anonymous: 0, pro: 1, api: 2, enterprise: 3 };

export function planAtLeast(plan: Plan, required: Plan): boolean {
  return PLAN_RANK[plan] >= PLAN_RANK[required];
}

export interface PlanLimits {
  /** Anonymous requests per IP per hour. */
  anonymousPerHour: number | null;
  proPerDay: number | null;
  apiPerDay: number | null;
  enterprisePerDay: number | null;
  /** Requests to the probability endpoint per key per day (on top of the plan's limit). */
  probabilityPerDay: number | null;
}

export const DEFAULT_LIMITS: Readonly<PlanLimits> = {
  anonymousPerHour: 100,
  proPerDay: 1000,
  apiPerDay: 50_000,
  enterprisePerDay: null,
  probabilityPerDay: 100,
};

export interface Policy {
  /** The name in the RateLimit/RateLimit-Policy headers. */
  name: string;
  /** Requests per window; null: unlimited. */
  quota: number | null;
  /** Window length in seconds (3600 or 86400). */
  windowSeconds: number;
}

/** The request policy of a plan under `limits`. */
export function planPolicy(plan: Plan, limits: PlanLimits): Policy {
  switch (plan) {
    case 'anonymous':
      return { name: 'anonymous', quota: limits.anonymousPerHour, windowSeconds: 3600 };
    case 'pro':
      return { name: 'pro', quota: limits.proPerDay, windowSeconds: 86_400 };
    case 'api':
      return { name: 'api', quota: limits.apiPerDay, windowSeconds: 86_400 };
    case 'enterprise':
      return { name: 'enterprise', quota: limits.enterprisePerDay, windowSeconds: 86_400 };
  }
}

export function probabilityPolicy(limits: PlanLimits): Policy {
  return { name: 'probability', quota: limits.probabilityPerDay, windowSeconds: 86_400 };
}
