/**
 * Taxonomy history (the api plan's "full taxonomy history"): each sync applies the current taxonomy
 * rules to the questions stored before them (pipeline/taxonomy/reclassify.ts), the derive lists
 * each question's taxonomy changes over its stored versions (sql/derive/12_taxonomy_history.sql),
 * and GET /api/taxonomy/history/{question_id}/ serves them. In-process over a real warehouse: raw
 * parts written by the pipeline's raw writer, `quorum sync`'s runSync (local steps only), the
 * pipeline's derive and publish, a real HTTP server on port 0.
 */
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ServerHandle } from '../../api/server.ts';
import { createLogger } from '../../pipeline/log.ts';
import { runSync, type SyncReport } from '../../pipeline/sync.ts';
import { classify, getDefaultTaxonomy, parseTaxonomy } from '../../pipeline/taxonomy/classify.ts';
import { auth, expectProblem, get, newKey, serve } from '../api/helpers.ts';
import { withConnection } from '../../pipeline/warehouse/duckdb.ts';
import { newRunId, runDate } from '../../pipeline/warehouse/layout.ts';
import { appendRaw } from '../../pipeline/warehouse/raw-writer.ts';
import { writeImportBatch } from '../../pipeline/import/write-batch.ts';
import { fixture, publish, question, rawRows, snapshotRows, type Fixture } from '../structure/helpers.ts';

const FED = 'Will the Fed cut interest rates in January 2026?';
const ZEBRA = 'first unrelated zebra';
const OLDER = 'second unrelated zebra';
const T0 = new Date('2025-01-01T00:00:00Z');
const T1 = new Date('2025-02-01T00:00:00Z');
const T2 = new Date('2025-03-01T00:00:00Z');
const AS_OF = new Date('2026-01-15T00:00:00Z');

/** Question versions, keyed as the pipeline writes versions (question_id, ingested_at). */
async function writeVersions(dataDir: string, rows: object[]): Promise<void> {
  await withConnection((conn) => appendRaw(conn, dataDir, 'questions', rows, { runId: newRunId(T0), runDate: runDate(T0) }, { key: ['question_id', 'ingested_at'] }));
}

/** The stored taxonomy of a title under the current rules. */
const now = (title: string) => classify({ title });

let f: Fixture;
let questionsDir: string;
let syncs: SyncReport[];
let runId: string;
let server: ServerHandle;
let imports: Awaited<ReturnType<typeof writeImportBatch>>[];

const taxonomyReport = (r: SyncReport) => r.sources.find((s) => s.source === 'taxonomy');

