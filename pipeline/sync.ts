/**
 * Brings the outside world in (DESIGN §2, issue "Markets and resolutions"): the sources registry,
 * operators' question files, every enabled venue (markets, one price observation per tracked
 * market, resolutions), official-data resolutions (FRED) of question-file questions, and the
 * current taxonomy rules on the questions stored before them (pipeline/taxonomy/reclassify.ts).
 *
 * A failed venue or source never fails the sync: it is reported (and the run records the report);
 * the rows of the venues and sources that worked are kept. Every write is an idempotent raw append.
 * The report's `status` says how it went (`quorum sync` exits on it, pipeline/cli/sync-output.ts):
 * `ok` every step succeeded; `failed` nothing came from outside (every venue and remote source
 * failed, or every step did); `partial` otherwise (some failed, the rest is written). The registry,
 * the question files and the taxonomy are local: a failure there is a failure, but they are not what
 * "nothing came from outside" counts. FRED counts as remote only with an API key (without one it
 * makes no request and reports its questions as skipped). FRED failed when it was asked and every
 * request failed (a rejected key fails them all, as does an outage or a malformed answer); some
 * failed among others that worked is a warning (fredOutcome). A venue's report warns when its
 * discovery stopped at the page cap; a pagination loop fails the venue (pipeline/venues/core.ts).
 *
 * Logging: one line per failure. runVenueSync (pipeline/venues/core.ts) binds `venue` itself and
 * logs the HTTP failure it turns into a VenueSyncError, so the adapter gets the unbound logger and
 * only other errors are logged here.
 */
import type { DuckDBConnection } from '@duckdb/node-api';
import { listValue } from '@duckdb/node-api';
import type { Logger } from './log.ts';
import { appendRaw, commitParts, dropParts, type PendingPart } from './warehouse/raw-writer.ts';
import { withConnection } from './warehouse/duckdb.ts';
import { acquireRunLock, RunLockLostError } from './warehouse/lock.ts';
import { newRunId, runDate } from './warehouse/layout.ts';
import { createRawViews } from './warehouse/raw-views.ts';
import { queryFile } from './warehouse/sql-files.ts';
import type { RawTableName } from './warehouse/tables.ts';
import { loadSources } from './sources/registry.ts';
import { createSourceClient } from './sources/http-client.ts';
import { fredConfigFromEnv, FRED_API_KEY_ENV, FRED_REQUESTS_PER_MINUTE } from './sources/fred.ts';
import { resolveThresholdQuestions, type ThresholdResolutions } from './sources/resolve-threshold.ts';
import { loadQuestionFiles, QUORUM_VENUE } from './questions/question-file.ts';
import { reclassifiedVersions, withCurrentTaxonomy, type StoredQuestion } from './taxonomy/reclassify.ts';
import { reloadDefaultTaxonomy } from './taxonomy/classify.ts';
import type { Row } from './sources/registry.ts';
import { createVenueAdapters, loadVenueConfig, VenueSyncError, type TrackedMarket, type VenueSyncResult } from './venues/index.ts';
import { REMOVED_PREFIX } from './venues/removed-market.ts';

type Rows = Partial<Record<RawTableName, readonly object[]>>;

export interface SourceReport {
  source: string;
  ok: boolean;
  error: string | null;
  /** New rows per raw table (appends are idempotent: a row already stored is not counted). */
  written: Record<string, number>;
  /** Venues: the distinct markets the venue returned this sync (filtered-out ones included); null for other sources. */
  markets: number | null;
  skipped: number;
  skipped_examples: string[];
  /** Why items were skipped, most frequent first (at most 5 reasons), the market id left out. */
  skipped_reasons: { reason: string; count: number }[];
  /**
   * What went short without failing the source: a venue's discovery stopped at the page cap
   * (more markets than were read), some of FRED's requests failed.
   */
  warnings: string[];
}

export type SyncStatus = 'ok' | 'partial' | 'failed';

export interface SyncReport {
  at: string;
  /** See the header: ok, partial (some failed, the rest written), failed (nothing came from outside). */
  status: SyncStatus;
  /** The sources that failed, in report order. */
  failed: string[];
  sources: SourceReport[];
}

