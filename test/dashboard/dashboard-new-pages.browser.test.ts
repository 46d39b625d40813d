/**
 * The two newest dashboard pages read as a user reads them (outside test): a source page's claims
 * panel over the bundled datasets' sources (a FiveThirtyEight pollster's polls, the CBO's
 * projections) and a scenario's own page. A real `quorum serve` (port 0) over the bundled claims
 * imported and a live run (no venue: the operator's question files, the model simulator) that
 * archives one record of a scenario over two operator questions, and an operator's claims of an
 * institution (a direction claim carrying a value, value claims with and without a tolerance, in a
 * unit the dashboard knows and in one it does not).
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
/** An operator's institution: a direction claim that carries a value (not a poll), and value claims. */
const DESK = 'rates-desk';

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
  const claims = path.join(questions, 'claims');
  mkdirSync(claims);
  writeFileSync(path.join(claims, 'desk.csv'), ['claim_id,source,source_kind,made_at,kind,subject,side,value,unit,tolerance,outcome,realized_value,resolved_at',
    // a direction claim with a value, of an institution: a value, not a poll's margin
    'desk-1,Rates Desk,institution,2024-03-01,direction,Fed funds target cut by July,cut,-0.5,pp,,1,-1,2024-07-01',
    // a value claim with its own tolerance, in billions of dollars
    'desk-2,Rates Desk,institution,2024-02-01,value,Deficit FY2024,,1200,usd_bn,100,,1250,2024-09-30',
    // a value claim without one (5% of the realized value), in a unit the dashboard does not know
    'desk-3,Rates Desk,institution,2024-01-01,value,Widgets shipped in 2024,,1200,widgets,,,1100,2024-12-31', ''].join('\n'));
  const desk = quorum(['import', 'claims', 'csv', claims], env);
  expect(desk.status, desk.stderr).toBe(0);
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
    expect(rows[0]!.slice(2, 6)).toEqual(['direction', 'Chuck Grassley, margin −12 points', 'came true, margin −12.2 points', 'hit; error +0.2 points, within tolerance (±5 points)']);
    // every row: the API's margins and errors, none left out
    expect(rows.length).toBe(api.length);
    // (a margin of one point in the singular)
    const points = (x: number) => `${String(x).replace('-', '−')} ${Math.abs(x) === 1 ? 'point' : 'points'}`;
    expect(rows.filter((r, i) => !(r[3]!.includes(`margin ${points(api[i]!.value)}`) && r[5]!.includes(api[i]!.within_tolerance ? 'within tolerance' : 'outside tolerance')))).toEqual([]);
    // the score is explained once, under the table
    expect(await page.$eval('#claims-score-note', (e) => e.textContent)).toMatch(/^Score: a probability claim's Brier score, \(probability − outcome\)², 0 best and 1 worst; .* A poll's margin is the first candidate of its subject minus the second, in points\.$/);
    await page.close();
  });

  it("a value claim's tolerance is given beside its verdict, the claim's own (the API's tolerance) or 5% of the realized value where it has none (outside test: \"within tolerance\" alone)", async () => {
    keyed.headers['X-API-Key'] = apiKey;
    // the API gives the tolerance: the polls' 5 points, the CBO's 0.5% of the year's GDP
    const polls = (await get(server, `/api/claims/?source=${POLLSTER}&limit=25`, keyed)).body.claims as { tolerance: number | null }[];
    expect(polls.every((c) => c.tolerance === 5)).toBe(true);
    const cbo = (await get(server, `/api/claims/?source=${CBO}&limit=25&resolved=true`, keyed)).body.claims as { tolerance: number; error: number; within_tolerance: boolean }[];
    expect(cbo.length).toBeGreaterThan(0);
    const page = await tab(1200, apiKey);
    await loadRoute(page, server.url, `#/sources/${CBO}?resolved=true`);
    const rows = await cells(page, 'claims');
    expect(rows.length).toBe(cbo.length);
    rows.forEach((r, i) => {
      const tol = cbo[i]!.tolerance;
      // the tolerance in billions of dollars, at most 3 decimals, no trailing zeros, grouped by thousands
      const shown = `±$${(Math.round(tol * 1000) / 1000).toLocaleString('en-US', { maximumFractionDigits: 3 })} bn`;
      expect(r[5], `row ${i}`).toMatch(new RegExp(`, ${cbo[i]!.within_tolerance ? 'within' : 'outside'} tolerance \\(${shown.replace(/[$.+]/g, '\\$&')}\\)$`));
    });
    // an operator's claims: its own tolerance, or 5% of the realized value, said so
    await loadRoute(page, server.url, `#/sources/${DESK}`);
    expect((await cells(page, 'claims')).map((r) => r[5])).toEqual([
      'hit; error +0.5 pp, outside tolerance (±0.05 pp: 5% of the realized value)',
      'error −$50 bn, within tolerance (±$100 bn)',
      'error +100 widgets, outside tolerance (±55 widgets: 5% of the realized value)',
    ]);
    await page.close();
  });

  it('units read as a reader writes them, from one table, an unknown unit by its own name (outside test: "1100 usd_bn")', async () => {
    const page = await tab(1200, apiKey);
    await loadRoute(page, server.url, `#/sources/${DESK}`);
    expect((await cells(page, 'claims')).map((r) => r.slice(3, 5))).toEqual([
      ['cut, value −0.5 pp', 'came true, realized −1 pp'],
      ['$1,200 bn', '$1,250 bn'],
      ['1200 widgets', '1100 widgets'],
    ]);
    // the CBO's projections and their errors, in billions of dollars
    const cbo = (await get(server, `/api/claims/?source=${CBO}&limit=25`, keyed)).body.claims as { value: number; realized_value: number | null }[];
    await loadRoute(page, server.url, `#/sources/${CBO}`);
    const dollars = (x: number) => `${x < 0 ? '−' : ''}$${(Math.round(Math.abs(x) * 1000) / 1000).toLocaleString('en-US', { maximumFractionDigits: 3 })} bn`;
    expect((await cells(page, 'claims')).map((r) => r[3])).toEqual(cbo.map((c) => dollars(c.value)));
    const text = await page.$eval('main', (m) => m.textContent ?? '');
    expect(text).not.toContain('usd_bn');
    expect(await page.$eval('#source-values', (e) => e.textContent)).toMatch(/, in billions of US dollars \(\$ bn\)\.$/);
    expect(await page.$$eval('#value-errors tbody tr', (trs) => trs.map((tr) => tr.cells[2]!.textContent))).toSatisfy((units: string[]) => units.every((u) => u === 'billions of US dollars ($ bn)'));
    expect(await page.$$eval('#value-errors tbody tr', (trs) => trs.map((tr) => tr.cells[3]!.textContent))).toSatisfy((maes: string[]) => maes.every((m) => /^\$[\d,]+\.\d{3} bn$/.test(m)));
    await page.close();
  });

  it("a value beside a side is a poll's margin only on a pollster's page; another source's is a value, realized as such (outside test: \"margin\" whatever it was)", async () => {
    const claim = (await get(server, '/api/claims/desk-1', keyed)).body.claim as { kind: string; side: string; value: number; unit: string; source: { kind: string } };
    expect(claim).toMatchObject({ kind: 'direction', side: 'cut', value: -0.5, unit: 'pp', source: { kind: 'institution' } });
    const page = await tab(1200, apiKey);
    await loadRoute(page, server.url, `#/sources/${DESK}`);
    const first = (await cells(page, 'claims'))[0]!;
    expect(first.slice(2, 5)).toEqual(['direction', 'cut, value −0.5 pp', 'came true, realized −1 pp']);
    expect(first.join(' ')).not.toContain('margin');
    // a pollster's are margins
    await loadRoute(page, server.url, `#/sources/${POLLSTER}`);
    expect((await cells(page, 'claims')).every((r) => r[3]!.includes(', margin ') && r[4]!.includes(', margin '))).toBe(true);
    await page.close();
  });

  it('the kind filter says what it does: value lists claims of a value alone, a poll (a direction claim carrying its margin) is under direction, as the API\'s kind is (outside test: "value" listed no poll, under a value-claims table counting them)', async () => {
    const count = async (kind: string) => (await get(server, `/api/claims/?source=${POLLSTER}&kind=${kind}&limit=1`, keyed)).body.total as number;
    const [value, direction] = [await count('value'), await count('direction')];
    // the API's kind is the claim's: the polls, with their values, are direction claims
    expect(value).toBe(0);
    expect(direction).toBeGreaterThan(0);
    const page = await tab(1200, apiKey);
    await loadRoute(page, server.url, `#/sources/${POLLSTER}?kind=value`);
    expect(await page.$$eval('#f-kind option', (os) => os.map((o) => [o.value, o.textContent]))).toEqual([
      ['', 'all'], ['probability', 'probability'], ['direction', 'direction (polls included)'], ['value', 'value (polls\' margins excluded)']]);
    expect(await page.$eval('#claims-total', (e) => e.textContent)).toBe('0 claims match these filters, newest first.');
    expect(await page.$eval('main', (m) => m.textContent)).toContain('a claim that carries a value beside its side (a poll and its margin) is a direction claim, listed under kind direction.');
    // the value-claims table above counts the polls' margins
    expect(Number(await page.$eval('#value-errors tbody tr', (tr) => tr.cells[1]!.textContent))).toBeGreaterThan(0);
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