beforeAll(async () => {
  f = fixture();
  questionsDir = join(f.dataDir, '..', 'questions');
  mkdirSync(questionsDir, { recursive: true });
  await writeVersions(f.dataDir, [
      // stored under older rules: the Fed question as world/other without tags
      question('manifold:fed', FED, { category: 'world', domain: 'other', tags: [], ingested_at: T0 }),
      // stored under the current rules, then a close-time version (its taxonomy unchanged)
      question('manifold:zebra', ZEBRA, { ...now(ZEBRA), ingested_at: T0 }),
      question('manifold:zebra', ZEBRA, { ...now(ZEBRA), ingested_at: T1, close_time: new Date('2027-06-01T00:00:00Z') }),
      // edited: the text and, with it, the taxonomy changed (as a later ForecastBench round stores it)
      question('metaculus:edit', ZEBRA, { ...now(ZEBRA), ingested_at: T0 }),
      question('metaculus:edit', FED, { ...now(FED), ingested_at: T2 }),
      // a question file's own category (venue quorum) is the operator's: never reclassified
      question('quorum:own', FED, { category: 'politics', domain: 'policy', tags: ['own-tag'], ingested_at: T0 }),
      // a ForecastBench question's first round, stored under older rules (reclassified by the sync)
      question('polymarket:fb', FED, { category: 'world', domain: 'other', tags: [], ingested_at: T0, origin: 'forecastbench:r1' }),
  ]);
  // a long-lived process (`quorum start`: the scheduler's runs sync in it) loaded the rules before
  // the operator's edit of data/taxonomy.json: in memory, older rules that classify nothing
  Object.assign(getDefaultTaxonomy(), parseTaxonomy({
    version: 1, default: { category: 'world', domain: 'other' }, fieldWeights: { title: 3, description: 1, resolution_criteria: 1 },
    rules: [{ name: 'older', category: 'tech', domain: 'other', weight: 1, patterns: ['qqxqq'] }],
  }, 'older rules'));
  const sync = () => runSync({ dataDir: f.dataDir, questionsDir }, createLogger('silent'), undefined, { localOnly: true });
  syncs = [await sync(), await sync()];
  // then a newer extract: its second round (frozen at T2, before the sync) changed the text, written as
  // writeImportBatch writes a ForecastBench batch's versions (pipeline/import/forecastbench.ts)
  const round1 = question('polymarket:fb', FED, { ...now(FED), ingested_at: T0, origin: 'forecastbench:r1' });
  const extract = { questions: [round1], question_versions: [round1, question('polymarket:fb', ZEBRA, { ...now(ZEBRA), ingested_at: T2, origin: 'forecastbench:r2' })] };
  imports = [];
  for (const ms of [1000, 2000]) imports.push(await withConnection((conn) => writeImportBatch(conn, f.dataDir, extract, new Date(Date.now() + ms))));
  // an older extract imported after it: a round between the two, whose text a later round replaced
  const older = { questions: [round1], question_versions: [round1, question('polymarket:fb', OLDER, { ...now(OLDER), ingested_at: T1, origin: 'forecastbench:r1b' })] };
  imports.push(await withConnection((conn) => writeImportBatch(conn, f.dataDir, older, new Date(Date.now() + 3000))));
  runId = await publish(f, AS_OF);
  server = await serve(f.dataDir);
}, 120_000);

afterAll(async () => {
  await server?.close();
  f?.cleanup();
});

describe('a sync applies the current taxonomy rules to the stored questions', () => {
  it('writes one new version of the question the rules now classify otherwise, dated by the sync, and nothing on the next sync', async () => {
    // the rules are read from data/taxonomy.json at each sync, not once per process (QA: the edit
    // reached no run of `quorum start` until a restart, and a `quorum sync` beside it was undone)
    expect(taxonomyReport(syncs[0]!)).toMatchObject({ ok: true, written: { question_versions: 2 } });
    expect(taxonomyReport(syncs[1]!)).toMatchObject({ ok: true, written: {} });
    const fed = (await rawRows(f.dataDir, 'questions', "question_id = 'manifold:fed'")).sort((a, b) => Date.parse(a.ingested_at) - Date.parse(b.ingested_at));
    expect(fed.map((q) => [q.category, q.domain, q.tags])).toEqual([['world', 'other', []], [now(FED).category, now(FED).domain, now(FED).tags]]);
    expect(now(FED).category).toBe('economics');
    // the rest of the row is the stored version's; only the taxonomy and ingested_at are new
    expect(fed[1]).toMatchObject({ title: FED, venue: 'manifold', venue_market_id: 'fed', origin: 'test', close_time: fed[0]!.close_time });
    expect(Date.parse(fed[1]!.ingested_at)).toBeGreaterThan(Date.parse(syncs[0]!.at) - 1000);
    // the question file's own taxonomy, and the questions already classified so, are left alone
    expect(await rawRows(f.dataDir, 'questions', "question_id = 'quorum:own'")).toHaveLength(1);
    expect(await rawRows(f.dataDir, 'questions', "question_id = 'manifold:zebra'")).toHaveLength(2);
  });

  it("a ForecastBench round imported after the sync reclassified its question is the question's text (QA)", async () => {
    // the sync's reclassified version (first round's text, dated by the sync) came after the second
    // round's freeze: readers, who take the latest version, kept the first round's text for good
    const rows = await snapshotRows(f.dataDir, runId, "SELECT title, category FROM {questions} WHERE question_id = 'polymarket:fb'");
    expect(rows).toEqual([{ title: ZEBRA, category: now(ZEBRA).category }]);
    const hist = await snapshotRows(f.dataDir, runId, "SELECT change, category FROM {taxonomy_history} WHERE question_id = 'polymarket:fb' ORDER BY seq");
    expect(hist.at(-1)).toEqual({ change: 'edited', category: now(ZEBRA).category });
    // the round and a version of it dated by the import; the same extract again adds nothing; an older
    // extract adds its round, and the later round's text stays
    expect(imports.map((i) => i.question_versions)).toEqual([{ received: 3, written: 2 }, { received: 2, written: 0 }, { received: 2, written: 1 }]);
  });
});