export interface SyncOptions {
  root: string;
  questionsDir: string;
  now: Date;
  logger: Logger;
  env?: NodeJS.ProcessEnv;
  signal?: AbortSignal;
  partition: { runId: string; runDate: string };
  /**
   * The registry and the operators' question files only: nothing reaches outside (the first
   * start's, whose runs are dated and so do not sync, pipeline/bootstrap.ts).
   */
  localOnly?: boolean;
  /**
   * Whether the run lock this sync writes under is still its own (LockRelease.held). Checked
   * before each write: a sync whose process was paused past the lock's staleness (Ctrl-Z, a
   * paused container) and taken over wrote its rows beside the new holder's on resuming (QA).
   */
  held?: () => boolean;
}

const TABLE_ORDER: RawTableName[] = ['sources', 'questions', 'market_prices', 'resolutions', 'lifecycle_events'];

/**
 * Writes a step's rows, every table's part put in place together once all are written (as an
 * import's: raw-writer commitParts): a step that failed or was killed after its `questions` part
 * was in place lost its lifecycle events for good, as the next sync drops the first-seen events of
 * a question already stored (onlyNewLifecycle) (QA: a question-file question without `proposed`).
 */
async function writeRows(conn: DuckDBConnection, opts: SyncOptions, rows: Rows): Promise<Record<string, number>> {
  const written: Record<string, number> = {};
  const parts: PendingPart[] = [];
  try {
    for (const table of TABLE_ORDER) {
      const list = rows[table];
      if (!list?.length) continue;
      written[table] = (await appendRaw(conn, opts.root, table, list, opts.partition, { parts })).written;
    }
    checkHeld(opts);
  } catch (err) {
    dropParts(parts);
    throw err;
  }
  commitParts(parts);
  return written;
}

/** Throws RunLockLostError when the sync's run lock was taken over (SyncOptions.held). */
function checkHeld(opts: Pick<SyncOptions, 'held' | 'partition'>): void {
  if (opts.held && !opts.held()) throw RunLockLostError.forSync(opts.partition.runId);
}

/** A part of its own for `table`, after checking the lock (appendRaw commits it at once). */
async function appendChecked(
  conn: DuckDBConnection,
  opts: Pick<SyncOptions, 'root' | 'partition' | 'held'>,
  table: RawTableName,
  rows: readonly object[],
  key?: readonly string[],
): Promise<number> {
  checkHeld(opts);
  return (await appendRaw(conn, opts.root, table, rows, opts.partition, key ? { key } : {})).written;
}

/**
 * Drops first-seen lifecycle events of questions that were already stored before this sync.
 * `keepFirstActive` (question files): a stored question's `active` event is kept while it has
 * none stored: a question-file entry imported before its created_at is `proposed` then, and its
 * `active` event (at created_at, the same on every sync) comes with a later sync; dropping it as
 * a known question's left its lifecycle at proposed until it closed (QA).
 */
async function onlyNewLifecycle(conn: DuckDBConnection, root: string, rows: Rows, opts: { keepFirstActive?: boolean } = {}): Promise<Rows> {
  const ids = [...new Set((rows.questions ?? []).map((q) => String((q as { question_id: unknown }).question_id)))];
  if (ids.length === 0) return rows;
  await createRawViews(conn, root);
  const idList = { ids: listValue(ids) };
  const ofRows = (r: { question_id: string }[]) => new Set(r.map((x) => x.question_id));
  const known = ofRows(await queryFile<{ question_id: string }>(conn, 'pipeline/known_questions.sql', idList));
  const opened = opts.keepFirstActive ? ofRows(await queryFile<{ question_id: string }>(conn, 'pipeline/opened_questions.sql', idList)) : known;
  return {
    ...rows,
    lifecycle_events: (rows.lifecycle_events ?? []).filter((e) => {
      const { question_id, state } = e as { question_id: unknown; state: unknown };
      const id = String(question_id);
      if (state === 'proposed') return !known.has(id);
      if (state === 'active') return !(known.has(id) && opened.has(id));
      return true;
    }),
  };
}

