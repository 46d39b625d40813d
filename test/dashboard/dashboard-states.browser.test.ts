/**
 * The dashboard in Chromium in the states a reader meets beside the happy path (outside QA pass):
 * sorting a page whose rows lack a figure, and the key the reader pasted meeting a server that
 * cannot be reached, that revokes it mid-session, or whose quota is used up. A real `quorum serve`
 * (its own process, port 0) over the bundled ForecastBench sample imported and run once through the
 * pipeline with the model simulator, plus one operator question with no market price (its edge is
 * none), read from a question file as `npm start` reads data/questions, and a curated thesis whose
 * statement begins as a bundled one does.
 */
import { cpSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import type { Browser, Page } from 'puppeteer-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DEFAULT_STRUCTURE_DIR } from '../../pipeline/structure/definitions.ts';
import { buildDashboard } from '../../scripts/build-dashboard.ts';
import { fixed, num, pct } from '../../dashboard/src/format.ts';
import { encodeKeyset } from '../../api/http/cursor.ts';
import { cli, get, newKey } from '../api/helpers.ts';
import { quorum, quorumAsync } from '../helpers/cli.ts';
import { forecasts, writeRaw } from '../structure/helpers.ts';
import { parseLogLines } from '../pipeline/log-lines.ts';
import { launchChromium, serveQuorum, stopQuorum, type Served } from './browser-server.ts';
import { loadRoute, openTab, type Problems } from './browser-tab.ts';

const ROOT = path.resolve(import.meta.dirname, '..', '..');
const SAMPLE = path.join(ROOT, 'data', 'sample', 'forecastbench');
/** The statement of a thesis the test adds, beginning as the bundled thesis agi-soon's does. */
const AGI_QA = 'Artificial general intelligence is declared before the end of 2026, as QA reads it';
/** A source with a claim in many years (a trend long enough to crowd its axis at phone width). */
const LONG_RUN = 'Long Run Polling';
/** A source of value claims only: no directional claim, so no year has an accuracy score. */
const VALUE_ONLY = 'Value Only Office';
/** A source of value claims in two units (percent of GDP and billions of dollars): mae and bias are not averaged. */
const MIXED_UNITS = 'Mixed Units Office';
/** A sample question the test annuls (a resolution with no outcome, as Manifold's CANCEL): its page says "Annulled on". */
const ANNULLED = 'manifold:QzSy62yqM276J3Gvi13o';
/** An evidence snippet over 400 characters long, non-ASCII, with an emoji across UTF-16 units 280 and 281. */
const LONG_SNIPPET = `${'Zürich rates '.repeat(21)}rates 😀 ${'held steady '.repeat(11)}`;
/** The pro plan's daily limit on this server: small, so a pro key's page runs into it (429). */
const PRO_PER_DAY = 2;

const dir = mkdtempSync(path.join(tmpdir(), 'quorum-dashboard-states-'));
const questions = mkdtempSync(path.join(tmpdir(), 'quorum-dashboard-states-questions-'));
const structure = mkdtempSync(path.join(tmpdir(), 'quorum-dashboard-states-structure-'));
const profile = mkdtempSync(path.join(tmpdir(), 'quorum-chromium-states-'));
let server: Served;
let browser: Browser;
let apiKey: string;
/** An api-plan key the revocation test revokes while its page is open. */
let revokable: { key: string; id: string };
/** A pro-plan key: its PRO_PER_DAY requests are used up by the first page it opens. */
let proKey: string;

beforeAll(async () => {
  const built = buildDashboard();
  // An operator's question (no venue, so no market price): active for years, in economics beside
  // the sample's economics questions that have one.
  const question = (id: string, title: string, year: number) => [
    `  - id: ${id}`,
    `    title: ${title}`,
    `    resolution_criteria: Resolves YES if FRED series DFF has a value strictly below 2.00 for ${year}-12-31; NO otherwise.`,
    '    category: economics',
    '    created_at: 2025-01-15',
    `    close_time: ${year}-12-31T00:00:00Z`,
    `    resolution: { source: fred, series_id: DFF, observation_date: ${year}-12-31, transform: level, operator: "<", threshold: 2.0 }`,
  ];
  writeFileSync(path.join(questions, 'qa.yaml'), ['questions:',
    ...question('qa-no-market-price', 'Effective federal funds rate below 2.00% on 2030-12-31', 2030),
    ...question('qa-rate-2031', 'Effective federal funds rate below 2.00% on 2031-12-31', 2031),
    ...question('qa-rate-2032', 'Effective federal funds rate below 2.00% on 2032-12-31', 2032),
    ''].join('\n'));
  // The bundled structure plus a scenario over those three questions, so the scenarios page has an
  // archived record's worlds to draw after one run.
  cpSync(DEFAULT_STRUCTURE_DIR, structure, { recursive: true });
  writeFileSync(path.join(structure, 'scenarios', 'qa.yaml'), ['scenarios:', '  - id: qa-rates', '    title: Rates below 2% three years running', '    description: Three operator questions, one scenario',
    '    components:', ...['qa-no-market-price', 'qa-rate-2031', 'qa-rate-2032'].map((id) => `      - { question: "quorum:${id}" }`),
    // a second of the same title (curated files may repeat one): the page names each apart
    '  - id: qa-rates-b', '    title: Rates below 2% three years running', '    description: The same title, two components',
    '    components:', ...['qa-rate-2031', 'qa-rate-2032'].map((id) => `      - { question: "quorum:${id}" }`), ''].join('\n'));
  // A factor with two sub-drivers of one name under different drivers: two rows of its chart.
  writeFileSync(path.join(structure, 'factors', 'qa.yaml'), ['factors:', '  - id: qa-rates', '    name: QA rates', '    statement: Rates stay low', '    drivers:',
    ...['2031', '2032'].flatMap((y) => [`      - id: y${y}`, `        name: Year ${y}`, '        drivers:',
      `          - { id: y${y}-level, name: Rate level, questions: [{ question: "quorum:qa-rate-${y}", sign: 1 }] }`]), ''].join('\n'));
  // A thesis whose statement begins as the bundled agi-soon's does ("Artificial general
  // intelligence is declared before "), over the same questions: two rows of the theses chart.
  writeFileSync(path.join(structure, 'theses', 'qa.yaml'), ['theses:', '  - id: agi-soon-qa', `    statement: ${AGI_QA}`, '    members:',
    ...['manifold:K6a5FaIDE1jEwvLIBoiB', 'polymarket:0x310c3d08f015157ec78e04f3f4fefed659b5e2bd88ae80cb38ff27ef970c39bd', 'infer:1705'].flatMap((q) => [`      - question: ${q}`, '        sign: 1', '        weight: 1']), ''].join('\n'));
  // Evidence for one of them: one item whose url is not a web address, one whose url is.
  const evidence = path.join(questions, 'evidence');
  mkdirSync(evidence);
  writeFileSync(path.join(evidence, 'qa.jsonl'), [
    { title: 'QA evidence with a script url', url: 'javascript:window.__qaEvidence=1', snippet: 'not a web address' },
    { title: 'QA evidence on the web', url: 'https://fred.stlouisfed.org/series/DFF', snippet: 'a web address' },
  ].map((e) => JSON.stringify({ question_id: 'quorum:qa-no-market-price', published_at: '2025-02-01', source_slug: 'local', ...e })).concat(
    // a snippet longer than the page shows, an emoji where 280 UTF-16 units end
    JSON.stringify({ question_id: 'quorum:qa-rate-2031', published_at: '2025-02-01', source_slug: 'local', title: 'QA long evidence', url: 'https://example.org/long', snippet: LONG_SNIPPET }),
  ).join('\n') + '\n');
  const env = { QUORUM_DATA_DIR: dir, QUORUM_QUESTIONS_DIR: questions, QUORUM_STRUCTURE_DIR: structure, QUORUM_EVIDENCE_DIR: evidence, QUORUM_VENUES: 'none', QUORUM_FRED_API_KEY: '' };
  const imported = quorum(['import', 'forecastbench', SAMPLE], env);
  expect(imported.status, imported.stderr).toBe(0);
  // Operators' claims of three sources, one with a long name, so the track records are ranked.
  const claims = path.join(questions, 'claims');
  mkdirSync(claims);
  const sources = ['Public Policy Institute of California Polling Unit', 'Acme Forecasts', 'Beta Research'];
  writeFileSync(path.join(claims, 'qa.csv'), ['claim_id,source,source_kind,made_at,kind,subject,probability,outcome,resolved_at,value,realized_value,unit',
    ...sources.flatMap((source, s) => Array.from({ length: 20 }, (_, i) =>
      `qa-${s}-${i},${source},pollster,2024-01-01,probability,claim ${i},${(0.15 + 0.7 * ((i * (s + 3)) % 10) / 10).toFixed(2)},${i % 2},2024-06-01,,,`)),
    // A pollster with claims in each of 24 years (1990-2019, six years without): its trend's years.
    ...Array.from({ length: 30 }, (_, y) => 1990 + y).filter((y) => y % 5 !== 3).flatMap((y) => Array.from({ length: 4 }, (_, i) =>
      `qa-long-${y}-${i},${LONG_RUN},pollster,${y}-01-01,probability,poll ${i},${i < 3 ? '0.80' : '0.30'},${i % 2},${y}-06-01,,,`)),
    // An institution of value claims only (projections, as the CBO's): no year has an accuracy score.
    ...[2021, 2022, 2023].map((y) => `qa-value-${y},${VALUE_ONLY},institution,${y}-01-01,value,deficit ${y},,,${y + 1}-01-01,100,110,usd_bn`),
    // One of value claims in two units (as the CBO's deficit in % of GDP and debt in $bn): no mae or bias.
    ...[['pct_gdp', 3, 3.2], ['usd_bn', 1000, 1100]].map(([unit, value, realized], i) => `qa-mixed-${i},${MIXED_UNITS},institution,2022-01-01,value,projection ${i},,,2023-01-01,${value},${realized},${unit}`),
    ''].join('\n'));
  const claimed = quorum(['import', 'claims', 'csv', claims], env);
  expect(claimed.status, claimed.stderr).toBe(0);
  // 1,001 earlier rounds of one operator question (four models each): a history longer than the
  // question detail's 1,000 rows, as two months of four-hourly runs in three modes make.
  await writeRaw(dir, {
    forecasts: Array.from({ length: 1001 }, (_, i) =>
      forecasts(`r-hist-${i}`, 'quorum:qa-rate-2032', new Date(Date.UTC(2025, 1, 1) + i * 3_600_000), [0.2, 0.25, 0.3, 0.35])).flat(),
    // a sample question its venue cancelled: an annulment (no outcome), with the venue's reason
    resolutions: [{ question_id: ANNULLED, outcome: null, resolved_at: new Date('2025-12-01T12:00:00Z'), source_slug: 'manifold', retrieved_at: new Date('2025-12-02T00:00:00Z'), method: 'manifold:cancel', annulled_reason: 'CANCEL' }],
  });
  const run = quorum(['run'], env); // a live run: reads the question file, forecasts with the simulator
  expect(run.status, run.stderr).toBe(0);
  // and another, as the schedule runs every 4 hours: two vintages of each thesis on one day
  const again = quorum(['run'], env);
  expect(again.status, again.stderr).toBe(0);
  await built;
  apiKey = newKey(dir, 'api').key; // before the server reads the key file
  revokable = newKey(dir, 'api', [], 'revoked mid-session');
  proKey = newKey(dir, 'pro').key;
  // the server and Chromium start together (each its own processes; neither needs the other yet)
  [server, browser] = await Promise.all([startServer(), launchChromium(profile)]);
}, 180_000);

afterAll(async () => {
  await browser?.close();
  if (server) await stopQuorum(server.child);
  for (const d of [dir, questions, structure, profile]) rmSync(d, { recursive: true, force: true });
});

/** `quorum serve` on `dataDir` (the test's data directory) with `env`: no anonymous or api-plan quota, a small pro one. */
function startServer(dataDir = dir, env: Record<string, string> = {}, primed = true): Promise<Served> {
  return serveQuorum({
    QUORUM_DATA_DIR: dataDir, QUORUM_STRUCTURE_DIR: structure,
    QUORUM_LIMIT_ANONYMOUS_PER_HOUR: '0', QUORUM_LIMIT_API_PER_DAY: '0', QUORUM_LIMIT_PRO_PER_DAY: String(PRO_PER_DAY), ...env,
  }, primed);
}

/** A fresh tab (its own browser context: no HTTP cache or storage shared with another test) with `key` stored. */
async function tab(width = 1200, key: string | null = null): Promise<{ page: Page; problems: Problems }> {
  return openTab(await browser.createBrowserContext(), server.url, width, key);
}

/** Loads `hash` of the dashboard at `url` as a fresh document (loadRoute). */
const open = (page: Page, hash: string, url = server.url): Promise<void> => loadRoute(page, url, hash);

/** Runs `act` and waits until the page it leads to has rendered (not the one shown before). */
async function rerender(page: Page, act: () => Promise<unknown>): Promise<void> {
  await page.$eval('main > .page', (p) => p.setAttribute('data-stale', ''));
  await act();
  await page.waitForSelector('main[data-ready="1"] > .page:not([data-stale])', { timeout: 15_000 });
}

/** Every notice of the page shown, as "state: text". */
const notices = (page: Page) => page.$$eval('main .notice', (ns) => ns.map((n) => `${n.getAttribute('data-state')}: ${n.textContent}`));

describe('the dashboard in the states beside the happy path (QA)', () => {
  it('sorted by edge, a prediction with no market price (no edge) comes last, in both directions', async () => {
    const api = (await get(server, '/api/predictions/lang/en?category=economics&limit=50')).body.predictions as { question_id: string; market_probability: number | null }[];
    expect(api.some((p) => p.market_probability === null), 'an economics prediction with no market price').toBe(true);
    expect(api.filter((p) => p.market_probability !== null).length).toBeGreaterThan(1);
    const { page, problems } = await tab();
    for (const dir of ['desc', 'asc']) {
      await open(page, `#/predictions?category=economics&sort=edge&dir=${dir}`);
      const edges = await page.$$eval('#predictions tbody td:nth-child(6)', (t) => t.map((c) => c.textContent ?? ''));
      expect(edges).toHaveLength(api.length);
      const none = edges.filter((e) => e === '–').length;
      expect(none, dir).toBeGreaterThan(0);
      // the rows with an edge first, largest (or smallest) first; those without one after them
      expect(edges.slice(edges.length - none), dir).toEqual(Array(none).fill('–'));
      const sizes = edges.slice(0, edges.length - none).map((e) => Number(e.replace('−', '').replace(' pts', '').replace('+', '')));
      expect(sizes, dir).toEqual([...sizes].sort((a, b) => (dir === 'desc' ? b - a : a - b)));
    }
    expect(problems).toEqual({ console: [], failed: [] });
    await page.close();
  });

  it('the minimum edge is in points, as the edges are shown: 5 keeps the rows of 5.0 pts and more (QA: the field took a fraction and refused 5)', async () => {
    const api = (await get(server, '/api/predictions/lang/en?limit=50')).body.predictions as { consensus: { mean: number } | null; market_probability: number | null }[];
    const points = api.flatMap((p) => (p.consensus && p.market_probability !== null ? [Number((Math.abs(p.consensus.mean - p.market_probability) * 100).toPrecision(12))] : []));
    const kept = points.filter((e) => e >= 5).length;
    expect(kept, 'rows at 5 pts or more').toBeGreaterThan(0);
    expect(kept, 'rows below 5 pts').toBeLessThan(points.length);
    const { page, problems } = await tab();
    await open(page, '#/predictions');
    // typed in the form as a reader would: 5 is a valid entry, and Apply filters by it
    await page.type('#f-min_edge_pts', '5');
    expect(await page.$eval('#f-min_edge_pts', (i) => (i as HTMLInputElement).validity.valid)).toBe(true);
    await rerender(page, () => page.click('#f-apply'));
    expect(new URL(page.url()).hash).toContain('min_edge_pts=5');
    const edges = await page.$$eval('#predictions tbody td:nth-child(6)', (t) => t.map((c) => c.textContent ?? ''));
    expect(edges).toHaveLength(kept);
    for (const e of edges) expect(Number(e.replace('−', '').replace(' pts', '').replace('+', '')), e).toBeGreaterThanOrEqual(5);
    expect(problems).toEqual({ console: [], failed: [] });
    await page.close();
  });

  it('a prediction whose disagreement is null (nullable in the OpenAPI document) shows none, not 0.000, and sorts last (QA: drawn as 0.000)', async () => {
    const real = (await get(server, '/api/predictions/lang/en?limit=50')).body as { predictions: { question_id: string; disagreement: unknown }[] };
    const gone = real.predictions[0]!.question_id;
    // the API's own page, one prediction's disagreement null as the schema allows
    const body = JSON.stringify({ ...real, predictions: real.predictions.map((p) => (p.question_id === gone ? { ...p, disagreement: { sd: null, range: null, sd_logit: null } } : p)) });
    const { page, problems } = await tab();
    await page.setRequestInterception(true);
    page.on('request', (r) => {
      if (r.isInterceptResolutionHandled()) return;
      if (new URL(r.url()).pathname === '/api/predictions/lang/en') void r.respond({ status: 200, contentType: 'application/json', body });
      else void r.continue();
    });
    await open(page, '#/predictions?sort=sd&dir=desc');
    const cells = await page.$$eval('#predictions tbody tr', (rows) => rows.map((tr) => ({
      id: decodeURIComponent(tr.querySelector('a')!.getAttribute('href')!.replace('#/questions/', '')),
      text: (tr.querySelector('td.dis')?.textContent ?? '').trim(),
      label: tr.querySelector('td.dis [aria-label]')?.getAttribute('aria-label') ?? null,
    })));
    expect(cells).toHaveLength(real.predictions.length);
    const row = cells.find((c) => c.id === gone)!;
    expect(row.text).toBe('–');
    expect(row.label ?? '').not.toMatch(/0\.000/);
    expect(cells.at(-1)!.id, 'the row without a disagreement comes last').toBe(gone);
    expect(problems).toEqual({ console: [], failed: [] });
    await page.close();
  });

  it('the count of active predictions names the filters it was counted under, the venue too (QA: "35 active predictions" for the venue infer alone)', async () => {
    const { page, problems } = await tab();
    for (const [query, what] of [['venue=infer', ' on infer'], ['category=economics&venue=infer', ' in economics on infer'], ['', '']]) {
      const total = (await get(server, `/api/predictions/lang/en?limit=1${query ? `&${query}` : ''}`)).body.total as number;
      await open(page, `#/predictions${query ? `?${query}` : ''}`);
      expect(await page.$eval('main p.note', (p) => p.textContent ?? ''), query).toMatch(new RegExp(`^${total} active predictions${what}; this page`));
    }
    expect(problems).toEqual({ console: [], failed: [] });
    await page.close();
  });

  it('the theses\' origin and the scenarios\' status filters in a link are shown, named in the count, and can be changed or cleared (outside QA: a filtered list read as the whole)', async () => {
    const { page, problems } = await tab();
    for (const [hash, api, name, value, counted] of [
      ['#/theses?origin=Curated', '/api/clusters/?vintages=0&limit=1', 'origin', 'curated', (n: number) => `Theses, curated (${n})`],
      ['#/scenarios?status=active', '/api/scenarios/?limit=1', 'status', 'active', (n: number) => `${n} active scenario${n === 1 ? '' : 's'}.`],
    ] as const) {
      const all = (await get(server, api)).body.total as number;
      const filtered = (await get(server, `${api}&${name}=${value}`)).body.total as number;
      expect(filtered, hash).toBeGreaterThan(0);
      expect(filtered, `${hash}: the filter leaves some out`).toBeLessThan(all);
      await open(page, hash);
      // the menu shows the filter, in the API's spelling, and the count names it
      expect(await page.$eval(`#f-${name}`, (s) => (s as HTMLSelectElement).value), hash).toBe(value);
      expect(await page.$$eval(`#f-${name} option`, (os) => os.map((o) => (o as HTMLOptionElement).value)), hash).toEqual(
        name === 'origin' ? ['', 'curated', 'computed'] : ['', 'active', 'resolved', 'annulled']);
      expect(await page.$eval('main', (m) => m.textContent ?? ''), hash).toContain(counted(filtered));
      // cleared from the menu: every item, counted, and focus back on the menu
      await rerender(page, () => page.select(`#f-${name}`, ''));
      expect(await page.evaluate(() => location.hash), hash).not.toContain(`${name}=`);
      expect(await page.$eval('main', (m) => m.textContent ?? ''), hash).toContain(name === 'origin' ? `Theses (${all})` : `${all} scenario${all === 1 ? '' : 's'}.`);
      expect(await page.evaluate(() => document.activeElement?.id), hash).toBe(`f-${name}`);
    }
    expect(problems).toEqual({ console: [], failed: [] });
    await page.close();
  });

  it('the sources\' kind and the overview\'s mode in a link: in another case, the menu\'s own entry; unknown, named and the default used (outside test: both showed the unfiltered page silently)', async () => {
    const { page, problems } = await tab(1200, apiKey);
    const keyed = { headers: { 'X-API-Key': apiKey } };
    expect((await get(server, '/api/leaderboard/', keyed)).body.items, 'nothing scored in this snapshot').toEqual([]);
    const slugs = async (kind: string) => ((await get(server, `/api/track-records/?limit=30${kind ? `&kind=${kind}` : ''}`, keyed)).body.sources as { slug: string }[]).map((x) => `#/sources/${x.slug}`);
    const shown = () => page.$$eval('#sources tbody tr a', (as) => as.map((a) => a.getAttribute('href')));
    const value = (id: string) => page.$eval(`#${id}`, (s) => (s as HTMLSelectElement).value);
    const ignored = () => page.$eval('main', (m) => m.querySelector('#ignored-in-link')?.textContent ?? null);
    const pollsters = await slugs('pollster');
    expect(pollsters.length).toBeGreaterThan(0);
    expect(pollsters.length, 'the kind leaves some out').toBeLessThan((await slugs('')).length);
    // the API reads a kind in any case: so does the page, its menu on the kind
    await open(page, '#/sources?kind=Pollster');
    expect(await value('f-kind')).toBe('pollster');
    expect(await shown()).toEqual(pollsters);
    expect(await ignored()).toBeNull();
    // a kind that is none: said, and every source under "all"
    await open(page, '#/sources?kind=pollsters');
    expect(await value('f-kind')).toBe('');
    expect(await shown()).toEqual(await slugs(''));
    expect(await ignored()).toMatch(/^Not understood in the link, the default used instead: kind=pollsters \(one of pollster, forecaster, /);
    // the overview's mode likewise: its leaderboard is the mode's (here none has a scored
    // forecaster yet, and the panel names the mode it looked in; the headline's is augmented)
    const leaderboard = () => page.$$eval('main section h2', (hs) => hs.find((x) => x.textContent === 'Leaderboard')?.parentElement?.textContent ?? '');
    await open(page, '#/?mode=Blind');
    expect(await value('f-mode')).toBe('blind');
    expect(await leaderboard()).toContain('No forecaster scored in the blind mode yet');
    expect(await ignored()).toBeNull();
    await open(page, '#/?mode=everything');
    expect(await value('f-mode')).toBe('headline');
    expect(await leaderboard()).toContain('No forecaster scored in the augmented mode yet');
    expect(await ignored()).toBe('Not understood in the link, the default used instead: mode=everything (one of headline, blind, informed, augmented).');
    expect(problems).toEqual({ console: [], failed: [] });
    await page.close();
  });

  it('a page past the end of the theses or scenarios (a link kept after the list shrank) says so, with the first page a link away (outside test: "No … matches.", no way back)', async () => {
    const { page, problems } = await tab();
    for (const [list, kind, api, first] of [['theses', 'clusters', '/api/clusters/?vintages=0', 'Theses ('], ['scenarios', 'scenarios', '/api/scenarios/?', 'scenarios.']] as const) {
      // a cursor past every id (ids sort as text; the API's own keyset encoding)
      const cursor = encodeKeyset(kind, ['zz-past-the-end']);
      const past = await get(server, `${api}&cursor=${encodeURIComponent(cursor)}`);
      expect([past.res.status, (past.body as { count: number }).count], list).toEqual([200, 0]);
      await open(page, `#/${list}?cursor=${encodeURIComponent(cursor)}`);
      expect(await page.$eval('main', (m) => m.textContent ?? ''), list).toContain('This page is past the end of the list.');
      await rerender(page, () => page.click('main nav.pager a'));
      expect(await page.evaluate(() => location.hash), list).toBe(`#/${list}`);
      expect(await page.$eval('main', (m) => m.textContent ?? ''), list).toContain(first);
    }
    expect(problems).toEqual({ console: [], failed: [] });
    await page.close();
  });

  it('two scenarios of one title: their sections and tables are named apart, by their ids (outside test: two regions of one name)', async () => {
    const { page, problems } = await tab();
    await open(page, '#/scenarios');
    const headings = await page.$$eval('main section.panel h2', (hs) => hs.map((x) => x.textContent ?? ''));
    expect(headings).toEqual(expect.arrayContaining(['Rates below 2% three years running (qa-rates)', 'Rates below 2% three years running (qa-rates-b)']));
    expect(new Set(headings).size).toBe(headings.length);
    const regions = await page.$$eval('main [role=region]', (rs) => rs.map((x) => x.getAttribute('aria-label') ?? ''));
    expect(new Set(regions).size).toBe(regions.length);
    expect(problems).toEqual({ console: [], failed: [] });
    await page.close();
  });

  it('more factors than one page: the page says how many of them it shows and pages on through the API\'s cursor, in the URL (QA: the rest were dropped silently)', async () => {
    const real = (await get(server, '/api/factors/?limit=200')).body as { factors: { factor_id: string }[]; total: number; next_cursor: string | null };
    expect(real.next_cursor).toBeNull();
    // the API's first page of a snapshot with one factor more than it holds (its total and next_cursor as the API sends them)
    const more = JSON.stringify({ ...real, total: real.total + 1, next_cursor: 'qa-next-page' });
    const asked: string[] = [];
    const { page, problems } = await tab();
    await page.setRequestInterception(true);
    page.on('request', (r) => {
      if (r.isInterceptResolutionHandled()) return;
      const u = new URL(r.url());
      if (u.pathname === '/api/factors/') {
        asked.push(u.search);
        if (!u.searchParams.has('cursor')) return void r.respond({ status: 200, contentType: 'application/json', body: more });
        return void r.respond({ status: 200, contentType: 'application/json', body: JSON.stringify({ ...real, factors: [], count: 0, total: real.total + 1, next_cursor: null }) });
      }
      void r.continue();
    });
    await open(page, '#/factors');
    expect(await page.$$eval('section[data-factor]', (s) => s.length)).toBe(real.factors.length);
    expect(await page.$eval('main', (m) => m.textContent ?? '')).toContain(`${real.factors.length} of ${real.total + 1} factors`);
    const next = await page.$eval('main nav.pager a[rel=next]', (a) => a.getAttribute('href'));
    expect(next).toBe('#/factors?cursor=qa-next-page');
    await rerender(page, () => page.click('main nav.pager a[rel=next]'));
    expect(asked.at(-1)).toContain('cursor=qa-next-page');
    expect(await page.$eval('main nav.pager', (n) => n.textContent ?? '')).toContain('First page');
    expect(problems).toEqual({ console: [], failed: [] });
    await page.close();
  });

  it('a key entered while the server cannot be reached is not called refused: its panels say the server could not be reached, and it is checked again', async () => {
    const { page, problems } = await tab();
    await open(page, '');
    // the server goes away; the reader then pastes a valid key
    await page.setRequestInterception(true);
    let down = true;
    page.on('request', (r) => {
      const u = new URL(r.url());
      if (r.isInterceptResolutionHandled()) return;
      if (down && (u.pathname.startsWith('/api/') || u.pathname === '/readyz')) void r.abort('connectionrefused');
      else void r.continue();
    });
    await page.click('details.key summary');
    await page.type('#api-key', apiKey);
    await rerender(page, () => page.click('details.key button[type=submit]'));
    const status = await page.$eval('.key-status', (e) => e.textContent ?? '');
    expect(status).not.toMatch(/refused/);
    expect(status).toMatch(/not checked: the server could not be reached/);
    const shown = await notices(page);
    expect(shown.filter((n) => n.startsWith('locked'))).toEqual([]);
    expect(shown.filter((n) => /refused/.test(n))).toEqual([]);
    // the three panels of the api plan fail like the public ones: no answer, said so
    for (const what of ['the leaderboard', 'the information-value analysis', 'the disagreement test']) {
      expect(shown.some((n) => n.startsWith(`error: Could not load ${what}`) && /the server could not be reached/.test(n)), what).toBe(true);
    }
    // the server is back: the next page checks the key again, and the keyed panels are drawn
    down = false;
    await rerender(page, () => page.evaluate(() => { location.hash = '#/?mode=blind'; }));
    // drawn: nothing of this data is scored, so each chart's panel says so (no error, no lock)
    expect(await notices(page)).toEqual(['No scored forecast', 'No forecaster scored', 'No question scored in two modes', 'No resolved question'].map((t) => expect.stringMatching(new RegExp(`^empty: ${t}`))));
    await page.waitForFunction(() => document.querySelector('.key-status')?.textContent === ' plan: api');
    expect(problems.failed.every((f) => /ERR_CONNECTION_REFUSED$/.test(f)), problems.failed.join('\n')).toBe(true);
    await page.close();
  });

  it('a key revoked mid-session: public panels go on loading, keyed panels and the header say the key was refused', async () => {
    const { key, id } = revokable;
    const { page, problems } = await tab(1200, key);
    await open(page, '#/predictions');
    expect(await page.$$eval('#predictions tbody tr', (r) => r.length)).toBeGreaterThan(0);
    await page.waitForFunction(() => document.querySelector('.key-status')?.textContent === ' plan: api');
    const revoked = await cli(dir, 'keys', 'revoke', id);
    expect(revoked.code, revoked.stderr).toBe(0);
    const deadline = Date.now() + 15_000;
    while ((await get(server, '/api/events/accuracy/', { headers: { 'X-API-Key': key } })).res.status !== 401 && Date.now() < deadline) {
      await new Promise((r) => setTimeout(r, 100));
    }
    expect((await get(server, '/api/events/accuracy/', { headers: { 'X-API-Key': key } })).res.status).toBe(401);
    // the reader goes on to the overview, as after a reload: drawn anonymously, the keyed panels explained
    await rerender(page, () => page.evaluate(() => { location.hash = '#/'; }));
    const shown = await notices(page);
    expect(shown.filter((n) => n.startsWith('error'))).toEqual([]);
    expect(shown.filter((n) => n.startsWith('locked'))).toHaveLength(3);
    for (const n of shown.filter((x) => !x.startsWith('empty: '))) expect(n).toMatch(/your key was refused/);
    expect(await page.$$eval('.card', (cs) => cs.length)).toBe(5);
    // the public charts' panels are drawn: nothing of this data is scored, and they say so
    expect(shown.filter((n) => n.startsWith('empty: '))).toEqual([expect.stringMatching(/^empty: No scored forecast/), expect.stringMatching(/^empty: No resolved question/)]);
    await page.waitForFunction(() => document.querySelector('.key-status')?.textContent === ' key refused');
    // the next page too
    await rerender(page, () => page.evaluate(() => { location.hash = '#/predictions?category=tech'; }));
    expect(await notices(page)).toEqual([]);
    expect(await page.$$eval('#predictions tbody tr', (r) => r.length)).toBeGreaterThan(0);
    // what failed: the requests the revoked key made before the dashboard knew, and its check (401s)
    expect(problems.failed.filter((f) => !/ 401$/.test(f))).toEqual([]);
    await page.close();
  });

  it('a quota used up (429): the panel says when the limit allows the next request, from Retry-After', async () => {
    const { page, problems } = await tab(1200, proKey);
    await open(page, ''); // four public reads on a pro key that may make two a day
    const limited = (await notices(page)).filter((n) => n.includes('(HTTP 429)'));
    expect(limited.length).toBeGreaterThan(0);
    const got = await get(server, '/api/predictions/accuracy', { headers: { 'X-API-Key': proKey } });
    expect(got.res.status).toBe(429);
    const wait = Number(got.res.headers.get('retry-after')); // the rest of the UTC day
    expect(wait).toBeGreaterThan(0);
    for (const n of limited) {
      const m = /^error: Could not load .*: The pro plan's limit of 2 requests per day is used up\. \(HTTP 429\)\. Try again in (?:(\d+) h)? ?(?:(\d+) min)?(?:(\d+) s)?\.$/.exec(n);
      expect(m, n).not.toBeNull();
      // the wait the server gave, within the minute or two the page and this request lie apart
      const shown = Number(m![1] ?? 0) * 3600 + Number(m![2] ?? 0) * 60 + Number(m![3] ?? 0);
      expect(Math.abs(shown - wait), n).toBeLessThan(180);
    }
    expect(problems.failed.filter((f) => !/ 429$/.test(f))).toEqual([]);
    await page.close();
  });

  it('the ranked track records chart: every source\'s label (rank and name) lies inside the chart, at 1200 and at 375 px', async () => {
    const list = (await get(server, '/api/track-records/?limit=30', { headers: { 'X-API-Key': apiKey } })).body.sources as { rank: number | null; name: string | null; slug: string }[];
    // a source whose "rank. name" is long: drawn within the chart, shortened with an ellipsis
    expect(Math.max(...list.map((x) => `${x.rank}. ${x.name ?? x.slug}`.length))).toBeGreaterThan(30);
    for (const width of [1200, 375]) {
      const { page, problems } = await tab(width, apiKey);
      await open(page, '#/sources');
      const labels = await page.$$eval('#track-records svg [aria-label="y-axis tick label"] text', (ts) => ts.map((t) => {
        const svg = t.closest('svg')!.getBoundingClientRect();
        const box = t.getBoundingClientRect();
        // the text drawn (without the tooltip a shortened label carries) and the tooltip
        const shown = [...t.childNodes].filter((n) => n.nodeType === Node.TEXT_NODE).map((n) => n.textContent).join('');
        return { text: shown, left: box.left - svg.left, title: t.querySelector('title')?.textContent ?? null };
      }));
      expect(labels.length, String(width)).toBeGreaterThanOrEqual(3);
      const names = list.map((x) => `${x.rank}. ${x.name ?? x.slug}`);
      for (const l of labels) {
        expect(l.left, `${width}: ${l.text}`).toBeGreaterThanOrEqual(-0.5);
        expect(l.text, `${width}: the rank stays readable`).toMatch(/^\d+\. /);
        // the whole "rank. name", or its start with an ellipsis and the whole in its tooltip;
        // never a name cut short without a sign of it (QA: cut at 40 characters before drawing)
        const full = l.title ?? l.text;
        expect(names, `${width}: "${l.text}" is a whole name`).toContain(full);
        if (l.title !== null) expect(l.text.endsWith('…') && full.startsWith(l.text.slice(0, -1)), `${width}: ${l.text}`).toBe(true);
      }
      expect(problems).toEqual({ console: [], failed: [] });
      await page.close();
    }
  });

  it('the ranked track records give the score they are ranked by, each accuracy\'s interval, and say why a source is unranked (outside test: 100.0% at rank 5 under 96.1% at rank 4, "–" for unranked)', async () => {
    interface Row { slug: string; name: string | null; rank: number | null; ranked: boolean; n_directional: number; accuracy_score: number | null; accuracy_ci95: [number, number] | null; shrunk_score: number | null; prior_score: number | null; prior_weight: number }
    const { page, problems } = await tab(1200, apiKey);
    // every source, and the institutions (value claims only: none of them ranked)
    for (const kind of ['', 'institution']) {
      const list = (await get(server, `/api/track-records/?limit=30${kind ? `&kind=${kind}` : ''}`, { headers: { 'X-API-Key': apiKey } })).body.sources as Row[];
      if (kind) expect(list.some((x) => !x.ranked), 'an unranked source').toBe(true);
      else expect(list.filter((x) => x.ranked).length, 'ranked sources').toBeGreaterThan(3);
      await open(page, kind ? `#/sources?kind=${kind}` : '#/sources');
      const cells = await page.$$eval('#sources tbody tr', (trs) => trs.map((tr) => [...tr.cells].map((c) => c.textContent)));
      expect(await page.$$eval('#sources thead th', (ths) => ths.map((t) => t.textContent))).toEqual(['rank', 'source', 'kind', 'resolved', 'accuracy', 'accuracy, 95% interval', 'ranking score', 'Brier']);
      expect(cells.map((c) => [c[0], c[5], c[6]]), kind || 'all').toEqual(list.map((x) => [
        x.ranked ? String(x.rank) : 'unranked',
        x.accuracy_ci95 ? `${fixed(x.accuracy_ci95[0], 1)}–${fixed(x.accuracy_ci95[1], 1)}%` : '–',
        x.ranked ? `${fixed(x.shrunk_score!, 1)}%` : '–',
      ]));
      // what the order means, with the prior the API pulls toward and its weight
      expect(await page.$eval('#ranking-note', (e) => e.textContent)).toBe(
        `Ranked by the ranking score: the accuracy pulled toward the pooled accuracy of all sources (${fixed(list[0]!.prior_score!, 1)}%) by the weight of ${list[0]!.prior_weight} claims, so a short run of lucky calls does not top the list. `
        + 'Unranked: under 10 resolved directional claims (shown, not ranked). Accuracy intervals are Wilson 95% intervals.');
    }
    // a source's page gives its rank with its ranking score, or why it has none
    const all = (await get(server, '/api/track-records/?limit=200', { headers: { 'X-API-Key': apiKey } })).body.sources as Row[];
    const ranked = all.find((x) => x.ranked)!;
    const unranked = all.find((x) => x.name === VALUE_ONLY)!;
    expect(unranked.ranked).toBe(false);
    await open(page, `#/sources/${ranked.slug}`);
    expect(await page.$eval('#source-meta', (e) => e.textContent)).toContain(` · rank ${ranked.rank} (ranking score ${fixed(ranked.shrunk_score!, 1)}%) · `);
    await open(page, `#/sources/${unranked.slug}`);
    expect(await page.$eval('#source-meta', (e) => e.textContent)).toContain(` · unranked (${unranked.n_directional} resolved directional claims: ranked from 10) · `);
    expect(problems).toEqual({ console: [], failed: [] });
    await page.close();
  });

  it('a source\'s trend: whole-year ticks that never overlap, placed by their value, at 1200 and at 375 px (QA: every year labelled, overlapping)', async () => {
    const list = (await get(server, '/api/track-records/?limit=200', { headers: { 'X-API-Key': apiKey } })).body.sources as { slug: string; name: string }[];
    const slugOf = (name: string) => list.find((x) => x.name === name)!.slug;
    const trend = (await get(server, `/api/track-records/sources/${slugOf(LONG_RUN)}/trends/`, { headers: { 'X-API-Key': apiKey } })).body.trends as { year: number; accuracy_score: number | null }[];
    const scored = trend.filter((t) => t.accuracy_score !== null).map((t) => t.year);
    expect(scored.length, 'years with a score').toBe(24);
    for (const width of [1200, 375]) {
      const { page, problems } = await tab(width, apiKey);
      await open(page, `#/sources/${slugOf(LONG_RUN)}`);
      expect(await page.$$eval('#trend .q-point circle', (c) => c.length), `${width} px`).toBe(24);
      const ticks = await page.$$eval('#trend svg [aria-label="x-axis tick label"] text', (ts) => ts.map((t) => {
        const box = t.getBoundingClientRect();
        return { text: t.textContent ?? '', left: box.left, right: box.right };
      }));
      expect(ticks.length, `${width} px`).toBeGreaterThanOrEqual(3);
      for (const t of ticks) expect(t.text, `${width} px: a whole year`).toMatch(/^\d{4}$/);
      // each label ends before the next begins (QA: at 375 px every year of the point axis was
      // labelled, 24 labels over 260 px running into each other)
      for (let i = 1; i < ticks.length; i++) expect(ticks[i]!.left, `${width} px: ${ticks[i - 1]!.text} and ${ticks[i]!.text}`).toBeGreaterThan(ticks[i - 1]!.right);
      // the years are placed by their value: a year without a score is a gap (1993 was not drawn one step after 1992)
      const xs = await page.$$eval('#trend .q-point circle', (c) => c.map((e) => Number(e.getAttribute('cx'))));
      const perYear = (xs[1]! - xs[0]!) / (scored[1]! - scored[0]!);
      scored.forEach((y, i) => expect(xs[i]! - xs[0]!, `${width} px: ${y}`).toBeCloseTo((y - scored[0]!) * perYear, 0));
      expect(problems).toEqual({ console: [], failed: [] });
      await page.close();
    }
  });

  it('a source\'s trend per year is a table beside its chart: each year\'s claims, accuracy, interval and Brier, for a keyboard or screen reader (outside test: in the dots\' tooltips only)', async () => {
    const list = (await get(server, '/api/track-records/?limit=200', { headers: { 'X-API-Key': apiKey } })).body.sources as { slug: string; name: string }[];
    const slug = list.find((x) => x.name === LONG_RUN)!.slug;
    type Year = { year: number; n_directional: number; accuracy_score: number | null; accuracy_ci95: [number, number] | null; brier: number | null };
    const scored = ((await get(server, `/api/track-records/sources/${slug}/trends/`, { headers: { 'X-API-Key': apiKey } })).body.trends as Year[]).filter((t) => t.accuracy_score !== null);
    expect(scored.length).toBe(24);
    const { page, problems } = await tab(1200, apiKey);
    await open(page, `#/sources/${slug}`);
    expect(await page.$eval('#trend-table', (t) => t.closest('[role="region"]')?.getAttribute('aria-label'))).toBe('Trend per year table');
    expect(await page.$$eval('#trend-table thead th', (ths) => ths.map((t) => [t.textContent, t.getAttribute('scope')]))).toEqual(
      ['year made', 'directional claims', 'accuracy', 'accuracy, 95% interval', 'Brier'].map((c) => [c, 'col']));
    expect(await page.$$eval('#trend-table tbody tr', (trs) => trs.map((tr) => [...tr.cells].map((c) => c.textContent)))).toEqual(scored.map((y) => [
      String(y.year), String(y.n_directional), `${fixed(y.accuracy_score!, 1)}%`,
      y.accuracy_ci95 ? `${fixed(y.accuracy_ci95[0], 1)}–${fixed(y.accuracy_ci95[1], 1)}%` : '–', y.brier === null ? '–' : num(y.brier),
    ]));
    expect(problems).toEqual({ console: [], failed: [] });
    await page.close();
  });

  it('a source of value claims only (no year with an accuracy score): its trend panel says so, with no empty axes (QA)', async () => {
    const list = (await get(server, '/api/track-records/?limit=200', { headers: { 'X-API-Key': apiKey } })).body.sources as { slug: string; name: string }[];
    const slug = list.find((x) => x.name === VALUE_ONLY)!.slug;
    const trend = (await get(server, `/api/track-records/sources/${slug}/trends/`, { headers: { 'X-API-Key': apiKey } })).body.trends as { accuracy_score: number | null }[];
    expect(trend.length, 'years with resolved value claims').toBe(3);
    expect(trend.every((t) => t.accuracy_score === null)).toBe(true);
    const { page, problems } = await tab(1200, apiKey);
    await open(page, `#/sources/${slug}`);
    expect(await page.$('#trend')).toBeNull();
    expect(await notices(page)).toContain('empty: No year with a scored directional claim: no accuracy trend to draw.');
    // its value errors with their unit (QA: the page showed none): 100 claimed against 110
    // realized each year, so an error of 10 $bn, a bias of −10, none within 5% of 110
    const source = (await get(server, `/api/track-records/sources/${slug}/`)).body.source as { value: { n: number; unit: string; mae: number; bias: number; share_within: number } };
    expect(source.value).toMatchObject({ n: 3, unit: 'usd_bn', units: 1, mae: 10, bias: -10, share_within: 0 });
    const rows = () => page.$$eval('#value-errors tbody tr', (trs) => trs.map((tr) => [...tr.querySelectorAll('td')].map((td) => td.textContent)));
    // the unit as read, not as stored (outside test: "usd_bn")
    expect(await page.$eval('#source-values', (e) => e.textContent)).toBe('3 resolved value claims, in billions of US dollars ($ bn).');
    // the bias with a true minus (QA: "-10.000"), before the unit's sign
    expect(await rows()).toEqual([['all years', '3', 'billions of US dollars ($ bn)', '$10.000 bn', '−$10.000 bn', pct(0)],
      ...[2021, 2022, 2023].map((y) => [String(y), '1', 'billions of US dollars ($ bn)', '$10.000 bn', '−$10.000 bn', pct(0)])]);
    // claims in two units: mae and bias are not averaged across them (null in the API), said so,
    // not blanks; the share within tolerance (each claim against its own unit's) stays: 3 vs 3.2
    // is outside 5% of 3.2, 1000 vs 1100 outside 5% of 1100
    const mixed = list.find((x) => x.name === MIXED_UNITS)!.slug;
    expect((await get(server, `/api/track-records/sources/${mixed}/`)).body.source.value).toMatchObject({ n: 2, unit: null, units: 2, mae: null, bias: null, share_within: 0 });
    await open(page, `#/sources/${mixed}`);
    expect(await page.$eval('#source-values', (e) => e.textContent)).toMatch(/^2 resolved value claims in 2 units: their mean absolute error and bias are not averaged across units/);
    expect(await rows()).toEqual([['all years', '2', '2 units', 'not averaged across 2 units', 'not averaged across 2 units', pct(0)],
      ['2022', '2', '2 units', 'not averaged across 2 units', 'not averaged across 2 units', pct(0)]]);
    expect(problems).toEqual({ console: [], failed: [] });
    await page.close();
  });

  it('a source page lists its claims (api plan): each as made, what came to be, its score and where it was read from, newest first, paged and filtered by the link (outside test: no page showed the claims database)', async () => {
    const list = (await get(server, '/api/track-records/?limit=200', { headers: { 'X-API-Key': apiKey } })).body.sources as { slug: string; name: string }[];
    const slugOf = (name: string) => list.find((x) => x.name === name)!.slug;
    const claimRows = (page: Page) => page.$$eval('#claims tbody tr', (trs) => trs.map((tr) => [...tr.cells].map((c) => c.textContent)));
    const { page, problems } = await tab(1200, apiKey);
    // value claims, by hand: 100 claimed against 110 realized, an error of −10, outside 5% of 110 (5.5: the file gives no tolerance);
    // read from the operator's file, lines 158-160 (after the header and 60 + 96 rows)
    await open(page, `#/sources/${slugOf(VALUE_ONLY)}`);
    expect(await page.$eval('#claims-total', (e) => e.textContent)).toBe('3 claims, newest first.');
    const from = 'csv:claims · qa.csv'; // the generic format's dataset: csv:<directory name>
    expect(await claimRows(page)).toEqual([2023, 2022, 2021].map((y) => [`${y}-01-01`, `deficit ${y}`, 'value', '$100 bn', '$110 bn', 'error −$10 bn, outside tolerance (±$5.5 bn: 5% of the realized value)', `${from}:${y - 2021 + 158}`]));
    // probability claims, paged 25 at a time by the API's cursor: every claim once, in the API's order
    const slug = slugOf(LONG_RUN);
    const api = (await get(server, `/api/claims/?source=${slug}&limit=500`, { headers: { 'X-API-Key': apiKey } })).body.claims as { claim_id: string; made_at: string; probability: number; outcome: number; brier: number }[];
    expect(api.length).toBe(96);
    await open(page, `#/sources/${slug}`);
    const shown: string[][] = [];
    for (;;) {
      shown.push(...((await claimRows(page)) as string[][]));
      const next = await page.$('nav[aria-label="Pages of claims"] a[rel="next"]');
      if (!next) break;
      await rerender(page, () => next.click());
      expect(await page.evaluate(() => document.activeElement?.id), 'focus on the claims after a pager link').toBe('claims-results');
      expect(await page.evaluate(() => location.hash)).toMatch(/[?&]cursor=/);
    }
    expect(shown.length).toBe(96);
    expect(shown).toEqual(api.map((c) => [c.made_at.slice(0, 10), expect.stringMatching(/^poll \d$/), 'probability', pct(c.probability),
      c.outcome === 1 ? 'came true' : 'did not', `Brier ${num(c.brier)}`, expect.stringMatching(/ · qa\.csv:\d+$/)]));
    // (a by-hand check of one: 0.80 that came true scores (1 − 0.8)² = 0.04)
    expect(shown).toContainEqual([expect.any(String), expect.any(String), 'probability', '80.0%', 'came true', 'Brier 0.040', expect.any(String)]);
    // filters in the link: a kind of none of its claims is said so; an unknown value is named, the default used
    await open(page, `#/sources/${slug}?kind=value`);
    expect(await page.$eval('#claims-total', (e) => e.textContent)).toBe('0 claims match these filters, newest first.');
    expect(await notices(page)).toContain('empty: No claim of this source matches these filters.');
    await open(page, `#/sources/${slug}?resolved=maybe`);
    expect(await page.$eval('#ignored-in-link', (e) => e.textContent)).toBe('Not understood in the link, the default used instead: resolved=maybe (true or false).');
    expect(await page.$eval('#claims-total', (e) => e.textContent)).toBe('96 claims, newest first.');
    // changing a menu opens the first page so filtered, focus kept on the menu
    await rerender(page, () => page.select('#f-resolved', 'false'));
    expect(await page.evaluate(() => location.hash)).toBe(`#/sources/${slug}?resolved=false`);
    expect(await page.evaluate(() => document.activeElement?.id)).toBe('f-resolved');
    expect(await notices(page)).toContain('empty: No claim of this source matches these filters.');
    expect(problems).toEqual({ console: [], failed: [] });
    await page.close();
    // anonymous (the public beta): the panel says the claims database needs the api plan, nothing else is lost
    const anon = await tab(375);
    await open(anon.page, `#/sources/${slug}`);
    expect((await notices(anon.page)).filter((n) => n.startsWith('locked: The claims database'))).toEqual([
      'locked: The claims database needs a key of the api plan or above; anonymous public-beta access does not include it. Enter a key with “API key” at the top of the page.']);
    expect(await anon.page.$('#claims')).toBeNull();
    expect(await anon.page.$eval('h1', (e) => e.textContent)).toBe(LONG_RUN);
    expect(anon.problems).toEqual({ console: [], failed: [] });
    await anon.page.close();
  });

  it('every chart\'s text lies inside its chart (long thesis statements, factor and driver names, scenario worlds), at 1200 and at 375 px', async () => {
    const question = (await get(server, '/api/predictions/lang/en?limit=1')).body.predictions[0].question_id as string;
    for (const width of [1200, 375]) {
      const { page, problems } = await tab(width, apiKey);
      for (const hash of ['', '#/sources', '#/theses', '#/factors', '#/scenarios', `#/questions/${encodeURIComponent(question)}`]) {
        await open(page, hash);
        const texts = await page.$$eval('main svg text', (ts) => ts.map((t) => {
          const svg = t.closest('svg')!.getBoundingClientRect();
          const box = t.getBoundingClientRect();
          return { text: t.textContent ?? '', width: box.width, left: box.left - svg.left, right: svg.right - box.right };
        }));
        // the overview of this data has no chart (nothing is scored: each panel says so)
        if (hash === '') {
          expect(texts, `${width} px`).toEqual([]);
          expect((await notices(page)).filter((n) => n.startsWith('empty: ')).length, `${width} px`).toBe(4);
          continue;
        }
        expect(texts.length, `${width} ${hash}`).toBeGreaterThan(0);
        const outside = texts.filter((t) => t.width > 0 && (t.left < -0.5 || t.right < -0.5)).map((t) => `"${t.text}" (${t.left.toFixed(1)}, ${t.right.toFixed(1)})`);
        expect.soft(outside, `${width} px, page ${hash || '#/'}`).toEqual([]);
      }
      expect(problems).toEqual({ console: [], failed: [] });
      await page.close();
    }
  });

  it('the page is asked for again on each visit (revalidated), so a new build\'s chunks are the ones it preloads', async () => {
    // The shell names the build's chunks (content hashes) and the routes this server has: a copy a
    // browser kept for 5 minutes preloaded, after an upgrade, a chunk the new build had removed (404).
    const visits = () => parseLogLines(server.log()).filter((l) => l.msg === 'request' && l.path === '/' && l.method === 'GET').length;
    const { page, problems } = await tab(1200);
    const before = visits();
    for (const hash of ['#/', '#/predictions']) {
      await page.goto('about:blank');
      await page.goto(`${server.url}/${hash}`, { waitUntil: 'load' });
      await page.waitForSelector('main[data-ready="1"]', { timeout: 15_000 });
    }
    const deadline = Date.now() + 5_000;
    while (visits() < before + 2 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50));
    expect(visits() - before).toBe(2);
    const got = await fetch(`${server.url}/`, { headers: { 'Accept-Encoding': 'gzip' } });
    expect(got.headers.get('cache-control')).toBe('no-cache');
    const etag = got.headers.get('etag');
    expect(etag).toMatch(/^"[\w-]+"$/);
    // unchanged: a 304, no body
    expect((await fetch(`${server.url}/`, { headers: { 'Accept-Encoding': 'gzip', 'If-None-Match': etag! } })).status).toBe(304);
    expect(problems).toEqual({ console: [], failed: [] });
    await page.close();
  });

  it('a thesis\'s vintages say their time (UTC), not only the date: two runs of one day are two distinguishable rows (QA: "2026-11-27" twice)', async () => {
    const v = (await get(server, `/api/clusters/agi-soon-qa/?vintages_limit=10`)).body.cluster.vintages as { as_of: string }[];
    expect(v.length, 'vintages').toBeGreaterThanOrEqual(2);
    expect(v[0]!.as_of.slice(0, 10), 'the two latest vintages are of one day').toBe(v[1]!.as_of.slice(0, 10));
    const { page, problems } = await tab();
    await open(page, '#/theses/agi-soon-qa');
    expect(await page.$$eval('#thesis-vintages thead th', (t) => t[0]!.textContent)).toBe('as of (UTC)');
    const cells = await page.$$eval('#thesis-vintages tbody tr td:first-child', (t) => t.map((c) => c.textContent));
    expect(cells).toEqual(v.map((x) => `${x.as_of.slice(0, 10)} ${x.as_of.slice(11, 16)}`));
    // the chart's tooltips too: each point's time in UTC, to the minute
    const tips = await page.$$eval('#vintages .q-point title', (t) => t.map((e) => e.textContent ?? ''));
    expect(tips.length).toBeGreaterThan(0);
    for (const tip of tips) expect(tip).toMatch(/ at \d{4}-\d\d-\d\d \d\d:\d\d UTC$/);
    expect(problems).toEqual({ console: [], failed: [] });
    await page.close();
  });

  it('a thesis whose vintages hold no figure to draw says so above the table that lists them (outside QA: "No vintage yet." above its vintages)', async () => {
    // a curated thesis whose members have all resolved: each run freezes a vintage of it, with no
    // consensus and no market consensus (no member is forecast any more)
    type Listed = { thesis_id: string; n_vintages: number; vintages: { thesis_consensus: number | null; thesis_market_consensus: number | null }[] };
    const clusters = (await get(server, '/api/clusters/?limit=500&vintages=50')).body.clusters as Listed[];
    const blank = clusters.find((t) => t.n_vintages > 0 && t.vintages.every((v) => v.thesis_consensus === null && v.thesis_market_consensus === null));
    expect(blank, 'a thesis with vintages and no figure in any of them').toBeDefined();
    const { page, problems } = await tab();
    await open(page, `#/theses/${blank!.thesis_id}`);
    const panelText = await page.$$eval('main section.panel', (ps) => ps.find((p) => p.querySelector('h2')?.textContent === 'Vintages')?.textContent ?? '');
    expect(panelText).not.toContain('No vintage yet');
    expect(await notices(page)).toContainEqual(expect.stringMatching(/^empty: None of its \d+ vintages has a consensus or a market consensus to draw/));
    expect(await page.$$eval('#thesis-vintages tbody tr', (rs) => rs.length)).toBe(blank!.n_vintages);
    expect(await page.$$('#vintages')).toHaveLength(0); // no empty axes
    expect(problems).toEqual({ console: [], failed: [] });
    await page.close();
  });

  it('a question, thesis or source page is titled by its subject, as its heading is (QA: every question\'s tab read "Question · Quorum")', async () => {
    const { page, problems } = await tab(1200, apiKey);
    const pages: [string, string][] = [
      ['#/questions/quorum%3Aqa-no-market-price', 'Effective federal funds rate below 2.00% on 2030-12-31'],
      ['#/theses/agi-soon-qa', AGI_QA],
      ['#/sources/acme-forecasts', 'Acme Forecasts'],
    ];
    for (const [hash, subject] of pages) {
      await open(page, hash);
      expect(await page.$eval('main h1', (e) => e.textContent), hash).toBe(subject);
      expect(await page.title(), hash).toBe(`${subject} · Quorum`);
    }
    // a page of nothing found keeps its generic title; a list page its own
    await open(page, '#/predictions');
    expect(await page.title()).toBe('Active predictions · Quorum');
    expect(problems).toEqual({ console: [], failed: [] });
    await page.close();
  });

  it('a link whose id is malformed percent-encoding is a page not found (one h1, its title), not a failed page without a heading', async () => {
    const { page, problems } = await tab(1200);
    for (const hash of ['#/questions/%E0%A4%A', '#/sources/%', '#/theses/%zz']) {
      await open(page, hash);
      expect(await page.$$eval('h1', (hs) => hs.map((x) => x.textContent)), hash).toEqual(['Not found']);
      expect(await page.title(), hash).toBe('Not found · Quorum');
      expect(await page.$eval('main', (m) => m.textContent), hash).not.toMatch(/This page failed|URI malformed/);
    }
    expect(problems).toEqual({ console: [], failed: [] });
    await page.close();
  });

  it('the charts\' script cannot be fetched: every page keeps its heading, tables and figures, each chart says it could not be loaded', async () => {
    const { page } = await tab(1200, apiKey);
    await page.setRequestInterception(true);
    page.on('request', (r) => {
      if (/^\/dashboard\/chunk-/.test(new URL(r.url()).pathname)) void r.abort('connectionrefused');
      else void r.continue();
    });
    const question = (await get(server, '/api/predictions/lang/en?limit=1')).body.predictions[0].question_id as string;
    const thesis = (await get(server, '/api/clusters/?limit=1&vintages=0')).body.clusters[0].thesis_id as string;
    const source = (await get(server, '/api/track-records/?limit=1', { headers: { 'X-API-Key': apiKey } })).body.sources[0].slug as string;
    // (the overview of this data draws no chart: nothing is scored)
    for (const [hash, table] of [['#/sources', '#sources'], [`#/sources/${source}`, '#source-meta'], ['#/theses', '#theses-table'],
      [`#/theses/${thesis}`, '#thesis-vintages'], ['#/factors', '#system-checks'], ['#/scenarios', 'table.scenario-components'], [`#/questions/${encodeURIComponent(question)}`, 'table.models']]) {
      await open(page, hash);
      const text = await page.$eval('main', (m) => m.textContent ?? '');
      expect(text, hash).not.toMatch(/This page failed/);
      expect((await page.$$eval('h1', (hs) => hs.map((x) => x.textContent))).length, hash).toBe(1);
      expect(await page.$(table), `${hash}: ${table}`).not.toBeNull();
      const charts = await page.$$eval('main [data-state="error"]', (n) => n.map((e) => e.textContent ?? ''));
      expect(charts.length, hash).toBeGreaterThan(0);
      for (const c of charts) expect(c, hash).toMatch(/^Could not load the chart: .*Reload the page to try again\.$/);
    }
    await page.close();
  });

  it('two theses whose statements begin alike are two rows of the theses chart, each named by its statement (QA: one row, four dots)', async () => {
    const clusters = (await get(server, '/api/clusters/?limit=30&vintages=0')).body.clusters as { thesis_id: string; statement: string | null; current: { consensus: number | null; market_consensus: number | null } }[];
    const both = clusters.filter((t) => t.thesis_id === 'agi-soon' || t.thesis_id === 'agi-soon-qa');
    expect(both.map((t) => t.thesis_id).sort()).toEqual(['agi-soon', 'agi-soon-qa']);
    for (const t of both) expect(t.current.consensus ?? t.current.market_consensus, t.thesis_id).not.toBeNull();
    const drawn = clusters.filter((t) => t.current.consensus !== null || t.current.market_consensus !== null);
    const { page, problems } = await tab(1200);
    await open(page, '#/theses');
    // one row (a y tick) per thesis drawn, in the table's order, and a dot per figure
    const ticks = await page.$$eval('#theses svg [aria-label="y-axis tick label"] text', (ts) => ts.map((t) => t.querySelector('title')?.textContent ?? t.textContent ?? ''));
    expect(ticks).toEqual(drawn.map((t) => t.statement));
    const rows = await page.$$eval('#theses svg circle', (cs) => cs.map((c) => c.getAttribute('cy')));
    const dots = drawn.flatMap((t) => [t.current.consensus, t.current.market_consensus].filter((p) => p !== null));
    expect(rows).toHaveLength(dots.length);
    expect(new Set(rows).size).toBe(drawn.length);
    // the two statements' shortened labels differ where the statements do
    const shown = await page.$$eval('#theses svg [aria-label="y-axis tick label"] text', (ts) => ts.map((t) => [...t.childNodes].filter((n) => n.nodeType === 3 || (n as Element).tagName === 'tspan').map((n) => n.textContent).join('')));
    const agi = shown.filter((t) => t.startsWith('Artificial general'));
    expect(agi).toHaveLength(2);
    expect(agi[0]).not.toBe(agi[1]);
    expect(problems).toEqual({ console: [], failed: [] });
    await page.close();
  });

  it('a factor whose sub-drivers share a name under different drivers: one row of its chart per node, as in its tree table (QA: one row)', async () => {
    const factor = (await get(server, '/api/factors/qa-rates/')).body.factor as { level: number | null; drivers: { node_id: string; name: string; level: number | null }[] };
    expect(factor.drivers.map((d) => d.name)).toEqual(['Year 2031', 'Rate level', 'Year 2032', 'Rate level']);
    const levels = [factor.level, ...factor.drivers.map((d) => d.level)];
    expect(levels.every((l) => l !== null), 'every node has a level').toBe(true);
    const { page, problems } = await tab(1200);
    await open(page, '#/factors');
    const chart = '#factor-qa-rates svg';
    const ticks = await page.$$eval(`${chart} [aria-label="y-axis tick label"] text`, (ts) => ts.map((t) => t.textContent));
    expect(ticks).toEqual(['QA rates', '· Year 2031', '· · Rate level', '· Year 2032', '· · Rate level']);
    const rows = await page.$$eval(`${chart} circle, ${chart} path.q-point, ${chart} .q-point > *`, (cs) => [...new Set(cs.map((c) => c.getAttribute('cy') ?? c.getAttribute('transform')))]);
    expect(rows).toHaveLength(5);
    expect(problems).toEqual({ console: [], failed: [] });
    await page.close();
  });

  it('evidence whose url is not a web address is listed without a link; a web address stays a link (QA: a javascript: link)', async () => {
    const detail = (await get(server, '/api/predictions/quorum%3Aqa-no-market-price')).body as { evidence: { title: string; url: string | null }[] };
    expect(detail.evidence.map((e) => e.url).sort()).toEqual(['https://fred.stlouisfed.org/series/DFF', 'javascript:window.__qaEvidence=1']);
    const { page, problems } = await tab(1200);
    await open(page, '#/questions/quorum%3Aqa-no-market-price');
    const items = await page.$$eval('ul.evidence li', (ls) => ls.map((l) => ({ text: l.textContent ?? '', href: l.querySelector('a')?.getAttribute('href') ?? null })));
    expect(items.find((i) => i.text.startsWith('QA evidence with a script url'))?.href).toBeNull();
    expect(items.find((i) => i.text.startsWith('QA evidence on the web'))?.href).toBe('https://fred.stlouisfed.org/series/DFF');
    expect(await page.$$eval('main a[href]', (as) => as.map((a) => a.getAttribute('href')).filter((h) => /^\s*javascript:/i.test(h ?? '')))).toEqual([]);
    expect(problems).toEqual({ console: [], failed: [] });
    await page.close();
  });

  it('a long evidence snippet is shortened after a whole word with an ellipsis, never mid-word or mid-character (QA: cut at 280 units, "infl")', async () => {
    expect(LONG_SNIPPET.slice(0, 280).endsWith('\uD83D'), 'the 280th unit is half an emoji').toBe(true);
    const { page, problems } = await tab(1200);
    await open(page, '#/questions/quorum%3Aqa-rate-2031');
    const shown = await page.$$eval('ul.evidence li', (ls) => ls.find((l) => l.textContent?.startsWith('QA long evidence'))?.querySelector('.snippet')?.textContent ?? null);
    expect(shown).not.toBeNull();
    expect(shown!.endsWith('…'), shown!).toBe(true);
    const kept = shown!.slice(0, -1);
    expect(LONG_SNIPPET.startsWith(kept)).toBe(true);
    expect(LONG_SNIPPET[kept.length], 'cut where a word ends').toBe(' ');
    expect(/[\uD800-\uDBFF](?![\uDC00-\uDFFF])/.test(shown!), 'no half emoji').toBe(false);
    expect([...kept].length).toBeLessThanOrEqual(280);
    expect(problems).toEqual({ console: [], failed: [] });
    await page.close();
  });

  it('dates say their time zone (UTC): the close column, a question\'s close, lifecycle and evidence (QA: bare dates, a day off for a reader west of UTC)', async () => {
    const { page, problems } = await tab(1200);
    await open(page, '#/predictions?venue=quorum');
    expect(await page.$$eval('#predictions thead th', (ths) => ths.map((t) => t.textContent))).toContain('Closes (UTC)');
    await open(page, '#/questions/quorum%3Aqa-no-market-price');
    expect(await page.$eval('p.meta', (m) => m.textContent)).toContain('closes 2030-12-31 (UTC)');
    const headings = await page.$$eval('main h2', (hs) => hs.map((x) => x.textContent));
    expect(headings).toEqual(expect.arrayContaining(['Lifecycle (dates in UTC)', 'Evidence (dates in UTC)']));
    // a resolution's date says UTC too, and an annulment reads as one, not as an outcome (QA:
    // "Resolved annulled on 2025-12-01"); a YES or NO reads "Resolved YES/NO on"
    const resolutionLine = () => page.$$eval('main p', (ps) => ps.map((p) => p.textContent ?? '').find((t) => / on (\d{4}-\d\d-\d\d \(UTC\)|–)( \(.*\))? per /.test(t)));
    expect((await get(server, `/api/predictions/${encodeURIComponent(ANNULLED)}`)).body.resolution).toMatchObject({ outcome: null, annulled: true });
    await open(page, `#/questions/${encodeURIComponent(ANNULLED)}`);
    expect(await resolutionLine()).toMatch(/^Annulled on 2025-12-01 \(UTC\) \(CANCEL\) per /);
    // infer:1554 resolved to 0 in the sample's resolutions_market.csv
    expect((await get(server, '/api/predictions/infer%3A1554')).body.resolution).toMatchObject({ outcome: 0, annulled: false });
    await open(page, '#/questions/infer%3A1554');
    expect(await resolutionLine()).toMatch(/^Resolved NO on \d{4}-\d\d-\d\d \(UTC\) per /);
    expect(problems).toEqual({ console: [], failed: [] });
    await page.close();
  });

  it('the overview\'s snapshot time reads as a time in UTC to the minute, not the API\'s raw ISO string (outside test: "2026-11-29T05:13:42.747Z")', async () => {
    const asOf = (await get(server, '/api/predictions/accuracy')).body.as_of as string;
    expect(asOf).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d/);
    const { page, problems } = await tab(1200);
    await open(page, '');
    const health = await page.$$eval('dl.health dt', (dts) => dts.map((dt) => [dt.textContent, dt.nextElementSibling?.textContent]));
    expect(health).toContainEqual(['snapshot as of (UTC)', `${asOf.slice(0, 10)} ${asOf.slice(11, 16)}`]);
    expect(JSON.stringify(health)).not.toMatch(/\d{4}-\d\d-\d\dT\d\d/);
    expect(problems).toEqual({ console: [], failed: [] });
    await page.close();
  });

  it('a question page gives its resolution criteria and its background, as the API serves them (outside test: neither was shown)', async () => {
    const paragraphs = (text: string | null) => (text ?? '').split(/\n\s*\n/).map((p) => p.replace(/\s+/g, ' ').trim()).filter((p) => p !== '');
    // a sample question with both, and an operator's with criteria alone
    const { page, problems } = await tab(1200);
    for (const id of ['infer:1554', 'quorum:qa-no-market-price']) {
      const q = (await get(server, `/api/predictions/${encodeURIComponent(id)}`)).body.question as { resolution_criteria: string | null; description: string | null };
      expect(paragraphs(q.resolution_criteria).length, id).toBeGreaterThan(0);
      await open(page, `#/questions/${encodeURIComponent(id)}`);
      expect(await page.$$eval('#resolution-criteria p', (ps) => ps.map((p) => p.textContent)), id).toEqual(paragraphs(q.resolution_criteria));
      expect(await page.$$eval('#question-background p', (ps) => ps.map((p) => p.textContent)), id).toEqual(paragraphs(q.description));
      if (id === 'infer:1554') expect(paragraphs(q.description).length, 'a background to fold').toBeGreaterThan(0);
    }
    expect(problems).toEqual({ console: [], failed: [] });
    await page.close();
  });

  it('a question page: a dead link leads on, an unknown reasoning language is named, and a resolved question\'s market price is its last, not "now" (outside test)', async () => {
    const { page, problems } = await tab(1200);
    await open(page, '#/questions/manifold%3Ano-such-market');
    expect(await page.$$eval('main a', (as) => as.map((a) => [a.textContent, a.getAttribute('href')]))).toContainEqual(['Active predictions', '#/predictions']);
    // the detail's and the lifecycle's 404s, and the browser's word on each, are that page's own
    expect(problems.failed.splice(0).filter((f) => !/no-such-market\/? 404$/.test(f))).toEqual([]);
    expect(problems.console.splice(0).filter((c) => !/status of 404/.test(c))).toEqual([]);
    const active = (await get(server, '/api/predictions/lang/en?limit=1')).body.predictions[0].question_id as string;
    const detail = (await get(server, `/api/predictions/${encodeURIComponent(active)}`)).body as { langs: string[]; market: { stale: boolean } | null };
    expect(detail.langs.length).toBeGreaterThan(0);
    await open(page, `#/questions/${encodeURIComponent(active)}?lang=xx`);
    expect(await page.$eval('#ignored-in-link', (e) => e.textContent)).toContain(`lang=xx (one of ${detail.langs.join(', ')}; shown in `);
    expect(await page.$eval('#timeline figcaption', (c) => c.textContent)).toMatch(/market price \(now (\d+(\.\d)?%|–)(, stale)?\)/);
    await open(page, '#/questions/infer%3A1554'); // resolved NO in the sample
    const caption = await page.$eval('#timeline figcaption', (c) => c.textContent ?? '');
    expect(caption).not.toContain('(now ');
    expect(caption).toMatch(/market price \(last (\d+(\.\d)?%|–)( on \d{4}-\d\d-\d\d \(UTC\))?, the question resolved\)/);
    expect(problems).toEqual({ console: [], failed: [] });
    await page.close();
  });

  // The next four tests each serve a data directory of their own (a copy, a new deployment, a young
  // one, one with no snapshot yet) from a server of their own, in a browser context of their own:
  // they run together (it.concurrent). Most of each is waiting, for its own pipeline runs, its
  // server's start-up or (the last) the page's 5 s retry, which one after the other kept a core
  // idle for some 25 s. Their CLI runs are asynchronous (quorumAsync, not spawnSync), so that one
  // test's run does not hold up the others' event loop (their pages and servers).
  it.concurrent('on a server without the public beta (QUORUM_PUBLIC_BETA=false) an anonymous reader is not told of "public-beta access"', async () => {
    // the same data, served by a second server with the beta off (one server per data directory)
    const copy = mkdtempSync(path.join(tmpdir(), 'quorum-dashboard-states-nobeta-'));
    cpSync(dir, copy, { recursive: true, filter: (src) => !/server\.(lock|json)$/.test(src) });
    const closed = await startServer(copy, { QUORUM_PUBLIC_BETA: 'false' });
    try {
      const { page, problems } = await tab(1200);
      for (const hash of ['', '#/predictions', '#/sources/fivethirtyeight']) {
        await open(page, hash, closed.url);
        const locked = (await notices(page)).filter((n) => n.startsWith('locked: '));
        expect(locked.length, hash).toBeGreaterThan(0);
        for (const n of locked) {
          expect(n, hash).not.toMatch(/public-beta|public beta access/);
          expect(n, hash).toMatch(/anonymous access \(this server has no public beta\) does not include it/);
        }
      }
      // the header's key status says so too
      expect(await page.$eval('.key-status', (s) => s.textContent)).toBe(' anonymous (no public beta here: a key is needed)');
      expect(problems).toEqual({ console: [], failed: [] });
      await page.close();
    } finally {
      await stopQuorum(closed.child);
      rmSync(copy, { recursive: true, force: true });
    }
  });

  it.concurrent('a snapshot with nothing resolved, no thesis, no scenario and factors with no leaf: each panel says so instead of empty axes or a table of headers alone', async () => {
    // a new deployment: one operator question, forecast once, nothing resolved; the bundled
    // structure names none of its questions
    const fresh = mkdtempSync(path.join(tmpdir(), 'quorum-dashboard-states-empty-'));
    const env = { QUORUM_DATA_DIR: fresh, QUORUM_QUESTIONS_DIR: questions, QUORUM_STRUCTURE_DIR: DEFAULT_STRUCTURE_DIR, QUORUM_VENUES: 'none', QUORUM_FRED_API_KEY: '' };
    const run = await quorumAsync(['run'], env);
    expect(run.status, run.stderr).toBe(0);
    const key = newKey(fresh, 'api').key;
    const empty = await startServer(fresh, { QUORUM_STRUCTURE_DIR: DEFAULT_STRUCTURE_DIR });
    try {
      const { page, problems } = await openTab(await browser.createBrowserContext(), empty.url, 1200, key); // the key stored in that server's origin
      // the bundled factors are published with no leaf (outside QA: each drew its levels chart as empty axes)
      const factors = (await get(empty, '/api/factors/?limit=500')).body.factors as { leaves: unknown[] }[];
      expect(factors.length).toBeGreaterThan(0);
      expect(factors.every((f) => f.leaves.length === 0)).toBe(true);
      const expected: [string, string[]][] = [
        ['', ['No scored forecast in the headline mode yet', 'No forecaster scored in the augmented mode yet', 'No question scored in two modes yet', 'No resolved question with a scored consensus yet']],
        ['#/theses', ['No theses in this snapshot.']],
        ['#/scenarios', ['No scenarios in this snapshot.']],
        ['#/factors', factors.map(() => 'No question is attached to this factor yet: nothing to draw.')],
      ];
      for (const [hash, says] of expected) {
        await open(page, hash, empty.url);
        const shown = (await notices(page)).filter((n) => n.startsWith('empty: '));
        expect(shown.length, `${hash}: ${JSON.stringify(await notices(page))}`).toBe(says.length);
        says.forEach((text, i) => expect(shown[i], hash).toContain(text));
        // no table without rows, no chart without marks
        expect(await page.$$eval('main table', (ts) => ts.filter((t) => t.querySelectorAll('tbody tr').length === 0).length), hash).toBe(0);
        expect(await page.$$eval('main figure.chart', (fs) => fs.filter((f) => f.querySelectorAll('.q-point, .q-bin, .q-interval').length === 0).length), hash).toBe(0);
        // and no list without items (a factor's "0 questions" opened on nothing)
        expect(await page.$$eval('main ul, main ol', (ls) => ls.filter((l) => l.children.length === 0).length), hash).toBe(0);
      }
      expect(problems).toEqual({ console: [], failed: [] });
      await page.close();
    } finally {
      await stopQuorum(empty.child);
      rmSync(fresh, { recursive: true, force: true });
    }
  });

  it.concurrent('a young deployment (two questions resolved): the disagreement chart draws no line it cannot fit and says why, the leaderboard says it is insufficient, as the API marks it (outside test: a path of NaN; ranked 1 to 8 on 2 questions, unsaid)', async () => {
    // twelve sample questions forecast at the second round's freeze, scored now: two of them have
    // resolved since
    const young = mkdtempSync(path.join(tmpdir(), 'quorum-dashboard-states-young-'));
    const env = { QUORUM_DATA_DIR: young, QUORUM_VENUES: 'none', QUORUM_MAX_QUESTIONS: '12' };
    for (const args of [['import', 'forecastbench', SAMPLE], ['run', '--as-of', '2026-03-06T00:00:00Z'], ['run', '--score-only']]) {
      const done = await quorumAsync(args, env);
      expect(done.status, done.stderr).toBe(0);
    }
    const key = newKey(young, 'api').key;
    const few = await startServer(young);
    try {
      const resolved = (await get(few, '/api/predictions/resolved?limit=500')).body.predictions as { disagreement: { sd: number | null } | null; ai_error: number | null }[];
      const points = resolved.filter((p) => p.disagreement?.sd != null && p.ai_error !== null).length;
      expect(points, 'too few points for a fit and its band').toBeGreaterThan(0);
      expect(points).toBeLessThan(3);
      const { page, problems } = await openTab(await browser.createBrowserContext(), few.url, 1200, key);
      await open(page, '', few.url);
      expect(await page.$$eval('#disagreement .q-point circle', (c) => c.length)).toBe(points);
      expect(await page.$$eval('main svg path', (ps) => ps.filter((p) => (p.getAttribute('d') ?? '').includes('NaN')).length)).toBe(0);
      expect(await page.$eval('#disagreement figcaption', (e) => e.textContent)).toBe(
        `Headline consensus of the ${points} most recently resolved questions (public), too few to fit a line (a fit and its 95% band need 3 questions of different disagreement).`);
      // the leaderboard: the API's ranking, and that it is over too few questions to mean much
      const items = (await get(few, '/api/leaderboard/?mode=augmented', { headers: { 'X-API-Key': key } })).body.items as { forecaster: string; n_questions: number; sufficient: boolean }[];
      expect(items.length, 'forecasters ranked').toBeGreaterThan(1);
      expect(items.every((i) => !i.sufficient), 'the API calls the cell insufficient').toBe(true);
      const n = Math.max(...items.map((i) => i.n_questions));
      expect(await page.$$eval('#leaderboard-table tbody tr', (trs) => trs.map((tr) => tr.cells[1]!.textContent))).toEqual(items.map((i) => i.forecaster));
      expect(await page.$eval('#leaderboard-insufficient', (e) => e.textContent)).toBe(
        `Insufficient: only ${n} question${n === 1 ? '' : 's'} scored in this mode, under the 20 a ranking needs; these ranks are not yet meaningful.`);
      expect(problems).toEqual({ console: [], failed: [] });
      await page.close();
    } finally {
      await stopQuorum(few.child);
      rmSync(young, { recursive: true, force: true });
    }
  });

  it.concurrent('a server with no snapshot yet (503, Retry-After: 5): the page says it is trying again and fills in by itself once a snapshot is published (QA: it said "Try again in 5 s" and never did)', async () => {
    const fresh = mkdtempSync(path.join(tmpdir(), 'quorum-dashboard-states-later-'));
    const later = await startServer(fresh, {}, false);
    try {
      const { page, problems } = await openTab(await browser.createBrowserContext(), later.url, 1200, null);
      await open(page, '', later.url);
      const waiting = (await notices(page)).filter((n) => n.startsWith('error: '));
      expect(waiting.length).toBeGreaterThan(0);
      for (const n of waiting) expect(n).toMatch(/\(HTTP 503\)\. Trying again in 5 s\.$/);
      // the readiness line: the server answered, and has no snapshot yet (not "cannot be reached")
      const readiness = () => page.$$eval('dl.health dt', (dts) => dts.find((dt) => dt.textContent === 'readiness')?.nextElementSibling?.textContent ?? null);
      expect(await readiness()).toBe('not ready: No data snapshot has been published yet; retry later.');
      await page.$eval('main > .page', (p) => p.setAttribute('data-stale', ''));
      // the first run's snapshot arrives (copied from the suite's data directory, CURRENT last)
      for (const part of ['raw', 'snapshots']) cpSync(path.join(dir, part), path.join(fresh, part), { recursive: true });
      cpSync(path.join(dir, 'CURRENT'), path.join(fresh, 'CURRENT'));
      // no reload, no navigation: the page loads again after the wait and shows the data (checked
      // on each change of the page, not on every animation frame: that made the browser draw 60
      // frames a second through the 5 s wait)
      await page.waitForFunction(() => document.querySelector('main[data-ready="1"] > .page:not([data-stale])') !== null, { timeout: 30_000, polling: 'mutation' });
      expect(await notices(page)).not.toContainEqual(expect.stringMatching(/^error: /));
      // the panels the snapshot fills (this data's run was made now: nothing it forecast has resolved)
      expect(await page.$$eval('main h2', (hs) => hs.map((x) => x.textContent))).toContain('Headline: consensus against the market');
      expect(await readiness()).toBe('ready');
      // what failed: the 503s of the first load
      expect(problems.failed.filter((f) => !/ 503$/.test(f))).toEqual([]);
      await page.close();
    } finally {
      await stopQuorum(later.child);
      rmSync(fresh, { recursive: true, force: true });
    }
  });

  it('a question whose history is longer than the detail\'s 1,000 rows says its chart shows the latest only (QA: cut without notice)', async () => {
    const { page, problems } = await tab(1200);
    await open(page, '#/questions/quorum%3Aqa-rate-2032');
    expect(await page.$eval('#timeline figcaption', (c) => c.textContent)).toContain('Only the latest 1,000 consensus points are drawn');
    await open(page, '#/questions/quorum%3Aqa-rate-2031');
    expect(await page.$eval('#timeline figcaption', (c) => c.textContent)).not.toContain('latest 1,000');
    expect(problems).toEqual({ console: [], failed: [] });
    await page.close();
  });
});
