/**
 * Configuration from the environment, validated with zod at start. A bad value is a clear message
 * naming the variable, and the CLI exits 1.
 */
import { resolve } from 'node:path';
import { createTask, validateDetailed as validateCron } from 'node-cron';
import { z } from 'zod';
import { MODES, type Mode } from './warehouse/tables.ts';
import { loadModelsConfig, ModelsConfigError } from './models/config.ts';
import { languageKey, languageTag } from './models/prompts.ts';
import { parseFaultRules, type FaultRule } from './simulator/server.ts';
import { loadVenueConfig, VenueConfigError } from './venues/config.ts';
import { booleanSetting, decimalNumber, httpBaseUrl, logLevelSetting, pathSetting, settingIssue, setVariables, unknownVariables, wholeNumber, type LogLevel } from './env.ts';
import { bundledPath, directoryProblem } from './fs/paths.ts';
import { DuckdbEnv } from './warehouse/duckdb-settings.ts';

// Modes and evidence providers in any case, as QUORUM_VENUES and the booleans (QA: BLIND refused).
const modeList = z
  .string()
  .transform((s) => s.split(',').map((m) => m.trim().toLowerCase()).filter(Boolean))
  .pipe(z.array(z.enum(MODES)).min(1).max(3).refine((m) => new Set(m).size === m.length, 'a mode is listed twice'));

const limit = wholeNumber(0, 1_000_000_000);

/** `o` is an origin exactly as a browser sends it: http(s), a host, an optional port, no path. */
function isOrigin(o: string): boolean {
  try {
    const u = new URL(o);
    return (u.protocol === 'http:' || u.protocol === 'https:') && u.origin === o;
  } catch {
    return false;
  }
}

/**
 * The origin a browser would send for `o` when `o` is one written otherwise (scheme or host in
 * capitals, a default port, a trailing slash), or null. QA: these were refused as "not an origin",
 * though they look like one; the message now says what to write.
 */