/**
 * New versions of questions whose market's close time the venue moved: the latest stored version
 * with the venue's close time, the current taxonomy and this sync's ingested_at (every reader takes the latest version),
 * so an extended market stays open to the runs and the API, and one closed early stops being
 * forecast and is scored up to its real close.
 */
async function closeTimeVersions(
  conn: DuckDBConnection,
  opts: SyncOptions,
  changes: readonly { question_id: string; close_time: Date }[],
): Promise<Rows['questions'] & object[]> {
  if (changes.length === 0) return [];
  const close = new Map(changes.map((c) => [c.question_id, c.close_time]));
  // raw_questions is the view the venues' tracked markets were read from (a glob: it sees every
  // part written since), so the stored versions need no second walk of the raw tables
  const stored = await queryFile<StoredQuestion & { created_at: string | null }>(conn, 'pipeline/question_versions.sql', {
    ids: listValue([...close.keys()]),
  });
  return stored.map((q) => ({
    ...withCurrentTaxonomy(q),
    created_at: q.created_at === null ? null : new Date(q.created_at),
    close_time: close.get(q.question_id)!,
    ingested_at: opts.now,
  }));
}

/** The fields of a question-file entry that an edit of the file changes (created_at: when the entry gives one). */
const EDITABLE = ['title', 'description', 'resolution_criteria', 'url', 'category', 'domain', 'tags', 'close_time', 'created_at'] as const;

const sameValue = (a: unknown, b: unknown): boolean => {
  if (a === null || a === undefined || b === null || b === undefined) return (a ?? null) === (b ?? null);
  if (a instanceof Date || b instanceof Date) return new Date(a as string).getTime() === new Date(b as string).getTime();
  if (Array.isArray(a) || Array.isArray(b)) return JSON.stringify(a) === JSON.stringify(b);
  return a === b;
};

/**
 * New versions of question-file questions whose entry was edited since the stored version (title,
 * criteria, close_time, ...): the file's row with this sync's ingested_at, keeping the stored
 * created_at when the entry gives none (its default, the import time, changes every sync). Raw
 * `questions` is keyed by question_id, so an edit used to be dropped while the FRED step resolved
 * the question by the edited rule: a question shown with its old title and close was decided by
 * another series or threshold, and a moved close_time never reached runs or the API. An edit that
 * moves a passed close_time of an unresolved question ahead again reopens it: an `active` lifecycle
 * event at this sync, as a venue's reopened market gets (QA: its lifecycle's last state stayed
 * `closed` while it was active and forecast again). So is an unresolved question whose lifecycle's
 * last state is `closed` while its file's close_time is ahead, edited or not at this sync: an older
 * version wrote the extended close without that event, and it stayed closed after the upgrade (QA
 * upgrade pass). Reads the raw views the caller created.
 */
