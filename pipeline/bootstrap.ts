/**
 * First start on the bundled data: when no snapshot has been published yet, import the sample
 * (ForecastBench questions, market prices and outcomes), run the pipeline dated at each round's
 * freeze time (the models see only what was known then), then once more now, so the service has
 * real questions, real prices, real outcomes and (simulated, unless configured) model forecasts.
 * The sample's prices are historical (observed at its rounds, not now): the "now" run says so in
 * its summary (`prices_historical`, the newest observation and its age, a note) and in the log.
 */
import { existsSync, readFileSync, rmSync } from 'node:fs';
import { setTimeout as sleep } from 'node:timers/promises';
import { dirname, join } from 'node:path';
import { importClaims, type ClaimImportResult } from './claims/import.ts';
import type { ClaimFormat } from './claims/formats.ts';
import type { Logger } from './log.ts';
import type { QuorumConfig } from './config.ts';
import { withConnection } from './warehouse/duckdb.ts';
import { ImportLockedError, LOCK_STALE_MS, RunLockedError, runLockHeld, withImportLock } from './warehouse/lock.ts';
import { CURRENT_POLL_MS, currentManifestProblem, newestPublished, publishedBefore, readCurrent, readManifest } from './warehouse/snapshot.ts';
import { deriveSqlHash } from './warehouse/derive.ts';
import { parseForecastBench } from './import/forecastbench.ts';
import { writeImportBatch } from './import/write-batch.ts';
import { runPipeline, type RunSummary } from './run.ts';
import { isResumable, listRuns } from './forecast/runs.ts';
import { fsyncDir, writeFileAtomicSync } from './fs/durable.ts';
import { runSync } from './sync.ts';
import { bootstrapMarkerFile } from './first-start-check.ts';

/** The distinct freeze times of the rounds in a ForecastBench questions file, oldest first. */
export function roundFreezeTimes(dir: string): Date[] {
  const times = new Set<string>();
  for (const line of readFileSync(join(dir, 'questions_market.jsonl'), 'utf8').split('\n')) {
    if (!line.trim()) continue;
    const freeze = (JSON.parse(line) as { freeze_datetime?: string }).freeze_datetime;
    if (freeze) times.add(new Date(freeze).toISOString());
  }
  return [...times].sort().map((t) => new Date(t));
}

/** Imports a ForecastBench directory into the raw tables; returns per-table counts and the newest price's time. */
export async function importForecastBench(config: QuorumConfig, dir: string, now = new Date()) {
  const batch = await parseForecastBench(dir, { now });
  // Under the import lock: another import must not add the same keys in between.
  const written = await withImportLock(config.dataDir, () => withConnection((conn) => writeImportBatch(conn, config.dataDir, batch, now)));
  return { written, skipped: batch.skipped, newest_price_observed_at: newestObservation(batch.market_prices) };
}

/** The latest `observed_at` of price rows (ISO), or null when there is none. */
function newestObservation(rows: readonly { observed_at: Date | null }[]): string | null {
  let newest: number | null = null;
  for (const r of rows) if (r.observed_at && (newest === null || r.observed_at.getTime() > newest)) newest = r.observed_at.getTime();
  return newest === null ? null : new Date(newest).toISOString();
}

/**
 * Marks the first start's "now" run: the bundled prices beside its forecasts are historical.
 * Mutates the summary (the field, the newest observation, its age, a note) and logs it.
 */
export function flagHistoricalPrices(summary: RunSummary, newestObservedAt: string, logger: Logger): void {
  const ageHours = Math.round(((Date.parse(summary.as_of) - Date.parse(newestObservedAt)) / 3_600_000) * 10) / 10;
  const note =
    `the bundled sample's market prices are historical: the newest was observed at ${newestObservedAt}, ` +
    `${ageHours} hours (${Math.floor(ageHours / 24)} days) before this run; they are not current prices`;
  summary.prices_historical = true;
  summary.newest_price_observed_at = newestObservedAt;
  summary.newest_price_age_hours = ageHours;
  summary.notes.push(note);
  logger.warn({ run_id: summary.run_id, prices_historical: true, newest_price_observed_at: newestObservedAt, newest_price_age_hours: ageHours }, note);
}

