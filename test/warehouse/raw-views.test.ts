/**
 * Raw views over a glob see every part committed when a query runs; pinned views (scoring) see
 * only the parts present when they were created, so a part an import commits half-way through a
 * derive cannot make two tables of one snapshot disagree.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DuckDBInstance } from '@duckdb/node-api';
import { afterAll, describe, expect, it } from 'vitest';
import { createRawViews } from '../../pipeline/warehouse/raw-views.ts';
import { question, writeRaw } from '../structure/helpers.ts';

const root = mkdtempSync(join(tmpdir(), 'quorum-raw-views-'));
afterAll(() => rmSync(root, { recursive: true, force: true }));

async function count(conn: Awaited<ReturnType<DuckDBInstance['connect']>>): Promise<number> {
  return Number((await conn.runAndReadAll('SELECT count(*) AS n FROM raw_questions')).getRows()[0]![0]);
}

describe('raw views', () => {
  it('a pinned view keeps the parts it was created with; a glob view sees a part committed later', async () => {
    const db = await DuckDBInstance.create(':memory:');
    const pinned = await db.connect();
    const glob = await db.connect();
    try {
      // no part yet: both are the empty typed relation
      await createRawViews(pinned, root, { pinned: true });
      expect(await count(pinned)).toBe(0);

      await writeRaw(root, { questions: [question('manifold:v1', 'first unrelated ibex')] }, new Date('2026-01-01T00:00:00Z'));
      await createRawViews(pinned, root, { pinned: true });
      await createRawViews(glob, root);
      expect(await count(pinned)).toBe(1);
      expect(await count(glob)).toBe(1);

      // another run's part, committed after the views were made (an import during a derive)
      await writeRaw(root, { questions: [question('manifold:v2', 'second unrelated gnu')] }, new Date('2026-01-02T00:00:00Z'));
      expect(await count(pinned)).toBe(1);
      expect(await count(glob)).toBe(2);
      // pinned again (the next run): it sees both, typed as the glob view
      await createRawViews(pinned, root, { pinned: true });
      expect(await count(pinned)).toBe(2);
      const cols = async (c: typeof pinned) =>
        (await c.runAndReadAll('DESCRIBE raw_questions')).getRowObjectsJS().map((r) => `${r.column_name} ${r.column_type}`);
      expect(await cols(pinned)).toEqual(await cols(glob));
    } finally {
      pinned.closeSync();
      glob.closeSync();
      db.closeSync();
    }
  });
});
