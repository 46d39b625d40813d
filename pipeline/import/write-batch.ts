/**
 * Writes a parsed import batch into the raw tables. The batch is parsed and validated completely
 * before this is called (a bad file writes nothing); each table's append is idempotent on its
 * natural key, so re-importing the same file adds nothing. Its parts are put in place together,
 * once all are written (a failed write leaves none); an import killed during those renames is
 * completed by running it again.
 */
import type { DuckDBConnection } from '@duckdb/node-api';
import { listValue } from '@duckdb/node-api';
import { createRawViews } from '../warehouse/raw-views.ts';
import { queryFile } from '../warehouse/sql-files.ts';
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

/** The fields a question's text is; with its taxonomy, what a later round brings over a sync's version. */
const TEXT = ['title', 'description', 'resolution_criteria', 'url'] as const;
const TAXONOMY = ['category', 'domain', 'tags'] as const;

type Version = Record<string, unknown> & { question_id: string; ingested_at: Date | string };
const at = (v: Version) => new Date(v.ingested_at).getTime();
const same = (a: Version, b: Version, fields: readonly string[]) => fields.every((f) => JSON.stringify(a[f] ?? null) === JSON.stringify(b[f] ?? null));

/**
 * Versions at the import's time of questions whose latest round in the batch (dated at its freeze)
 * is older than a stored version that only copies older text (a sync's: the taxonomy rules applied
 * again, pipeline/taxonomy/reclassify.ts; a venue's moved close) and differs from the latest stored
 * version in text or taxonomy: that stored version with the round's text and taxonomy. A sync's
 * version is dated by the sync and copies the text it had: a round frozen before it and imported
 * after it was no reader's latest version, and the question kept its earlier round's text for good
 * (QA). A later round already stored (an older extract imported again) is left as it is. Reads the
 * raw views as before this import.
 */
async function catchUpVersions(conn: DuckDBConnection, root: string, versions: readonly object[], now: Date): Promise<object[]> {
  const latest = new Map<string, Version>();
  for (const v of versions as Version[]) {
    const had = latest.get(v.question_id);
    if (!had || at(v) > at(had)) latest.set(v.question_id, v);
  }
  await createRawViews(conn, root);
  // every stored version, oldest first, read once: the last of a question is its latest
  const stored = new Map<string, Version[]>();
  for (const t of await queryFile<Version>(conn, 'pipeline/question_history.sql', { ids: listValue([...latest.keys()]) })) {
    const list = stored.get(t.question_id);
    if (list) list.push(t);
    else stored.set(t.question_id, [t]);
  }
  const out: object[] = [];
  for (const [id, all] of stored) {
    const s = all.at(-1)!;
    const v = latest.get(id)!;
    if (at(s) <= at(v) || (same(s, v, TEXT) && same(s, v, TAXONOMY))) continue;
    // the text as of the round's freeze (the stored version then), and every later one a copy of it
    const before = all.filter((t) => at(t) <= at(v)).at(-1);
    if (!before || !all.filter((t) => at(t) > at(v)).every((t) => same(t, before, TEXT))) continue;
    const text = Object.fromEntries([...TEXT, ...TAXONOMY].map((f) => [f, v[f] ?? null]));
    const date = (x: unknown) => (x === null || x === undefined ? null : new Date(String(x)));
    out.push({ ...s, ...text, created_at: date(s.created_at), close_time: date(s.close_time), origin: v.origin, ingested_at: now });
  }
  return out;
}

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
  const versions = batch.question_versions?.length
    ? [...batch.question_versions, ...(await catchUpVersions(conn, root, batch.question_versions, now))]
    : [];
  try {
    for (const table of ORDER) {
      const rows = batch[table] ?? [];
      const { received, written } = await appendRaw(conn, root, table, rows, partition, { parts });
      result[table] = { received, written };
      if (table === 'questions' && versions.length) {
        const written = await appendRaw(conn, root, 'questions', versions, partition, { parts, key: ['question_id', 'ingested_at'] });
        result.question_versions = { received: written.received, written: written.written };
      }
    }
  } catch (err) {
    dropParts(parts);
    throw err;
  }
  commitParts(parts);
  return result;
}
