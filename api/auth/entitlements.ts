/**
 * THE entitlement table: every route id → who may call it. One table, enforced by the route
 * registry (api/http/registry.ts refuses to register a route whose id is not here).
 *
 * Kinds:
 * - `open`: operational endpoints (health, metrics, docs, OpenAPI); no key, no limits.
 * - `{ plan }`: the minimum plan. `publicBeta: true` marks a public read: open to anonymous callers
 *   while QUORUM_PUBLIC_BETA is on (default), else it needs `plan` (pro).
 * - `{ plan, scope }`: additionally needs the scope on the key (the probability endpoint).
 * - `{ plan, keyRequired: true }`: any key of at least `plan`; anonymous callers get 401 (usage).
 *
 * Plan contents follow the spec: pro = all prediction endpoints, accuracy, resolved, track-records
 * overview, lifecycle/taxonomy, edges, CSV export; api = + source profiles and trends, claims,
 * leaderboard and rankings, bulk CSV/JSON/Parquet export, taxonomy history; enterprise = + raw
 * tables, stream, webhooks; scope probability = the probability endpoint.
 * Ids for routes that do not exist yet are listed so that adding the route is one registry entry.
 */
import { ApiError } from '../errors/problem.ts';
import { PLAN_RANK, type Plan, type Scope } from './plans.ts';

export type Entitlement =
  | { kind: 'open' }
  | { kind: 'plan'; plan: Plan; publicBeta?: boolean; scope?: Scope; keyRequired?: boolean };

const open = { kind: 'open' } as const;
const publicRead = { kind: 'plan', plan: 'pro', publicBeta: true } as const;
/** A public read of the spec's endpoint table whose plan, once the beta ends, is api. */
const publicReadApi = { kind: 'plan', plan: 'api', publicBeta: true } as const;
const pro = { kind: 'plan', plan: 'pro' } as const;
const api = { kind: 'plan', plan: 'api' } as const;
const enterprise = { kind: 'plan', plan: 'enterprise' } as const;

export const ENTITLEMENTS = {
  // operational
  'health.live': open,
  'health.ready': open,
  metrics: open,
  openapi: open,
  docs: open,
  /** The front door (`GET /`) and its icon. */
  front: open,
  favicon: open,

  // public reads (open during the beta): every GET of the spec's endpoint table except export
  // (key required) and the probability endpoint (scope); with the beta off, the plan named here
  'predictions.accuracy': publicRead,
  'predictions.accuracy.category': publicRead,
  'predictions.resolved': publicRead,
  'predictions.lang': publicRead,
  'events.lang': publicRead,
  'events.accuracy': publicRead,
  'events.service_stats': publicRead,
  clusters: publicRead,
  /** One thesis with its whole vintage history (issue 12): as the list. */
  'clusters.detail': publicRead,
  'factors.health': publicRead,
  /** The factors and their driver trees (issue 12): public like their health view. */
  factors: publicRead,
  'factors.detail': publicRead,
  scenarios: publicRead,
  /** One scenario with its current joint and its record history (issue 13): as the list. */
  'scenarios.detail': publicRead,
  'predictions.detail': publicRead,
  'predictions.edges': publicRead,
  'predictions.lifecycle': publicRead,
  'track_records.source': publicReadApi,

  // pro
  'predictions.taxonomy': pro,
  'track_records.overview': pro,
  /** CSV export up to the pro size; the export route asks for `export.bulk` beyond it. */
  'export.predictions': pro,

  // api
  'track_records.trends': api,
  claims: api,
  /** One claim of the claims database (issue 11): as the list. */
  'claims.detail': api,
  leaderboard: api,
  rankings: api,
  /** Scoring analyses beside the leaderboard (issue 10): the spec's plans do not list them; api, like it. */
  'analysis.information_value': api,
  'analysis.anchoring': api,
  'analysis.disagreement': api,
  'analysis.resolution_sources': api,
  'taxonomy.history': api,
  /** Bulk export: JSON, JSONL, Parquet, or CSV beyond the pro size. */
  'export.bulk': api,

  // enterprise
  'raw.tables': enterprise,
  stream: enterprise,
  webhooks: enterprise,
  /** Webhook subscriptions (issue 15): one id per operation (OpenAPI operationIds are unique). */
  'webhooks.create': enterprise,
  'webhooks.get': enterprise,
  'webhooks.delete': enterprise,
  'webhooks.rotate_secret': enterprise,
  'webhooks.deliveries': enterprise,
  'webhooks.replay': enterprise,

  // scope
  probability: { kind: 'plan', plan: 'pro', scope: 'probability' },
  /** A stored probability request, to the key that made it (issue 14). */
  'probability.request': { kind: 'plan', plan: 'pro', scope: 'probability' },

  // the caller's own usage: any key
  usage: { kind: 'plan', plan: 'pro', keyRequired: true },
} as const satisfies Record<string, Entitlement>;

export type RouteId = keyof typeof ENTITLEMENTS;

export function isRouteId(id: string): id is RouteId {
  return Object.hasOwn(ENTITLEMENTS, id);
}

export interface AuthContext {
  plan: Plan;
  keyId: string | null;
  scopes: string[];
}

/** True when the route is readable without a key under the current beta setting. */
export function isPublic(id: RouteId, publicBeta: boolean): boolean {
  const e: Entitlement = ENTITLEMENTS[id];
  return e.kind === 'open' || (e.kind === 'plan' && e.publicBeta === true && publicBeta);
}

/** The plan a route needs for this deployment (null: open to anyone). */
export function requiredPlan(id: RouteId, publicBeta: boolean): Plan | null {
  const e: Entitlement = ENTITLEMENTS[id];
  if (e.kind === 'open') return null;
  if (e.publicBeta && publicBeta) return null;
  return e.plan;
}

/**
 * Throws the problem for a caller that may not use route `id`: 401 for a keyless caller where a
 * key is required, 403 `plan_required` (naming the plan, and the scope if one is missing).
 */
export function assertEntitled(id: RouteId, auth: AuthContext, publicBeta: boolean): void {
  const e: Entitlement = ENTITLEMENTS[id];
  if (e.kind === 'open') return;
  // A scoped endpoint (the probability endpoint) is never anonymous: no key is a 401, like keyRequired.
  if ((e.keyRequired || e.scope) && auth.keyId === null) throw ApiError.unauthorized('This endpoint needs an API key.');
  if (e.publicBeta && publicBeta && !e.scope) return;
  if (PLAN_RANK[auth.plan] < PLAN_RANK[e.plan]) {
    throw ApiError.planRequired(
      e.plan,
      auth.keyId === null
        ? `This endpoint requires an API key of the ${e.plan} plan or higher.`
        : `This endpoint requires the ${e.plan} plan or higher; this key's plan is ${auth.plan}.`,
    );
  }
  if (e.scope && !auth.scopes.includes(e.scope)) {
    throw ApiError.planRequired(e.plan, `This endpoint requires a key with the ${e.scope} scope.`, { scope: e.scope });
  }
}
