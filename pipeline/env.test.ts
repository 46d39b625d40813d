import { mkdtempSync, readdirSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { quorum, REPO } from '../test/helpers/cli.ts';
import { z } from 'zod';
import { decimalNumber, QUORUM_VARIABLES, unknownVariableMessage, unknownVariables } from './env.ts';
import { loadConfig } from './config.ts';
import { loadEventsConfig } from './events/config.ts';
import { loadVenueConfig } from './venues/config.ts';
import { loadHealthParams } from './factors/stage.ts';

/** The .ts files under `dir` (tests too when `tests`). */
function sources(dir: string, tests = false): string[] {
  return readdirSync(dir).flatMap((f) => {
    const p = join(dir, f);
    if (statSync(p).isDirectory()) return f === 'node_modules' ? [] : sources(p, tests);
    return p.endsWith('.ts') && (tests || !p.endsWith('.test.ts')) ? [p] : [];
  });
}

/** The QUORUM_ names in `files`. */
function names(files: string[]): Set<string> {
  return new Set(files.map((f) => readFileSync(f, 'utf8')).join('\n').match(/QUORUM_[A-Z0-9]+(?:_[A-Z0-9]+)*/g));
}

describe('QUORUM_VARIABLES', () => {
  const notThisList = (f: string) => !f.endsWith(join('pipeline', 'env.ts')) && !f.endsWith(join('pipeline', 'env.test.ts'));
  const named = names([...sources(join(REPO, 'pipeline')), ...sources(join(REPO, 'api'))].filter(notThisList));
  // The suite's own settings (QUORUM_CHROMIUM) are read by tests only.
  const namedWithTests = names([...sources(join(REPO, 'pipeline'), true), ...sources(join(REPO, 'api'), true), ...sources(join(REPO, 'test'), true)].filter(notThisList));
  // Constants of the code, not variables of the environment (QUORUM_SIMULATOR_KEY: the simulated
  // models' api_key_env label, their key fixed; it was listed, so setting it was taken without a
  // word though nothing reads it).
  const constants = new Set(['QUORUM_VENUE', 'QUORUM_SLUGS', 'QUORUM_SIMULATOR_KEY']);

  it('lists every QUORUM_ variable the source reads (a name the source uses is known, or the stem of known ones)', () => {
    const missing = [...named].filter((n) => !constants.has(n) && !QUORUM_VARIABLES.some((k) => k === n || k.startsWith(`${n}_`)));
    expect(missing).toEqual([]);
  });

  it('lists every QUORUM_ variable the tests, benchmarks and scripts read from their own environment', () => {
    const files = [...sources(join(REPO, 'test'), true), ...sources(join(REPO, 'bench')), ...sources(join(REPO, 'scripts'))];
    const read = new Set(files.map((f) => readFileSync(f, 'utf8')).join('\n').match(/(?<=process\.env\.)QUORUM_[A-Z0-9_]+/g));
    expect(read.size).toBeGreaterThan(3);
    expect([...read].filter((n) => !QUORUM_VARIABLES.includes(n))).toEqual([]); // QUORUM_DEBUG_RENDER was missing: "not a Quorum setting"
  });

  it('lists no variable the source never names', () => {
    expect(QUORUM_VARIABLES.filter((k) => !namedWithTests.has(k))).toEqual([]);
    expect(new Set(QUORUM_VARIABLES).size).toBe(QUORUM_VARIABLES.length);
  });
});

describe('unknownVariables', () => {
  it('names a variable nothing reads though the code names it: the simulated models\' api_key_env label (QUORUM_SIMULATOR_KEY, their key fixed)', () => {
    expect(unknownVariables({ QUORUM_SIMULATOR_KEY: 'sk-x' }).map((u) => u.name)).toEqual(['QUORUM_SIMULATOR_KEY']);
    // ... unless a models file names it as a key variable
    expect(unknownVariables({ QUORUM_SIMULATOR_KEY: 'sk-x' }, ['QUORUM_SIMULATOR_KEY'])).toEqual([]);
  });

  it('names a misspelled variable with the closest known one, and one far from all without', () => {
    expect(unknownVariables({ QUORUM_VENUE: 'none', QUORUM_DATADIR: '/x', QUORUM_WHATEVER_ELSE: '1', QUORUM_VENUES: 'none', PATH: '/bin' })).toEqual([
      { name: 'QUORUM_DATADIR', closest: 'QUORUM_DATA_DIR' },
      { name: 'QUORUM_VENUE', closest: 'QUORUM_VENUES' },
      { name: 'QUORUM_WHATEVER_ELSE', closest: null },
    ]);
  });

  it('names a variable written in another case (quorum_venues), which nothing reads: variable names are case-sensitive (QA: quorum_venues=none was ignored without a word)', () => {
    const found = unknownVariables({ quorum_venues: 'none', Quorum_Data_Dir: '/x', QUORUM_VENUES: 'none', quorumish: '1' });
    if (process.platform === 'win32') return; // (where names are not case-sensitive, these are read)
    expect(found).toEqual([
      { name: 'Quorum_Data_Dir', closest: 'QUORUM_DATA_DIR' },
      { name: 'quorum_venues', closest: 'QUORUM_VENUES' },
    ]);
    expect(unknownVariableMessage(found[1]!)).toBe('quorum_venues is set but is not a Quorum setting: it is ignored (did you mean QUORUM_VENUES?)');
  });

  it('does not warn of the API key variables a models file names', () => {
    expect(unknownVariables({ QUORUM_OPENAI_KEY: 'sk-x' }, ['QUORUM_OPENAI_KEY'])).toEqual([]);
  });
});

describe('the CLI warns of QUORUM_ variables nothing reads', () => {
  it('says QUORUM_VENUE is ignored and names QUORUM_VENUES (keys, and a command that loads the pipeline)', () => {
    const dir = mkdtempSync(join(tmpdir(), 'quorum-unknown-var-'));
    try {
      const env = { QUORUM_DATA_DIR: join(dir, 'data'), QUORUM_VENUES: 'none', QUORUM_FRED_API_KEY: '', QUORUM_VENUE: 'none' };
      const keys = quorum(['keys', 'list'], env, 60_000);
      expect(keys.status).toBe(0);
      expect(keys.stderr).toContain('QUORUM_VENUE is set but is not a Quorum setting: it is ignored (did you mean QUORUM_VENUES?)');
      const imported = quorum(['import', 'claims', 'csv', join(dir, 'missing')], env, 60_000);
      expect(imported.status).toBe(1);
      expect(imported.stderr).toContain('QUORUM_VENUE is set but is not a Quorum setting');
      const empty = quorum(['keys', 'list'], { ...env, QUORUM_VENUE: '' }, 60_000);
      expect(empty.stderr).toContain('QUORUM_VENUE is set'); // set, even empty: still a misspelling
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe('decimalNumber: settings with a fraction are plain decimals', () => {
  it('takes 48, 0.35, .5 and 2.50; refuses hex, exponents, signs and words, naming the variable in every loader', () => {
    const share = decimalNumber(z.number().min(0).max(100));
    for (const [text, value] of [['48', 48], ['0.35', 0.35], ['.5', 0.5], ['2.50', 2.5], [' 7 ', 7]] as const) expect(share.parse(text)).toBe(value);
    for (const bad of ['0x30', '4.8e1', '1e3', '-1', '+1', '', 'abc', '1,5', 'Infinity', '0b1']) expect(share.safeParse(bad).success, bad).toBe(false);
    // QA: these were taken as 48 by z.coerce.number().
    expect(() => loadConfig({ QUORUM_MAX_PRICE_AGE_HOURS: '0x30' })).toThrow(/QUORUM_MAX_PRICE_AGE_HOURS/);
    expect(() => loadConfig({ QUORUM_MAX_COMPARATOR_AGE_DAYS: '4.8e1' })).toThrow(/QUORUM_MAX_COMPARATOR_AGE_DAYS/);
    expect(() => loadConfig({ QUORUM_RUN_BUDGET_USD: '0x10' })).toThrow(/QUORUM_RUN_BUDGET_USD/);
    expect(() => loadEventsConfig({ QUORUM_EVENTS_RETENTION_DAYS: '0x7' })).toThrow(/QUORUM_EVENTS_RETENTION_DAYS/);
    expect(() => loadVenueConfig({ QUORUM_BACKFILL_DAYS: '1e1' })).toThrow(/QUORUM_BACKFILL_DAYS/);
    expect(() => loadHealthParams({ QUORUM_HEALTH_STALE_PRICE_HOURS: '0x30' })).toThrow(/QUORUM_HEALTH_STALE_PRICE_HOURS/);
    expect(loadConfig({ QUORUM_MAX_PRICE_AGE_HOURS: '12.5' }).maxPriceAgeHours).toBe(12.5);
  });
});

describe('the DuckDB settings (QUORUM_DUCKDB_THREADS, QUORUM_DUCKDB_MEMORY_LIMIT)', () => {
  it('take a whole number of threads and a size with its unit; refuse the rest, naming the variable', () => {
    expect(() => loadConfig({ QUORUM_DUCKDB_THREADS: '4', QUORUM_DUCKDB_MEMORY_LIMIT: '2 GiB' })).not.toThrow();
    for (const size of ['512MB', '4GB', '1.5GiB', '64mb', '1MB', '1TB']) expect(() => loadConfig({ QUORUM_DUCKDB_MEMORY_LIMIT: size }), size).not.toThrow();
    for (const bad of ['0', '-1', '1e3', '0x4', '2.5', 'all', '1025']) expect(() => loadConfig({ QUORUM_DUCKDB_THREADS: bad }), bad).toThrow(/\n  QUORUM_DUCKDB_THREADS: /);
    // (64kb: DuckDB fails the command's first connection, "Out of Memory Error: failed to allocate data of size 32.0 KiB")
    for (const bad of ['4', '80%', '-1GB', '0GB', '0.0MB', '4 gigabytes', '1e9B', 'GB', '4GB; SET threads=1', '64kb', '0.99MB']) {
      expect(() => loadConfig({ QUORUM_DUCKDB_MEMORY_LIMIT: bad }), bad).toThrow(/\n  QUORUM_DUCKDB_MEMORY_LIMIT: /);
    }
  });
});

describe('booleanSetting: every on/off setting reads the same words', () => {
  it('takes true/false, 1/0, yes/no, on/off in any case and with spaces, in every loader; refuses anything else naming the variable', () => {
    // QA: QUORUM_PUBLIC_BETA took `TRUE` and `off`, but QUORUM_AUTO_RESUME and
    // QUORUM_WEBHOOKS_ALLOW_PRIVATE refused them (three definitions of a boolean), while the README
    // says booleans are true/false in any case.
    for (const [text, value] of [['TRUE', true], [' false ', false], ['On', true], ['off', false], ['1', true], ['No', false]] as const) {
      expect(loadConfig({ QUORUM_AUTO_RESUME: text }).autoResume, text).toBe(value);
      expect(loadConfig({ QUORUM_PUBLIC_BETA: text }).publicBeta, text).toBe(value);
      expect(loadEventsConfig({ QUORUM_WEBHOOKS_ALLOW_PRIVATE: text }).webhooks.allowPrivate, text).toBe(value);
    }
    for (const bad of ['maybe', '2', 'truee', 'y']) {
      expect(() => loadConfig({ QUORUM_AUTO_RESUME: bad }), bad).toThrow(/QUORUM_AUTO_RESUME/);
      expect(() => loadConfig({ QUORUM_PUBLIC_BETA: bad }), bad).toThrow(/QUORUM_PUBLIC_BETA/);
      expect(() => loadEventsConfig({ QUORUM_WEBHOOKS_ALLOW_PRIVATE: bad }), bad).toThrow(/QUORUM_WEBHOOKS_ALLOW_PRIVATE/);
    }
  });
});

describe('QUORUM_EVIDENCE_PROVIDERS', () => {
  it('lists providers, or says none; a list of nothing (" , ") is refused instead of meaning none (QA)', () => {
    expect(loadConfig({ QUORUM_EVIDENCE_PROVIDERS: 'gdelt, local' }).evidenceProviders).toEqual(['gdelt', 'local']);
    expect(loadConfig({ QUORUM_EVIDENCE_PROVIDERS: 'none' }).evidenceProviders).toEqual([]);
    expect(loadConfig({}).evidenceProviders).toEqual(['local']);
    for (const bad of [' , ', ',', 'none,gdelt', 'bing']) expect(() => loadConfig({ QUORUM_EVIDENCE_PROVIDERS: bad }), bad).toThrow(/QUORUM_EVIDENCE_PROVIDERS/);
  });
});

describe('QUORUM_LANG and QUORUM_LANGS', () => {
  it('take a language code in any case, its language subtag stored lower case (EN is en); a region as written; a code twice refused', () => {
    // QA: QUORUM_LANGS=EN was refused ("language codes like en, fr, pt-BR") though the README says
    // codes count whatever their case and the API folds them.
    expect(loadConfig({ QUORUM_LANGS: 'EN, PT-BR' }).langs).toEqual(['en', 'pt-BR']);
    expect(loadConfig({ QUORUM_LANGS: 'fr,pt-br' }).langs).toEqual(['fr', 'pt-br']);
    expect(loadConfig({ QUORUM_LANG: 'FR' }).lang).toBe('fr');
    expect(() => loadConfig({ QUORUM_LANGS: 'EN,en' })).toThrow(/QUORUM_LANGS/);
    expect(() => loadConfig({ QUORUM_LANGS: 'ZZ' })).toThrow(/QUORUM_LANGS/);
  });
});

describe('a number too large for a double', () => {
  it('is refused as too large, naming the variable, not "expected number, received Infinity" (QA)', () => {
    const huge = '9'.repeat(400);
    expect(() => loadConfig({ QUORUM_MAX_QUESTIONS: huge })).toThrow(/QUORUM_MAX_QUESTIONS: Too big: expected number to be <=9007199254740991/);
    expect(() => loadConfig({ QUORUM_RUN_BUDGET_USD: huge })).toThrow(/QUORUM_RUN_BUDGET_USD: too large a number/);
    expect(() => loadConfig({ QUORUM_RUN_BUDGET_USD: huge })).not.toThrow(/Infinity/);
    expect(loadConfig({ QUORUM_RUN_BUDGET_USD: '1000000' }).runBudgetUsd).toBe(1_000_000);
  });
});
