/**
 * Public reads during the beta (issue 9, point 3), over real servers on 127.0.0.1:0 with the beta
 * on and off. The sweep takes every GET route of the registry (ROUTES), so routes added later are
 * covered without editing this file: anonymous callers get through exactly where the entitlement
 * table says so for that setting (at the anonymous limit), and a key of the plan the table names
 * gets through everywhere. The spec's endpoint table is checked against the entitlement table.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ENTITLEMENTS, isPublic, requiredPlan, type Entitlement, type RouteId } from '../../api/auth/entitlements.ts';
import type { KeyPlan, Scope } from '../../api/auth/plans.ts';
import type { ServerHandle } from '../../api/server.ts';
import { fixtureData, withFeeds } from './fixtures.ts';
import { FIXTURE_PATH_VALUES as VALUES, fixtureDir, get, newKey, serve } from './helpers.ts';
import { concretePath, getRoutes } from './route-paths.ts';

/**
 * The GET endpoints of the spec's endpoint table (docs: /work/shared/spec/service-spec.md) by
 * route id: all public during the beta, except export (key required) and the probability endpoint.
 */
const SPEC_PUBLIC: readonly RouteId[] = [
  'predictions.accuracy',
  'predictions.accuracy.category',
  'predictions.resolved',
  'predictions.lang',
  'predictions.detail',
  'predictions.edges',
  'predictions.lifecycle',
  'track_records.source',
  'events.lang',
  'events.accuracy',
  'events.service_stats',
  'clusters',
  'factors.health',
  'scenarios',
];

describe('the entitlement table against the spec', () => {
  it('beta on: every GET of the spec table is public but export and probability', () => {
    for (const id of SPEC_PUBLIC) {
      expect(requiredPlan(id, true), id).toBeNull();
      expect(isPublic(id, true), id).toBe(true);
    }
    expect(requiredPlan('export.predictions', true)).not.toBeNull();
    expect(requiredPlan('export.bulk', true)).not.toBeNull();
    expect(requiredPlan('probability', true)).not.toBeNull();
    expect(requiredPlan('usage', true)).not.toBeNull();
  });

  it('beta off: the plan table applies (source profiles need api, the rest of the spec table pro)', () => {
    for (const id of SPEC_PUBLIC) {
      expect(isPublic(id, false), id).toBe(false);
      expect(requiredPlan(id, false), id).toBe(id === 'track_records.source' ? 'api' : 'pro');
    }
    expect(requiredPlan('probability', false)).toBe('pro');
  });
});

/** The least key that satisfies an entitlement (plan and scope). */
function keySpec(e: Entitlement): { plan: KeyPlan; scopes: Scope[] } {
  if (e.kind === 'open') return { plan: 'pro', scopes: [] };
  const plan: KeyPlan = e.plan === 'anonymous' ? 'pro' : e.plan;
  return { plan, scopes: e.scope ? [e.scope] : [] };
}

describe.each([true, false])('every registry route with QUORUM_PUBLIC_BETA=%s', (beta) => {
  let dir: string;
  let cleanup: () => Promise<void>;
  let server: ServerHandle;

  beforeAll(async () => {
    ({ dir, cleanup } = await fixtureDir(withFeeds(fixtureData(1))));
    server = await serve(dir, {
      publicBeta: beta,
      limits: { anonymousPerHour: 10_000, proPerDay: null, apiPerDay: null, enterprisePerDay: null, probabilityPerDay: null },
    });
  });
  afterAll(async () => {
    await server?.close();
    await cleanup?.();
  });

  it('anonymous callers pass exactly where the table allows, at the anonymous limit', async () => {
    const routes = getRoutes();
    expect(routes.length).toBeGreaterThan(10);
    for (const route of routes) {
      const p = concretePath(route.path, VALUES);
      const r = await get(server, p);
      const e: Entitlement = ENTITLEMENTS[route.id];
      const where = `${route.id} ${p} (beta ${beta}): ${r.res.status} ${r.text.slice(0, 200)}`;
      // 503 not_ready: the handler ran (past the entitlement) but the fixture lacks the route's tables;
      // access is what this file checks (5xx from input: fuzz.test.ts).
      if (r.res.status >= 500) expect(r.body.code, where).toBe('not_ready');
      if (e.kind === 'open') {
        expect([401, 403, 429], where).not.toContain(r.res.status);
        continue;
      }
      if (requiredPlan(route.id, beta) === null) {
        expect([401, 403], where).not.toContain(r.res.status);
        expect(r.res.headers.get('ratelimit-policy'), where).toBe('"anonymous";q=10000;w=3600');
      } else {
        expect([401, 403], where).toContain(r.res.status);
        expect(r.res.headers.get('content-type'), where).toMatch(/^application\/problem\+json/);
        if (r.res.status === 403) {
          expect(r.body.code, where).toBe('plan_required');
          expect(r.body.plan, where).toBe((e as { plan: string }).plan);
        } else expect(r.body.code, where).toBe('unauthorized');
      }
    }
  });

  it('the OpenAPI document describes the status an anonymous caller gets (401 missing key, or 403 plan_required)', async () => {
    // QA: /api/openapi.json said "Missing ... API key (`unauthorized`)" under 401 on every keyed
    // route, while a keyless call of a plan route is a 403 plan_required: a generated client told
    // its user to add a key where the answer was to upgrade, and never expected the 403.
    const doc = (await get(server, '/api/openapi.json')).body;
    for (const route of getRoutes()) {
      if (ENTITLEMENTS[route.id].kind === 'open' || requiredPlan(route.id, beta) === null) continue;
      const p = concretePath(route.path, VALUES);
      const r = await get(server, p);
      const responses = doc.paths[route.path]?.get?.responses ?? {};
      const where = `${route.id} ${p} (beta ${beta}): anonymous ${r.res.status}`;
      expect([401, 403], where).toContain(r.res.status);
      const other = r.res.status === 401 ? 403 : 401;
      expect(responses[String(r.res.status)]?.description, where).toMatch(r.res.status === 401 ? /missing/i : /no key/i);
      if (responses[String(other)]) expect(responses[String(other)].description, where).not.toMatch(other === 401 ? /missing/i : /no key/i);
    }
  });

  it('a key of the plan the table names passes every route', async () => {
    for (const route of getRoutes()) {
      const spec = keySpec(ENTITLEMENTS[route.id]);
      const { key } = newKey(dir, spec.plan, spec.scopes);
      const p = concretePath(route.path, VALUES);
      const r = await get(server, p, { headers: { 'X-API-Key': key } });
      const where = `${route.id} ${p} (beta ${beta}, ${spec.plan}): ${r.res.status} ${r.text.slice(0, 200)}`;
      expect([401, 403], where).not.toContain(r.res.status);
      if (r.res.status >= 500) expect(r.body.code, where).toBe('not_ready');
    }
  });
});
