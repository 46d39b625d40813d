/**
 * Helpers of the claims tests: a warehouse in a temp dir, claims imported through the real
 * importer, the real derive + publish of the pipeline, the real API on port 0.
 */
import { mkdtempSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { loadConfig } from '../../pipeline/config.ts';
import { importClaims } from '../../pipeline/claims/import.ts';
import type { ClaimFormat } from '../../pipeline/claims/formats.ts';
import { withConnection } from '../../pipeline/warehouse/duckdb.ts';
import { newRunId } from '../../pipeline/warehouse/layout.ts';
import { rawParts, rawRelation } from '../../pipeline/warehouse/raw-views.ts';
import { scoreAndPublish } from '../../pipeline/run.ts';

/** Imports each (format, dir) into `dataDir`; returns the import results in order. */
export async function importAll(dataDir: string, imports: readonly [ClaimFormat, string][], now = new Date()) {
  return withConnection(async (conn) => {
    const out = [];
    for (const [format, dir] of imports) out.push(await importClaims(conn, dataDir, format, dir, now));
    return out;
  });
}

/** Scores the warehouse of `dataDir` as of `asOf` and publishes the snapshot (the pipeline's own path). */
export async function publishScores(dataDir: string, asOf = new Date()): Promise<string> {
  const config = loadConfig({ QUORUM_DATA_DIR: dataDir, QUORUM_VENUES: 'none', LOG_LEVEL: 'silent' });
  const runId = newRunId(asOf);
  await withConnection((conn) => scoreAndPublish(conn, config, asOf, runId));
  return runId;
}

/** The generic CSV format's header with the columns the operators' tests write. */
export const CSV_HEAD = 'claim_id,source,made_at,kind,subject,probability,outcome,resolved_at\n';

/** A new directory below `root` holding `files` (name → text). */
export function csvFolder(root: string, files: Record<string, string | Buffer>): string {
  const dir = mkdtempSync(join(root, 'dir-'));
  for (const [name, text] of Object.entries(files)) writeFileSync(join(dir, name), text);
  return dir;
}

/** Rows of `sql` over the warehouse `data` (`{claims}` and `{sources}`: the raw tables). */
export async function rawQuery(data: string, sql: string): Promise<Record<string, unknown>[]> {
  return withConnection(async (conn) =>
    (await conn.runAndReadAll(sql.replaceAll('{claims}', `(${rawRelation(data, 'claims')})`).replaceAll('{sources}', `(${rawRelation(data, 'sources')})`))).getRowObjectsJS(),
  );
}

/** The raw Parquet parts of claims and sources (a rejected import adds none). */
export function claimParts(data: string): string[] {
  return [...rawParts(data, 'claims'), ...rawParts(data, 'sources')];
}
