/**
 * A pipeline logger (pipeline/log.ts, as the CLI makes it) whose lines a test reads back parsed:
 * one object per log line, in order.
 */
import { Writable } from 'node:stream';
import type { Logger } from 'pino';
import { createLogger } from '../../pipeline/log.ts';

export function capturedLog(level = 'info'): { logger: Logger; lines: Record<string, unknown>[] } {
  const lines: Record<string, unknown>[] = [];
  const stream = new Writable({
    write(chunk, _enc, cb) {
      for (const l of String(chunk).split('\n').filter(Boolean)) lines.push(JSON.parse(l) as Record<string, unknown>);
      cb();
    },
  });
  return { logger: createLogger(level, { destination: stream }), lines };
}
