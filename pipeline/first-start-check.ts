/**
 * What `quorum start` checks of the first start before it loads the pipeline (./bootstrap.ts, which
 * re-exports these): its marker file and its sample. Apart from bootstrap.ts so that a start refused
 * here, or for a busy port, loads no DuckDB.
 */
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import type { QuorumConfig } from './config.ts';
import { existingDirectoryProblem } from './fs/paths.ts';
import { QUESTIONS_FILE, RESOLUTIONS_FILE } from './import/forecastbench.ts';
import { publishedBefore } from './warehouse/snapshot.ts';

/**
 * `<dataDir>/bootstrap.json`: a first start in progress. Written before its first step and removed
 * after its last run, so a first start killed part-way (after its first dated run published, say)
 * is finished by the next start: the published snapshot alone said "bootstrapped", and the next
 * start served the first round's snapshot with the later round and the "now" run never made (QA).
 */
export function bootstrapMarkerFile(dataDir: string): string {
  return join(dataDir, 'bootstrap.json');
}

/**
 * `quorum start`'s check before it takes the server lock or writes anything: when a first start is
 * due (no snapshot yet, or one stopped part-way), the sample it imports must be there. Returns
 * what is wrong with QUORUM_SAMPLE_DIR, or null (none due, or the sample is in place). QA: a
 * missing sample was found by the import, after FORMAT, bootstrap.json and server.lock were
 * written, as "<dir>/questions_market.jsonl: required ForecastBench file is missing", naming no
 * variable.
 */
export function firstStartSampleProblem(config: QuorumConfig): string | null {
  if (publishedBefore(config.dataDir) && !existsSync(bootstrapMarkerFile(config.dataDir))) return null;
  const problem = existingDirectoryProblem(config.sampleDir);
  if (problem) return `${problem} (the first start imports the ForecastBench sample from it)`;
  const missing = [QUESTIONS_FILE, RESOLUTIONS_FILE].filter((f) => !existsSync(join(config.sampleDir, f)));
  if (missing.length) return `${config.sampleDir} has no ${missing.join(' or ')} (the first start imports the ForecastBench sample from it)`;
  return null;
}
