/**
 * Stored questions under the current taxonomy rules. A venue's or ForecastBench's question is
 * classified once, when it is first stored: a change of the rules (a fix of data/taxonomy.json or
 * of the classifier in a new version, an operator's own rules) reached only questions stored after
 * it, so the same text could be `economy` on one question and `world` on another, and the category
 * filters missed the older ones. Each sync classifies the latest stored version of every question
 * not from a question file again (sql/pipeline/question_taxonomy.sql) and returns a new version,
 * dated by the sync, of each whose category, domain or tags differ; every reader takes the latest
 * version, and the versions are the question's taxonomy history (sql/derive/12_taxonomy_history.sql).
 */
import type { DuckDBConnection } from '@duckdb/node-api';
import { QUORUM_VENUE } from '../questions/question-file.ts';
import { queryFile } from '../warehouse/sql-files.ts';
import { classify } from './classify.ts';

export type StoredQuestion = Record<string, unknown> & {
  question_id: string;
  title: string;
  description: string | null;
  resolution_criteria: string | null;
  venue: string;
  url: string | null;
  category: string | null;
  domain: string | null;
  tags: string[] | null;
};

const sameTags = (a: readonly string[] | null, b: readonly string[]): boolean =>
  (a ?? []).length === b.length && b.every((t, i) => a![i] === t);

/** `q` under the current rules; null when they classify it as stored. */
function reclassified<T extends StoredQuestion>(q: T): T | null {
  const c = classify({ title: q.title, description: q.description, resolution_criteria: q.resolution_criteria, venue: q.venue, url: q.url });
  if (c.category === q.category && c.domain === q.domain && sameTags(q.tags, c.tags)) return null;
  return { ...q, category: c.category, domain: c.domain, tags: c.tags };
}

/**
 * A new version of a stored venue question (a moved close time) with the current rules' taxonomy:
 * it is dated by the sync, as the sync's own reclassified version would be, and a question has one
 * version per time (the later of the two was dropped as a repeat, and the taxonomy came a sync late).
 */
export function withCurrentTaxonomy<T extends StoredQuestion>(q: T): T {
  return reclassified(q) ?? q;
}

/** New versions (ingested at `now`) of the stored questions the current rules classify otherwise. */
export async function reclassifiedVersions(conn: DuckDBConnection, now: Date): Promise<Record<string, unknown>[]> {
  const stored = await queryFile<StoredQuestion>(conn, 'pipeline/question_taxonomy.sql', { file_venue: QUORUM_VENUE });
  const out: Record<string, unknown>[] = [];
  for (const q of stored) {
    const r = reclassified(q);
    if (r) out.push({ ...r, ingested_at: now });
  }
  return out;
}
