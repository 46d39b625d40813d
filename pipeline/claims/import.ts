/**
 * `quorum import claims <format> <dir>` (issue 11): parse a directory of claims in one of the
 * formats of formats.ts, give every source its deterministic slug (slug.ts) against the sources
 * already stored, and append `sources` and `claims` rows. All-or-nothing: the files are parsed and
 * validated completely before anything is written; the appends are idempotent on the natural keys
 * (source_slug, claim_id), so importing the same files again writes nothing. Operators' claims
 * (csv) whose id is already stored must be the same claim of the same source (generic-sql.ts).
 * A stored source is matched by name only by imports of its own origin, and Quorum's own
 * sources' slugs are never given to an imported one (storedSources, slug.ts).
 */
import type { DuckDBConnection } from '@duckdb/node-api';
import { writeImportBatch } from '../import/write-batch.ts';
import { rawRelation } from '../warehouse/raw-views.ts';
import { withImportLock } from '../warehouse/lock.ts';
import type { RawRow } from '../warehouse/tables.ts';
import { KNOWN_VENUES } from '../venues/known.ts';
import { DATASETS, parseClaims, type ClaimFormat, type DuplicateRecord, type ParsedClaims } from './formats.ts';
import { assignSlugs, sourceName, type StoredSources } from './slug.ts';
import { importGenericSql } from './generic-sql.ts';
import { changedClaims, type ChangedClaim } from './changed.ts';

export interface ClaimImportResult {
  format: ClaimFormat;
  dir: string;
  /**
   * received: the claims the files make; written: those not stored before; duplicates: records
   * skipped as exact repeats of an earlier record (bundled formats; not in received).
   */
  claims: { received: number; written: number; duplicates: number; changed: number };
  sources: { received: number; written: number };
  /** csv: resolutions added to claims stored open (the same claims again, now resolved); 0 otherwise. */
  resolutions: { received: number; written: number };
  /** The first MAX_LISTED skipped repeats (file, line, the line it repeats), to find them. */
  duplicates: DuplicateRecord[];
  /**
   * Bundled formats: the first MAX_LISTED claims stored before with other content (`claims.changed`
   * counts them all); the stored version is kept (changed.ts). csv refuses them instead.
   */
  changed: ChangedClaim[];
}

/** Skipped repeats listed in a result (the count is complete; the list is for finding them). */
const MAX_LISTED = 20;

/** A stored claim's origin (SQL over `claims`): its provenance_dataset, `csv` for any operator's CSV. */
const CLAIM_ORIGIN = "(CASE WHEN starts_with(provenance_dataset, 'csv:') THEN 'csv' ELSE provenance_dataset END)";

/**
 * The stored sources, for an import of claims of `origin` (a bundled dataset's provenance_dataset,
 * formats.ts DATASETS, or `csv` for operators' own). A name matches a stored source only when
 * claims of the same origin name it: an operator's `Ipsos` is not FiveThirtyEight's pollster (its
 * claims would change the dataset's track record), a bundled pollster is not an operator's source
 * of the same name, and a venue's or the registry's row (no claims) is nobody's. Every stored slug
 * stays taken. The venues: those Quorum syncs or imports, and every venue of a stored question.
 */
async function storedSources(conn: DuckDBConnection, root: string, origin: string): Promise<StoredSources> {
  const rows = (
    await conn.runAndReadAll(
      `SELECT name, source_slug, source_slug IN (SELECT source_slug FROM (${rawRelation(root, 'claims')}) ` +
        `WHERE ${CLAIM_ORIGIN} = $origin) AS ours ` +
        `FROM (${rawRelation(root, 'sources')}) WHERE source_slug IS NOT NULL ORDER BY source_slug`,
      { origin },
    )
  ).getRowObjectsJS() as { name: string | null; source_slug: string; ours: boolean | null }[];
  const known = new Map<string, string>();
  const taken = new Set<string>();
  for (const r of rows) {
    taken.add(r.source_slug);
    if (r.ours === true && r.name !== null && !known.has(r.name)) known.set(r.name, r.source_slug);
  }
  // The slugs other origins' claims name are theirs even without a source row (an import killed
  // between its claims and its sources: importing it again writes them under these slugs). QA
  // review: an operator's "SurveyUSA" imported in between took such a slug, and FiveThirtyEight's
  // pollster's claims went back under it, one track record for both. This origin's own such slugs
  // stay free: importing it again gives them to the same names.
  const others = await conn.runAndReadAll(
    `SELECT DISTINCT source_slug FROM (${rawRelation(root, 'claims')}) WHERE source_slug IS NOT NULL ` +
      `AND ${CLAIM_ORIGIN} IS DISTINCT FROM $origin`,
    { origin },
  );
  for (const r of others.getRowObjectsJS() as { source_slug: string }[]) taken.add(r.source_slug);
  const venues = new Set<string>(KNOWN_VENUES);
  const stored = await conn.runAndReadAll(`SELECT DISTINCT venue FROM (${rawRelation(root, 'questions')}) WHERE venue IS NOT NULL`);
  for (const r of stored.getRowObjectsJS() as { venue: string }[]) venues.add(r.venue);
  return { known, taken, venues };
}

