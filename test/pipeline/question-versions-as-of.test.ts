/**
 * A run dated T sees only what was known at T (DESIGN §5). The sync writes a new version of a
 * question when its venue moves the close (pipeline/sync.ts, ingested_at = the sync's time): a run
 * dated before that sync must not see the moved close, which says something of what happened later
 * (a market its creator closed early once the event happened; one extended past its first close).
 * The questions a run forecasts (sql/pipeline/active_questions.sql) against real DuckDB.
 */
import { afterAll, describe, expect, it } from 'vitest';
import { timestampValue } from '@duckdb/node-api';
import { withConnection } from '../../pipeline/warehouse/duckdb.ts';
import { appendRaw } from '../../pipeline/warehouse/raw-writer.ts';
import { createRawViews } from '../../pipeline/warehouse/raw-views.ts';
import { queryFile } from '../../pipeline/warehouse/sql-files.ts';
import { tempDir } from '../helpers/temp-dir.ts';

const tmp = tempDir('quorum-qversions-');
afterAll(() => tmp.cleanup());

const at = (s: string) => new Date(s);
const question = (id: string, close: string, ingested: string) => ({
  question_id: id, venue: 'manifold', venue_market_id: id.split(':')[1], title: `Will ${id} happen?`, description: null,
  resolution_criteria: null, url: null, category: 'tech', domain: null, tags: [], created_at: at('2026-01-01T00:00:00Z'),
  close_time: at(close), status: 'active', lang: 'en', origin: 'manifold:test', ingested_at: at(ingested),
});

describe('question versions and the as-of time', () => {
  it('a run dated before the sync that moved a close sees the close it knew (QA review: it saw the later one)', async () => {
    const p = { runId: 'r20260101T000000Z-versions', runDate: '2026-01-01' };
    await withConnection(async (conn) => {
      // discovered on Jan 2, closing Mar 1; on Feb 10 the sync saw it closed early, on Feb 5
      await appendRaw(conn, tmp.dir, 'questions', [question('manifold:early', '2026-03-01T00:00:00Z', '2026-01-02T00:00:00Z')], p);
      await appendRaw(conn, tmp.dir, 'questions', [question('manifold:early', '2026-02-05T00:00:00Z', '2026-02-10T00:00:00Z')], p, { key: ['question_id', 'ingested_at'] });
      // discovered on Jan 2, closing Jan 20; on Feb 10 the sync saw it extended to Apr 1
      await appendRaw(conn, tmp.dir, 'questions', [question('manifold:extended', '2026-01-20T00:00:00Z', '2026-01-02T00:00:00Z')], p);
      await appendRaw(conn, tmp.dir, 'questions', [question('manifold:extended', '2026-04-01T00:00:00Z', '2026-02-10T00:00:00Z')], p, { key: ['question_id', 'ingested_at'] });
      await createRawViews(conn, tmp.dir);
      const open = async (asOf: string) =>
        Object.fromEntries(
          (await queryFile<{ question_id: string; close_time: string }>(conn, 'pipeline/active_questions.sql', {
            as_of: timestampValue(BigInt(Date.parse(asOf)) * 1000n),
          })).map((q) => [q.question_id, q.close_time]),
        );
      // Jan 25: the early close was not known yet; the second market had closed on Jan 20
      expect(await open('2026-01-25T00:00:00Z')).toEqual({ 'manifold:early': '2026-03-01T00:00:00.000Z' });
      // Feb 15, after the sync: the early close is known (closed), the extension too (open)
      expect(await open('2026-02-15T00:00:00Z')).toEqual({ 'manifold:extended': '2026-04-01T00:00:00.000Z' });
      // a question first ingested after the run's date (a backfill over a later discovery), its market
      // opened before, is not forecast: its only text was written after the run's date, and a venue's
      // text carries later edits (outside audit: a creator's clarification dated after the run was shown)
      await appendRaw(conn, tmp.dir, 'questions', [question('manifold:late', '2026-03-01T00:00:00Z', '2026-02-20T00:00:00Z')], p);
      await appendRaw(conn, tmp.dir, 'questions', [question('manifold:late', '2026-01-10T00:00:00Z', '2026-02-21T00:00:00Z')], p, { key: ['question_id', 'ingested_at'] });
      await createRawViews(conn, tmp.dir);
      expect(await open('2026-01-05T00:00:00Z')).toEqual({
        'manifold:early': '2026-03-01T00:00:00.000Z', 'manifold:extended': '2026-01-20T00:00:00.000Z',
      });
      // from its first version on, it is forecast as that version says (until the second closed it)
      expect((await open('2026-02-20T12:00:00Z'))['manifold:late']).toBe('2026-03-01T00:00:00.000Z');
      expect(await open('2026-02-21T12:00:00Z')).not.toHaveProperty('manifold:late');
    });
  });

  it("a scenario's earlier components are named by the title known at the run's as-of (QA: the latest title whatever the as-of)", async () => {
    const dir = `${tmp.dir}/titles`;
    const p = { runId: 'r20260101T000000Z-titles', runDate: '2026-01-01' };
    const titled = (id: string, title: string, created: string, ingested: string) => ({
      ...question(id, '2026-06-01T00:00:00Z', ingested), title, created_at: at(created),
    });
    await withConnection(async (conn) => {
      // imported on Jan 2 (an operator's question file), its title edited and synced on Feb 10
      await appendRaw(conn, dir, 'questions', [titled('quorum:cpi', 'CPI above 3.0% in March?', '2026-01-01T00:00:00Z', '2026-01-02T00:00:00Z')], p);
      await appendRaw(conn, dir, 'questions', [titled('quorum:cpi', 'CPI above 3.0% in March? (the BLS release of April 10 decided it)', '2026-01-01T00:00:00Z', '2026-02-10T00:00:00Z')], p, { key: ['question_id', 'ingested_at'] });
      // created after the run's date: no title at all
      await appendRaw(conn, dir, 'questions', [titled('quorum:later', 'Created in February', '2026-02-01T00:00:00Z', '2026-02-01T00:00:00Z')], p);
      // created before the run's date but first written after it (a market a later sync discovered):
      // no title either, its only text is a later one (outside audit)
      await appendRaw(conn, dir, 'questions', [titled('manifold:found-later', 'Found in February', '2026-01-01T00:00:00Z', '2026-02-12T00:00:00Z')], p);
      await createRawViews(conn, dir);
      const titles = async (asOf: string) =>
        Object.fromEntries(
          (await queryFile<{ question_id: string; title: string }>(conn, 'pipeline/question_titles.sql', {
            as_of: timestampValue(BigInt(Date.parse(asOf)) * 1000n),
          })).map((q) => [q.question_id, q.title]),
        );
      expect(await titles('2026-01-25T00:00:00Z')).toEqual({ 'quorum:cpi': 'CPI above 3.0% in March?' });
      expect(await titles('2026-02-15T00:00:00Z')).toEqual({
        'quorum:cpi': 'CPI above 3.0% in March? (the BLS release of April 10 decided it)', 'quorum:later': 'Created in February',
        'manifold:found-later': 'Found in February',
      });
    });
  });
});
