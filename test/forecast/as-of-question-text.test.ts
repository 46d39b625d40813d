/**
 * A backfill dated T shows the models only the question text known at T (DESIGN §5: information
 * available at T). The bundled sample's second question set (frozen 2026-03-06) brings questions
 * whose markets opened before its freeze; their only text is the one public at that freeze. A run
 * dated 2025-12-15 was shown it: manifold:NII0slqg2N ("OpenAI IPO before 2027?", opened
 * 2025-11-02) with its background's "Update 2025-12-20 (PST) (AI summary of creator comment):
 * This market resolves based on when the actual IPO occurs, …", a creator's clarification written
 * five days after the run's date (outside audit: every request body the runner sent, recorded).
 *
 * A real pipeline run on the bundled sample, the real simulator behind a recording proxy.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { loadConfig } from '../../pipeline/config.ts';
import { createLogger } from '../../pipeline/log.ts';
import { runPipeline, writtenLaterNote } from '../../pipeline/run.ts';
import { importForecastBench } from '../../pipeline/bootstrap.ts';
import { startSimulator, type Simulator } from '../../pipeline/simulator/server.ts';
import { closeDuckdb } from '../../pipeline/warehouse/duckdb.ts';
import { REPO } from '../helpers/cli.ts';
import { oneDuckdbThread, rawQuery, scratch } from './helpers.ts';

const root = scratch('quorum-asof-text-');
const dir = join(root, 'warehouse');
const asOf = new Date('2025-12-15T12:00:00Z');
let sim: Simulator;
let proxy: Server;
let proxyUrl = '';
/** The user message of every chat completion the runner sent. */
const prompts: string[] = [];

beforeAll(async () => {
  await oneDuckdbThread();
  sim = await startSimulator({ port: 0 });
  // Records each request body, then hands it to the simulator unchanged.
  proxy = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', async () => {
      const body = Buffer.concat(chunks).toString('utf8');
      const sent = JSON.parse(body) as { messages: { role: string; content: string }[] };
      prompts.push(sent.messages.filter((m) => m.role === 'user').map((m) => m.content).join('\n'));
      const answer = await fetch(`${sim.url.replace(/\/v1$/, '')}${req.url}`, { method: req.method, headers: { 'content-type': 'application/json' }, body });
      res.writeHead(answer.status, { 'content-type': answer.headers.get('content-type') ?? 'application/json' });
      res.end(await answer.text());
    });
  });
  await new Promise<void>((resolve) => proxy.listen(0, '127.0.0.1', resolve));
  proxyUrl = `http://127.0.0.1:${(proxy.address() as AddressInfo).port}/v1`;
  await importForecastBench(loadConfig({ QUORUM_DATA_DIR: dir, LOG_LEVEL: 'silent' }), join(REPO, 'data', 'sample', 'forecastbench'));
}, 120_000);

afterAll(async () => {
  await new Promise((resolve) => proxy.close(resolve));
  await sim.close();
  await closeDuckdb();
});

describe('a backfill and the question text known at its date', () => {
  it('forecasts only questions whose text was known by then, and shows no later edit of it', async () => {
    const config = loadConfig({
      QUORUM_DATA_DIR: dir,
      QUORUM_SAMPLE_DIR: join(REPO, 'data', 'sample', 'forecastbench'),
      QUORUM_SIMULATOR_URL: proxyUrl,
      QUORUM_MODES: 'informed',
      QUORUM_SCENARIO_MAX_CONDITIONS: '0',
      QUORUM_VENUES: 'none',
      LOG_LEVEL: 'silent',
    });
    const s = await runPipeline({ config, logger: createLogger('silent'), asOf });
    expect(s.status, s.error ?? '').toBe('completed');
    expect(prompts.length).toBe(s.calls_made);
    expect(prompts.length).toBeGreaterThan(0);

    // The creator's comment of 2025-12-20, and the question only the 2026-03-06 set has, are not shown.
    expect(prompts.filter((p) => p.includes('Update 2025-12-20'))).toEqual([]);
    expect(prompts.filter((p) => p.includes('Question: OpenAI IPO before 2027?'))).toEqual([]);

    // No question the run forecast is one whose every version was written after its date.
    const firstKnown = await rawQuery(dir, 'questions', 'SELECT question_id, min(ingested_at) AS first_known FROM t GROUP BY question_id');
    const known = new Map(firstKnown.map((r) => [r.question_id as string, (r.first_known as Date).getTime()]));
    const forecast = await rawQuery(dir, 'forecasts', `SELECT DISTINCT question_id FROM t WHERE run_id = '${s.run_id}'`);
    const unknownThen = forecast.map((r) => r.question_id as string).filter((q) => known.get(q)! > asOf.getTime());
    expect(unknownThen).toEqual([]);
    // ... while the questions of the first set (frozen 2025-10-16), still open, are forecast
    expect(forecast.map((r) => r.question_id)).toContain('infer:1401');

    // The run says how many it left out, counted here from the raw files: opened by its date and
    // open then by their first version, first written after it (a backtest not smaller in silence)
    const first = await rawQuery(dir, 'questions', 'SELECT * FROM t QUALIFY row_number() OVER (PARTITION BY question_id ORDER BY ingested_at) = 1');
    const resolvedBy = new Set((await rawQuery(dir, 'resolutions', 'SELECT question_id, resolved_at FROM t'))
      .filter((r) => (r.resolved_at as Date).getTime() <= asOf.getTime()).map((r) => r.question_id as string));
    const leftOut = first.filter((q) => (q.ingested_at as Date).getTime() > asOf.getTime()
      && (q.created_at === null || (q.created_at as Date).getTime() <= asOf.getTime())
      && (q.close_time === null || (q.close_time as Date).getTime() > asOf.getTime())
      && !resolvedBy.has(q.question_id as string));
    expect(leftOut.length).toBeGreaterThan(0);
    expect(s.notes).toContain(writtenLaterNote(leftOut.length, asOf));
    expect(s.notes.join('\n')).toContain(`${leftOut.length} questions open at 2025-12-15T12:00:00.000Z were not forecast`);
  }, 180_000);
});
