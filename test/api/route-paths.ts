/**
 * Requests derived from the route registry (api/routes/index.ts ROUTES), so that tests sweeping
 * every route cover routes added later without being edited: path parameter names from each
 * route's path template, query parameter names from its zod `query` schema.
 */
import type { RouteDef } from '../../api/http/registry.ts';
import { ROUTES } from '../../api/routes/index.ts';

/** Every GET route of the registry (export included: documented here, mounted by api/export). */
export function getRoutes(): RouteDef[] {
  return ROUTES.filter((r) => (r.method ?? 'get') === 'get');
}

/** The `{name}` path parameters of a template, in order. */
export function pathParams(template: string): string[] {
  return [...template.matchAll(/\{([A-Za-z_][A-Za-z0-9_]*)\}/g)].map((m) => m[1]!);
}

/** The query parameter names a route documents. */
export function queryParams(route: RouteDef): string[] {
  return route.query ? Object.keys(route.query.shape) : [];
}

/** A plausible value per common path parameter name (anything else: `x`). */
export const SAMPLE_PATH_VALUES: Record<string, string> = {
  category: 'politics',
  lang: 'en',
  market_id: 'metaculus:1',
  question_id: 'metaculus:1',
  source_slug: 'fred',
  slug: 'fred',
  table: 'predictions',
};

/** The template with each `{name}` replaced by `values[name]` (URL-encoded) or the sample value. */
export function concretePath(template: string, values: Record<string, string> = {}): string {
  return template.replace(/\{([A-Za-z_][A-Za-z0-9_]*)\}/g, (_m, name: string) =>
    encodeURIComponent(values[name] ?? SAMPLE_PATH_VALUES[name] ?? 'x'),
  );
}
