/**
 * Every entitlement of the plans (api/auth/entitlements.ts, the spec's plan contents) that no route
 * of its own enforces is accounted for in the README: where the plan's content is served, or that
 * nothing serves it yet. (The spec's API plan lists "full taxonomy history": once unserved and said
 * so here, it is GET /api/taxonomy/history/{question_id}/, test/taxonomy/history.test.ts.)
 */
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { ENTITLEMENTS } from '../../api/auth/entitlements.ts';
import { ROUTES } from '../../api/routes/index.ts';

const README = readFileSync(path.resolve(import.meta.dirname, '../../README.md'), 'utf8');

describe('entitlements without a route of their own', () => {
  const routed = new Set<string>(ROUTES.map((r) => r.id));
  const unrouted = Object.keys(ENTITLEMENTS).filter((id) => !routed.has(id));

  it('are few, and each is named in the README with what serves it', () => {
    expect(unrouted.length).toBeGreaterThan(0);
    const at = README.indexOf('Entitlements without a route of their own');
    expect(at, 'the README accounts for the entitlements no route enforces').toBeGreaterThan(0);
    const para = README.slice(at, README.indexOf('\n\n', at));
    for (const id of unrouted) expect(para, `README names ${id}`).toContain(`\`${id}\``);
  });

  it('the full taxonomy history of the api plan is served by a route of its own', () => {
    expect(routed.has('taxonomy.history')).toBe(true);
    expect(README).toContain('GET /api/taxonomy/history/{question_id}/');
  });
});
