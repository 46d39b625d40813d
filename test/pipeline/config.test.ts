/**
 * Configuration from the environment: an empty or whitespace-only value is unset in every loader
 * (QA: `QUORUM_LIMIT_ANONYMOUS_PER_HOUR=" "` was coerced to 0, "unlimited", and `PORT=" "` to a
 * random port; an empty events variable was refused while every other loader read it as unset).
 */
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { PassThrough } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { createLogger as createApiLogger } from '../../api/logging/logger.ts';
import { createLogger } from '../../pipeline/log.ts';
import { loadConfig } from '../../pipeline/config.ts';
import { loadEventsConfig } from '../../pipeline/events/config.ts';
import { fredConfigFromEnv } from '../../pipeline/sources/fred.ts';
import { loadIpfSweeps } from '../../pipeline/scenarios/stage.ts';
import { structureDir } from '../../pipeline/structure/definitions.ts';
import { checkStageSettings } from '../../pipeline/stage-settings.ts';
import { REPO } from '../helpers/cli.ts';

describe('an empty or blank value is unset', () => {
  it('in the main configuration: the defaults apply', () => {
    const defaults = loadConfig({});
    const blank = loadConfig({ PORT: ' ', QUORUM_LIMIT_ANONYMOUS_PER_HOUR: ' \t', QUORUM_KEEP_SNAPSHOTS: '' });
    expect(blank.port).toBe(defaults.port);
    expect(blank.limits.anonymousPerHour).toBe(defaults.limits.anonymousPerHour);
    expect(blank.limits.anonymousPerHour).toBeGreaterThan(0);
    expect(blank.keepSnapshots).toBe(defaults.keepSnapshots);
    // a value that is set is still checked
    expect(() => loadConfig({ PORT: 'eighty' })).toThrow(/PORT/);
  });

  it('in the events and the stages settings too', () => {
    expect(loadEventsConfig({ QUORUM_EVENTS_CONSENSUS_THRESHOLD: '' }).consensusThreshold).toBe(loadEventsConfig({}).consensusThreshold);
    expect(loadIpfSweeps({ QUORUM_SCENARIO_IPF_SWEEPS: '  ' })).toBe(loadIpfSweeps({}));
    expect(() => loadIpfSweeps({ QUORUM_SCENARIO_IPF_SWEEPS: '0' })).toThrow(/QUORUM_SCENARIO_IPF_SWEEPS/);
  });
});

