/**
 * Determinism of the computed thesis labels (QA): 97_theses.sql names a computed cluster by its
 * three terms of largest summed TF-IDF weight. That sum is a floating aggregate whose last bits
 * follow the order the term vectors reach it (threads, raw part order), so two terms of
 * mathematically equal weight swapped places between runs on identical data ('nba, finals,
 * conference' vs 'nba, finals, eastern'). Here the labelling statement runs on hand-built
 * clusters and vectors, inserted in opposite orders on one thread.
 */
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { DuckDBInstance } from '@duckdb/node-api';
import { DEFAULT_SQL_DIR } from '../../pipeline/warehouse/derive.ts';
import { splitSqlStatements } from '../../pipeline/warehouse/sql-statements.ts';

/** The statement of 97_theses.sql that creates _cluster_labels. */
function labelsStatement(): string {
  const text = readFileSync(`${DEFAULT_SQL_DIR}/97_theses.sql`, 'utf8');
  const s = splitSqlStatements(text).find((st) => /CREATE OR REPLACE TABLE _cluster_labels\b/.test(st.text));
  if (!s) throw new Error('97_theses.sql has no _cluster_labels statement');
  return s.text;
}

// 'zeta' sums to 0.6 over the members (0.1 + 0.2 + 0.3: 0.6000000000000001 added in that order,
// 0.6 in the other); 'beta' weighs exactly 0.6 in one member: the two tie.
const VECTORS: [string, string, number][] = [
  ['q1', 'alpha', 2.0],
  ['q1', 'zeta', 0.1],
  ['q2', 'zeta', 0.2],
  ['q3', 'zeta', 0.3],
  ['q2', 'gamma', 1.5],
  ['q3', 'beta', 0.6],
  ['q1', 'delta', 0.05],
];

async function label(order: 'forward' | 'reverse'): Promise<string> {
  const db = await DuckDBInstance.create(':memory:', { threads: '1' });
  const conn = await db.connect();
  try {
    await conn.run(`CREATE TABLE _clusters AS SELECT 'q1' AS comp, 'auto-x' AS thesis_id, 3 AS n`);
    await conn.run(`CREATE TABLE _cluster_components AS SELECT * FROM (VALUES ('q1', 'q1'), ('q2', 'q1'), ('q3', 'q1')) AS t(question_id, comp)`);
    await conn.run(`CREATE TABLE _link_vectors (question_id VARCHAR, field VARCHAR, term VARCHAR, w DOUBLE)`);
    const rows = order === 'forward' ? VECTORS : [...VECTORS].reverse();
    for (const [q, term, w] of rows) {
      await conn.run(`INSERT INTO _link_vectors VALUES ($q, 'text', $term, $w)`, { q, term, w });
    }
    await conn.run(labelsStatement());
    const r = (await conn.runAndReadAll(`SELECT label FROM _cluster_labels`)).getRowObjectsJS();
    return String(r[0]?.label);
  } finally {
    conn.closeSync();
    db.closeSync();
  }
}

describe('computed thesis labels (97_theses.sql)', () => {
  it('are the same whatever order the term weights are summed in; equal weights rank by term', async () => {
    const forward = await label('forward');
    const reverse = await label('reverse');
    expect(reverse).toBe(forward);
    expect(forward).toBe('alpha, gamma, beta');
  });
});