function originWrittenOtherwise(o: string): string | null {
  try {
    const u = new URL(o);
    if (u.protocol !== 'http:' && u.protocol !== 'https:') return null;
    return u.pathname === '/' && !u.search && !u.hash && !u.username && !u.password && !/[?#]/.test(o) ? u.origin : null;
  } catch {
    return null;
  }
}

// --- model runner, evidence, forecast stage (pipeline/forecast/README.md) ---
/**
 * A language code in any case, its language subtag lower case (`EN` is `en`, `PT-BR` is `pt-BR`);
 * a region subtag stays as written, so a code accepted before (lower-case language subtag) is
 * stored as before and the stored languages do not split (QA: `QUORUM_LANGS=EN` was refused,
 * though codes count whatever their case and the API folds them).
 */
function languageCode(grammar: string) {
  return languageTag(grammar).transform((code) => code.replace(/^[A-Za-z]+/, (language) => language.toLowerCase()));
}

const langList = z
  .string()
  .transform((s) => s.split(',').map((l) => l.trim()).filter(Boolean))
  .pipe(
    z
      .array(
        languageCode('language codes like en, fr, pt-BR'),
      )
      .min(1)
      .max(8)
      // Case-insensitively, as language tags are (BCP 47) and as the API matches them: `pt-BR,pt-br`
      // was accepted, each model asked for the same language twice, and /api/predictions/lang/pt-br
      // served only the first (QA; the probability endpoint's `langs` already refused it).
      // And by canonical form: `en,eng` (or `he,iw`) is one language under two codes (QA).
      .superRefine((l, ctx) => {
        const keys = l.map(languageKey);
        const i = keys.findIndex((k, j) => keys.indexOf(k) < j);
        if (i >= 0) {
          ctx.addIssue({
            code: 'custom',
            message: `a language is listed twice (language codes are case-insensitive, and an alias is the language it names): ${l[i]} is ${l[keys.indexOf(keys[i]!)]}`,
          });
        }
      }),
  );
const faultsJson = z.string().transform((s, ctx) => {
  try {
    return parseFaultRules(s);
  } catch (err) {
    ctx.addIssue({ code: 'custom', message: (err as Error).message });
    return z.NEVER;
  }
});
const ForecastEnv = {
  QUORUM_LANGS: langList.optional(),
  QUORUM_RUN_BUDGET_USD: decimalNumber(z.number().min(0)).optional(),
  QUORUM_MAX_QUESTIONS: wholeNumber(1).optional(),
  QUORUM_AUTO_RESUME: booleanSetting().default(true),
  QUORUM_PROGRESS_INTERVAL_MS: wholeNumber(100).default(10_000),
  QUORUM_JOURNAL_FSYNC_MS: wholeNumber(0, 60_000).default(1000),
  // `none` turns evidence off; a list of nothing (" , ") is refused: it meant none, silently (QA)
  QUORUM_EVIDENCE_PROVIDERS: z
    .string()
    .transform((s, ctx) => {
      if (s.trim().toLowerCase() === 'none') return [];
      const listed = [...new Set(s.split(',').map((m) => m.trim().toLowerCase()).filter(Boolean))];
      if (listed.length === 0) ctx.addIssue({ code: 'custom', message: 'list local and/or gdelt, or write none' });
      return listed;
    })
    .pipe(z.array(z.enum(['local', 'gdelt'])))
    .default(['local']),
  QUORUM_EVIDENCE_DIR: pathSetting().default(bundledPath('evidence')),
  QUORUM_EVIDENCE_MAX: wholeNumber(0, 50).default(5),
  QUORUM_EVIDENCE_LOOKBACK_DAYS: wholeNumber(1, 365).default(30),
  QUORUM_GDELT_URL: httpBaseUrl().default('https://api.gdeltproject.org'),
  // at most an hour: a p-queue interval past a timer's 2^31 ms is cut by Node to 1 ms (QA)
  QUORUM_GDELT_MIN_INTERVAL_MS: wholeNumber(0, 3_600_000).default(5000),
  QUORUM_SIMULATOR_URL: httpBaseUrl().optional(),
  QUORUM_SIMULATOR_JITTER_MS: wholeNumber(0, 60_000).default(0),
  QUORUM_SIMULATOR_FAULTS: faultsJson.optional(),
  QUORUM_SIMULATOR_MAX_CONCURRENCY: wholeNumber(1, 1024).default(16),
  QUORUM_SIMULATOR_PRICE_IN_PER_MTOK: decimalNumber(z.number().min(0)).default(0),
  QUORUM_SIMULATOR_PRICE_OUT_PER_MTOK: decimalNumber(z.number().min(0)).default(0),
};

/** The ranges of a cron expression's fields, by node-cron's field key (cronProblem). */
const CRON_FIELDS: Record<string, string> = {
  second: 'second', minute: 'minute', hour: 'hour', dayOfMonth: 'day of month', month: 'month', dayOfWeek: 'week day',
};
const CRON_RANGES: Record<string, string> = {
  second: '0-59', minute: '0-59', hour: '0-23', dayOfMonth: '1-31', month: '1-12 or jan-dec', dayOfWeek: '0-7 or sun-sat',
};

/** The names node-cron takes for months (1-12) and week days (0-6), full or three letters, any case. */
const CRON_NAMES: Record<string, readonly string[]> = {
  month: ['january', 'february', 'march', 'april', 'may', 'june', 'july', 'august', 'september', 'october', 'november', 'december'],
  dayOfWeek: ['sunday', 'monday', 'tuesday', 'wednesday', 'thursday', 'friday', 'saturday'],
};

/**
 * The number of one end of a range (`5`, `fri`, `Friday`), or null for what is neither (validateCron
 * names it). Sunday ending a range is 7, as crontab and node-cron take it (`mon-sun`, `sat-sun`:
 * forward), and 0 where it starts one.
 */
function rangeEnd(token: string, field: string, isEnd: boolean): number | null {
  if (/^\d+$/.test(token)) return Number(token);
  const names = CRON_NAMES[field];
  const t = token.toLowerCase();
  const i = names ? names.findIndex((n) => n === t || n.slice(0, 3) === t) : -1;
  if (i < 0) return null;
  if (field === 'month') return i + 1;
  return i === 0 && isEnd ? 7 : i;
}

/**
 * A range written backwards (`5-1`, `fri-mon`, `nov-feb`), named with its field, or null. node-cron
 * reads one as wrapping round (minutes 5-59 and 0-1) where crontab refuses it (outside test:
 * `5-1 * * * *` was taken, a schedule of 57 runs an hour that reads as five; and so were `fri-mon`
 * and `nov-feb`, the same written with names).
 */
function reversedRange(expression: string): string | null {
  const fields = expression.trim().split(/\s+/);
  if (fields.length !== 5 && fields.length !== 6) return null; // validateCron says so
  const names = ['second', 'minute', 'hour', 'dayOfMonth', 'month', 'dayOfWeek'].slice(6 - fields.length);
  for (const [i, field] of fields.entries()) {
    const name = names[i]!;
    for (const part of field.split(',')) {
      const range = /^([a-z]+|\d+)-([a-z]+|\d+)(\/\d+)?$/i.exec(part);
      if (!range) continue;
      const [from, to] = [rangeEnd(range[1]!, name, false), rangeEnd(range[2]!, name, true)];
      if (from === null || to === null || from <= to) continue;
      const numeric = /^\d+$/.test(range[1]!) && /^\d+$/.test(range[2]!);
      const written = numeric ? `${range[1]}-${range[2]}` : `${range[1]}-${range[2]} (${from}-${to})`;
      return `${CRON_FIELDS[name]} range ${written} is reversed (write ${range[2]}-${range[1]}, or two ranges to wrap round)`;
    }
  }
  return null;
}

/**
 * Whether some time matches `expression` (a valid one), as the scheduler's task would look for it.
 * node-cron's check takes expressions no day ever matches (`0 0 1 * 1#2`: a 1st that is the second
 * Monday; `L-29 2`, `30W 2`), and scheduling one threw "Could not find next matching date within
 * reasonable time range" (outside test: `quorum start` died with it, naming no variable, after its
 * whole first-start bootstrap and with the API already listening). The task is only made, never
 * started, and destroyed.
 */
function comesAgain(expression: string): boolean {
  const task = createTask(expression, () => undefined, { timezone: 'UTC' });
  try {
    return task.getNextRuns(1).length === 1;
  } catch {
    return false;
  } finally {
    void task.destroy();
  }
}

/**
 * What is wrong with a cron expression (QUORUM_SCHEDULE), or null: the field and its range, with
 * the form expected. QA: every bad one was only "not a valid cron expression", naming neither the
 * field (`0 25 * * *`: the hour) nor the form (5 fields, UTC; a sixth, seconds, first).
 */
export function cronProblem(expression: string): string | null {
  const form = 'expected minute hour day-of-month month day-of-week (UTC), optionally with seconds first, e.g. "0 */4 * * *"';
  const reversed = reversedRange(expression);
  if (reversed) return `"${expression}" is not a valid cron expression: ${reversed}; ${form}`;
  const result = validateCron(expression);
  if (result.valid) {
    return comesAgain(expression)
      ? null
      : `"${expression}" is not a valid cron expression: no time ever matches it (node-cron finds none in the next 100 years; ` +
          'a day of month and a week day given together must both match: `0 0 1 * 1#2` asks for a 1st that is the second Monday); ' +
          form;
  }
  const err = result.errors[0]!;
  let what: string;
  const fields = /^expected 5 or 6 fields but got (\d+)$/.exec(err.message);
  const impossible = /^(\S+) (\S+) is an impossible day of month/.exec(err.message);
  if (fields) what = `expected 5 fields (or 6, seconds first); got ${fields[1]}`;
  else if (impossible) what = `day of month ${impossible[1]} never comes in month ${impossible[2]}`;
  else if (err.field in CRON_FIELDS) what = `${CRON_FIELDS[err.field]} ${err.value} is not valid (${CRON_RANGES[err.field]})`;
  else if (/illegal characters/.test(err.message)) what = 'it has characters a cron expression does not use';
  else what = err.message;
  return `"${expression}" is not a valid cron expression: ${what}; ${form}`;
}

const EnvSchema = z.object({
  ...ForecastEnv,
  // Paths and the host are trimmed: ` /srv/quorum ` was a directory named so under the current
  // one (QA: a stray warehouse, exit 0), a padded HOST an ENOTFOUND naming no variable.
  // The defaults are this checkout's data/... wherever the command runs (pipeline/fs/paths.ts).
  QUORUM_DATA_DIR: pathSetting().default(bundledPath('warehouse')),
  QUORUM_SAMPLE_DIR: pathSetting().default(bundledPath('sample', 'forecastbench')),
  QUORUM_QUESTIONS_DIR: pathSetting().default(bundledPath('questions')),
  PORT: wholeNumber(0, 65535).default(3000),
  HOST: z.string().trim().min(1).default('0.0.0.0'),
  QUORUM_SCHEDULE: z
    .string()
    // (a line end around it, as from an env file written with CRLF, was "characters a cron expression does not use")
    .trim()
    .default('0 */4 * * *')
    .superRefine((s, ctx) => {
      const problem = cronProblem(s);
      if (problem) ctx.addIssue({ code: 'custom', message: problem });
    }),
  QUORUM_HEADLINE_MODES: modeList.default(['augmented', 'informed', 'blind']),
  /** Scoring: a market price older than this many days at the forecast's time is no comparator. */
  QUORUM_MAX_COMPARATOR_AGE_DAYS: decimalNumber(z.number().positive().max(36_500)).default(7),
  QUORUM_MODES: modeList.default([...MODES]),
  QUORUM_MODELS_FILE: pathSetting().optional(),
  QUORUM_KEEP_SNAPSHOTS: wholeNumber(1, 1000).default(5),
  QUORUM_CALL_TIMEOUT_MS: wholeNumber(100, 600_000).default(60_000),
  QUORUM_SIMULATOR_LATENCY_MS: wholeNumber(0, 60_000).default(0),
  // (read by pipeline/warehouse/duckdb.ts when it creates the instance; checked here at start)
  ...DuckdbEnv,
  /**
   * libuv's thread pool, shared by DuckDB and the file system: read by libuv itself (with atoi)
   * when the pool first starts, before any of this runs, so it is only checked here. libuv takes
   * a value that is not a number (`abc`, `8O`) as one thread, without a word, and caps it at 1024
   * (outside test: UV_THREADPOOL_SIZE=abc ran every command on a single-thread pool).
   */
  UV_THREADPOOL_SIZE: wholeNumber(1, 1024).optional(),
  QUORUM_LANG: languageCode('a language code like en, fr, pt-BR').default('en'),
  LOG_LEVEL: logLevelSetting(),
  // API plans, limits and access (api/auth, api/limits). A limit of 0 means unlimited.
  QUORUM_PUBLIC_BETA: booleanSetting().default(true),
  QUORUM_LIMIT_ANONYMOUS_PER_HOUR: limit.default(100),
  QUORUM_LIMIT_PRO_PER_DAY: limit.default(1000),
  QUORUM_LIMIT_API_PER_DAY: limit.default(50_000),
  QUORUM_LIMIT_ENTERPRISE_PER_DAY: limit.default(0),
  QUORUM_LIMIT_PROBABILITY_PER_DAY: limit.default(100),
  /**
   * Origins allowed to read the public endpoints cross-origin: `*` or a comma-separated list of
   * origins as a browser sends them (`https://app.example`, `http://localhost:3000`): scheme, host
   * and port, nothing after. Anything else is refused at start: `app.example` or
   * `https://app.example/` would never equal a request's Origin header, and cross-origin reads
   * would fail silently in the browser.
   */
  QUORUM_CORS_ORIGINS: z
    .string()
    .default('*')
    .superRefine((s, ctx) => {
      if (s.trim() === '*') return;
      const origins = s.split(',').map((o) => o.trim()).filter(Boolean);
      if (origins.length === 0) ctx.addIssue({ code: 'custom', message: "expected '*' or a comma-separated list of origins" });
      for (const o of origins.filter((x) => !isOrigin(x))) {
        const near = originWrittenOtherwise(o);
        ctx.addIssue({
          code: 'custom',
          message: near
            ? `${JSON.stringify(o)} is not an origin as a browser sends it: write ${JSON.stringify(near)}`
            : `${JSON.stringify(o)} is not an origin (scheme://host[:port], e.g. https://app.example)`,
        });
      }
    }),
  /**
   * Express `trust proxy` (client IP from X-Forwarded-For): false, or the number of proxies in front
   * of the API. `true` is refused: Express then takes the left-most X-Forwarded-For entry, which
   * the client writes itself (a proxy appends to what it was sent), so every request could name
   * another address and the anonymous limit and the key-guessing limit (api/limits/quota.ts) were
   * gone (QA: 150 anonymous requests and 150 wrong keys in a row from one client, none refused).
   */
  QUORUM_TRUST_PROXY: z
    .string()
    .default('false')
    // `FALSE` and ` 1 ` as the other settings read them (QA: refused); `TRUE` is true, refused below
    .transform((s) => s.trim().toLowerCase())
    .refine((s) => s !== 'true', {
      message:
        'true would take the client address from the first X-Forwarded-For entry, which any client can forge ' +
        '(no anonymous or key-guessing limit would hold); give the number of proxies in front of the API instead (e.g. 1)',
    })
    .refine((s) => /^(true|false|[0-9]{1,2})$/.test(s), { message: 'expected false or a hop count (the number of proxies in front of the API)' }),
  QUORUM_SHUTDOWN_TIMEOUT_MS: wholeNumber(0, 600_000).default(10_000),
  /** Probability endpoint (api/probability/): whole-request deadline and per-key daily USD cap. */
  QUORUM_PROBABILITY_TIMEOUT_MS: wholeNumber(1000, 600_000).default(30_000),
  QUORUM_PROBABILITY_BUDGET_USD_PER_DAY: decimalNumber(z.number().min(0)).optional(),
  /** API: a market price older than this many hours is published with `market_stale: true`. */
  QUORUM_MAX_PRICE_AGE_HOURS: decimalNumber(z.number().positive().max(87_600)).default(48),
});

export interface QuorumConfig {
  dataDir: string;
  sampleDir: string;
  questionsDir: string;
  port: number;
  host: string;
  schedule: string;
  headlineModes: Mode[];
  /** Maximum age in days of a market comparator price (QUORUM_MAX_COMPARATOR_AGE_DAYS). */
  maxComparatorAgeDays: number;
  modes: Mode[];
  modelsFile: string | undefined;
  keepSnapshots: number;
  callTimeoutMs: number;
  simulatorLatencyMs: number;
  /** The main reasoning language: langs[0] (QUORUM_LANG is read only when QUORUM_LANGS is unset). */
  lang: string;
  logLevel: LogLevel;
  /** API access: public reads open to anonymous callers (QUORUM_PUBLIC_BETA). */
  publicBeta: boolean;
  /** API: hours after which a shown market price is flagged stale (QUORUM_MAX_PRICE_AGE_HOURS). */
  maxPriceAgeHours: number;
  /** Requests per window; null = unlimited. Anonymous: per IP per hour; keys: per day (UTC). */
  limits: {
    anonymousPerHour: number | null;
    proPerDay: number | null;
    apiPerDay: number | null;
    enterprisePerDay: number | null;
    probabilityPerDay: number | null;
  };
  corsOrigins: '*' | string[];
  trustProxy: boolean | number;
  shutdownTimeoutMs: number;
  /** Probability endpoint: request deadline (QUORUM_PROBABILITY_TIMEOUT_MS) and per-key daily USD cap (null: none). */
  probabilityTimeoutMs: number;
  probabilityBudgetUsdPerDay: number | null;
  // --- model runner, evidence, forecast stage (pipeline/forecast/README.md) ---
  /** Reasoning languages (QUORUM_LANGS, default [QUORUM_LANG]); the first is the main one. */
  langs: string[];
  /** Per-run spending cap in USD (QUORUM_RUN_BUDGET_USD); null: none. */
  runBudgetUsd: number | null;
  /** Forecast at most this many questions per run (QUORUM_MAX_QUESTIONS); null: all. */
  maxQuestions: number | null;
  /** A run without --as-of first finishes the latest run if it was interrupted (QUORUM_AUTO_RESUME). */
  autoResume: boolean;
  progressIntervalMs: number;
  journalFsyncMs: number;
  evidenceProviders: ('local' | 'gdelt')[];
  evidenceDir: string;
  evidenceMax: number;
  evidenceLookbackDays: number;
  gdeltUrl: string;
  gdeltMinIntervalMs: number;
  /** An already running simulator to use instead of starting one (when no models file). */
  simulatorUrl: string | undefined;
  simulatorJitterMs: number;
  simulatorFaults: FaultRule[];
  simulatorMaxConcurrency: number;
  simulatorPriceInPerMtok: number;
  simulatorPriceOutPerMtok: number;
  /** QUORUM_* variables that are set but read by nothing, with the closest known name (the CLI warns). */
  unknownVariables: { name: string; closest: string | null }[];
}

export class ConfigError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'ConfigError';
  }
}

