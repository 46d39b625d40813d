/**
 * Loggers: pino JSON. `createLogger()` for the service (API keys and auth headers redacted
 * should they ever be logged), `silentLogger()` for tests.
 */
import { pino, type Logger } from 'pino';

export type { Logger };

export function createLogger(level: string = process.env.LOG_LEVEL ?? 'info'): Logger {
  return pino({
    level,
    base: { service: 'quorum-api' },
    redact: {
      paths: ['req.headers.authorization', 'req.headers["x-api-key"]', 'headers.authorization', 'headers["x-api-key"]'],
      censor: '[redacted]',
    },
  });
}

/** A logger that writes nothing: pass it to createApp/startServer in tests. */
export function silentLogger(): Logger {
  return pino({ level: 'silent' });
}