/**
 * The claims datasets bundled beside the ForecastBench sample (data/sample/<dataset>/), each
 * imported when its folder exists (a test's own sample directory has none: nothing is imported).
 */
export const BUNDLED_CLAIMS: readonly { format: ClaimFormat; folder: string }[] = [
  { format: 'fte-polls', folder: 'fte-pollster-raw-polls' },
  { format: 'fte-forecasts', folder: 'fte-election-forecasts' },
  { format: 'cbo', folder: 'cbo-budget-projections' },
];

/**
 * How long a start waits for another import (an operator's `quorum import`, seconds long) to
 * finish before its own: past the lock's staleness, after which a dead holder's lock is taken over
 * anyway.
 */
const IMPORT_LOCK_WAIT_MS = LOCK_STALE_MS + 30_000;

/**
 * `body`, tried again while another import holds the import lock: a start waits for it rather than
 * fail, and says so once. `signal` (quorum start's SIGTERM/SIGINT) ends the wait: the
 * ImportLockedError is thrown then (QA review: a start stopped while another import held the lock
 * kept waiting, up to 3.5 minutes, then imported anyway before it exited).
 */
async function waitingForImports<T>(body: () => Promise<T>, opts: { signal?: AbortSignal; logger?: Logger } = {}): Promise<T> {
  const deadline = Date.now() + IMPORT_LOCK_WAIT_MS;
  let told = false;
  for (;;) {
    try {
      return await body();
    } catch (err) {
      if (!(err instanceof ImportLockedError) || Date.now() > deadline || opts.signal?.aborted) throw err;
      if (!told) opts.logger?.warn({ holder: err.holder }, 'another import is in progress: waiting for it to finish before importing');
      told = true;
      await sleep(500, undefined, { signal: opts.signal }).catch(() => undefined);
    }
  }
}

/**
 * `body` (a run or the local sync of the first start), tried again while another process's run or
 * sync holds the run lock (an operator's `quorum sync` or `quorum run`, a cron job): the first start
 * waits for it and says so once, as it waits for another import. It failed instead (QA: `quorum
 * run` beside a first start, and the service exited 75 "another run is in progress" before it ever
 * served). A dead holder's lock is taken over by the next try (the lock's own rules), so there is
 * no deadline. `signal` ends the wait: null then.
 */
async function waitingForRuns<T>(body: () => Promise<T>, opts: { signal?: AbortSignal; logger: Logger }): Promise<T | null> {
  let told = false;
  for (;;) {
    if (opts.signal?.aborted) return null;
    try {
      return await body();
    } catch (err) {
      if (!(err instanceof RunLockedError)) throw err;
      if (!told) opts.logger.warn({ holder: err.holder }, 'another run or sync holds the run lock: the first start waits for it to finish');
      told = true;
      await sleep(1_000, undefined, { signal: opts.signal }).catch(() => undefined);
    }
  }
}

/** Whether `err` is the import lock's wait ended by `signal` (waitingForImports). */
function importWaitStopped(err: unknown, signal: AbortSignal | undefined): boolean {
  return err instanceof ImportLockedError && signal?.aborted === true;
}

/**
 * Imports the bundled claims datasets found under `sampleRoot` into `dataDir`; returns what each
 * wrote. While another import holds the import lock it waits (waitingForImports: `signal` ends the wait).
 */
export async function importBundledClaims(
  dataDir: string,
  sampleRoot: string,
  now = new Date(),
  opts: { signal?: AbortSignal; logger?: Logger } = {},
): Promise<ClaimImportResult[]> {
  const found = BUNDLED_CLAIMS.filter((d) => existsSync(join(sampleRoot, d.folder)));
  if (found.length === 0) return [];
  return withConnection(async (conn) => {
    const out: ClaimImportResult[] = [];
    for (const d of found) out.push(await waitingForImports(() => importClaims(conn, dataDir, d.format, join(sampleRoot, d.folder), now), opts));
    return out;
  });
}

