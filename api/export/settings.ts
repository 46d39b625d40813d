/**
 * The export route's setting from the environment, apart from the route (which loads Express and
 * DuckDB) so that `quorum start` and `serve` can check it before anything runs
 * (pipeline/stage-settings.ts): found only when the server started, a bad value failed a first
 * start after its whole bootstrap (QA).
 */
import { z } from 'zod';
import { envSettings, wholeNumber } from '../../pipeline/env.ts';

/** The default send-progress timeout: 60 s. */
export const DEFAULT_EXPORT_IDLE_TIMEOUT_MS = 60_000;

/** QUORUM_EXPORT_IDLE_TIMEOUT_MS: integer milliseconds from 100 to 3,600,000. */
const ExportEnv = z.object({
  QUORUM_EXPORT_IDLE_TIMEOUT_MS: wholeNumber(100, 3_600_000).default(DEFAULT_EXPORT_IDLE_TIMEOUT_MS),
});

/**
 * The send-progress timeout from the environment (the default when unset). A malformed value fails
 * the start, as the other QUORUM_* settings do, rather than silently running without the protection.
 */
export function idleTimeoutFromEnv(env: NodeJS.ProcessEnv = process.env): number {
  return envSettings(ExportEnv, env).QUORUM_EXPORT_IDLE_TIMEOUT_MS;
}