describe('taxonomy_history (sql/derive/12_taxonomy_history.sql)', () => {
  it('lists the first stored version and each change of taxonomy, reclassified or edited; a close-time version is no change', async () => {
    const rows = await snapshotRows(f.dataDir, runId, "SELECT question_id, seq, change, category, previous_category FROM {taxonomy_history} WHERE question_id <> 'polymarket:fb' ORDER BY question_id, seq");
    expect(rows).toEqual([
      { question_id: 'manifold:fed', seq: 1, change: 'first_stored', category: 'world', previous_category: null },
      { question_id: 'manifold:fed', seq: 2, change: 'reclassified', category: 'economics', previous_category: 'world' },
      { question_id: 'manifold:zebra', seq: 1, change: 'first_stored', category: 'world', previous_category: null },
      { question_id: 'metaculus:edit', seq: 1, change: 'first_stored', category: 'world', previous_category: null },
      { question_id: 'metaculus:edit', seq: 2, change: 'edited', category: 'economics', previous_category: 'world' },
      { question_id: 'quorum:own', seq: 1, change: 'first_stored', category: 'politics', previous_category: null },
    ]);
    // the last change of each question is its taxonomy in `questions`
    const mismatched = await snapshotRows(
      f.dataDir,
      runId,
      `SELECT q.question_id FROM {questions} AS q
       JOIN (SELECT question_id, arg_max(category, seq) AS category, arg_max(domain, seq) AS domain, arg_max(tags, seq) AS tags FROM {taxonomy_history} GROUP BY 1) AS h USING (question_id)
       WHERE (q.category, q.domain, coalesce(q.tags, [])) IS DISTINCT FROM (h.category, h.domain, h.tags)`,
    );
    expect(mismatched).toEqual([]);
  });
});

describe('GET /api/taxonomy/history/{question_id}/', () => {
  it('an api key: the changes oldest first, with the taxonomy now', async () => {
    const key = auth.bearer(newKey(f.dataDir, 'api').key);
    const got = await get(server, '/api/taxonomy/history/manifold:fed/', key);
    expect(got.res.status, got.text).toBe(200);
    expect(got.body).toMatchObject({ question_id: 'manifold:fed', title: FED, ...now(FED) });
    expect(got.body.changes).toEqual([
      { seq: 1, since: '2025-01-01T00:00:00.000Z', change: 'first_stored', category: 'world', domain: 'other', tags: [], previous_category: null, previous_domain: null, previous_tags: [] },
      {
        seq: 2, since: expect.any(String), change: 'reclassified', ...now(FED),
        previous_category: 'world', previous_domain: 'other', previous_tags: [],
      },
    ]);
    // the bare venue market id of one question works as on the lifecycle endpoint
    expect((await get(server, '/api/taxonomy/history/edit/', key)).body.changes.map((c: { change: string }) => c.change)).toEqual(['first_stored', 'edited']);
  });

  it('needs the api plan; a malformed or unknown id is a 400 or 404', async () => {
    expectProblem(await get(server, '/api/taxonomy/history/manifold:fed/'), 403, 'plan_required');
    expectProblem(await get(server, '/api/taxonomy/history/manifold:fed/', auth.x(newKey(f.dataDir, 'pro').key)), 403, 'plan_required');
    const key = auth.x(newKey(f.dataDir, 'api').key);
    expectProblem(await get(server, '/api/taxonomy/history/manifold:nope/', key), 404, 'not_found');
    expectProblem(await get(server, `/api/taxonomy/history/${encodeURIComponent("manifold:x' OR 1=1 --")}/`, key), 400, 'invalid_parameter');
  });
});
