/**
 * The OpenAPI document's grammar of a parameter is the one the server applies: a client generated
 * from the document neither sends a value the server refuses nor refuses one it takes.
 *
 * - `category`, on every route that takes one (query or path), is one of the nine categories:
 *   the server refuses anything else (400 `invalid_parameter` listing the nine; the accuracy path,
 *   a 404 naming them), so the document lists them as the parameter's enum, as it does for the
 *   export's `category` and every `venue` (QA: six routes documented it as any string).
 *
 * Real HTTP against the fixture snapshot, each route with a key of its plan.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ServerHandle } from '../../api/server.ts';
import { CATEGORIES } from '../../pipeline/warehouse/tables.ts';
import { fixtureData, withFeeds } from './fixtures.ts';
import { FIXTURE_PATH_VALUES as VALUES, fixtureDir, get, newKey, serve } from './helpers.ts';
import { concretePath } from './route-paths.ts';

type Param = { name: string; in: string; schema: Record<string, unknown> };
type Operation = { parameters?: Param[] };

let dir: string;
let cleanup: () => Promise<void>;
let server: ServerHandle;
let key: string;

beforeAll(async () => {
  ({ dir, cleanup } = await fixtureDir(withFeeds(fixtureData(1))));
  server = await serve(dir);
  key = newKey(dir, 'enterprise').key;
});

afterAll(async () => {
  await server?.close();
  await cleanup?.();
});

/** The status of GET `url` (a stream is aborted once its headers arrived). */
async function statusOf(url: string): Promise<number> {
  const ac = new AbortController();
  const res = await fetch(`${server.url}${url}`, { headers: { 'X-API-Key': key }, signal: ac.signal });
  ac.abort();
  return res.status;
}

describe('the documented grammar of category is the server\'s', () => {
  it('every category parameter lists the nine categories, which the server takes, and it refuses any other', async () => {
    const doc = (await get(server, '/api/openapi.json')).body as { paths: Record<string, Record<string, Operation>> };
    const seen: string[] = [];
    for (const [template, item] of Object.entries(doc.paths)) {
      const op = item.get;
      const param = op?.parameters?.find((p) => p.name === 'category');
      if (!param) continue;
      seen.push(`${param.in} ${template}`);
      expect(param.schema.enum, `${template}: category`).toEqual([...CATEGORIES]);
      const at = (value: string) => {
        if (param.in === 'path') return concretePath(template, { ...VALUES, category: value });
        const base = concretePath(template, VALUES);
        return `${base}?category=${encodeURIComponent(value)}`;
      };
      for (const c of CATEGORIES) expect(await statusOf(at(c)), `${template} category=${c}`).not.toBe(400);
      expect(await statusOf(at('nope')), `${template} category=nope`).toBe(param.in === 'path' ? 404 : 400);
    }
    // the routes that filter by category, the summary of one category, and the event stream
    expect(seen.sort()).toEqual([
      'path /api/predictions/accuracy/{category}',
      'query /api/analysis/information-value/',
      'query /api/export/{table}/',
      'query /api/leaderboard/',
      'query /api/predictions/lang/{lang}',
      'query /api/predictions/resolved',
      'query /api/stream/',
      'query /api/track-records/',
    ]);
  });
});