export { bootstrapMarkerFile, firstStartSampleProblem } from './first-start-check.ts';

/**
 * The run of the first start's sequence dated `asOf` (null: its "now" run, dated after `after`):
 * `done` when one completed (a first start stopped later), the id of one to continue (stopped
 * while it ran: its journaled calls are not made again), or `new`.
 */
async function bootstrapRun(config: QuorumConfig, asOf: Date | null, after: Date | null): Promise<'done' | 'new' | { resume: string }> {
  const runs = await withConnection((conn) => listRuns(conn, config.dataDir));
  const mine = runs.filter((r) => (asOf ? Date.parse(r.as_of) === asOf.getTime() : after === null || Date.parse(r.as_of) > after.getTime()));
  if (mine.some((r) => r.completed)) return 'done';
  const resumable = mine.find(isResumable); // newest first (listRuns)
  return resumable ? { resume: resumable.run_id } : 'new';
}

/** The run a due step of the sequence makes: a new one dated `asOf`, or the one it continues. */
function runDue(config: QuorumConfig, logger: Logger, due: 'new' | { resume: string }, asOf: Date, signal?: AbortSignal): Promise<RunSummary> {
  return runPipeline(due === 'new' ? { config, logger, asOf, signal } : { config, logger, resume: due.resume, signal });
}

/**
 * Runs the first-start sequence if no snapshot exists, or finishes one a kill stopped part-way
 * (bootstrapMarkerFile); returns the runs it made. `signal` (quorum start's SIGTERM/SIGINT) stops
 * it as it stops a scheduled run: the run in progress makes no new call, finishes the calls in
 * flight and is recorded interrupted; no later step starts, and the next start finishes the rest.
 * (QA: the process exited 0 in the middle of a run, the calls in flight lost and run.lock left.)
 */
export async function bootstrapIfEmpty(config: QuorumConfig, logger: Logger, signal?: AbortSignal): Promise<RunSummary[]> {
  const marker = bootstrapMarkerFile(config.dataDir);
  const unfinished = existsSync(marker);
  // Published before: not a first start, also when CURRENT names no snapshot that exists (QA: a
  // production directory whose served snapshot was removed by hand got the bundled sample
  // imported into it and the sample's dated runs made, with its real models).
  if (publishedBefore(config.dataDir) && !unfinished) return [];
  if (unfinished) logger.warn({ marker }, 'the first start was stopped before it finished: finishing it (what it did is not done again)');
  else logger.info({ sample: config.sampleDir }, 'no snapshot yet: importing the bundled sample and running the pipeline');
  writeFileAtomicSync(marker, `${JSON.stringify({ sample: config.sampleDir, started_at: new Date().toISOString() })}\n`);
  // The imports are idempotent: a first start stopped after them writes nothing again.
  let imported: Awaited<ReturnType<typeof importForecastBench>>;
  let claims: ClaimImportResult[];
  try {
    imported = await waitingForImports(() => importForecastBench(config, config.sampleDir), { signal, logger });
    logger.info({ written: imported.written, skipped: imported.skipped.length }, 'sample imported');
    claims = await importBundledClaims(config.dataDir, dirname(config.sampleDir), new Date(), { signal, logger });
  } catch (err) {
    if (importWaitStopped(err, signal)) return []; // stopped while another import ran: the marker stays
    throw err;
  }
  if (claims.length) logger.info({ claims }, 'bundled claims datasets imported');
  const runs: RunSummary[] = [];
  const rounds = roundFreezeTimes(config.sampleDir);
  // Each step is judged again after a wait for the run lock: the run that held it may have made it.
  const step = (body: () => Promise<RunSummary | null>) => waitingForRuns(body, { signal, logger });
  for (const asOf of rounds) {
    const run = await step(async () => {
      const due = await bootstrapRun(config, asOf, null);
      return due === 'done' ? null : runDue(config, logger, due, asOf, signal);
    });
    if (run) runs.push(run);
    if (signal?.aborted) return runs;
  }
  // The "now" run is dated too (it does not sync: the sample's prices are what it scores), so the
  // sources registry and the operators' question files (QUORUM_QUESTIONS_DIR) are brought in
  // first, without reaching outside: the first snapshot has the question files' questions instead
  // of waiting for the first scheduled run, hours later (QA). The venues and FRED come with that run.
  const now = await step(async () => {
    const due = await bootstrapRun(config, null, rounds.at(-1) ?? null);
    if (due === 'done') return null;
    const local = await runSync(config, logger, undefined, { localOnly: true });
    if (local.status !== 'ok') logger.warn({ failed: local.failed }, 'first start: the question files were not all read (see the error above)');
    return runDue(config, logger, due, new Date(), signal);
  });
  if (now) {
    if (imported.newest_price_observed_at) flagHistoricalPrices(now, imported.newest_price_observed_at, logger);
    runs.push(now);
  }
  if (signal?.aborted) return runs; // (its last run interrupted: the marker stays for the next start)
  rmSync(marker, { force: true });
  fsyncDir(config.dataDir);
  return runs;
}