async function editedQuestionVersions(
  conn: DuckDBConnection,
  opts: SyncOptions,
  files: { questions: Rows['questions'] & object[]; created_at_defaulted: string[] },
): Promise<{ versions: Rows['questions'] & object[]; reopened: Row<'lifecycle_events'>[] }> {
  const rows = files.questions as Record<string, unknown>[];
  const reopened: Row<'lifecycle_events'>[] = [];
  if (rows.length === 0) return { versions: [], reopened };
  const ids = { ids: listValue(rows.map((q) => String(q.question_id))) };
  const stored = new Map(
    (await queryFile<Record<string, unknown> & { question_id: string }>(conn, 'pipeline/question_versions.sql', ids)).map((q) => [q.question_id, q]),
  );
  const defaulted = new Set(files.created_at_defaulted);
  // closed in the lifecycle now: reopened whenever the file's close is ahead, edited at this sync or
  // before (an older version wrote the extended close without the reopening event: QA upgrade pass)
  const closed = new Set(
    (await queryFile<{ question_id: string }>(conn, 'pipeline/closed_questions.sql', ids)).map((r) => r.question_id),
  );
  const out: Record<string, unknown>[] = [];
  for (const q of rows) {
    const old = stored.get(String(q.question_id));
    if (!old) continue;
    const next = defaulted.has(String(q.question_id)) ? { ...q, created_at: old.created_at === null ? null : new Date(String(old.created_at)) } : q;
    const edited = !EDITABLE.every((f) => sameValue(next[f], old[f]));
    if (edited) out.push({ ...next, ingested_at: opts.now });
    const was = old.close_time === null ? null : new Date(String(old.close_time)).getTime();
    const close = next.close_time as Date;
    const passed = edited && was !== null && was <= opts.now.getTime();
    if ((passed || closed.has(String(q.question_id))) && close.getTime() > opts.now.getTime()) {
      const origin = String(next.origin).replace(/^question-file:/, '');
      reopened.push({ question_id: String(q.question_id), state: 'active', at: opts.now, reason: `reopened: close_time moved to ${close.toISOString()} in question file ${origin}` });
    }
  }
  if (reopened.length === 0) return { versions: out, reopened };
  // a resolved question stays resolved whatever its close (resolved is terminal)
  const open = new Set(
    (await queryFile<{ question_id: string; resolved: boolean }>(conn, 'pipeline/tracked_markets.sql', trackedParams(QUORUM_VENUE, 'infinity', opts.now)))
      .filter((t) => !t.resolved)
      .map((t) => t.question_id),
  );
  return { versions: out, reopened: reopened.filter((e) => open.has(e.question_id!)) };
}

/**
 * Unresolved question-file questions (venue quorum) that no file defines any more: nothing will
 * resolve them (FRED is asked only for the files' entries) while runs go on forecasting them until
 * their close. The sync used to say nothing of it; now its question-files report warns. Reads
 * the raw views the caller created.
 */
async function removedQuestions(conn: DuckDBConnection, questions: readonly object[], now: Date): Promise<string[]> {
  const inFiles = new Set(questions.map((q) => String((q as { question_id: unknown }).question_id)));
  const open = await queryFile<{ question_id: string; resolved: boolean }>(conn, 'pipeline/tracked_markets.sql', trackedParams('quorum', 'infinity', now));
  return open.filter((q) => !q.resolved && !inFiles.has(q.question_id)).map((q) => q.question_id).sort();
}

function removedWarning(ids: readonly string[]): string {
  const shown = ids.slice(0, 5).join(', ');
  return (
    `${ids.length} unresolved question${ids.length === 1 ? '' : 's'} imported from question files ` +
    `${ids.length === 1 ? 'is' : 'are'} no longer in any file and will never resolve (still forecast until closed): ` +
    `${shown}${ids.length > 5 ? `, … (${ids.length - 5} more)` : ''}`
  );
}

/**
 * The parameters of sql/pipeline/tracked_markets.sql for `venue`'s markets, rechecked if resolved at
 * or after `recheckSince`, as a sync at `now` knows them (lifecycle events dated later have not happened).
 */
function trackedParams(venue: string, recheckSince: string, now: Date) {
  return { venue, recheck_since: recheckSince, now: now.toISOString(), removed_prefix: REMOVED_PREFIX };
}

/** A row of sql/pipeline/tracked_markets.sql. */
interface TrackedRow {
  question_id: string;
  venue_market_id: string;
  close_time: string | null;
  last_observed_at: string | null;
  resolved: boolean;
  resolved_outcome: number | null;
  resolved_at: string | null;
  removed_since: string | null;
  discovered: boolean;
}

function trackedMarket(t: TrackedRow): TrackedMarket {
  const date = (s: string | null) => (s === null ? null : new Date(s));
  return {
    question_id: t.question_id,
    venue_market_id: t.venue_market_id,
    close_time: date(t.close_time),
    last_observed_at: date(t.last_observed_at),
    resolution: t.resolved ? { outcome: t.resolved_outcome, resolved_at: date(t.resolved_at) } : null,
    removed_since: date(t.removed_since),
    discovered: t.discovered,
  };
}

interface Skip {
  id: string | null;
  reason: string;
}

