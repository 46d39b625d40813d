/**
 * The forecast stage of a run (DESIGN §2, §6): questions open at the run's as-of → (question ×
 * mode) tasks → evidence for the augmented ones → every model on every task → raw `evidence`,
 * `model_calls` and `forecasts`. See pipeline/forecast/README.md for the whole design.
 *
 * Crash safety: every finished call (and every question's evidence) is journaled as it finishes
 * (journal.ts). The stage first reads what the run already has (its journal, and its rows in the
 * raw tables), and calls only the (task, model) pairs not yet done, with the same run id and as-of:
 * a resumed run repeats no finished call, a re-run of a finished run makes no call at all. At the
 * end the rows of every journal entry go to the raw tables (idempotent on their natural keys), the
 * entries of calls already stored included, and only then is the journal removed: a kill between
 * two raw writes loses no row (raw-rows.ts).
 *
 * Stop (SIGTERM/SIGINT through `stopSignal`): no new call starts, calls in flight finish (bounded
 * by the call deadline), everything finished is journaled and written, and the result says
 * `interrupted`: the run is left resumable.
 */
import { existsSync } from 'node:fs';
import { listValue, timestampValue, type DuckDBConnection, type DuckDBTimestampValue } from '@duckdb/node-api';
import type { Logger } from '../log.ts';
import type { QuorumConfig } from '../config.ts';
import { createRawViews } from '../warehouse/raw-views.ts';
import { queryFile } from '../warehouse/sql-files.ts';
import type { Mode } from '../warehouse/tables.ts';
import { loadModelsConfig, type ResolvedModel } from '../models/config.ts';
import { runForecasts, type ForecastTask } from '../models/runner.ts';
import { startSimulator, type Simulator } from '../simulator/server.ts';
import { createEvidenceProviders, gatherEvidence, type EvidenceProvider, type EvidenceRow } from '../evidence/index.ts';
import { JournalWriter, journalPath, readJournal, syncJournal, type JournalCall } from './journal.ts';
import { silentProgress, type ProgressReporter } from './progress.ts';
import { querySql } from './runs.ts';
import { stageRows, writeStageRows } from './raw-rows.ts';
import { conditionalTasks, loadMaxConditions } from '../scenarios/conditional-tasks.ts';
import { loadScenarios } from '../scenarios/from-theses.ts';
import { structureDir } from '../structure/definitions.ts';

export interface ForecastStageOptions {
  conn: DuckDBConnection;
  config: QuorumConfig;
  log: Logger;
  runId: string;
  asOf: Date;
  partition: { runId: string; runDate: string };
  /** Graceful stop: no new call, in-flight calls finish, the stage returns `interrupted`. */
  stopSignal?: AbortSignal;
  /** Per-run budget (USD); overrides config.runBudgetUsd when given. null: none. */
  budgetUsd?: number | null;
  progress?: ProgressReporter;
  /** Evidence providers (default: from the configuration). */
  evidenceProviders?: EvidenceProvider[];
  /** Models (default: QUORUM_MODELS_FILE, else the simulator). */
  models?: ResolvedModel[];
  /**
   * A finished run re-run: count what it has, call nothing. Its tasks are those it has calls for:
   * a question that entered the warehouse after it (a later sync), open at its as-of time, is not
   * one of them.
   */
  replayOnly?: boolean;
}

export interface ForecastStageResult {
  questions: number;
  /** Totals of the run over all its sessions (what the raw tables hold for it). */
  forecasts: number;
  calls: number;
  failed_calls: number;
  skipped_calls: number;
  tokens_in: number;
  tokens_out: number;
  cost_usd: number;
  /** Model calls sent by this session (0 for a re-run of a finished run). */
  calls_made: number;
  /** (task, model) pairs found already done (journal or raw) and not called again. */
  calls_reused: number;
  /** Distinct evidence items the run's stored forecasts cite (all sessions of the run). */
  evidence_items: number;
  evidence_errors: number;
  budget_exhausted: boolean;
  interrupted: boolean;
  /**
   * Questions open at the as-of time by their first version but first written to the warehouse
   * after it: not forecast, their only text being a later one (sql/pipeline/written_later_questions.sql).
   */
  written_later: number;
}

