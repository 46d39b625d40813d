/**
 * The structure tests' temp warehouse and the raw rows written into it through the real raw writer
 * (helpers.ts re-exports these): apart from helpers.ts so that a test needing only these does not
 * load the whole pipeline (run.ts, bootstrap.ts) that helpers.ts's score-and-publish needs.
 */
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { withConnection } from '../../pipeline/warehouse/duckdb.ts';
import { newRunId, runDate } from '../../pipeline/warehouse/layout.ts';
import { appendRaw } from '../../pipeline/warehouse/raw-writer.ts';
import type { RawTableName } from '../../pipeline/warehouse/tables.ts';
import { memTempDir } from '../helpers/mem-temp-dir.ts';

export interface Fixture {
  dataDir: string;
  structureDir: string;
  cleanup: () => void;
}

/**
 * A temp warehouse and a temp structure dir holding `files` (relative path → YAML text); with
 * `memory`, in memory (test/helpers/mem-temp-dir.ts) for files whose runs write again and again.
 */
export function fixture(files: Record<string, string> = {}, opts: { memory?: boolean } = {}): Fixture {
  const root = opts.memory ? memTempDir('quorum-structure-').dir : mkdtempSync(join(tmpdir(), 'quorum-structure-'));
  const dataDir = join(root, 'warehouse');
  const structureDir = join(root, 'structure');
  mkdirSync(join(structureDir, 'links'), { recursive: true });
  mkdirSync(join(structureDir, 'theses'), { recursive: true });
  mkdirSync(join(structureDir, 'factors'), { recursive: true });
  mkdirSync(join(structureDir, 'scenarios'), { recursive: true });
  for (const [rel, text] of Object.entries(files)) writeFileSync(join(structureDir, rel), text);
  return { dataDir, structureDir, cleanup: () => rmSync(root, { recursive: true, force: true }) };
}

/** Appends rows to raw tables through the pipeline's raw writer (one import "run"). */
export async function writeRaw(dataDir: string, tables: Partial<Record<RawTableName, object[]>>, at = new Date('2026-01-01T00:00:00Z')) {
  await withConnection(async (conn) => {
    for (const [table, rows] of Object.entries(tables)) {
      await appendRaw(conn, dataDir, table as RawTableName, rows ?? [], { runId: newRunId(at), runDate: runDate(at) });
    }
  });
}

/** A question row (category tech unless given). */
export function question(id: string, title: string, extra: Record<string, unknown> = {}) {
  return {
    question_id: id,
    venue: id.split(':')[0],
    venue_market_id: id.split(':')[1],
    title,
    description: null,
    category: 'tech',
    domain: 'ai',
    created_at: new Date('2025-01-01T00:00:00Z'),
    close_time: new Date('2027-01-01T00:00:00Z'),
    status: 'active',
    lang: 'en',
    origin: 'test',
    ingested_at: new Date('2025-01-01T00:00:00Z'),
    ...extra,
  };
}

/** A resolution of `questionId` to `outcome` at `at`, its source the question's venue. */
export function resolution(questionId: string, outcome: number, at: Date) {
  return { question_id: questionId, outcome, resolved_at: at, source_slug: questionId.split(':')[0], retrieved_at: at, method: 'test' };
}