/** The most frequent skip reasons with their counts (ties in first-seen order). */
function topReasons(skipped: readonly Skip[], max = 5): { reason: string; count: number }[] {
  const counts = new Map<string, number>();
  for (const s of skipped) counts.set(s.reason, (counts.get(s.reason) ?? 0) + 1);
  return [...counts].map(([reason, count]) => ({ reason, count })).sort((a, b) => b.count - a.count).slice(0, max);
}

function report(
  source: string,
  written: Record<string, number>,
  skipped: readonly Skip[],
  error: string | null,
  markets: number | null = null,
  warnings: readonly string[] = [],
): SourceReport {
  return {
    source,
    ok: error === null,
    error,
    written,
    markets,
    skipped: skipped.length,
    // an id as a venue sent it can be any length (one over 200 characters is skipped for that)
    skipped_examples: skipped.slice(0, 5).map((s) => `${s.id === null ? '?' : s.id.length > 200 ? `${s.id.slice(0, 199)}…` : s.id}: ${s.reason}`),
    skipped_reasons: topReasons(skipped),
    warnings: [...warnings],
  };
}

/**
 * FRED's verdict from its requests (see the header): the error when every request it made failed,
 * else null with a warning naming the series whose requests failed, if any. Their questions are
 * in `skipped` either way, with the reason.
 */
export function fredOutcome(r: Pick<ThresholdResolutions, 'requests' | 'failed_requests'>): { error: string | null; warnings: string[] } {
  const failed = r.failed_requests;
  if (failed.length === 0) return { error: null, warnings: [] };
  const first = failed[0]!.reason;
  if (failed.length >= r.requests) return { error: `every FRED request failed (${failed.length} of ${r.requests}): ${first}`, warnings: [] };
  const series = failed.map((f) => f.series_id).join(', ');
  return { error: null, warnings: [`${failed.length} of ${r.requests} FRED requests failed (${series}): ${first}`] };
}

/** The sync's status from its reports (see the header); `remote` names the steps that reach outside. */
export function syncStatus(sources: readonly SourceReport[], remote: ReadonlySet<string>): SyncStatus {
  const failed = sources.filter((s) => !s.ok);
  if (failed.length === 0) return 'ok';
  const outside = sources.filter((s) => remote.has(s.source));
  if (failed.length === sources.length || (outside.length > 0 && outside.every((s) => !s.ok))) return 'failed';
  return 'partial';
}

/**
 * The registry of authoritative sources alone (data/sources.json: local, idempotent): what a run
 * that does not sync (dated with --as-of, --score-only, resumed) writes, so that the sources it
 * names (GDELT's evidence, the official resolution sources) have their names in a data directory
 * that never synced (QA: a backtest's GDELT evidence had no source name). Rows written.
 */
export async function writeRegistry(conn: DuckDBConnection, opts: Pick<SyncOptions, 'root' | 'partition' | 'held'>): Promise<number> {
  return appendChecked(conn, opts, 'sources', loadSources());
}