interface ActiveQuestion {
  question_id: string;
  title: string;
  description: string | null;
  resolution_criteria: string | null;
  url: string | null;
  created_at: string | null;
  close_time: string | null;
  category: string;
  domain: string;
  market_probability: number | null;
  market_observed_at: string | null;
  market_volume: number | null;
  market_liquidity: number | null;
  market_history: { observed_at: string; probability: number }[] | null;
}

const asDate = (s: string | null): Date | null => (s ? new Date(s) : null);

/** Builds the (question × mode) tasks of a run from the questions open at its as-of time. */
export function toTasks(questions: ActiveQuestion[], modes: readonly Mode[]): ForecastTask[] {
  return questions.flatMap((q) =>
    modes.map((mode) => ({
      mode,
      question: {
        question_id: q.question_id,
        title: q.title,
        description: q.description,
        resolution_criteria: q.resolution_criteria,
        url: q.url,
        created_at: asDate(q.created_at),
        close_time: asDate(q.close_time),
        category: q.category,
        domain: q.domain,
      },
      market:
        q.market_probability === null || q.market_observed_at === null
          ? null
          : {
              probability: q.market_probability,
              observed_at: new Date(q.market_observed_at),
              volume: q.market_volume,
              liquidity: q.market_liquidity,
              history: (q.market_history ?? []).map((h) => ({
                observed_at: new Date(h.observed_at),
                probability: h.probability,
              })),
            },
      evidence: [],
    })),
  );
}

/** A (task, model) call's identity; a scenario's conditional call adds its condition (null: none). */
const keyOf = (questionId: string, model: string, mode: string, condition?: string | null) =>
  `${questionId}\u0000${model}\u0000${mode}\u0000${condition ?? ''}`;
const taskKey = (t: ForecastTask, model: string) => keyOf(t.question.question_id, model, t.mode, t.condition?.code);

/**
 * The scenarios' conditional tasks of a run (pipeline/scenarios/conditional-tasks.ts), in the
 * scenario's mode: the first headline mode the run forecasts in. A component is asked about when
 * the run forecasts its question (open at the as-of, within QUORUM_MAX_QUESTIONS): a capped run
 * asks no more questions than its cap, conditionals included.
 */
async function scenarioTasks(conn: DuckDBConnection, config: QuorumConfig, open: ActiveQuestion[], asOfParams: { as_of: DuckDBTimestampValue }): Promise<ForecastTask[]> {
  const scenarios = loadScenarios(structureDir());
  const mode = config.headlineModes.find((m) => config.modes.includes(m)) ?? config.modes[0];
  const maxConditions = loadMaxConditions();
  if (scenarios.length === 0 || !mode || maxConditions === 0) return [];
  const openTasks = new Map(toTasks(open, [mode]).map((t) => [t.question.question_id, t]));
  // Titles of the earlier components, known at the as-of: the open questions have theirs; the
  // warehouse is read only when a scenario of this run names one that is not open (closed,
  // resolved, or not created or written to the warehouse yet: then it has no title, and nothing is
  // conditioned on it).
  // The same query gives the outcomes of those resolved by then (an open question has none).
  const titles = new Map(open.map((q) => [q.question_id, q.title]));
  const outcomes = new Map<string, 0 | 1>();
  const asked = scenarios.filter((sc) => sc.components.some((c, k) => k > 0 && openTasks.has(c.question)));
  if (asked.some((sc) => sc.components.some((c) => !titles.has(c.question)))) {
    for (const r of await queryFile<{ question_id: string; title: string; outcome: number | null }>(conn, 'pipeline/question_titles.sql', asOfParams)) {
      if (!titles.has(r.question_id)) titles.set(r.question_id, r.title);
      if ((r.outcome === 0 || r.outcome === 1) && !openTasks.has(r.question_id)) outcomes.set(r.question_id, r.outcome);
    }
  }
  // A scenario naming a question the warehouse has never had (a typo, most likely) is never
  // published (99_scenario_1_joint.sql needs every component), so nothing is asked about it: its
  // calls were paid for on every run (QA). The run's notes name it (structure/unknown-questions.ts).
  // A component not created by the as-of but in the warehouse is another matter: a backfill's
  // answers about the earlier components serve the runs after it.
  const untitled = [...new Set(asked.flatMap((sc) => sc.components.map((c) => c.question)).filter((q) => !titles.has(q)))];
  let publishable = scenarios;
  if (untitled.length > 0) {
    const known = new Set(
      (await queryFile<{ question_id: string }>(conn, 'pipeline/known_questions.sql', { ids: listValue(untitled) })).map((r) => r.question_id),
    );
    publishable = scenarios.filter((sc) => sc.components.every((c) => titles.has(c.question) || known.has(c.question)));
  }
  return conditionalTasks({ scenarios: publishable, openTasks, titles, outcomes, mode, maxConditions });
}

