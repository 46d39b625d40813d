/**
 * Helpers of the claims tests: a warehouse in a temp dir, claims imported through the real
 * importer, the real derive + publish of the pipeline, the real API on port 0.
 */
import { loadConfig } from '../../pipeline/config.ts';
import { importClaims } from '../../pipeline/claims/import.ts';
import type { ClaimFormat } from '../../pipeline/claims/formats.ts';
import { withConnection } from '../../pipeline/warehouse/duckdb.ts';
import { newRunId } from '../../pipeline/warehouse/layout.ts';
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
