/**
 * One pipeline run (DESIGN §2): select the questions open at the run's as-of time, forecast them
 * with the four models in every mode, score everything in DuckDB SQL, publish a snapshot.
 *
 * Crash safety: raw parts are written atomically (raw-writer), the snapshot is published by
 * rename (snapshot.ts), and the run lock keeps runs from overlapping. A run killed at any point
 * leaves the previous snapshot served; its `runs` row stays `started` and the next run under the
 * lock sweeps its abandoned snapshot directory. The forecast stage journals every finished call
 * (pipeline/forecast/): `resume` continues a killed or interrupted run with its own run id and
 * as-of, without repeating a finished call.
 *
 * Stop: `signal` (SIGTERM/SIGINT in the CLI) stops the run gracefully: no new model call, calls in
 * flight finish, what finished is written, and the run ends `interrupted` (resumable; no snapshot).
 */
import type { DuckDBConnection } from '@duckdb/node-api';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { removeAbandonedAtomicTemps } from './fs/durable.ts';
import type { Logger } from './log.ts';
import type { QuorumConfig } from './config.ts';
import { withConnection } from './warehouse/duckdb.ts';
import { appendRaw, removeAbandonedParts } from './warehouse/raw-writer.ts';
import { createRawViews, rawParts } from './warehouse/raw-views.ts';
import { newRunId, runDate } from './warehouse/layout.ts';
import { acquireRunLock, RunLockLostError } from './warehouse/lock.ts';
import { publishSnapshot, pruneSnapshots, removeAbandonedSnapshots } from './warehouse/snapshot.ts';
import { deriveSqlHash, deriveTables, dropDerivedObjects, exportTables, parquetColumns } from './warehouse/derive.ts';
import { forecastStage } from './forecast/stage.ts';
import { findRunToResume, type RunState } from './forecast/runs.ts';
import { journalPath, readJournal } from './forecast/journal.ts';
import type { ProgressReporter } from './forecast/progress.ts';
import { createProgress } from './forecast/progress.ts';
import { syncAll, writeRegistry, type SyncReport } from './sync.ts';
import { prepareFactors } from './factors/stage.ts';
import { freezeScenarioRecords, prepareScenarios } from './scenarios/stage.ts';
import { emitRunEvents, markEventsPending, recoverPendingEvents } from './events/emit.ts';
import { checkDataFormat } from './warehouse/data-format.ts';
import { loadEventsConfig } from './events/config.ts';
import { currentManifestProblem, currentName, isPublished, newestPublished, readCurrent, readManifest } from './warehouse/snapshot.ts';
import { freezeThesisVintages, prepareStructure } from './structure/stage.ts';
import { structureDir } from './structure/definitions.ts';
import { unknownCuratedQuestions, unknownQuestionsNote } from './structure/unknown-questions.ts';
import { checkDefinitionFiles } from './stage-settings.ts';

export interface RunOptions {
  config: QuorumConfig;
  logger: Logger;
  /** The run's point in time (default: now). A run dated T sees only what was known at T. */
  asOf?: Date;
  /** Skip the forecasting stage (rescore and publish only). */
  scoreOnly?: boolean;
  /** Graceful stop: no new model call, in-flight calls finish, the run ends `interrupted`. */
  signal?: AbortSignal;
  /**
   * Continue an earlier run (same run id and as-of, finished calls not repeated): `true` = the
   * newest resumable run (a new run when there is none), a run id = that run (a completed one
   * makes no call), `false` = always a new run. Default: like `true` restricted to the newest run,
   * when `config.autoResume` and no `asOf` is given (a restarted service finishes what a kill
   * interrupted).
   */
  resume?: boolean | string;
  /** Per-run model budget in USD (default `config.runBudgetUsd`); null: no budget. */
  budgetUsd?: number | null;
  /** Progress bars or log lines (default: log lines every `config.progressIntervalMs`). */
  progress?: ProgressReporter;
  /**
   * Sync venues and sources first (default: true for a live run; a run dated in the past with
   * `asOf`, a resumed run and a score-only run never sync: the outside world answers for now).
   */
  sync?: boolean;
  /** Event thresholds (default: QUORUM_EVENTS_CONSENSUS_THRESHOLD / QUORUM_EVENTS_EDGE_THRESHOLD). */
  events?: { consensusThreshold: number; edgeThreshold: number };
}

/**
 * The note of a continued run that had published its snapshot before it was killed (it is only
 * recorded completed): the scheduler then starts this tick's own run (scheduler.ts scheduledRun).
 */