/**
 * The rows to write for a parsed import, slugs assigned. One source row per slug, named in NFC
 * (slug.ts: the composed and decomposed spellings of a name are one source), and only for sources
 * that some claim names: a source whose rows were all skipped is not written (no orphan source).
 */
export function claimRows(
  parsed: ParsedClaims,
  known: ReadonlyMap<string, string>,
  taken: ReadonlySet<string>,
  venues: ReadonlySet<string> = new Set(),
): { sources: RawRow<'sources'>[]; claims: RawRow<'claims'>[] } {
  const named = new Set(parsed.claims.map((c) => c.source_name));
  const drafts = parsed.sources.filter((s) => named.has(s.name));
  const slugs = assignSlugs(drafts.map((s) => s.name), known, taken, venues);
  const bySlug = new Map<string, RawRow<'sources'>>();
  for (const s of drafts) {
    const slug = slugs.get(s.name)!;
    if (!bySlug.has(slug)) {
      bySlug.set(slug, { source_slug: slug, name: sourceName(s.name), kind: s.kind, url: s.url, description: s.description, attribution: s.attribution });
    }
  }
  const claims = parsed.claims.map(({ source_name, ...c }) => {
    const slug = slugs.get(source_name);
    // A parser names a source for every claim it makes; a miss is a parser bug, not bad input.
    if (slug === undefined) throw new Error(`claims import: claim ${c.claim_id} names source ${JSON.stringify(source_name)}, which the parse did not describe`);
    return { ...c, source_slug: slug };
  });
  return { sources: [...bySlug.values()], claims };
}

/**
 * Imports one directory; writes nothing when any file is malformed (the ImportError propagates).
 * Under the import lock (ImportLockedError while another import holds it): what is stored is read,
 * compared and appended to by one import at a time.
 */
export async function importClaims(
  conn: DuckDBConnection,
  root: string,
  format: ClaimFormat,
  dir: string,
  now: Date = new Date(),
): Promise<ClaimImportResult> {
  return withImportLock(root, () => importClaimsLocked(conn, root, format, dir, now));
}

async function importClaimsLocked(
  conn: DuckDBConnection,
  root: string,
  format: ClaimFormat,
  dir: string,
  now: Date,
): Promise<ClaimImportResult> {
  if (format === 'csv') {
    // Read, validated and written by DuckDB (operators' files may hold millions of claims).
    const stored = await storedSources(conn, root, 'csv');
    // A repeated claim_id is rejected there (operators' own files: the operator can fix them), and
    // so is a claim already stored with other content or for another source; a claim stored open
    // and now resolved gets its resolution recorded.
    const { claims, sources, resolutions } = await importGenericSql(conn, root, dir, stored, now);
    return { format, dir, claims: { ...claims, duplicates: 0, changed: 0 }, sources, resolutions, duplicates: [], changed: [] };
  }
  const parsed = await parseClaims(format, dir, now);
  const { known, taken, venues } = await storedSources(conn, root, DATASETS[format]);
  const rows = claimRows(parsed, known, taken, venues);
  const changed = await changedClaims(conn, root, DATASETS[format], rows.claims);
  const written = await writeImportBatch(conn, root, rows, now);
  return {
    format,
    dir,
    claims: { ...written.claims!, duplicates: parsed.duplicates.length, changed: changed.length },
    sources: written.sources!,
    resolutions: { received: 0, written: 0 },
    duplicates: parsed.duplicates.slice(0, MAX_LISTED),
    changed: changed.slice(0, MAX_LISTED),
  };
}
