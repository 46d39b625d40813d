/** Local evidence: JSON Lines files and the bundled sample's question backgrounds, as of a time. */
import { describe, expect, it } from 'vitest';
import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { DuckDBInstance } from '@duckdb/node-api';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createLocalEvidenceProvider } from '../../pipeline/evidence/local.ts';
import { quorum, REPO } from '../helpers/cli.ts';
import { rawGlob } from '../../pipeline/warehouse/layout.ts';
import { stageRows } from '../../pipeline/forecast/raw-rows.ts';
import type { TaskQuestion } from '../../pipeline/models/prompts.ts';

const q = (question_id: string): TaskQuestion => ({
  question_id, title: 't', description: null, resolution_criteria: null, url: null, created_at: null, close_time: null, category: null, domain: null,
});

describe('local evidence files', () => {
  it('reads JSONL items, skips bad and undated lines, never returns what was published after as-of', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'quorum-ev-'));
    writeFileSync(
      join(dir, 'a.jsonl'),
      [
        '# comment',
        JSON.stringify({ question_id: 'x:1', title: 'Old report', url: 'https://a/1', published_at: '2025-10-01T00:00:00Z', snippet: 'old', source_slug: 'bls' }),
        JSON.stringify({ question_id: 'x:1', title: 'New report', url: 'https://a/2', published_at: '2025-10-20T00:00:00Z', snippet: 'new' }),
        JSON.stringify({ question_id: 'x:1', title: 'Undated', url: 'https://a/3', snippet: 'no date' }),
        '{"question_id": "x:1", "title": "torn',
        JSON.stringify({ question_id: 'x:2', title: 'Other', published_at: '2025-09-01', snippet: 'other' }),
        '',
      ].join('\n'),
    );
    writeFileSync(join(dir, 'ignored.txt'), 'not evidence');
    const p = createLocalEvidenceProvider({ dir });
    const early = await p.retrieve(q('x:1'), { asOf: new Date('2025-10-16T00:00:00Z'), limit: 10 });
    expect(early.map((x) => x.title)).toEqual(['Old report']);
    expect(early[0]).toMatchObject({ source_slug: 'bls', url: 'https://a/1', snippet: 'old' });
    expect(early[0]!.retrieved_at).toBeInstanceOf(Date);
    const late = await p.retrieve(q('x:1'), { asOf: new Date('2025-11-01T00:00:00Z'), limit: 10 });
    expect(late.map((x) => x.title)).toEqual(['New report', 'Old report']); // newest first
    expect(late[0]!.source_slug).toBe('local');
    expect((await p.retrieve(q('x:1'), { asOf: new Date('2025-11-01T00:00:00Z'), limit: 1 }))).toHaveLength(1);
    expect(Object.values(p.skipped)).toEqual([2]);
    expect(await p.retrieve(q('nope:1'), { asOf: new Date(), limit: 5 })).toEqual([]);
  });

  it('serves the sample backgrounds dated at the freeze time of the first question set carrying them', async () => {
    const p = createLocalEvidenceProvider({ forecastBenchDirs: [join(REPO, 'data', 'sample', 'forecastbench')] });
    expect(p.size()).toBeGreaterThan(400);
    const items = await p.retrieve(q('manifold:4fPq6PiY40SUrZGL7cb5'), { asOf: new Date('2025-10-16T00:00:00Z'), limit: 5 });
    expect(items).toHaveLength(1);
    expect(items[0]).toMatchObject({ source_slug: 'manifold', title: 'Question background (manifold)' });
    expect(items[0]!.snippet).toMatch(/Magnus Carlsen/);
    expect(items[0]!.published_at!.toISOString()).toBe('2025-10-16T00:00:00.000Z');
    // before the question set was frozen, its background was not evidence yet
    expect(await p.retrieve(q('manifold:4fPq6PiY40SUrZGL7cb5'), { asOf: new Date('2025-10-15T23:59:59Z'), limit: 5 })).toEqual([]);
  });

  it('reads published_at as the pipeline does (no offset = UTC) whatever the machine time zone; "1" and 2026-02-30 are malformed', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'quorum-ev-'));
    writeFileSync(
      join(dir, 'a.jsonl'),
      [
        // A BLS release at 12:30 UTC, written without an offset (the pipeline's grammar: UTC).
        JSON.stringify({ question_id: 'x:1', title: 'CPI release', url: 'https://www.bls.gov/1', published_at: '2026-03-11T12:30:00', snippet: 'CPI', source_slug: 'bls' }),
        JSON.stringify({ question_id: 'x:1', title: 'Typo date', url: 'https://a/2', published_at: '2026-02-30', snippet: 'rolled over' }),
        JSON.stringify({ question_id: 'x:1', title: 'Bare number', url: 'https://a/3', published_at: '1', snippet: 'year 2001?' }),
      ].join('\n'),
    );
    const before = process.env.TZ;
    process.env.TZ = 'Asia/Tokyo'; // Node re-reads TZ when it is assigned
    try {
      const p = createLocalEvidenceProvider({ dir });
      // Six hours before the release: nothing may be shown.
      expect(await p.retrieve(q('x:1'), { asOf: new Date('2026-03-11T06:00:00Z'), limit: 10 })).toEqual([]);
      const after = await p.retrieve(q('x:1'), { asOf: new Date('2026-03-11T12:30:00Z'), limit: 10 });
      expect(after.map((x) => [x.title, x.published_at!.toISOString()])).toEqual([['CPI release', '2026-03-11T12:30:00.000Z']]);
      expect(Object.values(p.skipped)).toEqual([2]);
    } finally {
      if (before === undefined) delete process.env.TZ;
      else process.env.TZ = before;
    }
  });

  it('a file saved with a UTF-8 byte order mark (Windows Notepad) keeps its first line', async () => {
    // The first line began with U+FEFF, which JSON.parse refuses: the file's first item was skipped
    // as malformed (the run warned of a malformed line the operator cannot see). The project's other
    // file readers drop the mark (pipeline/import/csv.ts, pipeline/claims/csv-lines.ts).
    const dir = mkdtempSync(join(tmpdir(), 'quorum-ev-'));
    const line = (i: number) => JSON.stringify({ question_id: 'x:1', title: `Report ${i}`, url: `https://a/${i}`, published_at: '2025-10-0' + i, snippet: 's' });
    writeFileSync(join(dir, 'a.jsonl'), `\uFEFF${line(1)}\r\n${line(2)}\r\n`);
    const p = createLocalEvidenceProvider({ dir });
    const items = await p.retrieve(q('x:1'), { asOf: new Date('2025-10-16T00:00:00Z'), limit: 10 });
    expect(items.map((x) => x.title)).toEqual(['Report 2', 'Report 1']);
    expect(p.skipped).toEqual({});
  });

  it("a line's own evidence_id (an undocumented field) does not replace the id of what it shows", async () => {
    // The line schema took an optional evidence_id and used it as the item's id. The raw evidence
    // table keeps one row per id (the first): two questions' lines carrying the same id were stored
    // as one row (the first question's), and the second question's forecasts cited its text; an
    // edited line keeping its id was stored as the old text (what b64116c fixed for lines without one).
    const dir = mkdtempSync(join(tmpdir(), 'quorum-ev-'));
    const line = (question_id: string, snippet: string) => JSON.stringify({ evidence_id: 'ev-mine', question_id, title: 'Jobs report', url: 'https://www.bls.gov/x', published_at: '2025-10-01T00:00:00Z', snippet, source_slug: 'bls' });
    writeFileSync(join(dir, 'a.jsonl'), `${line('x:1', 'Payrolls rose.')}\n${line('x:2', 'Payrolls fell.')}\n`);
    const asOf = new Date('2025-10-16T00:00:00Z');
    const p = createLocalEvidenceProvider({ dir });
    const [a] = await p.retrieve(q('x:1'), { asOf, limit: 5 });
    const [b] = await p.retrieve(q('x:2'), { asOf, limit: 5 });
    expect(a!.evidence_id).not.toBe(b!.evidence_id);
    expect(stageRows([[a!], [b!]], []).evidence.map((r) => r.snippet)).toEqual(['Payrolls rose.', 'Payrolls fell.']);
    writeFileSync(join(dir, 'a.jsonl'), `${line('x:1', 'Correction: payrolls fell.')}\n`);
    const [edited] = await createLocalEvidenceProvider({ dir }).retrieve(q('x:1'), { asOf, limit: 5 });
    expect(edited!.evidence_id).not.toBe(a!.evidence_id);
  });

  it('an evidence line edited between runs is stored as edited: each run\'s forecasts cite what their prompts showed', async () => {
    // The id was sha256(slug | question | url): the edited line had the stored line's id, the raw
    // table (keyed by id) kept the old text, and the second run's forecasts, the question's
    // "evidence used" and the exports showed a snippet saying the opposite of what the models read.
    const tmp = mkdtempSync(join(tmpdir(), 'quorum-ev-edit-'));
    const evDir = join(tmp, 'evidence');
    const env = { QUORUM_DATA_DIR: join(tmp, 'data'), QUORUM_EVIDENCE_DIR: evDir, QUORUM_VENUES: 'none', QUORUM_FRED_API_KEY: '', QUORUM_MAX_QUESTIONS: '1', QUORUM_MODES: 'augmented', QUORUM_SIMULATOR_LATENCY_MS: '1' };
    expect(quorum(['import', 'forecastbench', join(REPO, 'data', 'sample', 'forecastbench')], env).status).toBe(0);
    const line = (snippet: string) => JSON.stringify({ question_id: 'infer:1401', title: 'Huawei on Open RAN', url: 'https://example.org/huawei', published_at: '2025-10-10T00:00:00Z', snippet, source_slug: 'local' });
    mkdirSync(evDir, { recursive: true });
    writeFileSync(join(evDir, 'a.jsonl'), `${line('Huawei will not support Open RAN.')}\n`);
    expect(quorum(['run', '--as-of', '2025-10-16T00:00:00Z'], env).status).toBe(0);
    writeFileSync(join(evDir, 'a.jsonl'), `${line('Correction: Huawei will support Open RAN.')}\n`);
    expect(quorum(['run', '--as-of', '2025-10-17T00:00:00Z'], env).status).toBe(0);

    const db = await DuckDBInstance.create(':memory:');
    const conn = await db.connect();
    try {
      const rows = (await conn.runAndReadAll(
        `SELECT f.run_id, e.snippet
         FROM (SELECT DISTINCT run_id, unnest(evidence_ids) AS evidence_id FROM read_parquet($1, hive_partitioning = false) WHERE question_id = 'infer:1401') AS f
         JOIN read_parquet($2, hive_partitioning = false) AS e USING (evidence_id)
         WHERE e.url = 'https://example.org/huawei'
         ORDER BY f.run_id`,
        [rawGlob(env.QUORUM_DATA_DIR, 'forecasts'), rawGlob(env.QUORUM_DATA_DIR, 'evidence')],
      )).getRowObjectsJS() as { run_id: string; snippet: string }[];
      expect(rows.map((r) => [r.run_id.slice(0, 17), r.snippet])).toEqual([
        ['r20251016T000000Z', 'Huawei will not support Open RAN.'],
        ['r20251017T000000Z', 'Correction: Huawei will support Open RAN.'],
      ]);
    } finally {
      conn.closeSync();
      db.closeSync();
    }
  }, 120_000);
});
