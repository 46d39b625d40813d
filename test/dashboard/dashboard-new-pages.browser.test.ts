/**
 * The two newest dashboard pages read as a user reads them (outside test): a source page's claims
 * panel over the bundled datasets' sources (a FiveThirtyEight pollster's polls, the CBO's
 * projections) and a scenario's own page. A real `quorum serve` (port 0) over the bundled claims
 * imported and a live run (no venue: the operator's question files, the model simulator) that
 * archives one record of a scenario over two operator questions.
 */
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import type { Browser, Page } from 'puppeteer-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildDashboard } from '../../scripts/build-dashboard.ts';
import { get, newKey } from '../api/helpers.ts';
import { quorum } from '../helpers/cli.ts';
import { launchChromium, serveQuorum, stopQuorum, type Served } from './browser-server.ts';
import { loadRoute, openTab } from './browser-tab.ts';

const ROOT = path.resolve(import.meta.dirname, '..', '..');
const POLLSTER = 'selzer-co';
const CBO = 'congressional-budget-office';

const dir = mkdtempSync(path.join(tmpdir(), 'quorum-dashboard-new-'));
const questions = mkdtempSync(path.join(tmpdir(), 'quorum-dashboard-new-questions-'));
const structure = mkdtempSync(path.join(tmpdir(), 'quorum-dashboard-new-structure-'));
const profile = mkdtempSync(path.join(tmpdir(), 'quorum-chromium-new-'));
let server: Served;
let browser: Browser;
let apiKey: string;

beforeAll(async () => {
  const built = buildDashboard();
  const env = { QUORUM_DATA_DIR: dir, QUORUM_QUESTIONS_DIR: questions, QUORUM_STRUCTURE_DIR: structure, QUORUM_VENUES: 'none', QUORUM_FRED_API_KEY: '' };
  for (const [format, dataset] of [['fte-polls', 'fte-pollster-raw-polls'], ['cbo', 'cbo-budget-projections']]) {
    const imported = quorum(['import', 'claims', format!, path.join(ROOT, 'data', 'sample', dataset!)], env);
    expect(imported.status, imported.stderr).toBe(0);
  }
  writeFileSync(path.join(questions, 'qa.yaml'), ['questions:', ...[2030, 2031].flatMap((year) => [
    `  - id: qa-rate-${year}`, `    title: Effective federal funds rate below 2.00% on ${year}-12-31`,
    `    resolution_criteria: Resolves YES if FRED series DFF is strictly below 2.00 on ${year}-12-31; NO otherwise.`,
    '    category: economics', '    created_at: 2025-01-15', `    close_time: ${year}-12-31T00:00:00Z`,
    `    resolution: { source: fred, series_id: DFF, observation_date: ${year}-12-31, transform: level, operator: "<", threshold: 2.0 }`]), ''].join('\n'));
  mkdirSync(path.join(structure, 'scenarios'));
  writeFileSync(path.join(structure, 'scenarios', 'qa.yaml'), ['scenarios:', '  - id: qa-rates', '    title: Rates below 2% two years running', '    description: Two operator questions, one scenario',
    '    components:', '      - { question: "quorum:qa-rate-2030" }', '      - { question: "quorum:qa-rate-2031" }', ''].join('\n'));
  const run = quorum(['run'], env);
  expect(run.status, run.stderr).toBe(0);
  await built;
  apiKey = newKey(dir, 'api').key; // before the server reads the key file
  server = await serveQuorum({ ...env, QUORUM_LIMIT_ANONYMOUS_PER_HOUR: '0', QUORUM_LIMIT_API_PER_DAY: '0' });
  browser = await launchChromium(profile);
}, 120_000);

afterAll(async () => {
  await browser?.close();
  if (server) await stopQuorum(server.child);
  for (const d of [dir, questions, structure, profile]) rmSync(d, { recursive: true, force: true });
});

async function tab(width: number, key: string | null): Promise<Page> {
  const { page } = await openTab(await browser.createBrowserContext(), server.url, width, key);
  return page;
}
const cells = (page: Page, table: string) => page.$$eval(`#${table} tbody tr`, (trs) => trs.map((tr) => [...tr.cells].map((c) => c.textContent)));
const keyed = { headers: { 'X-API-Key': '' } };

describe('the newest dashboard pages, read as a user reads them (outside test)', () => {
  it("a pollster's claims give each poll's margin, the margin that came to be and its error beside the hit, as the value-claims table above counts them", async () => {
    keyed.headers['X-API-Key'] = apiKey;
    const api = (await get(server, `/api/claims/?source=${POLLSTER}&limit=25`, keyed)).body.claims as { kind: string; side: string; value: number; realized_value: number; error: number; within_tolerance: boolean; hit: number }[];
    const first = api[0]!;
    expect(first).toMatchObject({ kind: 'direction', side: 'Chuck Grassley', value: -12, realized_value: -12.2, hit: 1, within_tolerance: true });
    const page = await tab(1200, apiKey);
    await loadRoute(page, server.url, `#/sources/${POLLSTER}`);
    const rows = await cells(page, 'claims');
    expect(rows[0]!.slice(2, 6)).toEqual(['direction', 'Chuck Grassley, margin −12 points', 'came true, margin −12.2 points', 'hit; error +0.2 points, within tolerance']);
    // every row: the API's margins and errors, none left out
    expect(rows.length).toBe(api.length);
    expect(rows.every((r, i) => r[3]!.includes(`margin ${String(api[i]!.value).replace('-', '−')} points`) && r[5]!.includes(api[i]!.within_tolerance ? 'within tolerance' : 'outside tolerance'))).toBe(true);
    // the score is explained once, under the table
    expect(await page.$eval('#claims-score-note', (e) => e.textContent)).toMatch(/^Score: a probability claim's Brier score, \(probability − outcome\)², 0 best and 1 worst; .* A poll's margin is the first candidate of its subject minus the second, in points\.$/);
    await page.close();
  });

  it("at 375 px a claim's subject keeps a line's width beside a long dataset path (outside test: the CBO's subjects ran one word a line)", async () => {
    const page = await tab(375, apiKey);
    await loadRoute(page, server.url, `#/sources/${CBO}`);
    const widths = await page.$eval('#claims tbody tr', (tr) => ({ subject: tr.cells[1]!.getBoundingClientRect().width, from: tr.cells[6]!.textContent, fromWidth: tr.cells[6]!.getBoundingClientRect().width }));
    expect(widths.from).toMatch(/^cbo-budget-projections · (debt|deficit)_projection_errors\.csv:\d+$/);
    expect(widths.subject).toBeGreaterThanOrEqual(150);
    expect(widths.fromWidth).toBeLessThan(200);
    await page.close();
  });

  it("a scenario's record history says which components have resolved in words, not the API's pattern", async () => {
    const api = (await get(server, '/api/scenarios/qa-rates/')).body.scenario as { records: { resolved_pattern: string }[] };
    expect(api.records.map((r) => r.resolved_pattern)).toEqual(['--']);
    const page = await tab(1200, null);
    await loadRoute(page, server.url, '#/scenarios/qa-rates');
    const rows = await cells(page, 'scenario-records');
    expect(rows.map((r) => r[2])).toEqual(['none']);
    await page.close();
  });
});