export const ALREADY_PUBLISHED_NOTE = 'its snapshot was published before the interruption; kept as it was';

export interface RunSummary {
  run_id: string;
  as_of: string;
  /** interrupted: stopped by a signal, resumable (`quorum run --resume`). */
  status: 'completed' | 'failed' | 'interrupted';
  questions: number;
  forecasts: number;
  calls: number;
  failed_calls: number;
  /** Calls never sent because the budget was spent (model_calls status `skipped`). */
  skipped_calls: number;
  /** Model calls sent by this invocation (a resumed run counts only the new ones). */
  calls_made: number;
  budget_exhausted: boolean;
  /** This invocation continued an earlier run. */
  resumed: boolean;
  evidence_items: number;
  tokens_in: number;
  tokens_out: number;
  cost_usd: number;
  snapshot: string | null;
  error: string | null;
  duration_ms: number;
  /** What the sync stage brought, per venue and source (null when the run did not sync). */
  sync: SyncReport | null;
  /** What a reader of this summary should know beside the counts (e.g. the prices are historical). */
  notes: string[];
  /**
   * Set on the first start's "now" run (pipeline/bootstrap.ts): the market prices beside its
   * forecasts are the bundled sample's, historical; the newest one's time and age in hours.
   */
  prices_historical?: boolean;
  newest_price_observed_at?: string;
  newest_price_age_hours?: number;
}

/**
 * What run.completed carries: the summary's counts as of the publish that follows (without the sync
 * report, notes, error and timing). Kept in the events marker before the publish, so a recovery by
 * the next run sends the same.
 */
export function runCompletedSummary(summary: RunSummary): Record<string, unknown> {
  const { sync: _s, notes: _n, error: _e, duration_ms: _d, ...counts } = summary;
  return { ...counts, status: 'completed', snapshot: summary.run_id };
}

async function recordRun(
  conn: DuckDBConnection,
  root: string,
  row: Record<string, unknown> & { run_id: string; as_of: Date },
): Promise<void> {
  await appendRaw(conn, root, 'runs', [{ ...row, recorded_at: new Date() }], {
    runId: row.run_id,
    runDate: runDate(row.as_of),
  });
}

class RunInterrupted extends Error {}

/** Runs the whole pipeline once under the run lock. Throws RunLockedError when a run is in progress. */
/** The as_of of the snapshot `id` this run replaces; null when its manifest cannot be read (it only decides a warning). */
function previousSnapshotAsOf(root: string, id: string): string | null {
  try {
    return readManifest(root, id).as_of;
  } catch {
    return null;
  }
}

/**
 * The snapshot a run replaces when CURRENT names none that exists (its snapshot removed by hand, a
 * restore that brought CURRENT without it) although snapshots were published: the newest of them,
 * with a warning. QA: the run compared itself with nothing, as a first publish, and announced
 * every resolution and score again (254 question.resolved, 163 score.posted to the stream and
 * webhooks on the sample), all announced before. With none but the one CURRENT names, its manifest
 * missing or cut short, that one's files. Null when nothing was ever published.
 */
function previousWithoutCurrent(root: string, log: Logger): string | null {
  const newest = newestPublished(root);
  const named = currentName(root);
  if (newest === null) {
    // The only snapshot is the one CURRENT names, its directory there without a manifest that reads
    // (copied or restored in part): its files are what was served, and what is compared with
    // (emit.ts takes a table it lacks as empty). Review: the run compared itself with nothing, as a
    // first publish, and announced every resolution and score again.
    if (named === null || currentManifestProblem(root) === null) return null;
    log.warn(
      { current: named, compared_with: named },
      `CURRENT names ${JSON.stringify(named)}, whose manifest is missing or does not read, and no other snapshot was published: ` +
        `this run's events compare it with ${named}'s files (not with nothing, which would announce every resolution again); this run's publish rewrites CURRENT`,
    );
    return named;
  }
  log.warn(
    { current: named, compared_with: newest },
    `${named === null ? 'CURRENT is missing' : `CURRENT names ${JSON.stringify(named)}, which is not a published snapshot in snapshots/`}: ` +
      `this run's events compare it with ${newest}, the newest published snapshot (not with nothing, which would announce every resolution again); this run's publish rewrites CURRENT`,
  );
  return newest;
}