describe('reasoning languages (QUORUM_LANGS, QUORUM_LANG)', () => {
  it('a language listed twice in another case is refused, as the API and the probability endpoint match codes case-insensitively (QA)', () => {
    expect(loadConfig({ QUORUM_LANGS: 'en,fr,pt-BR' }).langs).toEqual(['en', 'fr', 'pt-BR']);
    expect(() => loadConfig({ QUORUM_LANGS: 'pt-BR,pt-br' })).toThrow(/QUORUM_LANGS: a language is listed twice/);
    expect(() => loadConfig({ QUORUM_LANGS: 'en,fr,en' })).toThrow(/listed twice/);
  });

  it('QUORUM_LANG takes the codes QUORUM_LANGS takes, and a bad one is named with an example (QA)', () => {
    expect(loadConfig({ QUORUM_LANG: 'pt-BR' }).langs).toEqual(['pt-BR']);
    expect(() => loadConfig({ QUORUM_LANG: '../x' })).toThrow(/QUORUM_LANG: a language code like en, fr, pt-BR/);
  });

  it('a well-formed code that names no language (a typo: fe for fr) is refused, naming it (QA)', () => {
    expect(() => loadConfig({ QUORUM_LANGS: 'en,fe' })).toThrow(/QUORUM_LANGS: unknown language "fe" \(ISO 639 codes like en, fr, pt-BR[^)]*\) \(item 2 of the list\), got "en,fe"/);
    expect(() => loadConfig({ QUORUM_LANG: 'zz' })).toThrow(/QUORUM_LANG: unknown language "zz"/);
    // ISO 639-2/3 codes and regions are languages
    expect(loadConfig({ QUORUM_LANGS: 'haw,yue,en-GB,pt-BR' }).langs).toEqual(['haw', 'yue', 'en-GB', 'pt-BR']);
  });

  it('one language under two codes (eng is en, iw is he, sh is sr-Latn: their canonical forms, Intl.getCanonicalLocales) is listed twice (QA)', () => {
    // each model was asked for a "translation" into the language it had just written in, and the
    // feeds split one language in two (/api/predictions/lang/eng beside /lang/en)
    expect(() => loadConfig({ QUORUM_LANGS: 'en,eng' })).toThrow(/QUORUM_LANGS: a language is listed twice.*eng.*en/);
    expect(() => loadConfig({ QUORUM_LANGS: 'he,fr,iw' })).toThrow(/listed twice/);
    expect(() => loadConfig({ QUORUM_LANGS: 'sr-Latn,sh' })).toThrow(/listed twice/);
    expect(() => loadConfig({ QUORUM_LANGS: 'zh-Hant,zh-hant' })).toThrow(/listed twice/);
  });

  it('a code for no particular language (mul, zxx, und, mis) is refused: the models were asked to write in "No linguistic content" (QA)', () => {
    for (const code of ['mul', 'zxx', 'und', 'mis']) {
      expect(() => loadConfig({ QUORUM_LANG: code }), code).toThrow(/QUORUM_LANG: /);
    }
    expect(() => loadConfig({ QUORUM_LANGS: 'en,zxx' })).toThrow(/QUORUM_LANGS: .*\(item 2 of the list\)/);
  });

  it('a malformed code is one message, the grammar, not also "unknown language" (QA: en;fr was both)', () => {
    let message = '';
    try {
      loadConfig({ QUORUM_LANGS: 'en;fr' });
    } catch (err) {
      message = (err as Error).message;
    }
    expect(message).toMatch(/QUORUM_LANGS: language codes like en, fr, pt-BR.*\(item 1 of the list\)/);
    expect(message).not.toMatch(/unknown language/);
  });

  it('a region is 2 letters or 3 digits naming a region, a script 4 letters naming a script (QA: en-12, en-XY, en-abcdefgh and zh-cmn were taken)', () => {
    // malformed (BCP 47: Intl.getCanonicalLocales throws on en-12 and zh-cmn) or naming nothing:
    // the prompt asked for reasoning in 'the language with code "en-12"' or "English (XY)"
    for (const code of ['en-12', 'en-XY', 'en-ZZ', 'en-abcdefgh', 'zh-cmn', 'zh-Abcd', 'en-Zzzz', 'sr-Cyrl-RS-x', 'en-US-GB']) {
      expect(() => loadConfig({ QUORUM_LANG: code }), code).toThrow(/QUORUM_LANG: /);
    }
    // well-formed and named: a region (letters or UN M.49 digits), a script, both
    expect(loadConfig({ QUORUM_LANGS: 'en-GB,es-419,zh-Hant,sr-Latn,zh-Hant-TW' }).langs).toEqual(['en-GB', 'es-419', 'zh-Hant', 'sr-Latn', 'zh-Hant-TW']);
  });
});