/** Runs every sync step; never throws for a failing venue or source, only RunLockLostError when its lock was taken over (opts.held). */
export async function syncAll(conn: DuckDBConnection, opts: SyncOptions): Promise<SyncReport> {
  const env = opts.env ?? process.env;
  const reports: SourceReport[] = [];
  const remote = new Set<string>();
  const log = opts.logger;
  // The rules as data/taxonomy.json has them now, for every step (QA: loaded once per process, an
  // operator's edit reached no run of `quorum start` until a restart, and the next of its runs undid
  // what a `quorum sync` beside it had applied). A bad file fails the taxonomy step; the rest of the
  // sync goes on with the rules loaded before.
  let rulesError: string | null = null;
  try {
    reloadDefaultTaxonomy();
  } catch (err) {
    rulesError = (err as Error).message;
  }

  // 1. The registry of authoritative sources.
  reports.push(report('registry', { sources: await writeRegistry(conn, opts) }, [], null));

  // 2. Operators' question files (a bad file is reported, not fatal to the venues).
  let specs: Awaited<ReturnType<typeof loadQuestionFiles>>['specs'] = [];
  try {
    const files = loadQuestionFiles(opts.questionsDir, { now: opts.now, keepGoing: true });
    specs = files.specs;
    const rows = await onlyNewLifecycle(conn, opts.root, { questions: files.questions, lifecycle_events: files.lifecycle_events }, { keepFirstActive: true });
    // (both read the stored questions through the raw views as they were before this step wrote:
    // the new questions are no edits, and are in the files)
    await createRawViews(conn, opts.root);
    const { versions, reopened } = await editedQuestionVersions(conn, opts, files);
    const written = await writeRows(conn, opts, { ...rows, lifecycle_events: [...(rows.lifecycle_events ?? []), ...reopened] });
    if (versions.length > 0) {
      written.question_versions = await appendChecked(conn, opts, 'questions', versions, ['question_id', 'ingested_at']);
    }
    // a rejected file's questions are not "no longer in any file": no warning while one is
    const removed = files.rejected.length > 0 ? [] : await removedQuestions(conn, files.questions, opts.now);
    if (removed.length > 0) log.warn({ questions: removed }, 'open question-file questions no longer in any file');
    // each bad file is left out, its error reported; the others' questions are imported and resolved
    for (const e of files.rejected) log.error({ err: e }, 'question file rejected');
    const error = files.rejected.length === 0 ? null : files.rejected.map((e) => e.message).join('; ');
    reports.push(report('question-files', written, [], error, null, removed.length > 0 ? [removedWarning(removed)] : []));
  } catch (err) {
    // a lost lock ends the sync (nothing more is written), it is no failed step
    if (err instanceof RunLockLostError) throw err;
    log.error({ err }, 'question files rejected');
    reports.push(report('question-files', {}, [], (err as Error).message));
  }

  if (!opts.localOnly) await syncOutside(conn, opts, env, specs, reports, remote);

  // 5. The current taxonomy rules on the questions stored before them (a failure is reported).
  try {
    if (rulesError !== null) throw new Error(rulesError);
    await createRawViews(conn, opts.root);
    const versions = await reclassifiedVersions(conn, opts.now);
    const written: Record<string, number> = {};
    if (versions.length > 0) written.question_versions = await appendChecked(conn, opts, 'questions', versions, ['question_id', 'ingested_at']);
    reports.push(report('taxonomy', written, [], null));
  } catch (err) {
    if (err instanceof RunLockLostError) throw err;
    log.error({ err: (err as Error).message }, 'taxonomy: reclassifying the stored questions failed');
    reports.push(report('taxonomy', {}, [], (err as Error).message));
  }
  for (const r of reports) {
    if (r.ok) log.info({ source: r.source, written: r.written, skipped: r.skipped }, 'synced');
  }
  const status = syncStatus(reports, remote);
  const failed = reports.filter((r) => !r.ok).map((r) => r.source);
  return { at: opts.now.toISOString(), status, failed, sources: reports };
}

