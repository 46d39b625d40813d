/**
 * The stage settings read from the environment by the stages themselves (structure, factors'
 * health, scenarios): `schema` names the variables with their types, ranges and defaults. An empty
 * value counts as unset; the first bad one is an Error `<VARIABLE>: <what is wrong>`.
 */
import { z } from 'zod';
import { editDistance } from './text/edit-distance.ts';

/**
 * The variables of `env` that are set: an empty or whitespace-only value counts as unset, in every
 * loader (QA: a number variable set to " " was coerced to 0, which turned an hourly limit into
 * "unlimited" and PORT into a random port).
 */
export function setVariables(env: NodeJS.ProcessEnv): Record<string, string> {
  return Object.fromEntries(Object.entries(env).filter((e): e is [string, string] => e[1] !== undefined && e[1].trim() !== ''));
}

/**
 * An integer setting from `min` to `max`, in digits only. `z.coerce.number()` took `1e3`, `0x50`
 * and `0b1` as numbers (QA: PORT=1e3 was port 1000); a count or a duration is written in digits.
 * The CLI's integer options parse with it too (cli/options.ts).
 */
export function wholeNumber(min: number, max: number = Number.MAX_SAFE_INTEGER) {
  // (digits past a double's range are Infinity: too big, as any number over `max`; QA: "expected
  // number, received Infinity")
  return z
    .string()
    .trim()
    .regex(/^\d+$/, 'expected a whole number (digits only)')
    .transform((s) => Math.min(Number(s), Number.MAX_VALUE))
    .pipe(z.number().min(min).max(max));
}

/** A plain decimal: digits with an optional fraction (`48`, `0.35`, `.5`, `2.50`); no sign, exponent or base prefix. */
export const DECIMAL = /^(\d+(\.\d*)?|\.\d+)$/;

/**
 * A setting that may have a fraction (a share, a threshold, hours, days, USD), checked by `range`
 * (e.g. `z.number().gt(0).max(1)`), written as a plain decimal. `z.coerce.number()` took `0x30`
 * and `4.8e1` as 48 (QA: the README said such settings are refused, and only the integer ones were).
 */
export function decimalNumber(range: z.ZodNumber = z.number()) {
  return z
    .string()
    .trim()
    .regex(DECIMAL, 'expected a decimal number (digits, optionally a fraction: 0.5)')
    .transform(Number)
    .refine(Number.isFinite, 'too large a number') // (QA: "expected number, received Infinity")
    .pipe(range);
}

/**
 * An on/off setting: `true`/`false`, `1`/`0`, `yes`/`no`, `on`/`off`, in any case, spaces around
 * ignored. One definition for every loader (QA: QUORUM_PUBLIC_BETA took `TRUE` and `off` while
 * QUORUM_AUTO_RESUME and QUORUM_WEBHOOKS_ALLOW_PRIVATE refused them).
 */
export function booleanSetting() {
  return z
    .string()
    .transform((s) => s.trim().toLowerCase())
    .pipe(z.enum(['1', '0', 'true', 'false', 'yes', 'no', 'on', 'off'], { error: 'expected true or false (also 1/0, yes/no, on/off)' }))
    .transform((s) => s === '1' || s === 'true' || s === 'yes' || s === 'on');
}

/**
 * A file or directory setting: trimmed, not empty, and not starting with `~`, which only a shell
 * expands (QA: QUORUM_DATA_DIR=~/quorum from a unit file or a compose file was a directory named
 * `~` under the current one: a stray, empty warehouse). A relative path resolves against the
 * current directory.
 */
export function pathSetting() {
  return z
    .string()
    .trim()
    .min(1)
    .refine((s) => !s.startsWith('~'), 'starts with ~, which only a shell expands (it would be a directory named ~ here); write the full path');
}

