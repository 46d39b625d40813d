/**
 * The one pino logger factory of the pipeline and the API: JSON lines, and every place a key could
 * sit redacted (keys are also never put in log lines on purpose).
 */
import { pino, type DestinationStream, type Logger } from 'pino';

export type { Logger };

/** Paths that may hold an API key: always redacted. */
export const REDACT_PATHS = [
  'req.headers.authorization',
  'req.headers["x-api-key"]',
  'headers.authorization',
  'headers["x-api-key"]',
  'request.headers.authorization',
  'request.headers["x-api-key"]',
  'apiKey',
  'api_key',
  '*.apiKey',
  '*.api_key',
];

export function createLogger(
  level: string = process.env.LOG_LEVEL ?? 'info',
  options: { service?: string; destination?: DestinationStream } = {},
): Logger {
  const config = {
    level,
    base: { service: options.service ?? 'quorum' },
    redact: { paths: REDACT_PATHS, censor: '[redacted]' },
  };
  return options.destination ? pino(config, options.destination) : pino(config);
}

/** A logger that writes nothing (tests). */
export function silentLogger(): Logger {
  return pino({ level: 'silent' });
}
