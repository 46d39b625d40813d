/**
 * The `quorum` CLI. Commands:
 *   quorum import forecastbench <dir>   import a ForecastBench extract (questions, prices, outcomes)
 *   quorum import claims <format> <dir> import named sources' claims (fte-polls, fte-forecasts, cbo, csv)
 *   quorum run [--as-of <time>] [--resume [run_id]] [--budget-usd <usd>]
 *                                        one pipeline run now, or dated at a past time, or the
 *                                        continuation of an interrupted run (pipeline/forecast/README.md)
 *   quorum sync [--json]                 pull markets, prices and resolutions from venues and sources
 *   quorum start                         first-start bootstrap, then the API and the scheduler
 *   quorum serve                         the API only, over the published snapshot
 *   quorum simulator [--port <n>]        the bundled OpenAI-compatible model simulator
 * Exit codes: 0 ok, 1 error (bad config, bad input, failed run), 75 another run holds the lock (for
 * `import`, another import is writing: import.lock),
 * 143 (SIGTERM) / 130 (SIGINT): `run` stopped by the signal after finishing and recording the
 * calls in flight; the run is `interrupted` and `quorum run --resume` continues it.
 * `sync` exits 0 when every venue and source succeeded, 3 when some failed (the rest is written),
 * 1 when all failed (./sync-output.ts); SIGTERM/SIGINT cancel its requests, and the venues they
 * cut short count as failed.
 * Logs go to stderr; stdout carries only what a command prints (report, summary, key, table).
 */
import { existsSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { unwritable } from '../fs/paths.ts';
import { Argument, Command } from 'commander';
import { loadConfig, ConfigError, type QuorumConfig } from '../config.ts';
import { unknownVariableMessage, unknownVariables } from '../env.ts';
import { cliLogDestination, createLogger, type Logger } from '../log.ts';
import { acquireServerLock, LockHeldError, ServerLockedError } from '../warehouse/lock.ts';
import { checkDataFormat } from '../warehouse/data-format.ts';
import { duckdbOpened } from '../warehouse/duckdb-opened.ts';
import { CLAIM_FORMATS, type ClaimFormat } from '../claims/formats.ts';
import { startSimulator } from '../simulator/server.ts';
import { registerKeysCommands } from './keys.ts';
import { registerWebhooksCommands } from './webhooks.ts';
import { renderSyncTable, syncExitCode, syncOutputFormat } from './sync-output.ts';
import { parseAsOf } from './as-of.ts';
import { intOption, parseUsd } from './options.ts';
import { serverStateProblem } from '../../api/state-paths.ts';
import { findServer, unlockedServer } from '../../api/server-record.ts';
import type { ServerHandle } from '../../api/server.ts';

// A command loads what it runs when it runs (below, `await import(...)`): the pipeline, the
// venues, DuckDB and the API are most of the CLI's start-up, and `quorum keys` or `quorum
// webhooks` need none of them (0.7-0.9 s instead of 1.2-1.4 s per invocation here).

/**
 * The configuration and the CLI's logger; a QUORUM_* variable nothing reads is a warning. A data
 * directory a newer version wrote is refused here, before anything reads or writes it
 * (../warehouse/data-format.ts); the commands that write mark it once their checks have passed.
 */
function setup(): { config: QuorumConfig; logger: Logger } {
  const config = loadConfig();
  const logger = createLogger(config.logLevel, { destination: cliLogDestination() });
  for (const u of config.unknownVariables) logger.warn({ variable: u.name, closest: u.closest }, unknownVariableMessage(u));
  checkDataFormat(config.dataDir);
  return { config, logger };
}

/**
 * A command about to write the data directory marks it with this version's format. One it cannot
 * write (or make) is refused first, naming QUORUM_DATA_DIR (QA: `quorum run`, `sync` and `import`
 * stopped with "EACCES: permission denied, mkdir '<dir>'" or "…, open '<dir>/run.lock'", naming no
 * setting, as `serve` no longer does: api/state-paths.ts).
 */
function markDataDir(config: QuorumConfig): void {
  const denied = unwritable(config.dataDir);
  if (denied) {
    const what = denied.existing === config.dataDir ? denied.existing : `${denied.existing} (to make ${config.dataDir})`;
    throw new ConfigError(`invalid configuration:\n  QUORUM_DATA_DIR: ${config.dataDir} is not writable by this process (${denied.code} on ${what}); nothing was written`);
  }
  checkDataFormat(config.dataDir, { mark: true });
}

/**
 * setup(), then the stages' own settings (pipeline/stage-settings.ts) for the commands that run
 * stages or serve: a bad one is refused before any model call, as the rest of the configuration.
 */
async function setupChecked(opts: { serving?: boolean } = {}): Promise<{ config: QuorumConfig; logger: Logger }> {
  const ready = setup();
  (await import('../stage-settings.ts')).checkStageSettings(process.env, opts);
  return ready;
}

/**
 * `quorum start` reads the definition files (links, theses, factors, scenarios) once as it starts: a
 * bad one fails every run (each checks them before its first call) while the API serves on, and
 * was first reported by the next scheduled run, hours after the restart that should have shown it
 * (QA). A warning, not a refusal: the API can serve the current snapshot meanwhile.
 */
async function warnOfBadDefinitionFiles(logger: Logger): Promise<void> {
  const { checkDefinitionFiles } = await import('../stage-settings.ts');
  try {
    checkDefinitionFiles();
  } catch (err) {
    const message = err instanceof Error ? err.message : String(err);
    logger.warn({ error: message }, `${message}: every run fails until this file is fixed (the API serves the current snapshot meanwhile)`);
  }
}

/** The API is loaded only by the commands that serve it (batch commands stay light). */
async function startServer(...args: Parameters<typeof import('../../api/server.ts').startServer>) {
  const api = await import('../../api/server.ts');
  return api.startServer(...args);
}

/**
 * Closes the process's DuckDB instance, if one was opened. Every command ends through here
 * (guarded); one that never opened it (refused for a bad setting or argument, `--help`, `keys`)
 * does not load DuckDB just to find nothing to close (some 0.2 s of CPU per command).
 */
async function closeWarehouse(): Promise<void> {
  if (!duckdbOpened()) return; // nothing to close: DuckDB is not even loaded
  const { closeDuckdb } = await import('../warehouse/duckdb.ts');
  await closeDuckdb();
}

/**
 * `serve` and `start`, before anything is made: the server's state must be writable
 * (api/state-paths.ts), and no other server may have the directory open (its lock, or the
 * server.json of a live server of an older version, which takes none; the holder's address from
 * its server.json). Returns the lock's release.
 */
function claimDataDirForServer(dataDir: string): () => void {
  const problem = serverStateProblem(dataDir);
  if (problem) throw new Error(problem);
  const release = acquireServerLock(dataDir, {
    url: () => {
      const found = findServer(dataDir);
      return found.state === 'running' || found.state === 'other-host' ? found.record.url : null;
    },
  });
  // A server of a version before server.lock holds none: its server.json is all that says it runs.
  const older = unlockedServer(dataDir);
  if (older) {
    release();
    throw new ServerLockedError({ pid: older.pid, host: older.host, started_at: older.started_at }, null, older.url);
  }
  return release;
}

/**
 * `body` of a serve or start that holds the server lock: when it fails (the exit 1 of `guarded`),
 * the lock is released first. It was left behind (QA: after a failed start, server.lock named a
 * dead process: taken over at once on this host, but from another hostname, a container sharing
 * the directory, only once 3 minutes passed without a heartbeat).
 */
async function releasedOnFailure(release: () => void, body: () => Promise<number>): Promise<number> {
  try {
    return await body();
  } catch (err) {
    release();
    throw err;
  }
}

/** Runs a command body, mapping known failures to a message and an exit code. */
async function guarded(body: () => Promise<number | void>): Promise<void> {
  let code = 0;
  try {
    code = (await body()) ?? 0;
  } catch (err) {
    if (err instanceof ConfigError) {
      console.error(err.message);
      code = 1;
    } else if (err instanceof LockHeldError) {
      console.error(`quorum: ${err.message}`);
      code = 75;
    } else {
      console.error(`quorum: ${err instanceof Error ? err.message : String(err)}`);
      code = 1;
    }
  }
  if (code !== -1) {
    await closeWarehouse();
    process.exit(code);
  }
}

// A reader of stdout that has gone (`quorum sync --json | head -c 100`, a `jq` that failed) is not
// the command's failure: what it prints is dropped and it ends with its own exit code. QA: an
// unhandled EPIPE stack trace, exit 1, after a sync had written everything and succeeded. The same
// for stderr, the same pipe in `2>&1 | head` (QA: `quorum import claims ... 2>&1 | true` exited 1
// after storing its claims, its closing note on stderr an unhandled EPIPE; a refused one's 75 too).
for (const stream of [process.stdout, process.stderr]) {
  stream.on('error', (err: NodeJS.ErrnoException) => {
    if (err.code !== 'EPIPE') throw err;
  });
}

/** package.json's version (`quorum --version`, `-V`). */
const VERSION = (JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as { version: string }).version;

const program = new Command('quorum').description('Quorum: AI forecasting consensus beside market prices').version(VERSION);

/**
 * The directory an import reads must be one, checked before the data directory is marked (QA: a
 * mistyped path was found only after FORMAT was written, so a data directory that did not exist
 * was made, holding FORMAT alone, as `run --resume` with a mistyped id once did).
 */
function requireImportDir(dir: string): void {
  const st = statSync(dir, { throwIfNoEntry: false });
  if (!st) throw new Error(`the directory to import, ${dir}, does not exist; nothing was written`);
  if (!st.isDirectory()) throw new Error(`the directory to import, ${dir}, is a file, not a directory; nothing was written`);
}

/**
 * The files an import reads must be in its directory, checked before the data directory is marked
 * as the directory itself is (QA: `quorum import forecastbench <a directory without the extract>`
 * said "required ForecastBench file is missing" after it had made the data directory and written
 * FORMAT in it; every claims format the same). A `csv` import reads every *.csv file there:
 * `files` lists those it found.
 */
function requireImportFiles(dir: string, what: string, files: { required: readonly string[] } | { csv: readonly string[] }): void {
  if ('csv' in files) {
    if (files.csv.length === 0) throw new Error(`${dir}: no *.csv file in the directory; nothing was written`);
    return;
  }
  const missing = files.required.filter((f) => !statSync(join(dir, f), { throwIfNoEntry: false })?.isFile());
  if (missing.length) throw new Error(`${missing.map((f) => join(dir, f)).join(', ')}: required ${what} ${missing.length > 1 ? 'files are' : 'file is'} missing; nothing was written`);
}

// `quorum import forecastbench <dir>` and `quorum import claims <format> <dir>`: one subcommand per
// kind of input, so that each one's --help names its own arguments (QA: one help for both).
const importCommand = program
  .command('import')
  .description("import questions, prices and resolutions (forecastbench), or named sources' claims (claims)")
  .showHelpAfterError('(usage: quorum import forecastbench <dir> | quorum import claims <format> <dir>)');

importCommand
  .command('forecastbench')
  .description('import a ForecastBench extract: questions, market prices and resolutions')
  .argument('<dir>', 'directory holding questions_market.jsonl and resolutions_market.csv')
  .action((dir: string) =>
    guarded(async () => {
      const { config } = setup();
      requireImportDir(dir);
      const { QUESTIONS_FILE, RESOLUTIONS_FILE } = await import('../import/forecastbench.ts');
      requireImportFiles(dir, 'ForecastBench', { required: [QUESTIONS_FILE, RESOLUTIONS_FILE] });
      markDataDir(config);
      const { importForecastBench } = await import('../bootstrap.ts');
      const result = await importForecastBench(config, dir);
      console.log(JSON.stringify(result, null, 2));
    }),
  );

importCommand
  .command('claims')
  .description("import named sources' claims (pipeline/claims/README.md: the formats)")
  .addArgument(new Argument('<format>', 'the claims format').choices(CLAIM_FORMATS))
  .argument('<dir>', 'directory to import')
  .action((format: ClaimFormat, dir: string) =>
    guarded(async () => {
      const { config } = setup();
      requireImportDir(dir);
      const [{ CLAIM_FORMAT_FILES }, { claimCsvFiles }] = await Promise.all([import('../claims/formats.ts'), import('../claims/generic-sql.ts')]);
      requireImportFiles(dir, `${format} claims`, format === 'csv' ? { csv: claimCsvFiles(dir) } : { required: CLAIM_FORMAT_FILES[format] });
      markDataDir(config);
      const [{ withConnection }, { importClaims }] = await Promise.all([import('../warehouse/duckdb.ts'), import('../claims/import.ts')]);
      const result = await withConnection((conn) => importClaims(conn, config.dataDir, format, dir));
      console.log(JSON.stringify(result, null, 2));
      if (result.claims.changed > 0) {
        console.error(`quorum import claims: ${result.claims.changed} claims were stored before with other content; the stored versions are kept (listed under "changed")`);
      }
      // The API and exports read the published snapshot: what an import wrote is scored and shown
      // from the next run on (QA: imported claims were nowhere in /api/claims/, with no word why).
      const added = result.claims.written + result.resolutions.written;
      if (added > 0) {
        console.error(`quorum import claims: ${added} new claims and resolutions are stored; the API, the track records and the exports show them after the next run (the scheduled one, or \`quorum run --score-only\` now)`);
      }
    }),
  );

/**
 * `run --resume <run_id>`: the run exists, and no --as-of is given beside it, checked before the
 * data directory is marked (the run checks both again under its lock). QA: a mistyped id, or a
 * mistyped QUORUM_DATA_DIR, was refused only after FORMAT was written, so a directory that did not
 * exist was made, holding FORMAT alone.
 */
async function resumableRunExists(dataDir: string, runId: string, asOf: Date | undefined): Promise<void> {
  if (asOf) throw new Error('--resume <run_id> and --as-of cannot be combined: a resumed run keeps its own as-of');
  if (!existsSync(dataDir)) throw new Error(`no run with id ${runId}: the data directory ${dataDir} does not exist (QUORUM_DATA_DIR)`);
  const [{ withConnection }, { findRunToResume }] = await Promise.all([import('../warehouse/duckdb.ts'), import('../forecast/runs.ts')]);
  await withConnection((conn) => findRunToResume(conn, dataDir, runId));
}

program
  .command('run')
  .description('run the pipeline once (forecast, score, publish)')
  .option('--as-of <time>', 'date the run at a past time: it sees only what was known then', parseAsOf)
  .option('--score-only', 'rescore and publish without asking the models')
  .option('--resume [run_id]', 'continue the newest interrupted run (or the given run): finished calls are not repeated')
  .option('--budget-usd <usd>', 'stop starting model calls once the run has spent this much (default QUORUM_RUN_BUDGET_USD)', parseUsd)
  .addHelpText('after', '\nExit codes: 0 completed; 1 failed, bad input or configuration; 75 another run holds the lock;\n143/130 interrupted by SIGTERM/SIGINT after the calls in flight (quorum run --resume continues it).')
  .action((opts: { asOf?: Date; scoreOnly?: boolean; resume?: boolean | string; budgetUsd?: number }) =>
    guarded(async () => {
      const { config, logger } = await setupChecked();
      if (typeof opts.resume === 'string') await resumableRunExists(config.dataDir, opts.resume, opts.asOf);
      markDataDir(config);
      const [{ runPipeline }, { createProgress }] = await Promise.all([import('../run.ts'), import('../forecast/progress.ts')]);
      const controller = new AbortController();
      let stoppedBy: NodeJS.Signals | null = null;
      const stop = (signal: NodeJS.Signals) => {
        stoppedBy ??= signal;
        logger.warn({ signal }, 'stopping: no new model calls; finishing the calls in flight (a second signal kills)');
        controller.abort();
      };
      process.once('SIGTERM', stop);
      process.once('SIGINT', stop);
      const progress = createProgress({ logger, tty: Boolean(process.stderr.isTTY), intervalMs: config.progressIntervalMs });
      const summary = await runPipeline({
        config,
        logger,
        asOf: opts.asOf,
        scoreOnly: opts.scoreOnly,
        signal: controller.signal,
        // Explicit on the command line: a plain `quorum run` is a new run (QUORUM_AUTO_RESUME is for the service).
        resume: opts.resume ?? false,
        budgetUsd: opts.budgetUsd,
        progress,
      });
      progress.close();
      console.log(JSON.stringify(summary));
      if (summary.status === 'interrupted') return stoppedBy === 'SIGINT' ? 130 : 143;
      return summary.status === 'completed' ? 0 : 1;
    }),
  );

program
  .command('sync')
  .description('pull markets, prices and resolutions from venues and sources (exit 0 all ok, 3 some failed, 1 all failed)')
  .option('--json', 'print the report as JSON (the default when stdout is not a terminal)')
  .action((opts: { json?: boolean }) =>
    guarded(async () => {
      const { config, logger } = await setupChecked();
      markDataDir(config);
      const { runSync } = await import('../sync.ts');
      const controller = new AbortController();
      // Said at once (QA: Ctrl-C during a sync was not acknowledged); the venues' requests end with
      // the signal as their error, and what they brought before is written and reported.
      const stop = (signal: NodeJS.Signals) => {
        logger.warn({ signal }, 'stopping the sync: requests in flight are cancelled; what came before is written and reported (a second signal kills)');
        controller.abort(new Error(`stopped by ${signal}`));
      };
      process.once('SIGTERM', stop);
      process.once('SIGINT', stop);
      const report = await runSync(config, logger, controller.signal);
      if (syncOutputFormat(opts, Boolean(process.stdout.isTTY)) === 'table') process.stdout.write(renderSyncTable(report));
      else console.log(JSON.stringify(report));
      return syncExitCode(report.status);
    }),
  );

program
  .command('serve')
  .description('serve the API over the published snapshot')
  .action(() =>
    guarded(async () => {
      const { config, logger } = await setupChecked({ serving: true });
      // Before anything is made in the data directory (QA: a busy port left a new, empty one).
      await (await import('./port.ts')).assertPortFree(config.host, config.port);
      const releaseLock = claimDataDirForServer(config.dataDir);
      // The handler right after the lock: a signal at any later moment (a supervisor stopping a
      // server still starting, or right after its "api listening" line) still closes what is open
      // and releases the lock (it met the default disposition and left server.lock behind).
      let server: ServerHandle | null = null;
      onShutdown(logger, async () => {
        try {
          await server?.close();
        } finally {
          releaseLock();
        }
      });
      return releasedOnFailure(releaseLock, async () => {
        // The API only: it does not rescore or bootstrap (quorum start does), but says when it should.
        const { snapshotFromOtherSql, servedSnapshotNote } = await import('../bootstrap.ts');
        const none = servedSnapshotNote(config.dataDir);
        if (none) logger.warn({ dataDir: config.dataDir }, none);
        const other = await snapshotFromOtherSql(config.dataDir);
        if (other) logger.warn(other, 'the published snapshot was derived by other SQL than this version\'s: some endpoints may fail until `quorum run --score-only` (or quorum start) rescores it');
        await (await import('./dashboard.ts')).ensureDashboardBuilt(logger); // this checkout's, not the last build's
        // startServer logs where it listens, once.
        server = await startServer({ port: config.port, host: config.host, dataDir: config.dataDir, logger });
        return -1;
      });
    }),
  );

program
  .command('start')
  .description('first-start bootstrap on the bundled data, then the API and the scheduler (QUORUM_SCHEDULE: every 4 hours by default)')
  .action(() =>
    guarded(async () => {
      const { config, logger } = await setupChecked({ serving: true });
      await warnOfBadDefinitionFiles(logger);
      const sample = (await import('../first-start-check.ts')).firstStartSampleProblem(config);
      if (sample) throw new ConfigError(`invalid configuration:\n  QUORUM_SAMPLE_DIR: ${sample}`);
      await (await import('./port.ts')).assertPortFree(config.host, config.port);
      const releaseLock = claimDataDirForServer(config.dataDir);
      markDataDir(config);
      let server: ServerHandle | null = null;
      let task: { stop(): void | Promise<void> } | null = null;
      // A signal during the start-up work (the first-start bootstrap, or an upgrade's rescore) stops
      // its run as the scheduler's are stopped (no new call, the calls in flight finish, recorded
      // interrupted) and is waited for, then the process exits: it exited 0 in the middle of the
      // run (QA: run.lock or import.lock left naming the dead process, the snapshot's .tmp
      // directory left, the calls in flight lost).
      const stopStartUp = new AbortController();
      let startingUp: Promise<unknown> | null = null;
      let rescorer: { stop(): Promise<void> } | null = null;
      onShutdown(logger, async () => {
        try {
          stopStartUp.abort();
          await startingUp?.catch(() => undefined);
          await rescorer?.stop();
          await task?.stop();
          await server?.close();
        } finally {
          releaseLock();
        }
      }); // right after the lock, as for serve (a first start's bootstrap takes a while)
      return releasedOnFailure(releaseLock, async () => {
        const [{ bootstrapIfEmpty, rescoreAfterRunEnds, rescoreIfDerivedByOtherSql, servedSnapshotNote }, { startScheduler }, { readCurrent }] = await Promise.all([
          import('../bootstrap.ts'),
          import('../scheduler.ts'),
          import('../warehouse/snapshot.ts'),
        ]);
        // First start: the bundled sample; after an upgrade: the snapshot rescored by this version's
        // SQL, or, while another process's run holds the lock, once that run has ended (rescorer).
        let rescoreWaits = false;
        const signal = stopStartUp.signal;
        startingUp = (async () => {
          const made = await bootstrapIfEmpty(config, logger, signal);
          if (made.length === 0 && !signal.aborted) await rescoreIfDerivedByOtherSql(config, logger, { signal, onLocked: () => { rescoreWaits = true; } });
        })();
        await startingUp;
        if (signal.aborted) return -1; // the shutdown handler exits
        // Not a first start, yet nothing to serve: CURRENT names no snapshot that exists (as serve says).
        const none = servedSnapshotNote(config.dataDir);
        if (none) logger.warn({ dataDir: config.dataDir }, none);
        const judged = rescoreWaits ? null : readCurrent(config.dataDir); // before anything else can publish
        await (await import('./dashboard.ts')).ensureDashboardBuilt(logger); // this checkout's, not the last build's
        server = await startServer({ port: config.port, host: config.host, dataDir: config.dataDir, logger });
        task = startScheduler(config, logger);
        // while it serves: a snapshot an older version's run publishes (the one in progress now, or a
        // later one during a rolling upgrade) is rescored once that run has ended; the snapshot
        // served now was judged above unless a run held the lock
        rescorer = rescoreAfterRunEnds(config, logger, { judged });
        return -1;
      });
    }),
  );

program
  .command('simulator')
  .description('run the OpenAI-compatible model simulator on loopback')
  .option('--port <n>', 'port (0 picks a free one)', intOption(0, 65535), 0)
  .option('--latency-ms <n>', 'latency per call', intOption(0, 60_000), 0)
  .action((opts: { port: number; latencyMs: number }) =>
    guarded(async () => {
      const logger = createLogger(undefined, { destination: cliLogDestination() });
      // Like every command (QA: the simulator said nothing of QUORUM_SIMULATOR_LATENCY=500, a
      // misspelling). It needs no configuration: the variables named by the models file, when one
      // loads, are known; when none does, every other QUORUM_* variable nothing reads is named.
      let unknown: ReturnType<typeof unknownVariables>;
      try {
        unknown = loadConfig().unknownVariables;
      } catch {
        unknown = unknownVariables(process.env);
      }
      for (const u of unknown) logger.warn({ variable: u.name, closest: u.closest }, unknownVariableMessage(u));
      // A port in use names the option that fixes it (QA: Node's own "listen EADDRINUSE: …").
      const sim = await startSimulator({ port: opts.port, latencyMs: opts.latencyMs }).catch((err: NodeJS.ErrnoException) => {
        if (err.code !== 'EADDRINUSE' && err.code !== 'EACCES') throw err;
        throw new Error(`cannot listen on 127.0.0.1:${opts.port} (${err.code}): choose another --port (0 picks a free one)`);
      });
      console.log(JSON.stringify({ url: sim.url }));
      onShutdown(logger, () => sim.close(), { warehouse: false });
      return -1;
    }),
  );

registerKeysCommands(program);
registerWebhooksCommands(program);

/**
 * Graceful shutdown on SIGTERM/SIGINT: stop taking work, finish what is in flight, close the
 * warehouse (unless the command has none), exit 0.
 */
function onShutdown(logger: Logger, close: () => Promise<void>, opts: { warehouse: boolean } = { warehouse: true }): void {
  let closing = false;
  const handler = (signal: string) => {
    if (closing) return;
    closing = true;
    logger.info({ signal }, 'shutting down');
    close()
      .then(() => (opts.warehouse ? closeWarehouse() : undefined))
      .then(() => process.exit(0))
      .catch((err) => {
        logger.error({ err }, 'shutdown failed');
        process.exit(1);
      });
  };
  process.once('SIGTERM', handler);
  process.once('SIGINT', handler);
}

await program.parseAsync(process.argv);
