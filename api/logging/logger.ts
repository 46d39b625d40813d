/**
 * The API's logger: the project's one factory (pipeline/log.ts), labelled `quorum-api`.
 * `silentLogger()` for tests.
 */
import type { DestinationStream } from 'pino';
import { createLogger as createProjectLogger, REDACT_PATHS, silentLogger, type Logger } from '../../pipeline/log.ts';

export { REDACT_PATHS, silentLogger, type Logger };

export function createLogger(level: string = process.env.LOG_LEVEL ?? 'info', destination?: DestinationStream): Logger {
  return createProjectLogger(level, { service: 'quorum-api', destination });
}