/**
 * `quorum serve`'s warning when `dataDir` has no published snapshot (QA: a mistyped directory was
 * served silently, every endpoint a 503), or null when it has one.
 */
export function servedSnapshotNote(dataDir: string): string | null {
  const damaged = currentManifestProblem(dataDir);
  if (damaged !== null) {
    return `${damaged}: it cannot be served, and the API answers 503 not_ready until a run publishes a snapshot (the next scheduled run, or quorum run --score-only now)`;
  }
  if (readCurrent(dataDir) !== null) return null;
  const newest = newestPublished(dataDir);
  if (newest !== null) {
    return `CURRENT names no published snapshot in snapshots/ (${newest} is the newest there): the API answers 503 not_ready until a run publishes one (the next scheduled run, or quorum run --score-only now)`;
  }
  return 'no snapshot is published in this data directory: the API answers 503 not_ready until a run publishes one (quorum run; quorum start imports the bundled sample first)';
}

/** The published snapshot when it was derived by other SQL than this version's (or does not say); else null. */
export async function snapshotFromOtherSql(dataDir: string): Promise<{ snapshot: string; recorded: string | null; expected: string } | null> {
  const current = readCurrent(dataDir);
  if (current === null) return null;
  const expected = await deriveSqlHash();
  if (currentManifestProblem(dataDir) !== null) return null; // nothing to rescore as of (servedSnapshotNote says so)
  const recorded = readManifest(dataDir, current).derive_sql_hash ?? null;
  return recorded === expected ? null : { snapshot: current, recorded, expected };
}

/**
 * Rescores (a score-only run as of the snapshot's own as_of: no model call) when the published
 * snapshot was derived by other SQL
 * than this version's sql/derive, or does not say (published before the manifest recorded it):
 * after an upgrade its tables and columns are not what the API's queries read, and until the next
 * scheduled run (hours away) some endpoints would answer errors. Returns the run's summary, or
 * null when the snapshot is current (or none exists: bootstrapIfEmpty's case).
 */
export async function rescoreIfDerivedByOtherSql(
  config: QuorumConfig,
  logger: Logger,
  opts: { signal?: AbortSignal; onLocked?: (err: RunLockedError) => void } = {},
): Promise<RunSummary | null> {
  const other = await snapshotFromOtherSql(config.dataDir);
  if (other === null) return null;
  const { snapshot: current, recorded, expected } = other;
  logger.warn({ snapshot: current, recorded, expected }, 'the published snapshot was derived by other SQL: rescoring before serving');
  try {
    // A data directory first started by a version without claims never got the bundled datasets
    // (imported on a first start only): an upgrade brings them in. Idempotent: what a first start
    // or an earlier upgrade imported is not written again.
    const claims = await importBundledClaims(config.dataDir, dirname(config.sampleDir), new Date(), { signal: opts.signal, logger });
    const written = claims.reduce((n, c) => n + c.claims.written, 0);
    if (written > 0) logger.info({ claims }, 'bundled claims datasets imported on upgrade');
    // As of the snapshot it replaces: a rescore re-derives that snapshot with this version's SQL.
    // As of now, a past-dated snapshot (quorum run --as-of) jumped to now on an upgrade, with every
    // resolution since as events (QA).
    const asOf = new Date(readManifest(config.dataDir, current).as_of);
    const summary = await runPipeline({ config, logger, scoreOnly: true, asOf, signal: opts.signal });
    if (summary.status !== 'completed') logger.error({ run_id: summary.run_id, error: summary.error }, 'rescoring failed: serving the previous snapshot');
    return summary;
  } catch (err) {
    if (importWaitStopped(err, opts.signal)) return null; // stopped while another import ran: rescored at the next start
    if (err instanceof RunLockedError && opts.onLocked) {
      // Another process's run: this version's publishes with this SQL; an older version's (a
      // rolling upgrade) with its own, so the caller rescores once it ends (rescoreAfterRunEnds).
      logger.warn({ holder: err.holder }, 'rescoring waits: another run holds the run lock; the snapshot is rescored once that run has ended, unless it published one derived by this version');
      opts.onLocked(err);
      return null;
    }
    logger.error({ err }, 'rescoring could not run: serving the previous snapshot until the next run');
    return null;
  }
}