describe('the schedule (QUORUM_SCHEDULE)', () => {
  it('a bad cron expression is refused saying which field is wrong and what is expected, not only "not a valid cron expression" (QA)', () => {
    const message = (schedule: string) => {
      try {
        loadConfig({ QUORUM_SCHEDULE: schedule });
      } catch (err) {
        return (err as Error).message;
      }
      return null;
    };
    const form = /minute hour day-of-month month day-of-week.*UTC/;
    expect(message('0 25 * * *')).toMatch(/QUORUM_SCHEDULE: "0 25 \* \* \*" is not a valid cron expression: hour 25 is not valid \(0-23\)/);
    expect(message('0 25 * * *')).toMatch(form);
    expect(message('60 * * * *')).toMatch(/minute 60 is not valid \(0-59\)/);
    expect(message('0 0 31 4 *')).toMatch(/day of month 31 never comes in month 4/);
    expect(message('0 */4 * *')).toMatch(/expected 5 fields \(or 6, seconds first\); got 4/);
    expect(message('0 */4 * *')).toMatch(form);
    expect(message('every 4 hours')).toMatch(/"every 4 hours" is not a valid cron expression/);
    // a range written backwards, which node-cron reads as wrapping round (crontab refuses it: outside test)
    expect(message('5-1 * * * *')).toMatch(/minute range 5-1 is reversed \(write 1-5, or two ranges to wrap round\)/);
    expect(message('0 0 * * 0,5-2/2')).toMatch(/week day range 5-2 is reversed/);
    expect(message('30 0 22-3 * * *')).toMatch(/hour range 22-3 is reversed/);
    expect(loadConfig({ QUORUM_SCHEDULE: '0 9-17 * * 1-5' }).schedule).toBe('0 9-17 * * 1-5');
    // the same written with names (outside test: `fri-mon` was taken, and ran Friday to Monday
    // wrapping round; `nov-feb` ran November to February): named as written, with their numbers
    expect(message('0 0 * * fri-mon')).toMatch(/week day range fri-mon \(5-1\) is reversed \(write mon-fri, or two ranges to wrap round\)/);
    expect(message('0 0 * nov-feb *')).toMatch(/month range nov-feb \(11-2\) is reversed/);
    expect(message('0 0 * * Thursday-TUE/2')).toMatch(/week day range Thursday-TUE \(4-2\) is reversed/);
    expect(message('0 0 * * 5-mon')).toMatch(/week day range 5-mon \(5-1\) is reversed/);
    // Sunday ending a range is day 7 (as crontab and node-cron take 7): the weekend and the whole week are forward
    for (const ok of ['0 0 * * sat-sun', '0 0 * * mon-sun', '0 0 * * MON-FRI', '0 0 * jan-dec *', '0 0 * * sun-sat']) expect(loadConfig({ QUORUM_SCHEDULE: ok }).schedule).toBe(ok);
    // valid ones still load
    expect(loadConfig({ QUORUM_SCHEDULE: '*/30 * * * * *' }).schedule).toBe('*/30 * * * * *');
    // one that no time ever matches: node-cron's check takes it, and scheduling it threw "Could not
    // find next matching date within reasonable time range" (outside test: `quorum start` died with
    // that, naming no variable, after its whole first-start bootstrap and with the API listening)
    for (const never of ['0 0 1 * 1#2', '0 0 8 * 1#1', '0 0 L * 1#1', '0 0 1 * 1L', '0 0 L-29 2 *', '0 0 L-30 4 *', '0 0 30W 2 *']) {
      expect(message(never), never).toMatch(/^invalid configuration:\n {2}QUORUM_SCHEDULE: ".*" is not a valid cron expression: no time ever matches it/);
    }
    expect(message('0 0 1 * 1#2')).toMatch(/a day of month and a week day given together must both match/);
    // rare is not never: a 29 February that is a Monday comes in 2044
    expect(loadConfig({ QUORUM_SCHEDULE: '0 0 29 2 1' }).schedule).toBe('0 0 29 2 1');
    // spaces, tabs and a line end around it are ignored, as around every setting (a CRLF env file)
    expect(loadConfig({ QUORUM_SCHEDULE: '0 */4 * * *\r\n' }).schedule).toBe('0 */4 * * *');
    expect(loadConfig({ QUORUM_SCHEDULE: '@hourly' }).schedule).toBe('@hourly');
  });
});

describe('the log level (LOG_LEVEL)', () => {
  it('is read in any case with spaces around, as the other enumerated settings (QUORUM_VENUES, booleans) are (QA: INFO and Warn refused)', () => {
    expect(loadConfig({ LOG_LEVEL: 'INFO' }).logLevel).toBe('info');
    expect(loadConfig({ LOG_LEVEL: ' Warn ' }).logLevel).toBe('warn');
    expect(loadConfig({ LOG_LEVEL: 'SILENT' }).logLevel).toBe('silent');
    expect(loadConfig({}).logLevel).toBe('info');
    // a level pino does not have is still refused, naming the variable and the levels
    expect(() => loadConfig({ LOG_LEVEL: 'warning' })).toThrow(/LOG_LEVEL: .*"fatal".*"silent".*got "warning"/);
  });

  it('a logger made without a level (quorum simulator, the API without the CLI) reads LOG_LEVEL as loadConfig does (QA: an empty or padded one was a pino error naming no variable)', () => {
    const before = process.env.LOG_LEVEL;
    try {
      for (const [text, level] of [['', 'info'], [' ', 'info'], [' DEBUG ', 'debug'], ['Error', 'error']] as const) {
        process.env.LOG_LEVEL = text;
        expect(createLogger(undefined, { destination: new PassThrough() }).level, JSON.stringify(text)).toBe(level);
        expect(createApiLogger(undefined, new PassThrough()).level, JSON.stringify(text)).toBe(level);
      }
      process.env.LOG_LEVEL = 'loud';
      expect(() => createLogger(undefined, { destination: new PassThrough() })).toThrow(/LOG_LEVEL: .*got "loud"/);
    } finally {
      if (before === undefined) delete process.env.LOG_LEVEL;
      else process.env.LOG_LEVEL = before;
    }
  });
});

