/**
 * The README's list conventions give the page size a list returns without `limit`. They said
 * "`limit` 1–500" with no default (the events feed's 20 only, in its table row), so a reader of
 * /api/predictions/resolved saw 50 of 254 items and had to find the default in the OpenAPI
 * document. Every paginated route's default (from its zod query schema) must be the one the README
 * states: the general default, or the exception it names.
 */
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { getRoutes } from './route-paths.ts';

const README = readFileSync(path.resolve(import.meta.dirname, '../../README.md'), 'utf8');

describe('default page size of the lists', () => {
  it('is the one the README states for every paginated route', () => {
    const m = /keyset pagination \(`limit` 1–500, digits only, default (\d+) \(`([^`]+)`: (\d+)\)/.exec(README);
    expect(m, 'README states the lists\' default limit').not.toBeNull();
    const [, general, exceptionPath, exceptionDefault] = m!;
    const lists = getRoutes().filter((r) => r.query && 'limit' in r.query.shape && 'cursor' in r.query.shape);
    expect(lists.length).toBeGreaterThan(5);
    for (const r of lists) {
      const parsed = r.query!.safeParse({});
      expect(parsed.success, r.path).toBe(true);
      const expected = Number(r.path === exceptionPath ? exceptionDefault : general);
      expect((parsed.data as { limit: number }).limit, r.path).toBe(expected);
    }
  });
});
