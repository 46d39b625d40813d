/**
 * Loggers: pino JSON. `createLogger()` for the service (API keys and auth headers redacted
 * should they ever be logged), `silentLogger()` for tests.
 */
import { pino, type DestinationStream, type Logger } from 'pino';

export type { Logger };

/** Header paths that may hold a key: always redacted (keys are also never put in log lines). */
export const REDACT_PATHS = [
  'req.headers.authorization',
  'req.headers["x-api-key"]',
  'headers.authorization',
  'headers["x-api-key"]',
  'request.headers.authorization',
  'request.headers["x-api-key"]',
];

export function createLogger(level: string = process.env.LOG_LEVEL ?? 'info', destination?: DestinationStream): Logger {
  const options = {
    level,
    base: { service: 'quorum-api' },
    redact: { paths: REDACT_PATHS, censor: '[redacted]' },
  };
  return destination ? pino(options, destination) : pino(options);
}

/** A logger that writes nothing: pass it to createApp/startServer in tests. */
export function silentLogger(): Logger {
  return pino({ level: 'silent' });
}