export async function runPipeline(options: RunOptions): Promise<RunSummary> {
  const { config, logger } = options;
  const root = config.dataDir;
  const started = new Date();
  if (options.asOf && typeof options.resume === 'string') {
    throw new Error('--resume <run_id> and --as-of cannot be combined: a resumed run keeps its own as-of');
  }
  const release = acquireRunLock(root);
  try {
    // Again under the lock: a scheduled run of a server started before a newer version's run
    // marked the directory must not write into it (the CLI checked only at its start).
    checkDataFormat(root);
    const abandoned = removeAbandonedSnapshots(root);
    if (abandoned.length) logger.warn({ abandoned }, 'removed snapshot directories of runs that died');
    const abandonedParts = removeAbandonedParts(root);
    if (abandonedParts.length) logger.warn({ abandoned: abandonedParts }, 'removed raw parts left unfinished by a process killed while writing');
    // The atomic writes' temp files (CURRENT, FORMAT, bootstrap.json, server.json; events/; the
    // server's state/ and webhooks/) a process killed mid-write left, once an hour old.
    const abandonedTemps = [
      ...removeAbandonedAtomicTemps(root),
      ...removeAbandonedAtomicTemps(join(root, 'events')),
      ...removeAbandonedAtomicTemps(join(root, 'state'), { recursive: true }),
      ...removeAbandonedAtomicTemps(join(root, 'webhooks'), { recursive: true }),
    ];
    if (abandonedTemps.length) logger.warn({ abandoned: abandonedTemps }, 'removed temp files left by a process killed while writing');
    const eventThresholds = options.events ?? loadEventsConfig();
    return await withConnection(async (conn) => {
      // Events of a run killed between its publish and its events are derived first (pipeline/events/).
      const recovered = await recoverPendingEvents(conn, root, eventThresholds);
      if (recovered?.madeCurrent) logger.warn({ run_id: recovered.runId }, 'made current the snapshot of a run stopped before it could (its directory was in place)');
      if (recovered) logger.warn({ run_id: recovered.runId }, 'derived the events of a run killed after publishing');
      // Which run: a new one, or an earlier one to continue (see RunOptions.resume).
      let target: RunState | null = null;
      if (options.resume === true || typeof options.resume === 'string') {
        target = await findRunToResume(conn, root, options.resume);
        if (!target) logger.warn('--resume: no interrupted run to continue; starting a new run');
      } else if (options.resume === undefined && !options.asOf && !options.scoreOnly && config.autoResume) {
        target = await findRunToResume(conn, root, 'auto');
      }
      if (target === null && options.resume !== true && typeof options.resume !== 'string') {
        // A new run; an interrupted (or failed) one's journaled (paid) calls reach the warehouse
        // only when it is continued: say so, every time, rather than leave it silent (QA).
        const pending = await findRunToResume(conn, root, true);
        if (pending && isPublished(root, pending.run_id)) {
          // Killed after its publish: its calls are in the warehouse and its snapshot is out; only
          // its `completed` row is missing (outside test: told its calls were not in the warehouse).
          logger.warn(
            { interrupted_run: pending.run_id, as_of: pending.as_of, snapshot: pending.run_id },
            `run ${pending.run_id} was stopped after it published its snapshot, before it recorded itself completed: \`quorum run --resume\` records it so (nothing is made or published again); this is a new run`,
          );
        } else if (pending) {
          const how = pending.failed ? 'failed' : 'was interrupted';
          logger.warn(
            { interrupted_run: pending.run_id, as_of: pending.as_of, calls: pending.calls, journal: pending.journal, failed: pending.failed },
            `run ${pending.run_id} ${how} before it finished: \`quorum run --resume\` continues it (its journaled calls are not in the warehouse until then); this is a new run`,
          );
        }
      }
      if (target && options.asOf && target.as_of !== options.asOf.toISOString()) {
        throw new Error(`--as-of conflicts with the resumed run ${target.run_id} (as of ${target.as_of})`);
      }
      const asOf = target ? new Date(target.as_of) : (options.asOf ?? new Date());
      const runId = target?.run_id ?? newRunId(asOf);
      const log = logger.child({ run_id: runId, as_of: asOf.toISOString() });
      const progress = options.progress ?? createProgress({ logger: log, tty: false, intervalMs: config.progressIntervalMs });
      const summary: RunSummary = {
        run_id: runId,
        as_of: asOf.toISOString(),
        status: 'failed',
        questions: 0,
        forecasts: 0,
        calls: 0,
        failed_calls: 0,
        skipped_calls: 0,
        calls_made: 0,
        budget_exhausted: false,
        resumed: target !== null,
        evidence_items: 0,
        tokens_in: 0,
        tokens_out: 0,
        cost_usd: 0,
        snapshot: null,
        error: null,
        duration_ms: 0,
        sync: null,
        notes: [],
      };
      const partition = { runId, runDate: runDate(asOf) };
      // The lock is taken over when this process stops beating for LOCK_STALE_MS (paused: Ctrl-Z,
      // a paused container, a suspended VM on a shared data dir): a run that resumes after that
      // must not publish over the new holder's snapshot, CURRENT and pending events (QA).
      const checkLock = () => {
        if (!release.held()) throw new RunLockLostError(runId);
      };
      const forecast = async (replayOnly = false) => {
        const f = await forecastStage({
          replayOnly,
          conn,
          config,
          log,
          runId,
          asOf,
          partition,
          stopSignal: options.signal,
          budgetUsd: options.budgetUsd,
          progress,
        });
        const { interrupted: _i, calls_reused: _r, evidence_errors: _e, written_later: writtenLater, ...counts } = f;
        Object.assign(summary, counts);
        if (writtenLater > 0) {
          const note = writtenLaterNote(writtenLater, asOf);
          log.warn({ written_later: writtenLater }, note);
          summary.notes.push(note);
        }
        if (f.budget_exhausted) log.warn({ skipped_calls: f.skipped_calls, cost_usd: f.cost_usd }, 'run budget exhausted: remaining calls recorded as skipped');
        if (f.interrupted) throw new RunInterrupted('interrupted by a signal before every call was made; continue with `quorum run --resume`');
      };

      if (target?.completed) {
        // Re-running a finished run: nothing is called again and the published snapshot stays.
        log.info('run already completed: counting its calls, calling nothing');
        await forecast(true);
        summary.status = 'completed';
        summary.snapshot = target.snapshot;
        summary.duration_ms = Date.now() - started.getTime();
        return summary;
      }

      await recordRun(conn, root, { run_id: runId, status: 'started', as_of: asOf, started_at: started });
      log.info(target ? { resumed: true } : {}, target ? 'run resumed' : 'run started');
      try {
        // The definition files first: a bad one fails the run before it syncs or pays for a call.
        checkDefinitionFiles();
        // Sync: bring markets, prices and resolutions in before forecasting. A failed venue or
        // source is in the report (and the runs row), never a failed run.
        if ((options.sync ?? true) && !options.asOf && !options.scoreOnly && !target) {
          summary.sync = await syncAll(conn, {
            root,
            questionsDir: config.questionsDir,
            now: asOf,
            logger: log,
            signal: options.signal,
            partition,
            held: release.held,
          });
        } else {
          await writeRegistry(conn, { root, partition });
        }
        if (!options.scoreOnly) await forecast();
        /** Derives and publishes this run's snapshot, then its events; prunes old snapshots. */
        const publishAndEmit = async (): Promise<void> => {
          const previous = readCurrent(root) ?? previousWithoutCurrent(root, log);
          // A run dated before the snapshot it replaces (a backfill with --as-of, a resumed older
          // run) adds its forecasts to the warehouse, and its snapshot is scored as of that
          // snapshot's time: served, the older view sent the API back in time until the next run,
          // and its events compared an older view with a newer one, so the next run announced
          // every resolution since a second time (QA). It freezes no thesis vintage or scenario
          // record: those are frozen as of the run's own time or not at all.
          const previousAsOf = previous === null ? null : previousSnapshotAsOf(root, previous);
          const behind = previousAsOf !== null && Date.parse(previousAsOf) > asOf.getTime();
          const completed = runCompletedSummary(summary);
          checkLock();
          markEventsPending(root, runId, previous, completed);
          const manifest = await scoreAndPublish(conn, config, behind ? new Date(previousAsOf) : asOf, runId, {
            syncReport: summary.sync ? JSON.stringify(summary.sync) : null,
            freeze: !behind,
            beforePublish: checkLock,
          });
          summary.snapshot = manifest.run_id;
          summary.status = 'completed';
          if (behind) {
            // A run dated now (not --as-of, not resumed) behind the snapshot: this machine's clock
            // is behind the time a run published at. QA: a clock stepped back 3 hours made every
            // scheduled run for 3 hours say only the words of a backfill.
            const clockBehindH = !options.asOf && !target ? (Date.parse(previousAsOf) - asOf.getTime()) / 3_600_000 : null;
            const clock =
              clockBehindH === null
                ? ''
                : `; this run is dated now, so this machine's clock is behind the published snapshot's time by ${clockBehindH.toFixed(1)} hours: ` +
                  'the clock was stepped back (a clock that ran ahead corrected, a restored VM), or the host that published it runs ahead; ' +
                  'until the clock passes that time every run is scored as of it';
            const note =
              `this run is dated ${asOf.toISOString()}, before the snapshot it replaces (${previous}, as of ${previousAsOf}): ` +
              `its forecasts are in the warehouse, and its snapshot is scored as of ${previousAsOf}, so the served view does not go back in time ` +
              `(no thesis vintage or scenario record is frozen for it)${clock}`;
            log.warn({ previous, previous_as_of: previousAsOf, ...(clockBehindH === null ? {} : { clock_behind_hours: Math.round(clockBehindH * 10) / 10 }) }, note);
            summary.notes.push(note);
          }
          // A curated file naming a question the warehouse has never had (a typo, most likely): the
          // member is left out where it appears, and the run says so (QA: a thesis lost members, or
          // was not published at all, without a word).
          for (const u of await unknownCuratedQuestions(conn, structureDir())) {
            const note = unknownQuestionsNote(u);
            log.warn({ file: u.file, lines: u.lines, question_ids: u.question_ids, scenarios: u.scenarios }, note);
            summary.notes.push(note);
          }
          // Emit events: what changed since the previous snapshot. The snapshot is published either
          // way; events that fail here stay pending and the next run derives them.
          try {
            const ev = await emitRunEvents(conn, { root, runId, previous, ...eventThresholds, summary: completed });
            log.info({ events: ev.found, written: ev.written }, 'events written');
          } catch (err) {
            log.error({ err }, 'events not written; the next run derives them');
            summary.notes.push(`events not written (${err instanceof Error ? err.message : String(err)}); the next run derives them`);
          }
          const pruned = await pruneSnapshots(root, config.keepSnapshots);
          log.info({ tables: manifest.tables.length, pruned: pruned.length }, 'snapshot published');
        };
        if (target && isPublished(root, runId)) {
          // Killed after its publish (before it recorded itself completed): the snapshot is out and
          // may be served and cached under its id, and its events were derived at this run's start
          // (recoverPendingEvents) against the snapshot it replaced. Deriving and publishing it
          // again replaced the served files under the same id (stale caches answered 304 for
          // changed content) and compared the run with itself, as with no previous snapshot:
          // hundreds of false events (QA).
          log.info({ snapshot: runId }, 'snapshot already published before the interruption: not derived again');
          summary.snapshot = runId;
          summary.status = 'completed';
          summary.notes.push(ALREADY_PUBLISHED_NOTE);
        } else {
          await publishAndEmit();
        }
      } catch (err) {
        summary.error = err instanceof Error ? err.message : String(err);
        if (err instanceof RunInterrupted) {
          summary.status = 'interrupted';
          log.warn(summary.error);
        } else {
          log.error({ err }, 'run failed');
          // Calls it made that never reached the raw tables (it failed writing them: a full disk)
          // are kept in its journal: said, so that they are continued, not made and paid again.
          if (existsSync(journalPath(root, runId))) {
            const note = `its journaled model calls are kept: \`quorum run --resume ${runId}\` continues it without making them again`;
            log.warn({ journal: journalPath(root, runId) }, note);
            summary.notes.push(note);
            // The stage threw before it returned its counts: the summary and the runs row say what
            // was called and spent from the journal, not 0 (QA).
            if (summary.calls === 0) Object.assign(summary, journalCounts(journalPath(root, runId), target !== null));
          }
        }
      } finally {
        progress.close();
      }
      summary.duration_ms = Date.now() - started.getTime();
      const { duration_ms, as_of: _asOf, run_id: _runId, sync, notes: _notes, ...counts } = summary;
      try {
        await recordRun(conn, root, {
          run_id: runId,
          ...counts,
          sync_report: sync ? JSON.stringify(sync) : null,
          as_of: asOf,
          started_at: started,
          finished_at: new Date(),
        });
      } catch (err) {
        // Its summary is still printed, with the run's own error, not replaced by this one (QA: a
        // full disk). Unrecorded, the run counts as unfinished: the next run continues it.
        log.error({ err }, 'the run\'s outcome could not be recorded in the runs table');
        summary.notes.push(`its outcome could not be recorded (${err instanceof Error ? err.message : String(err)}); the next run continues it`);
      }
      log.info({ ...counts, duration_ms }, `run ${summary.status}`);
      return summary;
    });
  } finally {
    release();
  }
}