describe('the other enumerated settings read their words in any case, as QUORUM_VENUES and the booleans do', () => {
  it('QUORUM_MODES, QUORUM_HEADLINE_MODES, QUORUM_EVIDENCE_PROVIDERS (QA: BLIND and LOCAL refused, though NONE, QUORUM_VENUES=KALSHI and TRUE were taken)', () => {
    expect(loadConfig({ QUORUM_MODES: 'BLIND, Informed' }).modes).toEqual(['blind', 'informed']);
    expect(loadConfig({ QUORUM_HEADLINE_MODES: 'Augmented,BLIND' }).headlineModes).toEqual(['augmented', 'blind']);
    expect(loadConfig({ QUORUM_EVIDENCE_PROVIDERS: 'LOCAL, Gdelt' }).evidenceProviders).toEqual(['local', 'gdelt']);
    // a mode twice in two cases is a mode twice; an unknown word is still refused
    expect(() => loadConfig({ QUORUM_MODES: 'blind,BLIND' })).toThrow(/QUORUM_MODES: a mode is listed twice/);
    expect(() => loadConfig({ QUORUM_MODES: 'blind,open' })).toThrow(/QUORUM_MODES: .*\(item 2 of the list\)/);
    expect(() => loadConfig({ QUORUM_EVIDENCE_PROVIDERS: 'bing' })).toThrow(/QUORUM_EVIDENCE_PROVIDERS/);
  });

  it('QUORUM_HEADLINE_MODES naming none of QUORUM_MODES is refused: no new question would have a headline consensus (outside test)', () => {
    expect(() => loadConfig({ QUORUM_MODES: 'informed', QUORUM_HEADLINE_MODES: 'augmented' })).toThrow(
      /QUORUM_HEADLINE_MODES: augmented names none of the modes asked \(QUORUM_MODES: informed\): no new question would have a headline consensus/,
    );
    expect(loadConfig({ QUORUM_MODES: 'informed', QUORUM_HEADLINE_MODES: 'augmented,informed' }).headlineModes).toEqual(['augmented', 'informed']);
    expect(loadConfig({ QUORUM_MODES: 'blind' }).modes).toEqual(['blind']); // the default headline list has blind
  });

  it('QUORUM_TRUST_PROXY: false in any case, a hop count with spaces around; true still refused in any case (QA: FALSE and " 1 " refused)', () => {
    expect(loadConfig({ QUORUM_TRUST_PROXY: 'FALSE' }).trustProxy).toBe(false);
    expect(loadConfig({ QUORUM_TRUST_PROXY: ' 1 ' }).trustProxy).toBe(1);
    expect(loadConfig({ QUORUM_TRUST_PROXY: '2' }).trustProxy).toBe(2);
    for (const forged of ['true', 'TRUE', ' True ']) expect(() => loadConfig({ QUORUM_TRUST_PROXY: forged }), forged).toThrow(/QUORUM_TRUST_PROXY: true would take the client address/);
    expect(() => loadConfig({ QUORUM_TRUST_PROXY: '1.5' })).toThrow(/QUORUM_TRUST_PROXY: expected false or a hop count/);
  });
});