/**
 * What keeps `text`, an http(s) URL, from being a base URL the clients append their paths to and
 * send with fetch, or null. A user name or password in it: fetch refuses every request to it
 * ("Request cannot be constructed from a URL that includes credentials"), which the clients retried
 * until their deadline and reported as a timeout, the password in the message (outside test:
 * QUORUM_KALSHI_URL=http://user:secret@… passed the start checks, and every sync failed so). A query
 * or a fragment: the paths are appended after it, inside it (`…/v2?x=1/markets`). Port 0: no server
 * listens there.
 */
export function baseUrlProblem(text: string): string | null {
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    return null; // (not a URL: the http(s) check says so)
  }
  if (url.username || url.password || /^[a-z][a-z\d+.-]*:\/\/[^/?#]*@/i.test(text.trim())) {
    return 'a base URL may not hold a user name or password (user:password@): fetch refuses every request to such a URL; a token or key has a setting of its own';
  }
  if (/[?#]/.test(text)) return 'a base URL may not have a query or fragment (? or #): the paths of the API are appended to it, and would land inside them';
  if (url.port === '0') return 'port 0 is no port a server listens on';
  return null;
}

/**
 * An http(s) URL the clients can append their paths to (baseUrlProblem), as written: a models
 * file's `base_url` (zod's own message when it is no URL, unless `message` is given).
 */
export function baseUrlSchema(message?: string) {
  return z
    .url({ protocol: /^https?$/, ...(message === undefined ? {} : { message }) })
    .superRefine((u, ctx) => {
      const problem = baseUrlProblem(u);
      if (problem) ctx.addIssue({ code: 'custom', message: problem });
    });
}

/**
 * A base URL setting (a venue's API, GDELT, the simulator; FRED's is checked with baseUrlProblem
 * too): baseUrlSchema, its trailing slashes removed.
 */
export function httpBaseUrl() {
  return baseUrlSchema('expected an http(s) URL').transform((u) => u.replace(/\/+$/, ''));
}

/**
 * What keeps `value` (a token or key, trimmed) from being sent in an HTTP header, or null: fetch
 * refuses a header value holding a line break or a NUL, or a character beyond Latin-1 ("invalid
 * header value", "Cannot convert argument to a ByteString"), so every request failed unsent, which
 * the clients retried until their deadline and reported as a timeout (outside test:
 * QUORUM_METACULUS_TOKEN with a line break inside, pasted from a wrapped terminal). Never shows it.
 */
export function headerValueProblem(value: string): string | null {
  const at = [...value].findIndex((c) => c === '\n' || c === '\r' || c === '\0' || c.codePointAt(0)! > 0xff);
  return at < 0 ? null : `character ${at + 1} is a line break, a NUL or a character beyond Latin-1, which no HTTP header can carry (every request would fail unsent)`;
}

/** A token sent in an HTTP header (QUORUM_METACULUS_TOKEN): trimmed, as every setting, and sendable (headerValueProblem). */
export function headerCredential() {
  return z
    .string()
    .trim()
    .min(1)
    .superRefine((s, ctx) => {
      const problem = headerValueProblem(s);
      if (problem) ctx.addIssue({ code: 'custom', message: problem });
    });
}

/**
 * A value as a message shows it: the user name and password of a URL in it hidden (a base URL
 * holding them is refused, and the refusal must not print the password). Hidden up to the last "@"
 * of the URL, however the password is written: one holding a "/", "?", "#" or a space makes the URL
 * invalid, and the refusal quoted it whole (review: `http://user:s3/cret@host` showed "s3/cret");
 * and without a scheme (`user:secret@host`, which the URL parser reads as the scheme "user:"). An
 * "@" in a URL's path hides the part before it too: a message shows less, never a password.
 */
export function shownValue(value: string): string {
  return value
    .replace(/(^|[^\w+.-])([a-z][a-z\d+.-]*:\/\/)(?:(?!:\/\/)[^,"'])*@/gi, '$1$2***@')
    // (a value's or a list item's start: not prose's "(user:password@)")
    .replace(/(^|[,"']\s*)[\w.~%!$&*+;=-]+:(?!\/\/)[^\s,"'@]*@/g, '$1***@');
}

/**
 * A setting that names one of `values`: in any case, spaces around ignored, as an on/off setting,
 * QUORUM_VENUES and QUORUM_CATEGORIES are read (QA: LOG_LEVEL=INFO and LOG_LEVEL=Warn were refused).
 */
export function choiceSetting<const T extends readonly [string, ...string[]]>(values: T) {
  return z
    .string()
    .transform((s) => s.trim().toLowerCase())
    .pipe(z.enum(values));
}

/** pino's levels, quietest last (`silent` writes nothing). */
export const LOG_LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'] as const;
export type LogLevel = (typeof LOG_LEVELS)[number];

export const logLevelSetting = () => choiceSetting(LOG_LEVELS).default('info');

/**
 * LOG_LEVEL as loadConfig reads it (empty is unset: `info`), for a logger made without the
 * configuration (`quorum simulator`, the API made on its own). QA: these passed the raw value to
 * pino, so an empty or padded LOG_LEVEL stopped the command with "default level: must be included
 * in custom levels", naming no variable.
 */
export function logLevelFromEnv(env: NodeJS.ProcessEnv = process.env): LogLevel {
  return envSettings(z.object({ LOG_LEVEL: logLevelSetting() }), env).LOG_LEVEL;
}

/** Settings whose values are credentials: a message about one never shows its value. */
const CREDENTIAL = /_(TOKEN|KEY|SECRET)$/;

/**
 * One bad setting as every loader says it: the variable, what is wrong and the value it was given
 * (`PORT: expected a whole number (digits only), got "8O80"`); an item of a list (QUORUM_MODES,
 * QUORUM_VENUES, …) is named by its place. QA: the messages named the variable only
 * (`QUORUM_MODES.1: Invalid option`), so a value set in a unit file or a compose file far from the
 * terminal had to be looked up to see what was refused. A credential's value is never shown.
 */
export function settingIssue(issue: { path: readonly PropertyKey[]; message: string }, given: Record<string, string | undefined>): string {
  const name = String(issue.path[0] ?? '(root)');
  const value = given[name];
  if (value === undefined) return `${name}: ${issue.message}`;
  const item = typeof issue.path[1] === 'number' ? ` (item ${issue.path[1] + 1} of the list)` : '';
  if (CREDENTIAL.test(name)) return `${name}: ${issue.message}${item} (value not shown, ${value.length} characters)`;
  const shown = shownValue(value);
  const quoted = JSON.stringify(shown.length > 100 ? `${shown.slice(0, 100)}…` : shown);
  // the message may quote the value (or an item of it) too: QUORUM_CORS_ORIGINS' '"https://user:pass@…" is not an origin'
  const message = shownValue(issue.message);
  return message.includes(quoted) ? `${name}: ${message}${item}` : `${name}: ${message}${item}, got ${quoted}`;
}

export function envSettings<S extends z.ZodObject>(schema: S, env: NodeJS.ProcessEnv = process.env): z.infer<S> {
  const set = setVariables(env);
  const given = Object.fromEntries(Object.keys(schema.shape).flatMap((k) => (set[k] === undefined ? [] : [[k, set[k]]])));
  const parsed = schema.safeParse(given);
  if (!parsed.success) throw new Error(settingIssue(parsed.error.issues[0]!, given));
  return parsed.data;
}

/**
 * Every QUORUM_* variable some part of Quorum reads, its test suite's own included (QUORUM_CHROMIUM,
 * QUORUM_DEBUG_RENDER, QUORUM_PROPERTY_RUNS)
 * (pipeline/env.test.ts checks this list against the source, both ways). Anything else under the prefix is ignored by everything, and the CLI says
 * so at start: QA set QUORUM_VENUE=none for QUORUM_VENUES=none, and the sync went to the live venues
 * without a word.
 */
export const QUORUM_VARIABLES: readonly string[] = [
  'QUORUM_AUTO_RESUME', 'QUORUM_BACKFILL_DAYS', 'QUORUM_BACKFILL_GAP_HOURS', 'QUORUM_BACKFILL_MAX_MARKETS',
  'QUORUM_CALL_TIMEOUT_MS', 'QUORUM_CATEGORIES', 'QUORUM_CHROMIUM', 'QUORUM_CLOSE_WITHIN_DAYS', 'QUORUM_CLUSTER_MAX_SIZE',
  'QUORUM_CLUSTER_THRESHOLD', 'QUORUM_COHERENCE_TOLERANCE', 'QUORUM_CORS_ORIGINS', 'QUORUM_DATA_DIR',
  'QUORUM_DEBUG_RENDER', 'QUORUM_DERIVE_PROFILE', 'QUORUM_DUCKDB_MEMORY_LIMIT', 'QUORUM_DUCKDB_THREADS', 'QUORUM_EVENTS_CONSENSUS_THRESHOLD', 'QUORUM_EVENTS_EDGE_THRESHOLD',
  'QUORUM_EVENTS_POLL_MS', 'QUORUM_EVENTS_RETENTION_DAYS', 'QUORUM_EVIDENCE_DIR', 'QUORUM_EVIDENCE_LOOKBACK_DAYS',
  'QUORUM_EVIDENCE_MAX', 'QUORUM_EVIDENCE_PROVIDERS', 'QUORUM_EXPORT_IDLE_TIMEOUT_MS', 'QUORUM_FRED_API_KEY',
  'QUORUM_FRED_RETRIES', 'QUORUM_FRED_TIMEOUT_MS', 'QUORUM_FRED_URL', 'QUORUM_GDELT_MIN_INTERVAL_MS', 'QUORUM_GDELT_URL', 'QUORUM_HEADLINE_MODES',
  'QUORUM_HEALTH_COVERAGE_DEGRADED', 'QUORUM_HEALTH_FAILURE_RATE_DEGRADED', 'QUORUM_HEALTH_FAILURE_RATE_FAILING',
  'QUORUM_HEALTH_SNAPSHOT_AGE_DEGRADED_HOURS', 'QUORUM_HEALTH_SNAPSHOT_AGE_FAILING_HOURS',
  'QUORUM_HEALTH_STALE_PRICE_HOURS', 'QUORUM_HEALTH_STALE_SHARE_DEGRADED', 'QUORUM_HEALTH_STALE_SHARE_FAILING',
  'QUORUM_IMPORT_PROFILE', 'QUORUM_IMPORT_PROFILE_FULL',
  'QUORUM_JOURNAL_FSYNC_MS', 'QUORUM_KALSHI_RPS', 'QUORUM_KALSHI_URL', 'QUORUM_KEEP_SNAPSHOTS', 'QUORUM_LANG',
  'QUORUM_LANGS', 'QUORUM_LIMIT_ANONYMOUS_PER_HOUR', 'QUORUM_LIMIT_API_PER_DAY', 'QUORUM_LIMIT_ENTERPRISE_PER_DAY',
  'QUORUM_LIMIT_PROBABILITY_PER_DAY', 'QUORUM_LIMIT_PRO_PER_DAY', 'QUORUM_LINK_MAX_TERM_DF',
  'QUORUM_LINK_SAME_EVENT_THRESHOLD', 'QUORUM_LINK_SIMILAR_THRESHOLD', 'QUORUM_MANIFOLD_RPS', 'QUORUM_MANIFOLD_URL',
  'QUORUM_MAX_COMPARATOR_AGE_DAYS', 'QUORUM_MAX_MARKETS_PER_VENUE', 'QUORUM_MAX_PRICE_AGE_HOURS',
  'QUORUM_MAX_QUESTIONS', 'QUORUM_METACULUS_RPS', 'QUORUM_METACULUS_TOKEN', 'QUORUM_METACULUS_URL',
  'QUORUM_MIN_FORECASTERS', 'QUORUM_MIN_LIQUIDITY', 'QUORUM_MODELS_FILE', 'QUORUM_MODES',
  'QUORUM_POLYMARKET_CLOB_RPS', 'QUORUM_POLYMARKET_CLOB_URL', 'QUORUM_POLYMARKET_GAMMA_URL', 'QUORUM_POLYMARKET_RPS',
  'QUORUM_PROBABILITY_BUDGET_USD_PER_DAY', 'QUORUM_PROBABILITY_TIMEOUT_MS', 'QUORUM_PROGRESS_INTERVAL_MS',
  'QUORUM_PROPERTY_RUNS', 'QUORUM_PUBLIC_BETA', 'QUORUM_QUESTIONS_DIR', 'QUORUM_REMOVED_MARKET_ANNUL_DAYS', 'QUORUM_RESOLUTION_RECHECK_DAYS', 'QUORUM_RUN_BUDGET_USD', 'QUORUM_SAMPLE_DIR',
  'QUORUM_SCENARIOS_FROM_THESES', 'QUORUM_SCENARIO_IPF_SWEEPS', 'QUORUM_SCENARIO_MAX_CONDITIONS', 'QUORUM_SCHEDULE',
  'QUORUM_SHUTDOWN_TIMEOUT_MS', 'QUORUM_SIMULATOR_FAULTS', 'QUORUM_SIMULATOR_JITTER_MS',
  'QUORUM_SIMULATOR_LATENCY_MS', 'QUORUM_SIMULATOR_MAX_CONCURRENCY', 'QUORUM_SIMULATOR_PRICE_IN_PER_MTOK',
  'QUORUM_SIMULATOR_PRICE_OUT_PER_MTOK', 'QUORUM_SIMULATOR_URL', 'QUORUM_STREAM_HEARTBEAT_MS',
  'QUORUM_STREAM_MAX_BUFFER_BYTES', 'QUORUM_STREAM_MAX_CLIENTS', 'QUORUM_STREAM_MAX_PER_KEY', 'QUORUM_STRUCTURE_DIR', 'QUORUM_TRUST_PROXY',
  'QUORUM_VENUES', 'QUORUM_VENUE_MAX_PAGES', 'QUORUM_VENUE_RETRIES', 'QUORUM_VENUE_TIMEOUT_MS',
  'QUORUM_WEBHOOKS_ALLOW_PRIVATE', 'QUORUM_WEBHOOKS_BACKOFF_MS', 'QUORUM_WEBHOOKS_CONCURRENCY',
  'QUORUM_WEBHOOKS_MAX_BACKOFF_MS', 'QUORUM_WEBHOOKS_MAX_PER_KEY', 'QUORUM_WEBHOOKS_RETRY_WINDOW_MS', 'QUORUM_WEBHOOKS_TIMEOUT_MS',
];

/**
 * The QUORUM_* variables of `env` (in any case) that nothing reads (set to anything, even empty), each with the
 * closest known name (edit distance at most 3) when one is near. `alsoKnown`: other names Quorum
 * reads, such as the API key variables a models file names.
 */
export function unknownVariables(env: NodeJS.ProcessEnv, alsoKnown: readonly string[] = []): { name: string; closest: string | null }[] {
  const known = new Set([...QUORUM_VARIABLES, ...alsoKnown]);
  // In any case: names are case-sensitive, and quorum_venues is read by nothing (QA: ignored
  // without a word). On Windows, where they are not, only the QUORUM_ ones are looked at, as before.
  const prefixed = process.platform === 'win32' ? (name: string) => name.startsWith('QUORUM_') : (name: string) => name.toUpperCase().startsWith('QUORUM_');
  return Object.keys(env)
    .filter((name) => prefixed(name) && !known.has(name))
    .sort()
    .map((name) => {
      const [best] = QUORUM_VARIABLES.map((k) => ({ k, d: editDistance(name.toUpperCase(), k) })).sort((a, b) => a.d - b.d || (a.k < b.k ? -1 : 1));
      return { name, closest: best && best.d <= 3 ? best.k : null };
    });
}

/** The start-up warning for an unknown variable (see unknownVariables). */
export function unknownVariableMessage(u: { name: string; closest: string | null }): string {
  return `${u.name} is set but is not a Quorum setting: it is ignored${u.closest ? ` (did you mean ${u.closest}?)` : ''}`;
}
