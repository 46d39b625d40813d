/**
 * The forecasts export's row order is total: what a `limit` or a plan's cap cuts must not depend on
 * the order DuckDB meets the raw parts. Two runs dated at the same time (`quorum run --as-of T`
 * twice) and a forecast's translations (`lang`) share created_at, question, model and mode; the
 * order ends on run_id and lang (README, "row order").
 */
import { DuckDBInstance } from '@duckdb/node-api';
import { describe, expect, it } from 'vitest';
import { runQuery } from '../../api/db/query.ts';
import { loadSql } from '../../api/db/sql-files.ts';

/** Raw rows inserted in the reverse of the documented order, as a later part can come first. */
const RAW = [
  ['r2', 'es'],
  ['r2', 'en'],
  ['r1', 'fr'],
  ['r1', 'en'],
] as const;

describe('forecasts export order', () => {
  it('rows tied on created_at, question, model and mode come by run_id, then lang', async () => {
    const inst = await DuckDBInstance.create(':memory:');
    const c = await inst.connect();
    try {
      await c.run(`CREATE TABLE questions AS SELECT 'q:1' AS question_id, 'economy' AS category`);
      await c.run(`CREATE TABLE raw_forecasts (
        run_id VARCHAR, question_id VARCHAR, model VARCHAR, mode VARCHAR, created_at TIMESTAMP,
        probability DOUBLE, reasoning VARCHAR, lang VARCHAR, key_factors VARCHAR[], evidence_ids VARCHAR[],
        provider VARCHAR, prompt_hash VARCHAR, translation_of VARCHAR, "condition" VARCHAR)`);
      for (const [run, lang] of RAW) {
        const of = lang === 'en' ? 'NULL' : `'en'`;
        await c.run(`INSERT INTO raw_forecasts VALUES ('${run}', 'q:1', 'model-a', 'blind', TIMESTAMP '2026-03-01 12:00:00',
          0.4, 'why', '${lang}', [], [], 'simulated', 'h', ${of}, NULL)`);
      }
      const rows = await runQuery(c, loadSql('export-forecasts'), {
        as_of: '2026-03-02T00:00:00Z',
        created_since: null,
        category: null,
      });
      expect(rows.map((r) => `${r.run_id}/${r.lang}`)).toEqual(['r1/en', 'r1/fr', 'r2/en', 'r2/es']);
      // a translation says so: two forecasts, not four (QA: the column was not exported, so with
      // QUORUM_LANGS=en,fr,pt-BR,de the export had four indistinguishable rows per forecast)
      expect(rows.map((r) => r.translation_of)).toEqual([null, 'en', null, 'en']);
      expect(rows.filter((r) => r.translation_of === null)).toHaveLength(2);
    } finally {
      c.closeSync();
      inst.closeSync();
    }
  });
});
