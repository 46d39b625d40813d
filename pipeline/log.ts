/**
 * The one pino logger factory of the pipeline and the API: JSON lines, and every place a key could
 * sit redacted (keys are also never put in log lines on purpose).
 *
 * One key, once per line. pino writes a child's bindings after its parent's and a log call's
 * object after both, without merging: a key bound twice (a child of a child, each binding `venue`)
 * or bound and logged again came out twice in one JSON line, which most readers take as the last
 * value and strict ones reject. Every logger made here merges instead: a child's binding replaces
 * the parent's binding of that key, and a logged object's key replaces the bound one for that
 * line (the value written is always the most specific one).
 *
 * Where lines go: the CLI logs to stderr (`cliLogDestination`), so stdout carries only what a
 * command prints for machines (the sync report, the run summary, a new key).
 */
import { pino, symbols, type DestinationStream, type Logger, type LoggerOptions } from 'pino';
import { logLevelFromEnv } from './env.ts';

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

type Bindable = Logger & { [symbols.chindingsSym]: string };

/** pino's serialized bindings (`,"k":v,...`) as an object: a repeated key keeps its last value. */
function parseBindings(chindings: string): Record<string, unknown> {
  return chindings.length === 0 ? {} : (JSON.parse(`{${chindings.slice(1)}}`) as Record<string, unknown>);
}

/** A new child's bindings with repeated keys merged (the child's value wins). */
function mergeChildBindings(child: Logger): void {
  const l = child as Bindable;
  const before = l[symbols.chindingsSym];
  const merged = JSON.stringify(parseBindings(before));
  const after = merged === '{}' ? '' : `,${merged.slice(1, -1)}`;
  if (after !== before) l[symbols.chindingsSym] = after;
}

/** The keys a logger has bound, cached per logger (keyed on its bindings string, which setBindings replaces). */
const boundKeys = new WeakMap<object, { chindings: string; keys: Set<string> }>();
function keysBoundTo(logger: Logger): Set<string> {
  const chindings = (logger as Bindable)[symbols.chindingsSym];
  const cached = boundKeys.get(logger);
  if (cached && cached.chindings === chindings) return cached.keys;
  const keys = new Set(Object.keys(parseBindings(chindings)));
  boundKeys.set(logger, { chindings, keys });
  return keys;
}

/**
 * A log call whose object repeats a bound key is written by a child binding the object's values
 * for those keys (so the line holds each key once, with the logged value).
 */
function logWithoutRepeatedKeys(this: Logger, args: unknown[], method: (...a: unknown[]) => void): void {
  const obj = args[0];
  if (obj !== null && typeof obj === 'object' && !(obj instanceof Error)) {
    const bound = keysBoundTo(this);
    let repeated: Record<string, unknown> | null = null;
    for (const key of Object.keys(obj)) {
      if (bound.has(key)) (repeated ??= {})[key] = (obj as Record<string, unknown>)[key];
    }
    if (repeated) {
      const rest = { ...(obj as Record<string, unknown>) };
      for (const key of Object.keys(repeated)) delete rest[key];
      method.apply(this.child(repeated), [rest, ...args.slice(1)]);
      return;
    }
  }
  method.apply(this, args);
}

/** stderr, asynchronous like pino's default stdout destination (flushed on exit). */
export function cliLogDestination(): DestinationStream {
  return pino.destination({ dest: 2, sync: false });
}

/** `level`: by default LOG_LEVEL, read as the configuration reads it (any case; empty: info). */
export function createLogger(
  level: string = logLevelFromEnv(),
  options: { service?: string; destination?: DestinationStream } = {},
): Logger {
  const config: LoggerOptions = {
    level,
    base: { service: options.service ?? 'quorum' },
    redact: { paths: REDACT_PATHS, censor: '[redacted]' },
    onChild: mergeChildBindings,
    hooks: { logMethod: logWithoutRepeatedKeys as NonNullable<LoggerOptions['hooks']>['logMethod'] },
  };
  return options.destination ? pino(config, options.destination) : pino(config);
}

/** A logger that writes nothing (tests). */
export function silentLogger(): Logger {
  return pino({ level: 'silent' });
}
