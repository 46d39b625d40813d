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
    expect(first.written.question_versions).toEqual({ received: 4, written: 4 });
    // importing the same extract again adds nothing
    const again = await importForecastBench(config, SAMPLE, new Date('2026-08-22T00:00:00Z'));
    expect(again.written.questions!.written).toBe(0);
    expect(again.written.question_versions).toEqual({ received: 4, written: 0 });
  });
});
