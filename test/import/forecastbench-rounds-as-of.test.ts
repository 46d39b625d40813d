/**
 * A ForecastBench question in two rounds whose text changed between them (the bundled sample's
 * infer:1432 and infer:1659: INFER added platform resolution criteria by the 2026-03-15 round): a
 * run dated at the first round's freeze time is shown the text of that round, not the later one
 * (QA: the import kept only the latest round's text, and the run dated 2025-10-16 was shown the
 * criteria published by 2026-03-06: 40 of its prompts differed from the same run over an extract of
 * the first round alone). The real import into a real warehouse, and the run's question query
 * (sql/pipeline/active_questions.sql).
 */
import { afterAll, describe, expect, it } from 'vitest';
import { join } from 'node:path';
import { timestampValue } from '@duckdb/node-api';
import { loadConfig } from '../../pipeline/config.ts';
import { importForecastBench } from '../../pipeline/bootstrap.ts';
import { parseForecastBench } from '../../pipeline/import/forecastbench.ts';
import { appendRaw } from '../../pipeline/warehouse/raw-writer.ts';
import { newRunId, runDate } from '../../pipeline/warehouse/layout.ts';
import { withConnection } from '../../pipeline/warehouse/duckdb.ts';
import { createRawViews } from '../../pipeline/warehouse/raw-views.ts';
import { queryFile } from '../../pipeline/warehouse/sql-files.ts';
import { REPO } from '../helpers/cli.ts';
import { tempDir } from '../helpers/temp-dir.ts';

const tmp = tempDir('quorum-fb-rounds-');
afterAll(() => tmp.cleanup());

const SAMPLE = join(REPO, 'data', 'sample', 'forecastbench');

describe('ForecastBench rounds and the as-of time', () => {
  it("a run dated at the first round's freeze is shown that round's text; the second round's from its freeze on", async () => {
    const config = loadConfig({ QUORUM_DATA_DIR: tmp.dir, LOG_LEVEL: 'silent' });
    const first = await importForecastBench(config, SAMPLE, new Date('2026-08-21T00:00:00Z'));
    const criteria = (asOf: string) =>
      withConnection(async (conn) => {
        await createRawViews(conn, tmp.dir);
        const rows = await queryFile<{ question_id: string; resolution_criteria: string }>(conn, 'pipeline/active_questions.sql', {
          as_of: timestampValue(BigInt(Date.parse(asOf)) * 1000n),
        });
        return Object.fromEntries(rows.filter((r) => ['infer:1432', 'infer:1659'].includes(r.question_id)).map((r) => [r.question_id, r.resolution_criteria]));
      });
    const before = await criteria('2025-10-16T00:00:00Z');
    expect(Object.keys(before).sort()).toEqual(['infer:1432', 'infer:1659']);
    for (const text of Object.values(before)) expect(text).not.toContain('Platform resolution criteria');
    const after = await criteria('2026-03-06T00:00:00Z');
    expect(after['infer:1432']).toContain('Platform resolution criteria: <p>For this question to resolve "Yes"');
    expect(after['infer:1659']).toContain('Platform resolution criteria: To resolve "Yes," the tax incentive must be enacted at the national level');
    // each changed question's first round is the question row this import wrote: no version again
    expect(first.written.question_versions).toEqual({ received: 8, written: 4 });
    // importing the same extract again adds nothing
    const again = await importForecastBench(config, SAMPLE, new Date('2026-08-22T00:00:00Z'));
    expect(again.written.questions!.written).toBe(0);
    expect(again.written.question_versions).toEqual({ received: 8, written: 0 });
  });

  it('a directory an older version imported: importing again gives a run dated at the first freeze the first round\'s text', async () => {
    // Before the rounds were versions (67d489c), the import stored each question once, with its
    // latest round's text, dated at the import: written here as it did, with the same writer.
    const dir = join(tmp.dir, 'upgraded');
    const config = loadConfig({ QUORUM_DATA_DIR: dir, LOG_LEVEL: 'silent' });
    const oldImport = new Date('2026-08-21T00:00:00Z');
    const batch = await parseForecastBench(SAMPLE, { now: oldImport });
    const latest = new Map(batch.questions.map((q) => [q.question_id, q]));
    for (const v of batch.question_versions) latest.set(v.question_id, v);
    await withConnection((conn) =>
      appendRaw(conn, dir, 'questions', [...latest.values()].map((q) => ({ ...q, ingested_at: oldImport })), {
        runId: newRunId(oldImport),
        runDate: runDate(oldImport),
      }),
    );
    const criteria = (asOf: string) =>
      withConnection(async (conn) => {
        await createRawViews(conn, dir);
        const rows = await queryFile<{ question_id: string; resolution_criteria: string }>(conn, 'pipeline/active_questions.sql', {
          as_of: timestampValue(BigInt(Date.parse(asOf)) * 1000n),
        });
        return Object.fromEntries(rows.filter((r) => ['infer:1432', 'infer:1659'].includes(r.question_id)).map((r) => [r.question_id, r.resolution_criteria]));
      });
    // the upgrade's import of the same extract (what README tells an operator to run)
    const upgraded = await importForecastBench(config, SAMPLE, new Date('2026-11-27T00:00:00Z'));
    const before = await criteria('2025-10-16T00:00:00Z');
    expect(Object.keys(before).sort()).toEqual(['infer:1432', 'infer:1659']);
    for (const text of Object.values(before)) expect(text).not.toContain('Platform resolution criteria');
    const after = await criteria('2026-03-06T00:00:00Z');
    expect(after['infer:1432']).toContain('Platform resolution criteria');
    expect(after['infer:1659']).toContain('Platform resolution criteria');
    // the changed questions' every round, none of them stored before (dated at the old import)
    expect(upgraded.written.questions!.written).toBe(0);
    expect(upgraded.written.question_versions).toEqual({ received: 8, written: 8 });
    // the latest version is still the latest round's text, and importing again adds nothing
    expect((await criteria('2026-11-27T00:00:00Z'))['infer:1432']).toContain('Platform resolution criteria');
    const again = await importForecastBench(config, SAMPLE, new Date('2026-11-28T00:00:00Z'));
    expect(again.written.question_versions).toEqual({ received: 8, written: 0 });
  });
});
