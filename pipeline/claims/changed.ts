/**
 * Claims of a bundled dataset imported again with other content: a corrected poll, a revised
 * projection. A stored claim never changes (the raw tables are append-only; operators' csv claims
 * are refused instead, generic-sql.ts), so the stored version is kept and the import reports each
 * such claim with the fields that differ (QA: a changed dataset re-imported was kept silently).
 */
import type { DuckDBConnection } from '@duckdb/node-api';
import { rawRelation } from '../warehouse/raw-views.ts';
import { RAW_TABLES, type RawRow } from '../warehouse/tables.ts';

/** Not a claim's content: its key, where it was read and when (every other column is compared). */
const NOT_CONTENT: ReadonlySet<string> = new Set(['claim_id', 'provenance_dataset', 'provenance_file', 'provenance_line', 'ingested_at']);
/** What a claim says and how it resolved: the raw claims columns but NOT_CONTENT. */
const CONTENT = (Object.keys(RAW_TABLES.claims.columns) as (keyof RawRow<'claims'>)[]).filter((c) => !NOT_CONTENT.has(c));

export interface ChangedClaim {
  claim_id: string;
  /** Where the new version is (file, line), and the stored version's. */
  file: string | null;
  line: number | null;
  stored_file: string | null;
  stored_line: number | null;
  fields: string[];
}

/** A value as compared: times by their instant, integers as numbers, absent as null. */
function comparable(v: unknown): unknown {
  if (v instanceof Date) return v.getTime();
  if (typeof v === 'bigint') return Number(v);
  return v ?? null;
}

/** A line number as stored or parsed (BIGINT, number or absent). */
const lineOf = (v: unknown): number | null => (v === null || v === undefined ? null : Number(v));

/** The claims of `claims` stored before (same claim_id, from `dataset`) with other content. */
export async function changedClaims(conn: DuckDBConnection, root: string, dataset: string, claims: readonly RawRow<'claims'>[]): Promise<ChangedClaim[]> {
  const reader = await conn.runAndReadAll(`SELECT * FROM (${rawRelation(root, 'claims')}) WHERE provenance_dataset = $1`, [dataset]);
  const stored = new Map(reader.getRowObjectsJS().map((r) => [String(r.claim_id), r as Record<string, unknown>]));
  if (stored.size === 0) return [];
  const out: ChangedClaim[] = [];
  for (const c of claims) {
    const s = stored.get(c.claim_id!);
    if (!s) continue;
    const fields = CONTENT.filter((f) => comparable(c[f]) !== comparable(s[f]));
    if (fields.length === 0) continue;
    out.push({
      claim_id: c.claim_id!,
      file: c.provenance_file,
      line: lineOf(c.provenance_line),
      stored_file: (s.provenance_file as string | null) ?? null,
      stored_line: lineOf(s.provenance_line),
      fields,
    });
  }
  return out;
}
