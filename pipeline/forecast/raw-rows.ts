/**
 * How a run's journaled work reaches the raw tables, and why no kill can lose a row of it.
 *
 * The stage writes three raw tables, one `appendRaw` each (atomic: a kill leaves the whole part or
 * nothing; idempotent on the natural keys: rows already stored are skipped), in `RAW_WRITE_ORDER`,
 * and removes the journal only after the last one. A kill between two writes therefore leaves some
 * tables written and the next ones not, with the journal still holding the rows of all of them.
 *
 * The rule that makes every such window safe: a resumed session writes the rows of **every**
 * journal entry again, including the calls raw `model_calls` already holds. Whatever part of them
 * a killed session committed is skipped by the natural keys, whatever it did not is written now; no
 * row is lost and none is duplicated. (Skipping a journaled call because its `model_calls` row is
 * stored, as the stage once did, lost the call's forecasts for good when the kill fell between the
 * `model_calls` and the `forecasts` write.)
 */
import type { DuckDBConnection } from '@duckdb/node-api';
import { appendRaw } from '../warehouse/raw-writer.ts';
import type { RawTableName } from '../warehouse/tables.ts';
import type { EvidenceRow } from '../evidence/types.ts';
import type { JournalCall } from './journal.ts';
import { tokenCount, type ModelCallRow } from '../models/runner.ts';

/**
 * The raw tables of the stage, in the order they are written: the evidence first (forecasts cite
 * it), then every call (failed and skipped ones included), then the forecasts the ok calls gave.
 */
export const RAW_WRITE_ORDER = ['evidence', 'model_calls', 'forecasts'] as const satisfies readonly RawTableName[];
export type StageTable = (typeof RAW_WRITE_ORDER)[number];

/** The rows of each raw table of the stage. */
export type StageRows = Record<StageTable, Record<string, unknown>[]>;

/**
 * The raw rows of a run's work: its evidence (each item once, however many questions' lists name
 * it), its calls, and their forecasts (every language's row).
 */
export function stageRows(evidence: Iterable<EvidenceRow[]>, calls: readonly JournalCall[]): StageRows {
  const items = new Map<string, EvidenceRow>();
  for (const list of evidence) for (const e of list) if (!items.has(e.evidence_id)) items.set(e.evidence_id, e);
  return {
    evidence: [...items.values()] as unknown as Record<string, unknown>[],
    model_calls: calls.map((c) => wholeTokens(c.call)) as unknown as Record<string, unknown>[],
    forecasts: calls.flatMap((c) => c.forecasts) as unknown as Record<string, unknown>[],
  };
}

/**
 * Writes `tables` of `rows` (default: all of them), always in `RAW_WRITE_ORDER` whatever order
 * they are named in. Idempotent: rows already stored are skipped.
 */
export async function writeStageRows(
  conn: DuckDBConnection,
  dataDir: string,
  partition: { runId: string; runDate: string },
  rows: StageRows,
  tables: readonly StageTable[] = RAW_WRITE_ORDER,
): Promise<void> {
  for (const table of RAW_WRITE_ORDER) {
    if (tables.includes(table)) await appendRaw(conn, dataDir, table, rows[table], partition);
  }
}

/**
 * A call row with whole token counts, rounded up as the runner now rounds them (tokenCount). A
 * journal written before it did holds a usage's fractional counts as reported (GLM's on a cache hit,
 * QuantumNous/new-api#1545): the BIGINT columns refused them, and the run failed writing its rows
 * on every --resume, its paid calls never stored (QA).
 */
function wholeTokens(call: ModelCallRow): ModelCallRow {
  const [tin, tout] = [tokenCount(call.tokens_in), tokenCount(call.tokens_out)];
  return tin === call.tokens_in && tout === call.tokens_out ? call : { ...call, tokens_in: tin, tokens_out: tout };
}