/** Reads and validates the configuration; throws ConfigError naming each bad variable. */
export function loadConfig(env: NodeJS.ProcessEnv = process.env): QuorumConfig {
  const given = setVariables(env);
  const parsed = EnvSchema.safeParse(given);
  if (!parsed.success) {
    const lines = parsed.error.issues.map((i) => `  ${settingIssue(i, given)}`);
    throw new ConfigError(`invalid configuration:\n${lines.join('\n')}`);
  }
  const e = parsed.data;
  // A file where a directory should be was EEXIST or ENOTDIR from deep inside a command, naming no
  // variable (QA). A missing directory is fine: the warehouse is made, the others are checked by
  // the commands that read them (stage-settings.ts).
  const notDirectories = (['QUORUM_DATA_DIR', 'QUORUM_SAMPLE_DIR', 'QUORUM_QUESTIONS_DIR', 'QUORUM_EVIDENCE_DIR'] as const).flatMap((name) => {
    const problem = directoryProblem(e[name]);
    return problem ? [`  ${name}: ${problem}`] : [];
  });
  if (notDirectories.length > 0) throw new ConfigError(`invalid configuration:\n${notDirectories.join('\n')}`);
  // DuckDB reads the warehouse's Parquet parts by glob (every file of a list is a pattern too), and
  // has no escape for a glob character: under `/srv/quorum[prod]` no part is ever found, so the
  // first import wrote and every later read failed, "No files found that match the pattern" (QA).
  // A backslash too, outside Windows (where it separates the path): DuckDB's glob reads it as an
  // escape, and the same "No files found" followed (outside test: /tmp/q\sl/wh).
  const dataDir = resolve(e.QUORUM_DATA_DIR);
  const globChar = (process.platform === 'win32' ? /[*?[\]{}]/ : /[*?[\]{}\\]/).exec(dataDir);
  if (globChar) {
    throw new ConfigError(
      `invalid configuration:\n  QUORUM_DATA_DIR: ${dataDir} holds the glob character "${globChar[0]}" ` +
        '(* ? [ ] { }, and \\ that escapes one): DuckDB reads the warehouse by glob and would find none of its files there; choose a path without one',
    );
  }
  // QUORUM_LANG is the one language when QUORUM_LANGS is unset; beside it, it must name the same
  // main language (its first), whatever the case or alias. QA: QUORUM_LANG=fr with QUORUM_LANGS=de
  // ran in German without a word; a contradiction is refused, as the health thresholds' are.
  if (e.QUORUM_LANGS && given.QUORUM_LANG !== undefined && languageKey(e.QUORUM_LANG) !== languageKey(e.QUORUM_LANGS[0]!)) {
    throw new ConfigError(
      `invalid configuration:\n  QUORUM_LANG: ${JSON.stringify(given.QUORUM_LANG.trim())} is not the main language of QUORUM_LANGS ` +
        `(${JSON.stringify(given.QUORUM_LANGS!.trim())}, whose first is the main one): QUORUM_LANG is read only when QUORUM_LANGS is unset; ` +
        'unset QUORUM_LANG, or list its language first in QUORUM_LANGS',
    );
  }
  // The headline consensus is the first of QUORUM_HEADLINE_MODES a question has: naming none of the
  // modes asked, no new question ever has one (outside test: QUORUM_MODES=informed with
  // QUORUM_HEADLINE_MODES=augmented was taken, and the feeds, the leaderboard's headline and the
  // track records had nothing of the new questions). A contradiction is refused, as QUORUM_LANG's is.
  if (!e.QUORUM_HEADLINE_MODES.some((m) => e.QUORUM_MODES.includes(m))) {
    throw new ConfigError(
      `invalid configuration:\n  QUORUM_HEADLINE_MODES: ${e.QUORUM_HEADLINE_MODES.join(',')} names none of the modes asked ` +
        `(QUORUM_MODES: ${e.QUORUM_MODES.join(',')}): no new question would have a headline consensus; list one of them`,
    );
  }
  // The venues' settings are read by the sync, but checked at start like the rest: a bad
  // QUORUM_VENUES would otherwise surface only when a scheduled run first syncs.
  try {
    loadVenueConfig(env);
  } catch (err) {
    if (err instanceof VenueConfigError) throw new ConfigError(err.message.replace(/^invalid venue configuration:/, 'invalid configuration:'));
    throw err;
  }
  // The API key variables a models file names are read too (they may be QUORUM_ ones).
  let keyVariables: string[] = [];
  if (e.QUORUM_MODELS_FILE) {
    // Validated at start: a bad models file or a missing API key variable is a start-up error.
    try {
      keyVariables = loadModelsConfig({ file: e.QUORUM_MODELS_FILE, env }).map((m) => m.api_key_env);
    } catch (err) {
      if (err instanceof ModelsConfigError) throw new ConfigError(`invalid configuration:\n  QUORUM_MODELS_FILE: ${err.message}`);
      throw err;
    }
  }
  return {
    dataDir,
    sampleDir: resolve(e.QUORUM_SAMPLE_DIR),
    questionsDir: resolve(e.QUORUM_QUESTIONS_DIR),
    port: e.PORT,
    host: e.HOST,
    schedule: e.QUORUM_SCHEDULE,
    headlineModes: e.QUORUM_HEADLINE_MODES,
    maxComparatorAgeDays: e.QUORUM_MAX_COMPARATOR_AGE_DAYS,
    modes: e.QUORUM_MODES,
    modelsFile: e.QUORUM_MODELS_FILE,
    keepSnapshots: e.QUORUM_KEEP_SNAPSHOTS,
    callTimeoutMs: e.QUORUM_CALL_TIMEOUT_MS,
    simulatorLatencyMs: e.QUORUM_SIMULATOR_LATENCY_MS,
    lang: (e.QUORUM_LANGS ?? [e.QUORUM_LANG])[0]!,
    logLevel: e.LOG_LEVEL,
    publicBeta: e.QUORUM_PUBLIC_BETA,
    maxPriceAgeHours: e.QUORUM_MAX_PRICE_AGE_HOURS,
    limits: {
      anonymousPerHour: e.QUORUM_LIMIT_ANONYMOUS_PER_HOUR || null,
      proPerDay: e.QUORUM_LIMIT_PRO_PER_DAY || null,
      apiPerDay: e.QUORUM_LIMIT_API_PER_DAY || null,
      enterprisePerDay: e.QUORUM_LIMIT_ENTERPRISE_PER_DAY || null,
      probabilityPerDay: e.QUORUM_LIMIT_PROBABILITY_PER_DAY || null,
    },
    corsOrigins:
      e.QUORUM_CORS_ORIGINS.trim() === '*'
        ? '*'
        : e.QUORUM_CORS_ORIGINS.split(',').map((o) => o.trim()).filter(Boolean),
    trustProxy: e.QUORUM_TRUST_PROXY === 'false' ? false : Number(e.QUORUM_TRUST_PROXY),
    shutdownTimeoutMs: e.QUORUM_SHUTDOWN_TIMEOUT_MS,
    probabilityTimeoutMs: e.QUORUM_PROBABILITY_TIMEOUT_MS,
    probabilityBudgetUsdPerDay: e.QUORUM_PROBABILITY_BUDGET_USD_PER_DAY ?? null,
    langs: e.QUORUM_LANGS ?? [e.QUORUM_LANG],
    runBudgetUsd: e.QUORUM_RUN_BUDGET_USD ?? null,
    maxQuestions: e.QUORUM_MAX_QUESTIONS ?? null,
    autoResume: e.QUORUM_AUTO_RESUME,
    progressIntervalMs: e.QUORUM_PROGRESS_INTERVAL_MS,
    journalFsyncMs: e.QUORUM_JOURNAL_FSYNC_MS,
    evidenceProviders: e.QUORUM_EVIDENCE_PROVIDERS,
    evidenceDir: resolve(e.QUORUM_EVIDENCE_DIR),
    evidenceMax: e.QUORUM_EVIDENCE_MAX,
    evidenceLookbackDays: e.QUORUM_EVIDENCE_LOOKBACK_DAYS,
    gdeltUrl: e.QUORUM_GDELT_URL,
    gdeltMinIntervalMs: e.QUORUM_GDELT_MIN_INTERVAL_MS,
    simulatorUrl: e.QUORUM_SIMULATOR_URL,
    simulatorJitterMs: e.QUORUM_SIMULATOR_JITTER_MS,
    simulatorFaults: e.QUORUM_SIMULATOR_FAULTS ?? [],
    simulatorMaxConcurrency: e.QUORUM_SIMULATOR_MAX_CONCURRENCY,
    simulatorPriceInPerMtok: e.QUORUM_SIMULATOR_PRICE_IN_PER_MTOK,
    simulatorPriceOutPerMtok: e.QUORUM_SIMULATOR_PRICE_OUT_PER_MTOK,
    unknownVariables: unknownVariables(env, keyVariables),
  };
}