/** Steps 3 and 4 of syncAll: the venues, then FRED for the question files' threshold questions. */
async function syncOutside(
  conn: DuckDBConnection,
  opts: SyncOptions,
  env: NodeJS.ProcessEnv,
  specs: Awaited<ReturnType<typeof loadQuestionFiles>>['specs'],
  reports: SourceReport[],
  remote: Set<string>,
): Promise<void> {
  const log = opts.logger;
  // 3. Venues, concurrently; each adapter has its own rate-limited client.
  await createRawViews(conn, opts.root);
  const venueConfig = loadVenueConfig(env);
  const adapters = createVenueAdapters(venueConfig);
  const results = await Promise.all(
    adapters.map(async (adapter) => {
      const tracked = (await queryFile<TrackedRow>(
        conn,
        'pipeline/tracked_markets.sql',
        trackedParams(adapter.venue, new Date(opts.now.getTime() - venueConfig.resolutionRecheckDays * 86_400_000).toISOString(), opts.now),
      )).map(trackedMarket);
      try {
        // The adapter binds `venue` on its own child logger (binding it here too repeated the key).
        return { venue: adapter.venue, result: await adapter.sync({ now: opts.now, filters: venueConfig.filters, tracked, removedMarketAnnulDays: venueConfig.removedMarketAnnulDays, signal: opts.signal, logger: log }), error: null };
      } catch (err) {
        // Keep what earlier pages brought; record the venue as failed. A VenueSyncError was
        // logged by the adapter as it gave up; anything else is logged here, once.
        const partial = err instanceof VenueSyncError ? err.partial : null;
        if (!(err instanceof VenueSyncError)) log.error({ venue: adapter.venue, err: (err as Error).message }, 'venue sync failed');
        return { venue: adapter.venue, result: partial, error: (err as Error).message };
      }
    }),
  );
  for (const { venue, result, error } of results) {
    const r = result as VenueSyncResult | null;
    const rows: Rows = r ? await onlyNewLifecycle(conn, opts.root, r as unknown as Rows) : {};
    const written = await writeRows(conn, opts, rows);
    // beside the first record (one per question otherwise), keyed by the sync that saw the change
    if (r?.amended_resolutions.length) {
      written.resolutions_amended = await appendChecked(conn, opts, 'resolutions', r.amended_resolutions, ['question_id', 'retrieved_at']);
    }
    const versions = await closeTimeVersions(conn, opts, r?.close_time_changes ?? []);
    // keyed by sync, not by close time: a close moved back to an earlier value is a new version too
    if (versions.length > 0) {
      written.question_versions = await appendChecked(conn, opts, 'questions', versions, ['question_id', 'ingested_at']);
    }
    remote.add(`venue:${venue}`);
    const skipped = (r?.skipped ?? []).map((s) => ({ id: s.venue_market_id, reason: s.reason }));
    reports.push(report(`venue:${venue}`, written, skipped, error, r?.markets_seen ?? 0, r?.warnings ?? []));
  }

  // 4. Official data: resolve question-file threshold questions that are still open.
  if (specs.length > 0) {
    // With a key FRED is asked (a bad key is a failed remote source); without one it asks nothing.
    if (env[FRED_API_KEY_ENV]?.trim()) remote.add('fred');
    try {
      const fred = fredConfigFromEnv(env);
      await createRawViews(conn, opts.root);
      const open = new Set(
        (await queryFile<{ question_id: string }>(conn, 'pipeline/tracked_markets.sql', trackedParams('quorum', 'infinity', opts.now))).map((r) => r.question_id),
      );
      const client = createSourceClient({ requestsPerInterval: FRED_REQUESTS_PER_MINUTE, intervalMs: 60_000, retries: fred.retries, timeoutMs: fred.timeoutMs });
      const resolved = await resolveThresholdQuestions(
        specs.filter((s) => open.has(s.question_id)),
        { client, baseUrl: fred.baseUrl, apiKey: fred.apiKey, now: opts.now, logger: log.child({ source: 'fred' }), signal: opts.signal },
      );
      const written = await writeRows(conn, opts, { resolutions: resolved.resolutions, lifecycle_events: resolved.lifecycle_events });
      const { error, warnings } = fredOutcome(resolved);
      // Each failed request was logged once, as its series was skipped: nothing more to log here.
      reports.push(report('fred', written, resolved.skipped.map((s) => ({ id: s.question_id, reason: s.reason })), error, null, warnings));
    } catch (err) {
      if (err instanceof RunLockLostError) throw err;
      log.error({ err: (err as Error).message }, 'FRED resolution failed');
      reports.push(report('fred', {}, [], (err as Error).message));
    }
  }
}

/** `quorum sync`: one sync on its own, under the run lock (it writes raw tables); `localOnly`: see SyncOptions. */
export async function runSync(
  config: { dataDir: string; questionsDir: string },
  logger: Logger,
  signal?: AbortSignal,
  opts: { localOnly?: boolean } = {},
): Promise<SyncReport> {
  const now = new Date();
  const runId = newRunId(now);
  const release = acquireRunLock(config.dataDir, runId);
  // its lines name the id its parts are written under, as a run's do (QA: the first start's were bare)
  const log = logger.child({ run_id: runId });
  try {
    return await withConnection((conn) =>
      syncAll(conn, {
        root: config.dataDir, questionsDir: config.questionsDir, now, logger: log, signal, partition: { runId, runDate: runDate(now) },
        localOnly: opts.localOnly, held: release.held,
      }),
    );
  } finally {
    release();
  }
}
