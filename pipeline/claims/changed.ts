/**
 * Claims of a bundled dataset imported again with other content: a corrected poll, a revised
 * projection. A stored claim never changes (the raw tables are append-only; operators' csv claims
 * are refused instead, generic-sql.ts), so the stored version is kept and the import reports each
 * such claim with the fields that differ (QA: a changed dataset re-imported was kept silently).
 */
import type { DuckDBConnection } from '@duckdb/node-api';
import { rawRelation } from '../warehouse/raw-views.ts';
import type { RawRow } from '../warehouse/tables.ts';

/** What a claim says and how it resolved; its provenance and ingestion time are not its content. */
const CONTENT = [
  'source_slug', 'question_id', 'claimed_at', 'claim_text', 'probability_or_direction', 'subject', 'subject_key', 'category',
  'kind', 'probability', 'side', 'value', 'unit', 'threshold', 'tolerance', 'horizon_days', 'outcome', 'realized_value', 'resolved_at',
] as const satisfies readonly (keyof RawRow<'claims'>)[];

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
      line: c.provenance_line === null ? null : Number(c.provenance_line),
      stored_file: (s.provenance_file as string | null) ?? null,
      stored_line: s.provenance_line === null || s.provenance_line === undefined ? null : Number(s.provenance_line),
      fields,
    });
  }
  return out;
}
