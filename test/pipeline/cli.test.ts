/** The real `quorum` CLI: bad input is rejected with a clear message and writes nothing. */
import { afterAll, describe, expect, it } from 'vitest';
import { copyFileSync, existsSync, mkdirSync, readdirSync, readFileSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { spawn, spawnSync } from 'node:child_process';
import { hostname } from 'node:os';
import { createServer } from 'node:net';
import type { AddressInfo } from 'node:net';
import { quorum, quorumAsync, quorumProcess, REPO, serveOutcome, type CliResult } from '../helpers/cli.ts';
import { tempDir } from '../helpers/temp-dir.ts';
import { acquireRunLock, withImportLock } from '../../pipeline/warehouse/lock.ts';
import { checkStageSettings } from '../../pipeline/stage-settings.ts';
import { settingIssue } from '../../pipeline/env.ts';
import { structureDir } from '../../pipeline/structure/definitions.ts';
import { loadStructureConfig } from '../../pipeline/structure/stage.ts';
import { parseAsOf } from '../../pipeline/cli/as-of.ts';
// (from where bootstrap.ts re-exports it: bootstrap.ts loads the whole pipeline, some 1 s of CPU
// in this process for one function that needs none of it)
import { firstStartSampleProblem } from '../../pipeline/first-start-check.ts';
import type { QuorumConfig } from '../../pipeline/config.ts';

const sample = join(REPO, 'data', 'sample', 'forecastbench');
const tmp = tempDir('quorum-cli-');
afterAll(() => tmp.cleanup());

/**
 * Runs these `quorum` invocations at once (each a process of its own, as before, but started
 * together rather than one after the other: most of each is the CLI's start-up, and a test that
 * makes several of them waited for each in turn); resolves with their results in order.
 */
function quorumAll(calls: [args: string[], env: Record<string, string>, timeoutMs?: number][]): Promise<CliResult[]> {
  return Promise.all(calls.map(([args, env, timeoutMs = 300_000]) => quorumAsync(args, env, timeoutMs)));
}

/** A copy of the sample whose questions file is cut off in the middle of line `line`. */
function truncatedSample(line: number): string {
  const dir = join(tmp.dir, `truncated-${line}`);
  mkdirSync(dir, { recursive: true });
  copyFileSync(join(sample, 'resolutions_market.csv'), join(dir, 'resolutions_market.csv'));
  const lines = readFileSync(join(sample, 'questions_market.jsonl'), 'utf8').split('\n');
  const cut = lines.slice(0, line - 1).join('\n') + '\n' + lines[line - 1]!.slice(0, 120);
  writeFileSync(join(dir, 'questions_market.jsonl'), cut);
  return dir;
}

/** A directory other than the checkout, for the CLI run from there (fromElsewhere). */
const ELSEWHERE = join(tmp.dir, 'elsewhere');

/**
 * The real `quorum` run from ELSEWHERE with the bundled data's settings unset (their defaults),
 * `stdout` 'ignore', or 'gone' for a pipe destroyed before anything is printed (a reader that has
 * gone, as `| true`).
 */
function fromElsewhere(args: string[], extra: Record<string, string> = {}, stdout: 'ignore' | 'gone' = 'ignore') {
  mkdirSync(ELSEWHERE, { recursive: true });
  const env: NodeJS.ProcessEnv = { ...process.env, LOG_LEVEL: 'warn', QUORUM_VENUES: 'none' };
  for (const v of ['QUORUM_DATA_DIR', 'QUORUM_SAMPLE_DIR', 'QUORUM_QUESTIONS_DIR', 'QUORUM_EVIDENCE_DIR', 'QUORUM_STRUCTURE_DIR']) delete env[v];
  return new Promise<{ status: number | null; stderr: string }>((resolve) => {
    const child = spawn(process.execPath, [join(REPO, 'pipeline', 'cli', 'quorum.cjs'), ...args], { cwd: ELSEWHERE, env: { ...env, ...extra }, stdio: ['ignore', stdout === 'gone' ? 'pipe' : 'ignore', 'pipe'], timeout: 60_000 });
    if (stdout === 'gone') child.stdout!.destroy();
    let stderr = '';
    child.stderr!.on('data', (d) => (stderr += d));
    child.on('close', (status) => resolve({ status, stderr }));
  });
}

/**
 * One `quorum sync --json` of a new data directory, run from ELSEWHERE with its stdout gone: the
 * two tests that need a whole sync (a reader of stdout that has gone; the bundled data's defaults
 * from another directory) share it, started by the first to ask (a sync each was some 1 s of CPU).
 */
let sharedSync: Promise<{ status: number | null; stderr: string; dataDir: string }> | undefined;
function syncFromElsewhere() {
  const dataDir = join(tmp.dir, 'elsewhere-data');
  sharedSync ??= fromElsewhere(['sync', '--json'], { QUORUM_DATA_DIR: dataDir, QUORUM_FRED_API_KEY: '' }, 'gone').then((r) => ({ ...r, dataDir }));
  return sharedSync;
}

describe('quorum import', () => {
  it('rejects a truncated file naming file and line, and writes nothing', () => {
    const data = join(tmp.dir, 'wh-truncated');
    const r = quorum(['import', 'forecastbench', truncatedSample(100)], { QUORUM_DATA_DIR: data });
    expect(r.status).toBe(1);
    expect(r.stderr).toMatch(/questions_market\.jsonl/);
    expect(r.stderr).toMatch(/line 100/);
    expect(existsSync(join(data, 'raw'))).toBe(false);
  });

  it('rejects a bad field naming file, line and field', () => {
    const dir = join(tmp.dir, 'bad-prob');
    mkdirSync(dir, { recursive: true });
    copyFileSync(join(sample, 'resolutions_market.csv'), join(dir, 'resolutions_market.csv'));
    const lines = readFileSync(join(sample, 'questions_market.jsonl'), 'utf8').split('\n');
    const row = JSON.parse(lines[6]!);
    row.freeze_datetime_value = 1.7;
    lines[6] = JSON.stringify(row);
    writeFileSync(join(dir, 'questions_market.jsonl'), lines.join('\n'));
    const data = join(tmp.dir, 'wh-bad-prob');
    const r = quorum(['import', 'forecastbench', dir], { QUORUM_DATA_DIR: data });
    expect(r.status).toBe(1);
    expect(r.stderr).toMatch(/questions_market\.jsonl/);
    expect(r.stderr).toMatch(/line 7/);
    expect(r.stderr).toMatch(/freeze_datetime_value/);
    expect(existsSync(join(data, 'raw'))).toBe(false);
  });

  it('names a missing directory or file and an unknown format; a directory to import that is not there is refused before the data directory is made (QA: a mistyped path left a new data directory holding FORMAT alone)', async () => {
    const [missing, claims, format] = await quorumAll([
      [['import', 'forecastbench', join(tmp.dir, 'nope')], { QUORUM_DATA_DIR: join(tmp.dir, 'x') }],
      [['import', 'claims', 'csv', join(REPO, 'package.json')], { QUORUM_DATA_DIR: join(tmp.dir, 'x') }],
      [['import', 'kalshi', sample], { QUORUM_DATA_DIR: join(tmp.dir, 'x') }],
    ]);
    expect(missing!.status).toBe(1);
    expect(missing!.stderr).toContain(`quorum: the directory to import, ${join(tmp.dir, 'nope')}, does not exist; nothing was written`);
    expect(claims!.status).toBe(1);
    expect(claims!.stderr).toContain(`quorum: the directory to import, ${join(REPO, 'package.json')}, is a file, not a directory; nothing was written`);
    expect(existsSync(join(tmp.dir, 'x'))).toBe(false);
    expect(format!.status).toBe(1);
    expect(format!.stderr).toMatch(/unknown command 'kalshi'/);
    expect(format!.stderr).toContain('quorum import forecastbench <dir> | quorum import claims <format> <dir>');
  });

  it("a directory to import without the files its format reads is refused before the data directory is made, naming them (QA: the import's own \"required ... file is missing\" came after FORMAT was written in a new data directory)", async () => {
    const empty = join(tmp.dir, 'no-extract');
    mkdirSync(join(empty, 'sub.csv'), { recursive: true }); // a directory named like a CSV file is none
    writeFileSync(join(empty, 'questions_market.jsonl'), '');
    const cases = [
      [['import', 'forecastbench', empty], `${join(empty, 'resolutions_market.csv')}: required ForecastBench file is missing; nothing was written`],
      [['import', 'claims', 'csv', empty], `${empty}: no *.csv file in the directory; nothing was written`],
      [['import', 'claims', 'fte-polls', empty], `${join(empty, 'raw-polls.csv')}: required fte-polls claims file is missing; nothing was written`],
      [['import', 'claims', 'fte-forecasts', empty], `${join(empty, 'forecast_results_2018.csv')}, ${join(empty, 'historical-senate-predictions.csv')}: required fte-forecasts claims files are missing`],
      [['import', 'claims', 'cbo', empty], `${join(empty, 'deficit_projection_errors.csv')}, ${join(empty, 'debt_projection_errors.csv')}: required cbo claims files are missing`],
    ] as const;
    const dirOf = (i: number) => join(tmp.dir, `never-made-${i}`);
    const results = await quorumAll(cases.map(([args], i): [string[], Record<string, string>, number] => [[...args], { QUORUM_DATA_DIR: dirOf(i) }, 60_000]));
    for (const [i, [args, said]] of cases.entries()) {
      const r = results[i]!;
      expect(r.status, `${args.join(' ')}: ${r.stderr}`).toBe(1);
      expect(r.stderr).toContain(said);
      expect(existsSync(dirOf(i)), `${args.join(' ')} made the data directory`).toBe(false);
    }
  });

  it('one import at a time per data directory: another is refused (exit 75) and writes nothing; two at once store each claim once (QA: both wrote all 694 CBO claims, and track records counted them twice)', async () => {
    const cbo = join(REPO, 'data', 'sample', 'cbo-budget-projections');
    const held = join(tmp.dir, 'import-locked');
    await withImportLock(held, async () => {
      for (const r of await quorumAll([[['import', 'claims', 'cbo', cbo], { QUORUM_DATA_DIR: held }], [['import', 'forecastbench', sample], { QUORUM_DATA_DIR: held }]])) {
        expect(r.status, r.stderr).toBe(75);
        expect(r.stderr).toMatch(/another import is in progress \(pid \d+/);
      }
    });
    expect(existsSync(join(held, 'raw'))).toBe(false);
    // Two processes at once, racing for real: whichever order, each claim is written once.
    const both = join(tmp.dir, 'import-twice');
    const results = await Promise.all([0, 1].map(() => quorumAsync(['import', 'claims', 'cbo', cbo], { QUORUM_DATA_DIR: both }, 120_000)));
    let written = 0;
    for (const r of results) {
      expect([0, 75], r.stderr).toContain(r.status);
      if (r.status === 0) written += (JSON.parse(r.stdout) as { claims: { written: number } }).claims.written;
    }
    expect(written).toBe(694);
  });

  it("each kind of import has its own help naming its arguments, and run's says its exit codes (QA: one help, whose <dir> described both)", async () => {
    const [claims, fb, run, missing] = await quorumAll([[['import', 'claims', '--help'], {}], [['import', 'forecastbench', '--help'], {}], [['run', '--help'], {}], [['import', 'forecastbench'], {}]]);
    expect(claims!.status).toBe(0);
    expect(claims!.stdout).toContain('Usage: quorum import claims [options] <format> <dir>');
    expect(claims!.stdout.replace(/\s+/g, ' ')).toContain('(choices: "fte-polls", "fte-forecasts", "cbo", "csv")');
    expect(fb!.stdout).toContain('Usage: quorum import forecastbench [options] <dir>');
    expect(fb!.stdout).not.toContain('claims');
    // (QA: run's exit codes were in the README only)
    expect(run!.stdout).toContain('Exit codes: 0 completed; 1 failed, bad input or configuration; 75 another run holds the lock;');
    expect(missing!.status).toBe(1);
    expect(missing!.stderr).toContain("missing required argument 'dir'");
  });
});

describe('the quorum command', () => {
  it('runs in a checkout as `npx quorum` (package.json bin)', () => {
    const r = spawnSync('npx', ['--no-install', 'quorum', '--help'], { cwd: REPO, encoding: 'utf8', timeout: 60_000 });
    expect(r.status, r.stderr).toBe(0);
    for (const command of ['import', 'run', 'sync', 'serve', 'start', 'keys', 'simulator']) expect(r.stdout).toContain(command);
  });

  it('quorum simulator refuses a port or latency that is no whole number in range, naming the option (QA)', () => {
    const r = quorum(['simulator', '--port', '99999'], {});
    expect(r.status).toBe(1);
    expect(r.stderr).toMatch(/option '--port <n>' argument '99999' is invalid\. expected a whole number from 0 to 65535/);
  });

  it('quorum simulator on a port in use says so naming --port (QA: "listen EADDRINUSE: address already in use 127.0.0.1:N", no option named)', async () => {
    const holder = createServer();
    await new Promise<void>((resolve) => holder.listen(0, '127.0.0.1', resolve));
    const port = (holder.address() as AddressInfo).port;
    try {
      const r = await quorumAsync(['simulator', '--port', String(port)], {});
      expect(r.status).toBe(1);
      expect(r.stdout).toBe('');
      expect(r.stderr).toContain(`quorum: cannot listen on 127.0.0.1:${port} (EADDRINUSE): choose another --port (0 picks a free one)`);
    } finally {
      holder.close();
    }
  });

  it('quorum simulator warns of a QUORUM_* variable nothing reads, as every command does (QA: silent)', async () => {
    const child = quorumProcess(['simulator'], { QUORUM_SIMULATOR_LATENCY: '500' });
    let stdout = '';
    let stderr = '';
    child.stdout!.on('data', (d) => (stdout += d));
    child.stderr!.on('data', (d) => (stderr += d));
    try {
      await new Promise<void>((resolve, reject) => {
        const t = setTimeout(() => reject(new Error(`no warning: ${stderr}`)), 30_000);
        const poll = setInterval(() => {
          if (stdout.includes('"url"') && stderr.includes('QUORUM_SIMULATOR_LATENCY is set')) {
            clearTimeout(t);
            clearInterval(poll);
            resolve();
          }
        }, 50);
      });
      expect(stderr).toContain('QUORUM_SIMULATOR_LATENCY is set but is not a Quorum setting: it is ignored (did you mean QUORUM_SIMULATOR_LATENCY_MS?)');
    } finally {
      child.kill('SIGTERM');
    }
  });

  it('the quorum command starts libuv\'s pool with UV_THREADPOOL_SIZE 8 when unset, empty or blank, and keeps a value set (QA: an ESM entry set it too late, leaving libuv\'s 4)', async () => {
    /** The threads of a `quorum simulator` once it listens (libuv starts every pool thread at once). */
    const threadsWith = async (value: string): Promise<number> => {
      const child = quorumProcess(['simulator'], { UV_THREADPOOL_SIZE: value });
      let stdout = '';
      child.stdout!.on('data', (d) => (stdout += d));
      try {
        await new Promise<void>((resolve, reject) => {
          const t = setTimeout(() => reject(new Error('the simulator did not start')), 30_000);
          const poll = setInterval(() => {
            if (!stdout.includes('"url"')) return;
            clearTimeout(t);
            clearInterval(poll);
            resolve();
          }, 50);
        });
        return readdirSync(`/proc/${child.pid}/task`).length;
      } finally {
        child.kill('SIGTERM');
      }
    };
    const [unset, eight, four] = [await threadsWith(''), await threadsWith('8'), await threadsWith('4')];
    expect(unset).toBe(eight);
    // blank is unset, as every setting is read (outside test: " " was kept, and libuv read it as one thread)
    expect(await threadsWith(' ')).toBe(eight);
    expect(eight - four).toBe(4);
  });

  it('a reader of stdout that has gone is not a failure: the command ends with its own exit code, no EPIPE stack (QA: `quorum sync --json | true` exited 1 with an unhandled EPIPE after the sync succeeded)', async () => {
    // the sync from another directory below (its stdout destroyed before anything is printed)
    const { status, stderr, dataDir } = await syncFromElsewhere();
    expect(status, stderr).toBe(0);
    expect(stderr).not.toMatch(/EPIPE|    at /);
    expect(existsSync(join(dataDir, 'raw', 'questions'))).toBe(true); // the sync did its work
  });

  it('a reader of stderr that has gone (`2>&1 | true`, `2>&1 | head`) is not a failure either: an import that wrote its claims exits 0, a refused one keeps its 75 (QA: exit 1 after the claims were stored, from an unhandled EPIPE on stderr)', async () => {
    const dir = join(tmp.dir, 'stderr-gone-claims');
    mkdirSync(dir, { recursive: true });
    writeFileSync(join(dir, 'a.csv'), 'claim_id,source,made_at,kind,subject,probability\nc1,Acme,2024-01-01,probability,X,0.7\n');
    /** `quorum import claims csv dir` with stdout and stderr one pipe whose reader has gone. */
    const importGone = (data: string) =>
      new Promise<number | null>((resolve) => {
        const child = spawn(process.execPath, [join(REPO, 'pipeline', 'cli', 'quorum.cjs'), 'import', 'claims', 'csv', dir], {
          cwd: REPO,
          env: { ...process.env, LOG_LEVEL: 'warn', QUORUM_DATA_DIR: data },
          stdio: ['ignore', 'pipe', 'pipe'],
          timeout: 60_000,
        });
        child.stdout!.destroy();
        child.stderr!.destroy();
        child.on('close', resolve);
      });
    const data = join(tmp.dir, 'wh-stderr-gone');
    expect(await importGone(data)).toBe(0);
    expect(readdirSync(join(data, 'raw', 'claims'))).toHaveLength(1); // the import did its work
    // the same import while another holds the import lock: refused with its own code, 75
    await withImportLock(data, async () => {
      expect(await importGone(data)).toBe(75);
    });
  });

  it('--version prints package.json\'s version (it was an unknown option)', () => {
    const r = quorum(['--version'], {});
    expect(r.status, r.stderr).toBe(0);
    expect(r.stdout.trim()).toBe((JSON.parse(readFileSync(join(REPO, 'package.json'), 'utf8')) as { version: string }).version);
  });
});

describe('quorum run', () => {
  it('rejects a malformed --as-of', () => {
    const r = quorum(['run', '--as-of', 'yesterday; rm -rf /'], { QUORUM_DATA_DIR: join(tmp.dir, 'y') });
    expect(r.status).not.toBe(0);
    expect(r.stderr).toMatch(/ISO 8601/);
  });

  it('rejects an --as-of date that does not exist instead of rolling it over (2026-02-30 is not 2026-03-02), before 1970 (0001 was read as 1901) or in the future (it would become the current snapshot)', async () => {
    // The option's parser, in process ...
    for (const [bad, message] of [
      ['2026-02-30', /ISO 8601 date or time from 1970 that exists/],
      ['2026-02-31T00:00:00Z', /ISO 8601 date or time from 1970 that exists/],
      ['2026-04-31 12:00', /ISO 8601 date or time from 1970 that exists/],
      ['0001-01-01T00:00:00Z', /from 1970/],
      ['0025-10-16', /from 1970/],
      ['1970-01-01T00:00:00+01:00', /from 1970/], // 1969 once in UTC (QA: a run dated 1969 was published)
      ['2026-01-01T00:00:00+23:59', /ISO 8601 date or time/], // beyond ±18:00, as the API refuses
      ['2099-01-01', /in the future/],
    ] as const) {
      expect(() => parseAsOf(bad), bad).toThrow(message);
    }
    expect(parseAsOf('2026-03-06').toISOString()).toBe('2026-03-06T00:00:00.000Z');
    expect(parseAsOf('1970-01-01T01:00:00+01:00').toISOString()).toBe('1970-01-01T00:00:00.000Z');
    expect(parseAsOf('2026-01-01T00:00:00-18:00').toISOString()).toBe('2026-01-01T18:00:00.000Z');
    // a time a few minutes ahead (a caller's clock ahead of this one) is now, never a future date:
    // QA, a run --as-of now+4 min published a snapshot dated ahead, and the scheduled run of the
    // next minutes was taken for a backfill of it
    const ahead = new Date(Date.now() + 4 * 60_000);
    const before = Date.now();
    const dated = parseAsOf(ahead.toISOString()).getTime();
    expect(dated).toBeGreaterThanOrEqual(before);
    expect(dated).toBeLessThanOrEqual(Date.now());
    // ... and the command refusing through it (a process each: the wiring), before anything runs.
    const refusals = [['2026-02-30', /ISO 8601 date or time from 1970 that exists/], ['2099-01-01', /in the future/]] as const;
    const results = await quorumAll(refusals.map(([bad]) => [['run', '--as-of', bad, '--score-only'], { QUORUM_DATA_DIR: join(tmp.dir, 'bounds') }]));
    for (const [i, [bad, message]] of refusals.entries()) {
      const r = results[i]!;
      expect(r.status, bad).toBe(1);
      expect(r.stderr, bad).toMatch(message);
    }
    expect(existsSync(join(tmp.dir, 'bounds', 'raw'))).toBe(false);
  });

  it('refuses to start while another run holds the lock (exit 75)', () => {
    const data = join(tmp.dir, 'locked');
    const release = acquireRunLock(data, 'r-test');
    try {
      const r = quorum(['run'], { QUORUM_DATA_DIR: data });
      expect(r.status).toBe(75);
      expect(r.stderr).toMatch(/another run is in progress/);
    } finally {
      release();
    }
  });

  it('--resume with a run id that is not there, or with --as-of, is refused before anything is written (QA: a new data directory was made, holding FORMAT alone)', async () => {
    const empty = join(tmp.dir, 'resume-empty');
    mkdirSync(empty, { recursive: true });
    const cases = [
      [join(tmp.dir, 'resume-missing'), ['--resume', 'r20260101T000000Z-abcdefgh'], 'no run with id r20260101T000000Z-abcdefgh: the data directory'],
      [join(tmp.dir, 'resume-as-of'), ['--resume', 'r20260101T000000Z-abcdefgh', '--as-of', '2026-01-01'], '--resume <run_id> and --as-of cannot be combined'],
      [empty, ['--resume', 'r20260101T000000Z-abcdefgh'], `no run with id r20260101T000000Z-abcdefgh in ${empty}`],
    ] as const;
    const results = await quorumAll(cases.map(([dir, args]) => [['run', ...args], { QUORUM_DATA_DIR: dir, QUORUM_VENUES: 'none' }, 60_000]));
    for (const [i, [dir, , said]] of cases.entries()) {
      const r = results[i]!;
      expect(r.status, r.stderr).toBe(1);
      expect(r.stderr).toContain(said);
      expect(r.stdout).toBe('');
      if (dir === empty) expect(readdirSync(dir)).toEqual([]);
      else expect(existsSync(dir), `run made ${dir}`).toBe(false);
    }
  });

  it('exits 1 with the variable named on a bad configuration', () => {
    const r = quorum(['run'], { QUORUM_DATA_DIR: join(tmp.dir, 'z'), QUORUM_SCHEDULE: 'every tuesday', QUORUM_HEADLINE_MODES: 'psychic' });
    expect(r.status).toBe(1);
    expect(r.stderr).toMatch(/QUORUM_SCHEDULE/);
    expect(r.stderr).toMatch(/QUORUM_HEADLINE_MODES/);
  });

  it('a bad setting is named with the value it was given, by every loader (QA: "PORT: expected a whole number (digits only)", "QUORUM_MODES.1: Invalid option", the value nowhere); a credential\'s value is never shown', async () => {
    const dir = join(tmp.dir, 'values-named');
    const cases = [
      [['run'], 'PORT', '8O80', 'PORT: expected a whole number (digits only), got "8O80"'],
      [['run'], 'QUORUM_MODES', 'blind,informd', 'QUORUM_MODES: Invalid option: expected one of "blind"|"informed"|"augmented" (item 2 of the list), got "blind,informd"'],
      [['sync'], 'QUORUM_VENUES', 'polymarket,kalshy', '(item 2 of the list), got "polymarket,kalshy"'],
      [['sync'], 'QUORUM_EVENTS_POLL_MS', '5s', 'QUORUM_EVENTS_POLL_MS: expected a whole number (digits only), got "5s"'],
      [['run'], 'QUORUM_HEALTH_COVERAGE_DEGRADED', '50', 'QUORUM_HEALTH_COVERAGE_DEGRADED: Too big: expected number to be <=1, got "50"'],
      [['serve'], 'QUORUM_EXPORT_IDLE_TIMEOUT_MS', '1e4', 'QUORUM_EXPORT_IDLE_TIMEOUT_MS: expected a whole number (digits only), got "1e4"'],
      // read by libuv, which takes it as one thread without a word (outside test)
      [['serve'], 'UV_THREADPOOL_SIZE', 'abc', 'UV_THREADPOOL_SIZE: expected a whole number (digits only), got "abc"'],
    ] as const;
    const results = await quorumAll(cases.map(([args, name, value]) => [[...args], { QUORUM_DATA_DIR: dir, PORT: '0', QUORUM_VENUES: 'none', [name]: value }, 60_000]));
    for (const [i, [, , , said]] of cases.entries()) {
      const r = results[i]!;
      expect(r.status, r.stderr).toBe(1);
      expect(r.stderr).toContain(said);
    }
    expect(settingIssue({ path: ['QUORUM_METACULUS_TOKEN'], message: 'bad' }, { QUORUM_METACULUS_TOKEN: 'abc123' })).toBe('QUORUM_METACULUS_TOKEN: bad (value not shown, 6 characters)');
    expect(existsSync(dir)).toBe(false);
  });

  it("refuses a stage's bad setting at start, before any model call (QA: the run failed after paying for 2,048 calls)", async () => {
    const dir = join(tmp.dir, 'stage-settings');
    const bad = [
      ['QUORUM_HEALTH_STALE_PRICE_HOURS', 'abc'],
      ['QUORUM_SCENARIO_IPF_SWEEPS', '0'],
      // (QA: read only by the forecast stage, so a run failed after its sync and serve accepted it)
      ['QUORUM_SCENARIO_MAX_CONDITIONS', 'abc'],
      ['QUORUM_LINK_SIMILAR_THRESHOLD', '2'],
      ['QUORUM_FRED_URL', 'ftp://x'],
      ['QUORUM_STRUCTURE_DIR', join(tmp.dir, 'no-such-dir')],
      // (QA: a missing questions directory failed every sync; a missing evidence directory was no evidence)
      ['QUORUM_QUESTIONS_DIR', join(tmp.dir, 'no-such-dir')],
      ['QUORUM_EVIDENCE_DIR', join(tmp.dir, 'no-such-dir')],
    ] as const;
    // Each setting, in process (the check every command below calls) ...
    for (const [name, value] of bad) {
      expect(() => checkStageSettings({ [name]: value }), name).toThrow(new RegExp(`invalid configuration:\\s+${name}`));
    }
    // (QA: read when the server started, so a first start found it bad after its whole bootstrap)
    expect(() => checkStageSettings({ QUORUM_EXPORT_IDLE_TIMEOUT_MS: 'abc' }, { serving: true })).toThrow(/invalid configuration:\s+QUORUM_EXPORT_IDLE_TIMEOUT_MS/);
    expect(() => checkStageSettings({ QUORUM_EXPORT_IDLE_TIMEOUT_MS: 'abc' })).not.toThrow(); // a run serves no export
    expect(() => checkStageSettings({})).not.toThrow();
    // a set directory is read as it is checked: trimmed
    const padded = { QUORUM_STRUCTURE_DIR: ` ${join(REPO, 'data', 'structure')} ` };
    expect(() => checkStageSettings(padded)).not.toThrow();
    expect([structureDir(padded), loadStructureConfig(padded).dir]).toEqual([join(REPO, 'data', 'structure'), join(REPO, 'data', 'structure')]);
    // ... and each command refusing one before anything runs (a process each: the wiring).
    const commands = [
      [['run', '--as-of', '2025-10-16'], 'QUORUM_SCENARIO_MAX_CONDITIONS', 'abc'],
      [['sync'], 'QUORUM_FRED_URL', 'ftp://x'],
      [['sync'], 'QUORUM_QUESTIONS_DIR', join(tmp.dir, 'no-such-dir')],
      [['serve'], 'QUORUM_HEALTH_STALE_PRICE_HOURS', 'abc'],
      [['serve'], 'QUORUM_STRUCTURE_DIR', join(tmp.dir, 'no-such-dir')],
      [['start'], 'QUORUM_EXPORT_IDLE_TIMEOUT_MS', 'abc'],
    ] as const;
    const results = await quorumAll(commands.map(([args, name, value]) => [[...args], { QUORUM_DATA_DIR: dir, PORT: '0', [name]: value }, 60_000]));
    for (const [i, [args, name]] of commands.entries()) {
      const r = results[i]!;
      expect(r.status, `${name} ${args[0]}: ${r.stderr}`).toBe(1);
      expect(r.stderr).toMatch(new RegExp(`invalid configuration:\\s+${name}`));
    }
    expect(existsSync(join(dir, 'raw'))).toBe(false); // nothing ran
  });

  it("refuses a bad events setting at start like the stages' (QA: start failed after importing the sample and claims; serve after taking its lock, leaving server.lock behind)", async () => {
    expect(() => checkStageSettings({ QUORUM_EVENTS_EDGE_THRESHOLD: '2' })).toThrow(/invalid configuration:\s+QUORUM_EVENTS_EDGE_THRESHOLD: Too big/);
    const commands = [
      [['start'], 'QUORUM_EVENTS_EDGE_THRESHOLD', '2'],
      [['serve'], 'QUORUM_STREAM_MAX_CLIENTS', '0'],
      [['run', '--score-only'], 'QUORUM_WEBHOOKS_ALLOW_PRIVATE', 'maybe'],
      [['sync'], 'QUORUM_EVENTS_POLL_MS', 'x'],
    ] as const;
    const dirOf = (command: string) => join(tmp.dir, `events-settings-${command}`);
    const results = await quorumAll(commands.map(([args, name, value]) => [[...args], { QUORUM_DATA_DIR: dirOf(args[0]), PORT: '0', QUORUM_VENUES: 'none', [name]: value }, 60_000]));
    for (const [i, [args, name]] of commands.entries()) {
      const dir = dirOf(args[0]);
      const r = results[i]!;
      expect(r.status, `${name} ${args[0]}: ${r.stderr}`).toBe(1);
      expect(r.stderr).toMatch(new RegExp(`invalid configuration:\\s+${name}: `));
      expect(existsSync(dir), `${args[0]} wrote ${dir}`).toBe(false);
    }
  });

  it('a file where a directory should be is refused naming the variable, by every command (QA: EEXIST, ENOTDIR, stack traces)', async () => {
    const file = join(tmp.dir, 'a-file');
    writeFileSync(file, 'not a directory');
    const cases = [
      [['keys', 'list'], file, `QUORUM_DATA_DIR: ${file} is a file, not a directory`],
      [['run', '--score-only'], file, `QUORUM_DATA_DIR: ${file} is a file, not a directory`],
      [['serve'], join(file, 'warehouse'), `QUORUM_DATA_DIR: ${file} is a file, so ${join(file, 'warehouse')} cannot be a directory`],
    ] as const;
    const results = await quorumAll([
      ...cases.map(([args, dir]): [string[], Record<string, string>, number] => [[...args], { QUORUM_DATA_DIR: dir, PORT: '0', QUORUM_VENUES: 'none' }, 60_000]),
      [['run', '--score-only'], { QUORUM_DATA_DIR: join(tmp.dir, 'fine'), QUORUM_SAMPLE_DIR: file, QUORUM_VENUES: 'none' }, 60_000],
    ]);
    for (const [i, [args, , said]] of cases.entries()) {
      const r = results[i]!;
      expect(r.status, `${args[0]}: ${r.stderr}`).toBe(1);
      expect(r.stderr).toContain(said);
      expect(r.stderr).not.toMatch(/EEXIST|ENOTDIR|    at /);
    }
    const r = results[cases.length]!;
    expect(r.stderr).toContain(`QUORUM_SAMPLE_DIR: ${file} is a file, not a directory`);
    expect(readFileSync(file, 'utf8')).toBe('not a directory');
  });

  it('a data directory that is a symbolic link to nothing (a volume not mounted) is refused naming QUORUM_DATA_DIR and the link, by every command, nothing made (QA: "ENOENT: no such file or directory, mkdir")', async () => {
    const target = join(tmp.dir, 'unmounted-volume', 'warehouse');
    const link = join(tmp.dir, 'warehouse-link');
    symlinkSync(target, link);
    const said = `QUORUM_DATA_DIR: ${link} is a symbolic link to ${target}, which does not exist`;
    const cases = [
      [['run', '--score-only'], link, said],
      [['import', 'forecastbench', sample], link, said],
      [['sync'], link, said],
      [['keys', 'create', '--plan', 'pro', '--name', 'me'], link, said],
      [['serve'], link, said],
      [['run', '--score-only'], join(link, 'sub'), `${said}, so ${join(link, 'sub')} cannot be made`],
    ] as const;
    const results = await quorumAll(cases.map(([args, dir]): [string[], Record<string, string>, number] => [[...args], { QUORUM_DATA_DIR: dir, PORT: '0', QUORUM_VENUES: 'none' }, 60_000]));
    for (const [i, [args, , message]] of cases.entries()) {
      const r = results[i]!;
      expect(r.status, `${args.join(' ')}: ${r.stderr}`).toBe(1);
      expect(r.stderr, args.join(' ')).toContain(message);
      expect(r.stderr).not.toMatch(/ENOENT|    at /);
    }
    expect(existsSync(join(tmp.dir, 'unmounted-volume'))).toBe(false);
  });

  it('a data directory under /proc is refused naming QUORUM_DATA_DIR, not made for ever (QA: as root, mkdir answered ENOENT there and every writing command spun at full CPU, never exiting)', async () => {
    const dir = `/proc/quorum-test-${process.pid}`;
    const commands = [['run', '--score-only'], ['import', 'forecastbench', sample], ['keys', 'create', '--plan', 'pro', '--name', 'me'], ['serve']];
    const results = await quorumAll(commands.map((args): [string[], Record<string, string>, number] => [args, { QUORUM_DATA_DIR: dir, PORT: '0', QUORUM_VENUES: 'none' }, 30_000]));
    for (const [i, args] of commands.entries()) {
      const r = results[i]!;
      expect(r.status, `${args.join(' ')}: ${r.stderr}`).toBe(1);
      expect(r.stderr, args.join(' ')).toMatch(new RegExp(`QUORUM_DATA_DIR|the data directory ${dir}`));
      expect(r.stderr, args.join(' ')).toContain(`${dir} is not writable by this process`);
    }
  });

  it("the bundled data's defaults are this checkout's, from any directory; a path set resolves against the current one", async () => {
    const [byDefault, relative, sync] = await Promise.all([
      fromElsewhere(['keys', 'list']),
      fromElsewhere(['keys', 'list'], { QUORUM_DATA_DIR: 'mine' }),
      // (QA: from another directory the first start's import said a ForecastBench file was missing)
      syncFromElsewhere(),
    ]);
    expect(byDefault.status, byDefault.stderr).toBe(0);
    expect(byDefault.stderr).toContain(`data directory ${join(REPO, 'data', 'warehouse')} (the default`);
    expect(relative.stderr).toContain(`data directory ${join(ELSEWHERE, 'mine')} (QUORUM_DATA_DIR)`);
    expect(sync.status, sync.stderr).toBe(0);
    expect(existsSync(join(ELSEWHERE, 'data'))).toBe(false);
  });

  it('quorum start on a port in use says so before the first-start bootstrap (QA: found after a minute and a half of runs)', async () => {
    const dir = join(tmp.dir, 'busy-port');
    const busy = createServer();
    await new Promise<void>((resolve) => busy.listen(0, '127.0.0.1', () => resolve()));
    try {
      const port = (busy.address() as AddressInfo).port;
      const r = quorum(['start'], { QUORUM_DATA_DIR: dir, HOST: '127.0.0.1', PORT: String(port) }, 60_000);
      expect(r.status, r.stderr).toBe(1);
      expect(r.stderr).toContain(`cannot listen on 127.0.0.1:${port} (EADDRINUSE`);
      expect(existsSync(join(dir, 'raw'))).toBe(false); // no import, no run
    } finally {
      busy.close();
    }
  });

  it('quorum start refuses a first start whose sample is missing, naming QUORUM_SAMPLE_DIR, before it writes anything (QA: FORMAT, bootstrap.json and server.lock, then "required ForecastBench file is missing")', async () => {
    const empty = join(tmp.dir, 'empty-sample');
    mkdirSync(empty, { recursive: true });
    const cases = [
      [join(tmp.dir, 'no-such-sample'), `QUORUM_SAMPLE_DIR: ${join(tmp.dir, 'no-such-sample')} does not exist`],
      [empty, `QUORUM_SAMPLE_DIR: ${empty} has no questions_market.jsonl or resolutions_market.csv`],
    ] as const;
    const dirOf = (sampleDir: string) => join(tmp.dir, `start-no-sample-${sampleDir === empty ? 'empty' : 'missing'}`);
    const results = await quorumAll(cases.map(([sampleDir]) => [['start'], { QUORUM_DATA_DIR: dirOf(sampleDir), QUORUM_SAMPLE_DIR: sampleDir, PORT: '0', QUORUM_VENUES: 'none' }, 60_000]));
    for (const [i, [sampleDir, said]] of cases.entries()) {
      const dir = dirOf(sampleDir);
      const r = results[i]!;
      expect(r.status, r.stderr).toBe(1);
      expect(r.stderr).toContain(`invalid configuration:\n  ${said}`);
      expect(existsSync(dir), `start made ${dir}`).toBe(false);
    }
    // A data directory already started needs no sample (a first start stopped part-way does).
    const started = join(tmp.dir, 'started-before');
    mkdirSync(join(started, 'snapshots', 'r20260306T000000Z-abcdefgh'), { recursive: true });
    writeFileSync(join(started, 'CURRENT'), 'r20260306T000000Z-abcdefgh\n');
    const config = { dataDir: started, sampleDir: join(tmp.dir, 'no-such-sample') } as QuorumConfig;
    expect(firstStartSampleProblem(config)).toBeNull();
    writeFileSync(join(started, 'bootstrap.json'), '{}\n');
    expect(firstStartSampleProblem(config)).toContain('does not exist');
  });

  it('a serve or start that fails after taking the server lock releases it (QA: server.lock was left behind)', async () => {
    const commands = ['serve', 'start'];
    const dirOf = (command: string) => join(tmp.dir, `lock-released-${command}`);
    for (const command of commands) {
      // A webhook subscriptions file that does not parse: both fail reading it, after the lock (a
      // current snapshot without its manifest, which they once failed on, is now served as none;
      // here it keeps start from taking the directory for a first start)
      mkdirSync(join(dirOf(command), 'snapshots', 'r20260306T000000Z-abcdefgh'), { recursive: true });
      writeFileSync(join(dirOf(command), 'CURRENT'), 'r20260306T000000Z-abcdefgh\n');
      mkdirSync(join(dirOf(command), 'state'), { recursive: true });
      writeFileSync(join(dirOf(command), 'state', 'webhooks.json'), '{"subscriptions": [');
    }
    const results = await quorumAll(commands.map((command) => [[command], { QUORUM_DATA_DIR: dirOf(command), PORT: '0', HOST: '127.0.0.1', QUORUM_VENUES: 'none' }, 60_000]));
    for (const [i, command] of commands.entries()) {
      const dir = dirOf(command);
      const r = results[i]!;
      expect(r.status, r.stderr).toBe(1);
      expect(r.stderr).toContain('webhooks.json cannot be read');
      expect(existsSync(join(dir, 'server.lock')), `${command} left server.lock`).toBe(false);
    }
  });

  it('with PORT=0 (any free port) a HOST that is no address here is refused before anything runs too (QA: start imported and ran the sample, then failed "getaddrinfo ENOTFOUND")', async () => {
    const commands = ['serve', 'start'];
    const dirOf = (command: string) => join(tmp.dir, `port0-bad-host-${command}`);
    const results = await quorumAll(commands.map((command) => [[command], { QUORUM_DATA_DIR: dirOf(command), HOST: 'no-such-host.invalid', PORT: '0', QUORUM_VENUES: 'none' }, 120_000]));
    for (const [i, command] of commands.entries()) {
      const dir = dirOf(command);
      const r = results[i]!;
      expect(r.status, r.stderr).toBe(1);
      expect(r.stderr).toContain('cannot listen on no-such-host.invalid:0 (ENOTFOUND');
      expect(existsSync(dir), `${command} made ${dir}`).toBe(false); // no lock, no import, no run
    }
  });

  // The last three tests (quorum serve, each in data directories of its own, its own ports) run
  // together (it.concurrent): most of each is waiting for a server to start or stop. Their CLI
  // calls are asynchronous (quorumAsync, not spawnSync) so that one test's wait does not hold up
  // the others' event loop.
  it.concurrent('quorum serve: a busy port is refused before the data directory is made; serving one without a snapshot says so (QA: silent)', async () => {
    const busy = createServer();
    await new Promise<void>((resolve) => busy.listen(0, '127.0.0.1', () => resolve()));
    const dir = join(tmp.dir, 'serve-busy');
    // The two serves are independent (their own data directories, the second on a free port):
    // started together, as quorumAll does, rather than the second after the first had ended.
    const child = quorumProcess(['serve'], { QUORUM_DATA_DIR: join(tmp.dir, 'serve-empty'), HOST: '127.0.0.1', PORT: '0' });
    const closed = new Promise((resolve) => child.on('close', resolve));
    const outcome = serveOutcome(child);
    try {
      try {
        const port = (busy.address() as AddressInfo).port;
        const r = await quorumAsync(['serve'], { QUORUM_DATA_DIR: dir, HOST: '127.0.0.1', PORT: String(port) }, 60_000);
        expect(r.status, r.stderr).toBe(1);
        expect(r.stderr).toContain(`cannot listen on 127.0.0.1:${port} (EADDRINUSE`);
        expect(existsSync(dir)).toBe(false);
      } finally {
        busy.close();
      }
      const { url, stderr } = await outcome;
      expect(url, stderr).not.toBeNull();
      const warning = stderr.split('\n').filter((l) => l.startsWith('{')).map((l) => JSON.parse(l) as { level: number; msg: string }).find((l) => /no snapshot is published/.test(l.msg));
      expect(warning?.level, stderr).toBe(40);
    } finally {
      child.kill('SIGTERM');
      await closed;
    }
  });
  it.concurrent('one server per data directory: a second quorum serve is refused (exit 75) naming the first; a killed one is taken over (two would both deliver every webhook)', async () => {
    const dir = join(tmp.dir, 'serve-twice');
    const env = { QUORUM_DATA_DIR: dir, HOST: '127.0.0.1', PORT: '0' };
    /** Starts `quorum serve`; resolves with the child and its URL once it listens. */
    const serve = async () => {
      const child = quorumProcess(['serve'], env);
      const closed = new Promise((resolve) => child.on('close', resolve));
      const { url, stderr } = await serveOutcome(child);
      if (!url) throw new Error(`serve exited: ${stderr}`);
      return { child, url, closed };
    };
    const first = await serve();
    try {
      const second = await quorumAsync(['serve'], env, 60_000);
      expect(second.status, second.stderr).toBe(75);
      expect(second.stderr).toContain(`quorum: another server has this data directory open (pid ${first.child.pid}`);
      expect(second.stderr).toContain(`at ${first.url}`);
      expect(second.stderr).not.toContain('api listening');
      expect(JSON.parse(readFileSync(join(dir, 'server.json'), 'utf8')).pid).toBe(first.child.pid); // still the first's
    } finally {
      first.child.kill('SIGKILL');
      await first.closed;
    }
    // Killed without a chance to release: its lock names a dead process, taken over.
    const third = await serve();
    third.child.kill('SIGTERM');
    await third.closed;
    expect(existsSync(join(dir, 'server.lock'))).toBe(false);
  });
  it.concurrent('an older version\'s server, which takes no server.lock, keeps the directory while its process lives (QA upgrade: the new version started beside it and both delivered every webhook)', async () => {
    const dir = join(tmp.dir, 'serve-beside-older');
    mkdirSync(dir, { recursive: true });
    // The older server: a live process that listens, recorded in server.json as versions before
    // server.lock wrote it (pid, host, port, address, url, data_dir, started_at), no lock file.
    const older = spawn(process.execPath, ['-e', "require('node:http').createServer((q, s) => s.end()).listen(0, '127.0.0.1', function () { console.log(this.address().port) })"]);
    const olderClosed = new Promise((resolve) => older.on('close', resolve));
    try {
      const port = await new Promise<number>((resolve) => older.stdout.once('data', (d: Buffer) => resolve(Number(String(d).trim()))));
      const url = `http://127.0.0.1:${port}`;
      const record = { pid: older.pid, host: hostname(), port, address: url, url, data_dir: dir, started_at: new Date().toISOString() };
      writeFileSync(join(dir, 'server.json'), `${JSON.stringify(record, null, 2)}\n`);
      const env = { QUORUM_DATA_DIR: dir, HOST: '127.0.0.1', PORT: '0' };
      const refused = await quorumAsync(['serve'], env, 60_000);
      expect(refused.status, refused.stderr).toBe(75);
      expect(refused.stderr).toContain(`quorum: another server has this data directory open (pid ${older.pid}`);
      expect(refused.stderr).toContain('written by an older version');
      expect(refused.stderr).toContain(`at ${url}`);
      expect(refused.stderr).not.toContain('api listening');
      expect(existsSync(join(dir, 'server.lock'))).toBe(false); // its own lock released
      expect(JSON.parse(readFileSync(join(dir, 'server.json'), 'utf8')).pid).toBe(older.pid);
    } finally {
      older.kill('SIGKILL');
      await olderClosed;
    }
    // Killed: its server.json names a dead process, which holds nothing.
    const child = quorumProcess(['serve'], { QUORUM_DATA_DIR: dir, HOST: '127.0.0.1', PORT: '0' });
    const closed = new Promise((resolve) => child.on('close', resolve));
    const { url, stderr } = await serveOutcome(child);
    child.kill('SIGTERM');
    await closed;
    expect(url, stderr).not.toBeNull();
  });
});