/**
 * A run's call counts, tokens and cost as its journal holds them (every call it finished);
 * `calls_made` too for a run not resumed (all of them were made by it).
 */
function journalCounts(path: string, resumed: boolean): Partial<RunSummary> {
  const { calls } = readJournal(path);
  const sum = (f: (c: (typeof calls)[number]['call']) => number | null) => calls.reduce((a, c) => a + (f(c.call) ?? 0), 0);
  return {
    calls: calls.length,
    ...(resumed ? {} : { calls_made: calls.length }),
    failed_calls: calls.filter((c) => c.call.status === 'failed').length,
    skipped_calls: calls.filter((c) => c.call.status === 'skipped').length,
    tokens_in: sum((c) => c.tokens_in),
    tokens_out: sum((c) => c.tokens_out),
    cost_usd: Math.round(sum((c) => c.cost_usd) * 1e6) / 1e6,
  };
}

/**
 * Rescores the whole warehouse as of `asOf` with sql/derive and publishes the snapshot; `freeze`
 * (default true): the run's thesis vintages and scenario records are frozen as of `asOf`.
 */
export async function scoreAndPublish(
  conn: DuckDBConnection,
  config: QuorumConfig,
  asOf: Date,
  runId: string,
  opts: { syncReport?: string | null; freeze?: boolean; beforePublish?: () => void } = {},
) {
  const freezing = opts.freeze ?? true;
  // Pinned: the derive and the export read the raw parts present now, even if an import commits
  // another part meanwhile (the published claims view is read again at export). The forecasts
  // parts are named in the manifest, for the API's raw forecasts export.
  const forecastParts = rawParts(config.dataDir, 'forecasts');
  await createRawViews(conn, config.dataDir, { pinned: true, parts: { forecasts: forecastParts } });
  // Structure (issue 12): curated links and theses in; this run's thesis vintages frozen after.
  await prepareStructure(conn, { runId: freezing ? runId : null });
  // Factors and health (issue 12): the trees, the thresholds and this run's sync report in.
  await prepareFactors(conn, { syncReport: opts.syncReport ?? null });
  // Scenarios (issue 13): curated scenarios in; this run's scenario records archived after.
  await prepareScenarios(conn, { runId: freezing ? runId : null });
  const deriveSql = await deriveSqlHash();
  const meta = { asOf, headlineModes: config.headlineModes, deriveSqlHash: deriveSql, rawForecastParts: forecastParts, beforePublish: opts.beforePublish };
  const publishing = publishSnapshot(config.dataDir, runId, meta, async (dir) => {
    const tables = await deriveTables(conn, {
      asOf,
      headlineModes: config.headlineModes,
      maxComparatorAgeDays: config.maxComparatorAgeDays,
    });
    if (freezing) {
      await freezeThesisVintages(conn, config.dataDir, runId, asOf);
      await freezeScenarioRecords(conn, config.dataDir, runId, asOf);
    }
    await exportTables(conn, tables, dir);
    return { tables, columns: await parquetColumns(conn, tables, dir) };
  });
  // The derived tables are in the snapshot's files now: dropped, not kept in the process's DuckDB
  // instance until the next run replaces them (dropDerivedObjects). After a failure too, where the
  // failure is what the run reports (the next run's derive replaces anything a failed drop left).
  const manifest = await publishing.catch(async (err: unknown) => {
    await dropDerivedObjects(conn).catch(() => undefined);
    throw err;
  });
  await dropDerivedObjects(conn);
  return manifest;
}

/**
 * The note of a run that left out questions open at its date whose text the warehouse got only
 * later (active_questions.sql): a backtest in a directory synced after its date forecasts only
 * what was written by then, and says so instead of coming out smaller, or empty, without a word.
 */
export function writtenLaterNote(n: number, asOf: Date): string {
  return (
    `${n} question${n === 1 ? '' : 's'} open at ${asOf.toISOString()} ${n === 1 ? 'was' : 'were'} not forecast: ` +
    `first written to the warehouse after that time (a later sync, import or question file), ${n === 1 ? 'its' : 'their'} only text is a later one, ` +
    'which could carry what was learnt since (a run is shown only what was known at its date: see README, quorum run --as-of)'
  );
}
