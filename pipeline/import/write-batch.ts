/**
 * Writes a parsed import batch into the raw tables. The batch is parsed and validated completely
 * before this is called (a bad file writes nothing); each table's append is idempotent on its
 * natural key, so re-importing the same file adds nothing. Its parts are put in place together,
 * once all are written (a failed write leaves none); an import killed during those renames is
 * completed by running it again.
 */
import type { DuckDBConnection } from '@duckdb/node-api';
import { appendRaw, commitParts, dropParts, type PendingPart } from '../warehouse/raw-writer.ts';
import { newRunId, runDate } from '../warehouse/layout.ts';
import type { RawTableName } from '../warehouse/tables.ts';

/**
 * Import order, which is also the order the parts are put in place: questions before what points
 * at them, and `sources` after the `claims` that name them. A kill between two renames leaves the
 * parts before it; importing again writes the rest. Claims in place without their sources get the
 * same slugs again (the sources are written for every claim of the files); sources in place without
 * their claims did not: named by no claim, they were taken for another origin's, and every source
 * was stored again as `<slug>-2` with its claims under it (QA).
 */
const ORDER: RawTableName[] = ['questions', 'market_prices', 'resolutions', 'lifecycle_events', 'claims', 'sources'];

export type ImportRows = Partial<Record<RawTableName, readonly object[]>> & {
  /**
   * Versions of questions (every round of a ForecastBench question whose text changed), appended to
   * raw `questions` after the questions themselves, keyed by (question_id, ingested_at) as the
   * sync's versions are: a version that is the question row just written, or one stored before,
   * adds nothing.
   */
  question_versions?: readonly object[];
};

export async function writeImportBatch(
  conn: DuckDBConnection,
  root: string,
  batch: ImportRows,
  now: Date = new Date(),
): Promise<Record<string, { received: number; written: number }>> {
  // Imports get their own partition id (`r<time>-<random>`), like runs, so analysts can trace them.
  const partition = { runId: newRunId(now), runDate: runDate(now) };
  const result: Record<string, { received: number; written: number }> = {};
  // Every table's part is written before any is put in place: a write that fails (a full disk)
  // leaves nothing of the batch, not its first tables (QA: questions without their outcomes).
  const parts: PendingPart[] = [];
  try {
    for (const table of ORDER) {
      const rows = batch[table] ?? [];
      const { received, written } = await appendRaw(conn, root, table, rows, partition, { parts });
      result[table] = { received, written };
      if (table === 'questions' && batch.question_versions?.length) {
        const versions = await appendRaw(conn, root, 'questions', batch.question_versions, partition, { parts, key: ['question_id', 'ingested_at'] });
        result.question_versions = { received: versions.received, written: versions.written };
      }
    }
  } catch (err) {
    dropParts(parts);
    throw err;
  }
  commitParts(parts);
  return result;
}