/** A call of the run already in raw `model_calls` (sql/pipeline/done_calls.sql). */
interface StoredCall {
  question_id: string;
  model: string;
  mode: string;
  condition: string | null;
  status: string;
  cost_usd: number | null;
}

/**
 * What a run already has, from its raw `model_calls` and its journal:
 * - `done`: the calls not to make again (journal ∪ raw);
 * - `journalCalls`: the journal's calls, each once, to write to the raw tables again — every one,
 *   those raw `model_calls` already holds included: a kill between the `model_calls` and the
 *   `forecasts` write leaves a stored call whose forecasts only the journal holds (raw-rows.ts);
 *   the idempotent writes skip whatever is stored;
 * - `spentUsd`: what the run's calls cost so far, each call counted once (the budget's start).
 */
function alreadyDone(stored: readonly StoredCall[], journaled: readonly JournalCall[]) {
  const done = new Set<string>();
  let spentUsd = 0;
  for (const c of stored) {
    done.add(keyOf(c.question_id, c.model, c.mode, c.condition));
    spentUsd += c.cost_usd ?? 0;
  }
  const journalCalls: JournalCall[] = [];
  const journalKeys = new Set<string>();
  for (const e of journaled) {
    // A journal written before conditional calls existed has no condition: undefined is none.
    const k = keyOf(e.call.question_id, e.call.model, e.call.mode, e.call.condition);
    if (journalKeys.has(k)) continue;
    journalKeys.add(k);
    journalCalls.push(e);
    if (!done.has(k)) spentUsd += e.call.cost_usd ?? 0;
    done.add(k);
  }
  return { done, journalCalls, spentUsd };
}

