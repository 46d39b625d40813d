/**
 * The API's logger: the project's one factory (pipeline/log.ts), labelled `quorum-api`, with key
 * redaction on every line. `silentLogger()` for tests.
 *
 * `withKeyRedaction(logger)` is what createApp logs through, whatever logger it is given (the CLI
 * passes the pipeline's): a child whose serialized lines pass through redactKeys (api/logging/
 * redact.ts) just before they are written — pino's `streamWrite` hook, installed on the child so
 * that it and every child made from it (per-request, per-module) carry it. Working on the final
 * line covers every field, message, bound value and serialized error (message and stack) alike.
 */
import { symbols, type DestinationStream } from 'pino';
import { createLogger as createProjectLogger, REDACT_PATHS, silentLogger, type Logger } from '../../pipeline/log.ts';
import { redactKeys } from './redact.ts';

export { REDACT_PATHS, silentLogger, type Logger };

type Hooks = { streamWrite?: (line: string) => string; [hook: string]: unknown };
type Hooked = Logger & { [symbols.hooksSym]: Hooks };

const REDACTING = Symbol('quorum.redacting');

/** A child of `logger` whose every line (its children's too) has key-shaped text redacted. */
export function withKeyRedaction(logger: Logger): Logger {
  if ((logger as unknown as Record<symbol, unknown>)[REDACTING] === true) return logger;
  const child = logger.child({}) as Hooked;
  const parentHooks = (logger as Hooked)[symbols.hooksSym] ?? {};
  const previous = parentHooks.streamWrite;
  child[symbols.hooksSym] = {
    ...parentHooks,
    streamWrite: previous ? (line: string) => redactKeys(previous(line)) : redactKeys,
  };
  (child as unknown as Record<symbol, unknown>)[REDACTING] = true;
  return child;
}

/** `level`: by default LOG_LEVEL, read as the configuration reads it (pipeline/log.ts). */
export function createLogger(level?: string, destination?: DestinationStream): Logger {
  return withKeyRedaction(createProjectLogger(level, { service: 'quorum-api', destination }));
}
