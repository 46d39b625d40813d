/**
 * `quorum import claims <format> <dir>` (issue 11): parse a directory of claims in one of the
 * formats of formats.ts, give every source its deterministic slug (slug.ts) against the sources
 * already stored, and append `sources` and `claims` rows. All-or-nothing: the files are parsed and
 * validated completely before anything is written; the appends are idempotent on the natural keys
 * (source_slug, claim_id), so importing the same files again writes nothing.
 */
import type { DuckDBConnection } from '@duckdb/node-api';
import { writeImportBatch } from '../import/write-batch.ts';
import { rawRelation } from '../warehouse/raw-views.ts';
import type { RawRow } from '../warehouse/tables.ts';
import { parseClaims, type ClaimFormat, type ParsedClaims } from './formats.ts';
import { assignSlugs } from './slug.ts';
import { importGenericSql } from './generic-sql.ts';

export interface ClaimImportResult {
  format: ClaimFormat;
  dir: string;
  claims: { received: number; written: number };
  sources: { received: number; written: number };
}

/** Stored sources: name → slug (the first stored slug of a name), and every stored slug. */
async function storedSources(conn: DuckDBConnection, root: string): Promise<{ known: Map<string, string>; taken: Set<string> }> {
  const rows = (
    await conn.runAndReadAll(`SELECT name, source_slug FROM (${rawRelation(root, 'sources')}) WHERE source_slug IS NOT NULL ORDER BY source_slug`)
  ).getRowObjectsJS() as { name: string | null; source_slug: string }[];
  const known = new Map<string, string>();
  const taken = new Set<string>();
  for (const r of rows) {
    taken.add(r.source_slug);
    if (r.name !== null && !known.has(r.name)) known.set(r.name, r.source_slug);
  }
  return { known, taken };
}

/** The rows to write for a parsed import, slugs assigned. */
export function claimRows(
  parsed: ParsedClaims,
  known: ReadonlyMap<string, string>,
  taken: ReadonlySet<string>,
): { sources: RawRow<'sources'>[]; claims: RawRow<'claims'>[] } {
  const slugs = assignSlugs(parsed.sources.map((s) => s.name), known, taken);
  const sources = parsed.sources.map((s) => ({
    source_slug: slugs.get(s.name)!,
    name: s.name,
    kind: s.kind,
    url: s.url,
    description: s.description,
    attribution: s.attribution,
  }));
  const claims = parsed.claims.map(({ source_name, ...c }) => ({ ...c, source_slug: slugs.get(source_name)! }));
  return { sources, claims };
}

/** Imports one directory; writes nothing when any file is malformed (the ImportError propagates). */
export async function importClaims(
  conn: DuckDBConnection,
  root: string,
  format: ClaimFormat,
  dir: string,
  now: Date = new Date(),
): Promise<ClaimImportResult> {
  if (format === 'csv') {
    // Read, validated and written by DuckDB (operators' files may hold millions of claims).
    const { known, taken } = await storedSources(conn, root);
    return { format, dir, ...(await importGenericSql(conn, root, dir, known, taken, now)) };
  }
  const parsed = await parseClaims(format, dir, now);
  const { known, taken } = await storedSources(conn, root);
  const rows = claimRows(parsed, known, taken);
  const written = await writeImportBatch(conn, root, rows, now);
  return { format, dir, claims: written.claims!, sources: written.sources! };
}