/** Runs the forecast stage; see the file's doc. Never throws for a model or evidence fault. */
export async function forecastStage(o: ForecastStageOptions): Promise<ForecastStageResult> {
  const { conn, config, log, runId, asOf } = o;
  const progress = o.progress ?? silentProgress;
  const budgetUsd = o.budgetUsd !== undefined ? o.budgetUsd : config.runBudgetUsd;
  const result: ForecastStageResult = {
    questions: 0,
    forecasts: 0,
    calls: 0,
    failed_calls: 0,
    skipped_calls: 0,
    tokens_in: 0,
    tokens_out: 0,
    cost_usd: 0,
    calls_made: 0,
    calls_reused: 0,
    evidence_items: 0,
    evidence_errors: 0,
    budget_exhausted: false,
    interrupted: false,
    written_later: 0,
  };

  await createRawViews(conn, config.dataDir);
  const asOfParams = { as_of: timestampValue(BigInt(asOf.getTime()) * 1000n) };
  let questions = await queryFile<ActiveQuestion>(conn, 'pipeline/active_questions.sql', asOfParams);
  if (!o.replayOnly && config.maxQuestions !== null && questions.length > config.maxQuestions) {
    log.info({ open: questions.length, max: config.maxQuestions }, 'QUORUM_MAX_QUESTIONS: forecasting the first questions only');
    questions = questions.slice(0, config.maxQuestions);
  }
  result.questions = questions.length;
  if (!o.replayOnly) result.written_later = (await queryFile<{ n: number }>(conn, 'pipeline/written_later_questions.sql', asOfParams))[0]?.n ?? 0;
  let tasks = [...toTasks(questions, config.modes), ...(await scenarioTasks(conn, config, questions, asOfParams))];

  // What this run already has: its journal (an interrupted session) and its raw rows.
  const jPath = journalPath(config.dataDir, runId);
  const hadJournal = existsSync(jPath);
  const journal = readJournal(jPath);
  if (journal.torn > 0) log.warn({ journal: jPath, torn: journal.torn }, 'journal: ignored unreadable line(s) (a kill mid-write)');
  const stored = await querySql<StoredCall>(conn, 'done_calls.sql', { run_id: runId });
  const { done, journalCalls, spentUsd: spentBefore } = alreadyDone(stored, journal.calls);
  const evidence = new Map<string, EvidenceRow[]>(journal.evidence.map((e) => [e.question_id, e.items]));
  // The run's languages are those it started with (its journal's header): a resumed run asked in
  // QUORUM_LANGS as changed since had half its forecasts in another main language, without the
  // translations of the others (QA: en+fr, resumed under de).
  const langs = journal.header?.langs?.length ? journal.header.langs : config.langs;
  if (langs !== config.langs && langs.join(',') !== config.langs.join(',')) {
    log.warn({ run_langs: langs, configured_langs: config.langs }, 'resuming: the run keeps the languages it started with, not QUORUM_LANGS as now set');
  }

  // Models: only needed when something is left to call.
  const simulatorNeeded = !o.models && !config.modelsFile;
  const modelIds = (m: ResolvedModel[]) => m.map((x) => x.id);
  const pendingFor = (models: string[]) =>
    tasks.reduce((n, t) => n + models.filter((m) => !done.has(taskKey(t, m))).length, 0);
  // The model ids are known without starting anything (the simulator's are fixed).
  const plannedModels = o.models ?? loadModelsConfig({ file: config.modelsFile, env: process.env, simulatorUrl: 'http://127.0.0.1:9/v1' });
  if (o.replayOnly) {
    const ids = modelIds(plannedModels);
    const own = tasks.filter((t) => ids.some((m) => done.has(taskKey(t, m))));
    if (own.length < tasks.length) log.info({ left_out: tasks.length - own.length }, 'finished run: tasks it never had (questions added later) are left out');
    tasks = own;
    result.questions = new Set(own.map((t) => t.question.question_id)).size;
  }
  const pending = pendingFor(modelIds(plannedModels));
  result.calls_reused = tasks.length * plannedModels.length - pending;
  if (hadJournal || stored.length > 0) {
    log.info({ reused: result.calls_reused, pending, journal: hadJournal }, 'resuming: finished calls are not repeated');
  }

  const newCalls: JournalCall[] = [];
  const newEvidence = new Map<string, EvidenceRow[]>();
  let writer: JournalWriter | null = null;
  let simulator: Simulator | null = null;
  try {
    if (pending > 0 && !o.replayOnly) {
      writer = JournalWriter.open(jPath, { fsyncMs: config.journalFsyncMs });
      if (!journal.header) {
        writer.append({
          t: 'run',
          v: 1,
          run_id: runId,
          as_of: asOf.toISOString(),
          created_at: new Date().toISOString(),
          modes: [...config.modes],
          langs: [...langs],
          models: modelIds(plannedModels),
        });
      }

      // Evidence for the augmented tasks still to call (journaled evidence is reused as is).
      const needEvidence = new Map<string, ForecastTask['question']>();
      for (const t of tasks) {
        if (t.mode !== 'augmented' || evidence.has(t.question.question_id)) continue;
        if (modelIds(plannedModels).some((m) => !done.has(taskKey(t, m)))) {
          needEvidence.set(t.question.question_id, t.question);
        }
      }
      if (needEvidence.size > 0 && config.evidenceMax > 0) {
        const providers = o.evidenceProviders ?? createEvidenceProviders(config);
        const bar = progress.stage('evidence', needEvidence.size);
        let n = 0;
        const w = writer;
        const g = await gatherEvidence([...needEvidence.values()], {
          providers,
          asOf,
          maxPerQuestion: config.evidenceMax,
          signal: o.stopSignal,
          onQuestion: (qid, items, errors) => {
            w.append({ t: 'evidence', question_id: qid, items });
            evidence.set(qid, items);
            newEvidence.set(qid, items);
            n++;
            bar.update({ done: n, failed: errors.length > 0 ? (result.evidence_errors += errors.length) : result.evidence_errors });
          },
        });
        bar.stop();
        // Malformed lines of local evidence files are skipped, never fatal: said here, once per run.
        for (const p of providers) {
          if (p.skipped && Object.keys(p.skipped).length > 0) {
            log.warn({ provider: p.name, skipped_lines: p.skipped }, 'evidence: malformed lines skipped (see data/evidence/README.md for the format)');
          }
        }
        if (g.errors.length > 0) {
          const byKind: Record<string, number> = {};
          for (const e of g.errors) byKind[`${e.provider}:${e.kind}`] = (byKind[`${e.provider}:${e.kind}`] ?? 0) + 1;
          log.warn({ errors: g.errors.length, by_kind: byKind, example: g.errors[0]?.message }, 'evidence: some retrievals failed (those questions get what the other providers found)');
        }
        if (g.stopped) result.interrupted = true;
      }

      if (!result.interrupted) {
        for (const t of tasks) if (t.mode === 'augmented') t.evidence = evidence.get(t.question.question_id) ?? [];

        let models = o.models;
        if (!models) {
          if (simulatorNeeded && !config.simulatorUrl) {
            simulator = await startSimulator({
              port: 0,
              latencyMs: config.simulatorLatencyMs,
              jitterMs: config.simulatorJitterMs,
              faults: config.simulatorFaults,
            });
          }
          const simulatorUrl = simulator?.url ?? config.simulatorUrl;
          if (simulatorNeeded) {
            log.warn(
              { url: simulatorUrl, provider: 'simulated' },
              '*** NO MODELS CONFIGURED (QUORUM_MODELS_FILE unset): forecasting with the bundled MODEL SIMULATOR. ' +
                'Its forecasts are simulated (provider=simulated), not real model judgements. ***',
            );
          }
          models = loadModelsConfig({
            file: config.modelsFile,
            env: process.env,
            simulatorUrl,
            simulator: {
              maxConcurrency: config.simulatorMaxConcurrency,
              priceInPerMtok: config.simulatorPriceInPerMtok,
              priceOutPerMtok: config.simulatorPriceOutPerMtok,
            },
          });
        }
        const bar = progress.stage('forecast', pending);
        const counts = { done: 0, failed: 0, skipped: 0, cost_usd: 0 };
        const w = writer;
        log.info(
          { questions: questions.length, tasks: tasks.length, models: modelIds(models), langs, pending, budget_usd: budgetUsd, spent_usd: spentBefore },
          'forecasting',
        );
        const out = await runForecasts({
          models,
          tasks,
          runId,
          asOf,
          langs,
          stopSignal: o.stopSignal,
          callTimeoutMs: config.callTimeoutMs,
          budgetUsd,
          spentUsd: spentBefore,
          skip: (ti, model) => done.has(taskKey(tasks[ti]!, model)),
          onBudgetExhausted: (spent) =>
            log.warn({ budget_usd: budgetUsd, spent_usd: spent }, 'run budget spent: no new model calls; the rest are recorded as skipped'),
          onCall: (call, forecasts) => {
            w.append({ t: 'call', call, forecasts });
            newCalls.push({ t: 'call', call, forecasts });
            counts.done++;
            if (call.status === 'failed') counts.failed++;
            if (call.status === 'skipped') counts.skipped++;
            else if (call.attempts > 0) result.calls_made++;
            counts.cost_usd += call.cost_usd ?? 0;
            bar.update(counts);
          },
        });
        bar.stop();
        warnFailedCalls(log, newCalls);
        result.budget_exhausted = out.budgetExhausted;
        if (out.stopped) result.interrupted = true;
      }
    } else if (tasks.length > 0) {
      log.info({ tasks: tasks.length }, 'every call of this run is already done: no model call');
    }

    // Everything finished goes to the raw tables (raw-rows.ts: the write order, idempotent, and
    // the journal calls written again whatever a killed session committed). The journal is made
    // durable first: a raw row must never exist that a power cut could leave the journal without,
    // or a call stored before its forecasts would be done with its forecasts lost.
    syncJournal(jPath);
    const rows = stageRows(evidence.values(), [...journalCalls, ...newCalls]);
    await writeStageRows(conn, config.dataDir, o.partition, rows);
    result.evidence_items = rows.evidence.length;
    if (result.interrupted) {
      // Kept for the resumed run: its evidence is reused, so every model of a task sees the same.
      writer?.close();
    } else {
      writer?.remove();
      if (!writer && hadJournal) journalRemove(jPath);
    }
    writer = null;
  } finally {
    writer?.close();
    await simulator?.close();
  }

  await createRawViews(conn, config.dataDir);
  const [t] = await querySql<Record<string, number>>(conn, 'run_totals.sql', { run_id: runId });
  if (t) {
    result.calls = t.calls!;
    result.failed_calls = t.failed_calls!;
    result.skipped_calls = t.skipped_calls!;
    result.tokens_in = t.tokens_in!;
    result.tokens_out = t.tokens_out!;
    result.cost_usd = t.cost_usd!;
    result.forecasts = t.forecasts!;
    // from the stored forecasts, not this session's memory: a session resumed after the journal
    // was removed (killed while scoring) holds no evidence and would report 0
    result.evidence_items = t.evidence_items!;
    result.budget_exhausted ||= t.budget_skipped! > 0;
  }
  return result;
}

/**
 * One warning for the failed calls of this session, by model and error kind, each with its first
 * error message: the run summary only counts them (QA: a run whose three models of four failed every
 * call, out of credit, ignored or unparsable, logged nothing above info).
 */
function warnFailedCalls(log: Logger, calls: readonly JournalCall[]): void {
  const byModel: Record<string, Record<string, { calls: number; example: string | null }>> = {};
  let failed = 0;
  for (const { call } of calls) {
    if (call.status !== 'failed') continue;
    failed++;
    const kinds = (byModel[call.model] ??= {});
    const k = (kinds[call.error_kind ?? 'other'] ??= { calls: 0, example: call.error_message });
    k.calls++;
  }
  if (failed === 0) return;
  const summary = Object.entries(byModel)
    .map(([model, kinds]) => `${model}: ${Object.entries(kinds).map(([kind, k]) => `${k.calls} ${kind}`).join(', ')}`)
    .join('; ');
  log.warn({ failed_calls: failed, calls: calls.length, by_model: byModel }, `model calls failed (${summary}); each is a model_calls row with its error`);
}

function journalRemove(path: string): void {
  JournalWriter.open(path, { fsyncMs: 0 }).remove();
}