/**
 * How often `quorum start` looks for a snapshot of other SQL: as often as the API looks at CURRENT
 * (CURRENT_POLL_MS, 2 s), so that it serves an older version's snapshot (some endpoints 503) for
 * seconds, not up to the 15 s of a lock heartbeat it waited before. A look is a read of CURRENT
 * (and of run.lock when the snapshot is of other SQL); the manifest is read only when CURRENT changes.
 */
export const SNAPSHOT_CHECK_MS = CURRENT_POLL_MS;

/**
 * `quorum start`, for as long as it serves: every `everyMs` (SNAPSHOT_CHECK_MS), when the published snapshot is derived
 * by other SQL, rescores it as soon as no run holds the lock. Such a snapshot is an older version's
 * run's, during a rolling upgrade: one that held the lock as the server started (rescoreIfDerivedByOtherSql's
 * `onLocked`; QA upgrade pass: the accuracy summary, the resolved list, service stats and scenarios
 * answered 503 until the next scheduled run, up to 4 hours later), or one an older `quorum run`
 * (a cron job, another container not yet upgraded) published after the server started, which it
 * loaded and served as it was until the next scheduled run (QA: no warning, no rescore). Each
 * snapshot is rescored once: a rescore that failed for another reason is logged and not retried
 * (the next scheduled run publishes anyway). The manifest is read only when CURRENT changes.
 * `judged`: a snapshot already judged (the start's own rescore ran on it), not tried again.
 */
export function rescoreAfterRunEnds(
  config: QuorumConfig,
  logger: Logger,
  opts: { everyMs?: number; judged?: string | null } = {},
): { stop(): Promise<void> } {
  const stopping = new AbortController();
  let inFlight: Promise<void> | null = null;
  let settled: string | null = opts.judged ?? null; // the last snapshot found this version's, or rescored (or failed to be)
  const attempt = async (): Promise<void> => {
    const current = readCurrent(config.dataDir);
    if (current === null || current === settled) return;
    const other = await snapshotFromOtherSql(config.dataDir);
    if (other === null || other.snapshot !== current) {
      settled = other === null ? current : settled; // (CURRENT moved in between: judged on the next tick)
      return;
    }
    if (runLockHeld(config.dataDir)) return;
    let locked = false;
    await rescoreIfDerivedByOtherSql(config, logger, { signal: stopping.signal, onLocked: () => { locked = true; } });
    if (!locked) settled = current;
  };
  const timer = setInterval(() => {
    if (inFlight || stopping.signal.aborted) return;
    inFlight = attempt()
      .catch((err: unknown) => {
        settled = readCurrent(config.dataDir);
        logger.error({ err }, 'rescoring a snapshot derived by other SQL failed: serving it until the next run');
      })
      .finally(() => { inFlight = null; });
  }, opts.everyMs ?? SNAPSHOT_CHECK_MS);
  timer.unref();
  return {
    stop: async () => {
      clearInterval(timer);
      stopping.abort();
      await inFlight;
    },
  };
}
