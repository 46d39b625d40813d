/** The pipeline's and API's pino logger: JSON lines, API keys redacted wherever they appear. */
import { pino, type Logger } from 'pino';

export type { Logger };

export function createLogger(level = process.env.LOG_LEVEL ?? 'info'): Logger {
  return pino({
    level,
    base: { service: 'quorum' },
    redact: {
      paths: ['req.headers["x-api-key"]', 'req.headers.authorization', 'apiKey', 'api_key', '*.apiKey', '*.api_key'],
      censor: '[redacted]',
    },
  });
}