describe('QUORUM_LANG beside QUORUM_LANGS', () => {
  it('both set and naming different main languages is refused, naming both: QUORUM_LANG was ignored without a word (QA: QUORUM_LANG=fr with QUORUM_LANGS=de ran in German)', () => {
    expect(() => loadConfig({ QUORUM_LANG: 'fr', QUORUM_LANGS: 'de' })).toThrow(
      /QUORUM_LANG: "fr" is not the main language of QUORUM_LANGS \("de", whose first is the main one\).*read only when QUORUM_LANGS is unset/,
    );
    // listed, but not first: the main language would still not be QUORUM_LANG's
    expect(() => loadConfig({ QUORUM_LANG: 'fr', QUORUM_LANGS: 'de,fr' })).toThrow(/QUORUM_LANG: "fr" is not the main language of QUORUM_LANGS \("de,fr",/);
  });

  it('both set and agreeing (whatever the case or alias) is fine; the main language is the first of QUORUM_LANGS either way', () => {
    expect(loadConfig({ QUORUM_LANG: 'fr', QUORUM_LANGS: 'fr,de' })).toMatchObject({ lang: 'fr', langs: ['fr', 'de'] });
    expect(loadConfig({ QUORUM_LANG: 'EN', QUORUM_LANGS: 'eng,fr' }).langs).toEqual(['eng', 'fr']);
    expect(loadConfig({ QUORUM_LANGS: 'de,fr' }).lang).toBe('de');
    expect(loadConfig({ QUORUM_LANG: 'pt-BR' })).toMatchObject({ lang: 'pt-BR', langs: ['pt-BR'] });
    // an empty QUORUM_LANG is unset, as every variable
    expect(loadConfig({ QUORUM_LANG: '', QUORUM_LANGS: 'de' }).langs).toEqual(['de']);
  });
});

describe('durations that become timers fit a timer', () => {
  it('QUORUM_GDELT_MIN_INTERVAL_MS is at most an hour (QA: 3000000000 was a p-queue interval past 2^31 ms, cut by Node to 1 ms: a warning a millisecond)', () => {
    expect(loadConfig({ QUORUM_GDELT_MIN_INTERVAL_MS: '3600000' }).gdeltMinIntervalMs).toBe(3_600_000);
    expect(loadConfig({ QUORUM_GDELT_MIN_INTERVAL_MS: '0' }).gdeltMinIntervalMs).toBe(0);
    expect(() => loadConfig({ QUORUM_GDELT_MIN_INTERVAL_MS: '3000000000' })).toThrow(/QUORUM_GDELT_MIN_INTERVAL_MS: Too big: expected number to be <=3600000/);
  });
});

describe('a path that starts with ~', () => {
  it('is refused, naming the variable: only a shell expands ~ (QA: QUORUM_DATA_DIR=~/quorum from a unit file made a directory named ~ under the current one, a stray empty warehouse)', () => {
    for (const name of ['QUORUM_DATA_DIR', 'QUORUM_SAMPLE_DIR', 'QUORUM_QUESTIONS_DIR', 'QUORUM_EVIDENCE_DIR', 'QUORUM_MODELS_FILE']) {
      expect(() => loadConfig({ [name]: '~/quorum' }), name).toThrow(new RegExp(`${name}: starts with ~, which only a shell expands.*got "~/quorum"`));
    }
    expect(() => loadConfig({ QUORUM_DATA_DIR: ' ~' })).toThrow(/QUORUM_DATA_DIR: starts with ~/);
    expect(() => structureDir({ QUORUM_STRUCTURE_DIR: '~/structure' })).toThrow(/QUORUM_STRUCTURE_DIR: starts with ~/);
    // a ~ further in is a name like any other
    expect(loadConfig({ QUORUM_DATA_DIR: '/tmp/a~b' }).dataDir).toBe('/tmp/a~b');
  });
});

it('checkStageSettings names QUORUM_STRUCTURE_DIR starting with ~ as such, not as a missing directory', () => {
  expect(() => checkStageSettings({ QUORUM_STRUCTURE_DIR: '~/structure' })).toThrow(/invalid configuration:\n {2}QUORUM_STRUCTURE_DIR: starts with ~/);
});

describe('contradicting settings are refused, as the health thresholds are', () => {
  it('QUORUM_WEBHOOKS_BACKOFF_MS above QUORUM_WEBHOOKS_MAX_BACKOFF_MS (QA: the first retry waited the cap, the backoff set ignored without a word)', () => {
    expect(() => loadEventsConfig({ QUORUM_WEBHOOKS_BACKOFF_MS: '10000', QUORUM_WEBHOOKS_MAX_BACKOFF_MS: '5000' })).toThrow(
      /QUORUM_WEBHOOKS_BACKOFF_MS: must not exceed QUORUM_WEBHOOKS_MAX_BACKOFF_MS \(10000 > 5000\)/,
    );
    // against the default cap (an hour) too
    expect(() => loadEventsConfig({ QUORUM_WEBHOOKS_MAX_BACKOFF_MS: '1000' })).toThrow(/QUORUM_WEBHOOKS_BACKOFF_MS: must not exceed QUORUM_WEBHOOKS_MAX_BACKOFF_MS \(5000 > 1000\)/);
    expect(loadEventsConfig({ QUORUM_WEBHOOKS_BACKOFF_MS: '5000', QUORUM_WEBHOOKS_MAX_BACKOFF_MS: '5000' }).webhooks).toMatchObject({ backoffMs: 5000, maxBackoffMs: 5000 });
    expect(() => checkStageSettings({ QUORUM_WEBHOOKS_BACKOFF_MS: '10000', QUORUM_WEBHOOKS_MAX_BACKOFF_MS: '5000' })).toThrow(/invalid configuration:\n {2}QUORUM_WEBHOOKS_BACKOFF_MS: must not exceed/);
  });
});

describe("libuv's thread pool (UV_THREADPOOL_SIZE)", () => {
  it('is checked at start like every setting: libuv reads a value that is no number as one thread, without a word (outside test: abc ran on a single-thread pool)', () => {
    expect(() => loadConfig({ UV_THREADPOOL_SIZE: '16' })).not.toThrow();
    expect(() => loadConfig({ UV_THREADPOOL_SIZE: '' })).not.toThrow(); // unset: the start scripts' 8
    expect(() => loadConfig({ UV_THREADPOOL_SIZE: 'abc' })).toThrow(/invalid configuration:\n {2}UV_THREADPOOL_SIZE: expected a whole number \(digits only\), got "abc"$/);
    expect(() => loadConfig({ UV_THREADPOOL_SIZE: '-1' })).toThrow(/invalid configuration:\n {2}UV_THREADPOOL_SIZE: expected a whole number/);
    expect(() => loadConfig({ UV_THREADPOOL_SIZE: '0' })).toThrow(/invalid configuration:\n {2}UV_THREADPOOL_SIZE: Too small/);
    expect(() => loadConfig({ UV_THREADPOOL_SIZE: '1025' })).toThrow(/invalid configuration:\n {2}UV_THREADPOOL_SIZE: Too big/); // libuv's most
  });

  it("the package scripts (npm start, npm test, npm run bench) default it to 8 and keep the operator's value: they set 8 over it, and an empty one ran on libuv's single thread (outside test)", () => {
    const scripts = (JSON.parse(readFileSync(join(REPO, 'package.json'), 'utf8')) as { scripts: Record<string, string> }).scripts;
    for (const name of ['start', 'test', 'bench']) {
      // the script's environment prefix, run by the shell npm runs scripts with
      const prefix = /^((?:[A-Z_]+=\S+ )+)/.exec(scripts[name]!)?.[1];
      expect(prefix, name).toBeDefined();
      const seen = (value: string | undefined) => {
        const env = { ...process.env, UV_THREADPOOL_SIZE: value };
        if (value === undefined) delete env.UV_THREADPOOL_SIZE;
        return execFileSync('sh', ['-c', `${prefix}node -e 'process.stdout.write(process.env.UV_THREADPOOL_SIZE)'`], { env, encoding: 'utf8' });
      };
      expect([seen(undefined), seen(''), seen('16')], name).toEqual(['8', '8', '16']);
    }
  });
});

describe('a base URL setting the clients cannot use', () => {
  // The clients append their paths to these and send with fetch. A user name or password in one:
  // fetch refuses every request ("Request cannot be constructed from a URL that includes
  // credentials"), retried to the deadline and reported as a timeout with the password in it
  // (outside test: QUORUM_KALSHI_URL=http://user:secret@… passed the start checks, and every sync
  // said "kalshi sync failed: deadline of 30000 ms exceeded (http://user:secret@…/markets?…)"). A
  // query or a fragment: the paths land inside it (…/v2?x=1/markets). Port 0: nothing listens there.
  const names = [
    'QUORUM_POLYMARKET_GAMMA_URL', 'QUORUM_POLYMARKET_CLOB_URL', 'QUORUM_KALSHI_URL', 'QUORUM_MANIFOLD_URL',
    'QUORUM_METACULUS_URL', 'QUORUM_GDELT_URL', 'QUORUM_SIMULATOR_URL', 'QUORUM_FRED_URL',
  ];
  const load = (env: Record<string, string>) => (env.QUORUM_FRED_URL ? fredConfigFromEnv(env) : loadConfig(env));
  it('with a user name or password is refused naming the variable, the password not shown', () => {
    for (const name of names) {
      for (const value of ['http://user:s3cret@127.0.0.1:9/api', 'https://user@example.com', 'https://@example.com']) {
        let message = '';
        try {
          load({ [name]: value });
        } catch (err) {
          message = (err as Error).message;
        }
        expect(message, `${name}=${value}`).toMatch(new RegExp(`${name}: a base URL may not hold a user name or password`));
        expect(message, `${name}=${value}`).not.toContain('s3cret');
      }
    }
  });
  it('a password is never shown, however the value is written: in a list of origins, beside a "/", "#", "?" or space that makes the URL invalid, or without a scheme', () => {
    // (review: QUORUM_CORS_ORIGINS=https://user:s3cret@app.example said '"https://user:s3cret@app.example"
    // is not an origin'; an invalid URL such as http://user:s3/cret@host was quoted whole, "got …")
    const cases: Array<[string, string]> = [
      ['QUORUM_CORS_ORIGINS', 'https://user:s3cret@app.example'],
      ['QUORUM_CORS_ORIGINS', 'https://app.example, https://user:s3cret@b.example'],
      ['QUORUM_CORS_ORIGINS', 'user:s3cret@app.example'],
    ];
    for (const name of ['QUORUM_KALSHI_URL', 'QUORUM_GDELT_URL', 'QUORUM_FRED_URL', 'QUORUM_CORS_ORIGINS']) {
      for (const value of ['http://user:s3/cret@127.0.0.1/api', 'http://user:s3#cret@127.0.0.1/api', 'http://user:s3?cret@127.0.0.1/api', 'http://us er:s3cret@127.0.0.1', 'user:s3cret@127.0.0.1/api']) cases.push([name, value]);
    }
    for (const [name, value] of cases) {
      let message = '';
      try {
        load({ [name]: value });
      } catch (err) {
        message = (err as Error).message;
      }
      expect(message, `${name}=${value}`).toMatch(new RegExp(`${name}: `));
      expect(message, `${name}=${value}`).toContain('***@');
      expect(message, `${name}=${value}`).not.toMatch(/s3|cret/);
    }
  });
  it('with a query or a fragment, or port 0, is refused naming the variable and the value', () => {
    for (const name of names) {
      for (const [value, why] of [
        ['https://example.com/api?key=1', 'may not have a query or fragment'],
        ['https://example.com/api?', 'may not have a query or fragment'],
        ['https://example.com/api#v2', 'may not have a query or fragment'],
        ['http://127.0.0.1:0/v1', 'port 0'],
      ] as const) {
        expect(() => load({ [name]: value }), `${name}=${value}`).toThrow(new RegExp(`${name}: .*${why}.*got "${value.replace(/[?.*]/g, '\\$&')}"`));
      }
    }
  });
  it('a path, a port, an IPv6 literal and trailing slashes are fine', () => {
    const c = loadConfig({ QUORUM_SIMULATOR_URL: 'http://[::1]:8080/v1/', QUORUM_GDELT_URL: 'https://api.gdeltproject.org' });
    expect(c.simulatorUrl).toBe('http://[::1]:8080/v1');
    expect(fredConfigFromEnv({ QUORUM_FRED_URL: 'http://[::1]:9/fred-proxy/' }).baseUrl).toBe('http://[::1]:9/fred-proxy');
  });
});

describe('a URL setting that is not an http(s) URL', () => {
  it('is refused naming the variable, what it expects and the value given, the same way for every URL setting (outside test: "Invalid URL" for ftp://x, a URL; FRED said "got ftp:", not the value)', () => {
    for (const name of ['QUORUM_POLYMARKET_GAMMA_URL', 'QUORUM_GDELT_URL', 'QUORUM_SIMULATOR_URL', 'QUORUM_FRED_URL']) {
      for (const value of ['ftp://x', 'notaurl']) {
        const env = { [name]: value };
        const load = () => (name === 'QUORUM_FRED_URL' ? fredConfigFromEnv(env) : loadConfig(env));
        expect(load, `${name}=${value}`).toThrow(`${name}: ${name === 'QUORUM_FRED_URL' && value === 'notaurl' ? 'not a URL:' : 'expected an http(s) URL, got'} "${value}"`);
      }
    }
  });
});
