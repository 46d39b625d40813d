/**
 * The overview, predictions, theses, factors and scenarios pages as an analyst reads them, checked
 * against the API they read (outside QA pass): every figure shown is the API's answer for the same
 * thing, rounded as the README says (worked out here on integers, not with the dashboard's own
 * formats); paging reaches every item once; menus offer what the list holds; back, forward and
 * reload keep a page's state; an unknown id says so with a way on; at 375 px nothing scrolls
 * sideways, no raw value (undefined, NaN, null, an ISO timestamp) is shown and axe-core finds no
 * serious or critical violation; a server stopped under an open page is said by every panel.
 * A real `quorum serve` (its own process, port 0) over the bundled ForecastBench sample run twice
 * through the pipeline with the model simulator, plus a scenario over questions both runs forecast.
 */
import { cpSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import type { Browser, Page } from 'puppeteer-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../pipeline/config.ts';
import { buildDashboard } from '../../scripts/build-dashboard.ts';
import { get, newKey } from '../api/helpers.ts';
import { launchChromium, serveQuorum, stopQuorum, type Served } from './browser-server.ts';
import { runSampleRounds, SAMPLE } from './sample-rounds.ts';
import { loadRoute, openTab, type Problems } from './browser-tab.ts';
import { audit, clean, expectedNum, expectedPct, expectedPoints } from './page-checks.ts';

/** The scenario the test adds, over questions both runs forecast: an archived record to draw. */
const SCENARIO = 'pages-demo';
/** Questions each run forecasts (QUORUM_MAX_QUESTIONS). */
const MAX_QUESTIONS = 100;

const dir = mkdtempSync(path.join(tmpdir(), 'quorum-dashboard-pages-'));
const structure = mkdtempSync(path.join(tmpdir(), 'quorum-dashboard-pages-structure-'));
const profile = mkdtempSync(path.join(tmpdir(), 'quorum-chromium-pages-'));
let server: Served;
let browser: Browser;
let apiKey: string;

beforeAll(async () => {
  const built = buildDashboard();
  // 100 questions a run: two categories (crypto, climate) have active questions and none scored,
  // which the category menu's test needs (with 150, since a run dated before a question's text was
  // written no longer forecasts it, the first run's questions covered every category by March)
  const config = loadConfig({ QUORUM_DATA_DIR: dir, QUORUM_SAMPLE_DIR: SAMPLE, QUORUM_VENUES: 'none', QUORUM_MAX_QUESTIONS: String(MAX_QUESTIONS), LOG_LEVEL: 'silent' });
  await runSampleRounds(config, structure, { id: SCENARIO, file: 'pages.yaml', description: 'A scenario for the page tests' }, MAX_QUESTIONS);
  await built;
  apiKey = newKey(dir, 'api').key; // before the server reads the key file
  server = await startServer();
  browser = await launchChromium(profile);
}, 180_000);

afterAll(async () => {
  await browser?.close();
  if (server) await stopQuorum(server.child);
  delete process.env.QUORUM_STRUCTURE_DIR;
  rmSync(dir, { recursive: true, force: true });
  rmSync(structure, { recursive: true, force: true });
  rmSync(profile, { recursive: true, force: true });
});

/** `quorum serve` on `dataDir` (the test's data directory), no quotas, once it listens and has cached its first reads. */
function startServer(dataDir = dir): Promise<Served> {
  return serveQuorum({ QUORUM_DATA_DIR: dataDir, QUORUM_LIMIT_ANONYMOUS_PER_HOUR: '0', QUORUM_LIMIT_PRO_PER_DAY: '0', QUORUM_LIMIT_API_PER_DAY: '0' });
}

const tab = (width = 1200, key: string | null = null) => openTab(browser, server.url, width, key);
const open = (page: Page, hash: string) => loadRoute(page, server.url, hash);
/** The API's answer to `p` (with the test's api key). */
const api = async (p: string): Promise<any> => {
  const got = await get(server, p, { headers: { 'X-API-Key': apiKey } });
  expect(got.res.status, p).toBe(200);
  return got.body;
};

/** Runs `act` and waits until the page it leads to has rendered (the page before is marked stale). */
async function rerender(page: Page, act: () => Promise<unknown>): Promise<void> {
  await page.$eval('main > .page', (p) => p.setAttribute('data-stale', ''));
  await act();
  await page.waitForSelector('main[data-ready="1"] > .page:not([data-stale])', { timeout: 15_000 });
}

/** The overview's readiness line (System health). */
const readiness = (page: Page) => page.$$eval('dl.health dt', (dts) => dts.find((dt) => dt.textContent === 'readiness')?.nextElementSibling?.textContent ?? null);

/** The cells' texts of each row of the table `selector`. */
const cells = (page: Page, selector: string) => page.$$eval(`${selector} tbody tr`, (rs) => rs.map((r) => [...r.querySelectorAll('td')].map((c) => c.textContent?.trim() ?? '')));


describe('the overview, predictions, theses, factors and scenarios against the API (outside QA pass)', () => {
  it('the overview: each headline card, calibration row and health line is the API\'s, in each mode; signed figures with a true minus', async () => {
    const { page, problems } = await tab(1200, apiKey);
    const acc = await api('/api/predictions/accuracy');
    const vs = acc.ai_vs_market;
    const stats = await api('/api/events/service_stats/');
    const events = await api('/api/events/accuracy/');
    const verdicts = (await api('/api/analysis/disagreement/')).items as { mode: string; verdict: string }[];
    for (const mode of ['headline', 'blind']) {
      await open(page, mode === 'headline' ? '' : `#/?mode=${mode}`);
      const card = (i: number) => page.$eval(`.card:nth-child(${i})`, (c) => [...c.children].map((x) => x.textContent?.trim()));
      expect(await card(1), mode).toEqual(['Consensus accuracy, paired', expectedPct(vs.ai_accuracy_pct / 100),
        expect.stringMatching(new RegExp(`paired n ${vs.n_directional} · all resolved: ${expectedPct(acc.accuracy_pct / 100)} \\(${acc.n_correct}/${acc.n_directional} with a direction, of ${acc.total_resolved}\\)$`))]);
      expect((await card(2))[1], mode).toBe(expectedPct(vs.market_accuracy_pct / 100));
      expect(await card(3), mode).toEqual(['Brier, consensus', expectedNum(vs.ai_brier), `paired n ${vs.n} · all resolved: ${expectedNum(acc.resolved_brier)} (n ${acc.total_resolved})`]);
      expect(await card(4), mode).toEqual(['Brier, market', expectedNum(vs.market_brier), `paired n ${vs.n}`]);
      // a signed difference: a true minus, as edges, gaps and a source's bias (outside test: "-0.018")
      // a positive difference or skill with its "+" (outside test: signed only when negative)
      const plus = (x: number, digits: number) => `${expectedNum(x, digits).match(/^[0.]+$/) || x < 0 ? '' : '+'}${expectedNum(x, digits)}`;
      expect(await card(5), mode).toEqual(['Consensus − market', plus(vs.diff_mean, 4),
        `95% [${expectedNum(vs.diff_ci95[0], 4)}, ${expectedNum(vs.diff_ci95[1], 4)}] · skill ${plus(vs.skill, 3)}`]);
      // the calibration table: the mode's forecasters, as the API lists them
      const fs = (events.forecasters as { forecaster: string; mode: string; n: number; brier: number | null; ece: number | null }[]).filter((f) => f.mode === mode);
      expect(fs.length, mode).toBeGreaterThan(2);
      expect(await cells(page, '[aria-label="Calibration per forecaster"] table'), mode).toEqual(fs.map((f) => [f.forecaster, String(f.n), expectedNum(f.brier), expectedNum(f.ece)]));
      // the headline's verdict, and the mode's own labelled as not drawn
      expect(await page.$eval('.verdict', (p) => p.textContent), mode).toBe(`Headline consensus (drawn above): ${verdicts.find((v) => v.mode === 'headline')!.verdict}`);
      if (mode !== 'headline') expect(await page.$eval('.verdict-mode', (p) => p.textContent), mode).toContain(verdicts.find((v) => v.mode === mode)!.verdict);
    }
    // system health: the service's question counts and scored count
    const health = await page.$$eval('dl.health dt', (ds) => Object.fromEntries(ds.map((d) => [d.textContent, d.nextElementSibling?.textContent])));
    for (const [k, v] of Object.entries(stats.questions as Record<string, number>)) expect(health[`questions ${k}`], k).toBe(String(v));
    expect(health.scored).toBe(String(stats.scored_count));
    clean(problems);
    await page.close();
  });

  it('active predictions: paged to the end, each of the API\'s predictions once, with its figures; every category with active questions is in the menu; back, forward and reload keep the page', async () => {
    const { page, problems } = await tab(1200);
    // the API's list, page by page through its cursor
    const byApi = new Map<string, any>();
    for (let cursor: string | null = ''; cursor !== null;) {
      const body: any = await api(`/api/predictions/lang/en?limit=50${cursor ? `&cursor=${cursor}` : ''}`);
      for (const p of body.predictions) byApi.set(p.question_id, p);
      cursor = body.next_cursor;
    }
    await open(page, '#/predictions?sort=p&dir=asc');
    const seen: string[] = [];
    const hashes: string[] = [];
    for (;;) {
      hashes.push(await page.evaluate(() => location.hash));
      const rows = await page.$$eval('#predictions tbody tr', (rs) => rs.map((r) => ({
        id: decodeURIComponent(r.querySelector('a')!.getAttribute('href')!.replace('#/questions/', '')),
        cells: [...r.querySelectorAll('td')].map((c) => c.textContent?.trim() ?? ''),
      })));
      for (const r of rows) {
        seen.push(r.id);
        const p = byApi.get(r.id);
        const edge = p.consensus?.mean != null && p.market_probability !== null ? p.consensus.mean - p.market_probability : null;
        expect(r.cells.slice(1, 4), r.id).toEqual([p.category ?? '–', p.venue ?? '–', expectedPct(p.consensus?.mean ?? null)]);
        expect(r.cells[4], r.id).toBe(`${expectedPct(p.market_probability)}${p.market_stale ? ' stale' : ''}`);
        expect(r.cells[5], r.id).toBe(expectedPoints(edge === null ? null : Math.round(edge * 1e6) / 1e6, 'pts'));
        expect(r.cells[7], r.id).toBe(p.close_time === null ? '–' : p.close_time.slice(0, 10));
      }
      // sorted as the link says, on the page shown: consensus ascending
      const ps = rows.map((r) => byApi.get(r.id).consensus?.mean ?? Infinity);
      expect(ps).toEqual([...ps].sort((a, b) => a - b));
      if (!(await page.$('nav.pager a[rel=next]'))) break;
      await rerender(page, () => page.click('nav.pager a[rel=next]'));
      expect(await page.evaluate(() => location.hash)).toContain('sort=p&dir=asc'); // the sort goes along
    }
    expect(seen.length).toBe(new Set(seen).size);
    expect(new Set(seen)).toEqual(new Set(byApi.keys()));
    expect(hashes.length).toBeGreaterThan(2);
    // Back returns to the page before, Forward to the one after, reload keeps it
    const rowIds = () => page.$$eval('#predictions tbody tr a', (as) => as.map((a) => a.getAttribute('href')));
    const last = await rowIds();
    await rerender(page, () => page.goBack());
    expect(await page.evaluate(() => location.hash)).toBe(hashes.at(-2));
    const before = await rowIds();
    expect(before).not.toEqual(last);
    await rerender(page, () => page.goForward());
    expect(await rowIds()).toEqual(last);
    await page.reload({ waitUntil: 'load' });
    await page.waitForSelector('main[data-ready="1"]');
    expect(await page.evaluate(() => location.hash)).toBe(hashes.at(-1));
    expect(await rowIds()).toEqual(last);
    // The category menu: every category with an active question, those with none resolved too (QA:
    // the accuracy summary's categories only, so climate and crypto could not be picked).
    const stats = await api('/api/events/service_stats/');
    const withActive = (stats.by_category as { category: string; active: number }[]).filter((c) => c.active > 0).map((c) => c.category).sort();
    const resolved = new Set(((await api('/api/predictions/accuracy')).by_category as { category: string }[]).map((c) => c.category));
    expect(withActive.some((c) => !resolved.has(c)), 'a category with active questions and none scored').toBe(true);
    expect(await page.$$eval('select[name=category] option', (os) => os.map((o) => (o as HTMLOptionElement).value))).toEqual(['', ...withActive]);
    for (const c of new Set([...byApi.values()].map((p) => p.category))) expect(withActive, c).toContain(c);
    // picking one of them lists the API's predictions of it
    const climate = withActive.find((c) => !resolved.has(c))!;
    await page.select('select[name=category]', climate);
    await page.waitForFunction((c) => location.hash.includes(`category=${c}`) && document.querySelector('main[data-ready="1"]'), {}, climate);
    await page.waitForSelector('main[data-ready="1"] #predictions, main[data-ready="1"] [data-state="empty"]');
    const inCategory = (await api(`/api/predictions/lang/en?limit=50&category=${climate}`)).predictions as { question_id: string }[];
    expect(inCategory.length).toBeGreaterThan(0);
    expect(new Set((await rowIds()).map((h) => decodeURIComponent(h!.replace('#/questions/', ''))))).toEqual(new Set(inCategory.map((p) => p.question_id)));
    clean(problems);
    await page.close();
  });

  it('theses: both pages reach each of the API\'s theses once, with its figures; the origin menu filters; back and reload keep it; a thesis page is the API\'s; an unknown one says so and links to the list', async () => {
    const { page, problems } = await tab(1200);
    const all = (await api('/api/clusters/?limit=100&vintages=0')).clusters as any[];
    const byId = new Map(all.map((t) => [t.thesis_id, t]));
    expect(all.length).toBeGreaterThan(30); // more than one page of 30
    const walk = async (hash: string): Promise<string[]> => {
      await open(page, hash);
      const ids: string[] = [];
      for (;;) {
        const rows = await page.$$eval('#theses-table tbody tr', (rs) => rs.map((r) => ({
          id: decodeURIComponent(r.querySelector('a')!.getAttribute('href')!.replace('#/theses/', '')),
          cells: [...r.querySelectorAll('td')].map((c) => c.textContent?.trim() ?? ''),
        })));
        for (const r of rows) {
          const t = byId.get(r.id);
          ids.push(r.id);
          expect(r.cells, r.id).toEqual([t.statement ?? t.label ?? t.thesis_id, t.origin, `${t.n_members} (${t.n_active} active, ${t.n_resolved} resolved)`,
            expectedPct(t.current.consensus), expectedPct(t.current.market_consensus), t.current.disagreement === null ? '–' : expectedNum(t.current.disagreement)]);
        }
        if (!(await page.$('nav.pager a[rel=next]'))) return ids;
        await rerender(page, () => page.click('nav.pager a[rel=next]'));
      }
    };
    const ids = await walk('#/theses');
    expect(ids).toEqual(all.map((t) => t.thesis_id)); // in the API's order, each once
    expect(await page.$eval('.panel h2', (e) => e.textContent)).toBe(`Theses (${all.length})`);
    // the origin menu: the API's theses of that origin, counted so
    await open(page, '#/theses');
    await rerender(page, () => page.select('select[name=origin]', 'computed'));
    expect(await page.evaluate(() => location.hash)).toBe('#/theses?origin=computed');
    const computed = all.filter((t) => t.origin === 'computed').map((t) => t.thesis_id);
    const shownComputed = await page.$$eval('#theses-table tbody tr a', (as) => as.map((a) => decodeURIComponent(a.getAttribute('href')!.replace('#/theses/', ''))));
    expect(shownComputed).toEqual(computed.slice(0, 30));
    expect(await page.$eval('.panel h2', (e) => e.textContent)).toBe(`Theses, computed (${computed.length})`);
    await rerender(page, () => page.goBack());
    expect(await page.$eval('select[name=origin]', (s) => (s as HTMLSelectElement).value)).toBe('');
    await rerender(page, () => page.goForward());
    await page.reload({ waitUntil: 'load' });
    await page.waitForSelector('main[data-ready="1"]');
    expect(await page.$eval('select[name=origin]', (s) => (s as HTMLSelectElement).value)).toBe('computed');
    // a thesis, opened from the list: its vintages and members as the API gives them
    const withMarket = all.find((t) => t.current.market_consensus !== null && t.origin === 'curated')!;
    await open(page, '#/theses');
    await rerender(page, () => page.click(`#theses-table a[href="#/theses/${withMarket.thesis_id}"]`));
    const one = (await api(`/api/clusters/${withMarket.thesis_id}/?vintages_limit=500`)).cluster;
    expect(await page.$eval('h1', (e) => e.textContent)).toBe(one.statement);
    expect(await cells(page, '#thesis-vintages')).toEqual(one.vintages.map((v: any) => [
      `${v.as_of.slice(0, 10)} ${v.as_of.slice(11, 16)}`, expectedPct(v.thesis_consensus), expectedPct(v.thesis_market_consensus), String(v.n_resolved), v.brier === null ? '–' : expectedNum(v.brier)]));
    const members = await page.$$eval('#thesis-members li', (ls) => ls.map((l) => l.textContent));
    expect(members).toEqual(one.members.map((m: any) => `${m.title ?? m.question_id} · ${m.venue ?? '–'} · ${m.status ?? '–'}${m.sign < 0 ? ' · counts against' : ''}${m.weight !== 1 ? ` · weight ${m.weight}` : ''} · consensus ${expectedPct(m.consensus)} · market ${expectedPct(m.market_probability)}`));
    // a member weighted 2 (agi-soon's): its weight said, as the weighted thesis consensus counts it
    const weighted = (await api('/api/clusters/agi-soon/?vintages_limit=1')).cluster.members.filter((m: any) => m.weight !== 1);
    expect(weighted.length).toBeGreaterThan(0);
    await open(page, '#/theses/agi-soon');
    const agi = await page.$$eval('#thesis-members li', (ls) => ls.map((l) => l.textContent ?? ''));
    for (const m of weighted) expect(agi.find((l) => l.startsWith(m.title ?? m.question_id)), m.question_id).toContain(` · weight ${m.weight} · `);
    clean(problems);
    // an id not in this snapshot: said, and the list a link away (outside test: the notice alone)
    await open(page, '#/theses/no-such-thesis');
    expect(await page.$eval('main [data-state="error"]', (e) => e.textContent)).toMatch(/^Could not load this thesis: No thesis 'no-such-thesis' in this snapshot\..*\(HTTP 404\)\.$/);
    await rerender(page, () => page.click('main a[href="#/theses"]'));
    expect(await page.$eval('h1', (e) => e.textContent)).toBe('Theses');
    await page.close();
  });

  it('factors: each node\'s level, change and market level, and each factor\'s health line, are the API\'s', async () => {
    const { page, problems } = await tab(1200);
    const factors = (await api('/api/factors/?limit=200')).factors as any[];
    const health = await api('/api/factors/health/');
    await open(page, '#/factors');
    expect(await page.$$eval('section[data-factor]', (ss) => ss.map((s) => (s as HTMLElement).dataset.factor))).toEqual(factors.map((f) => f.factor_id));
    expect(await page.$eval('#system-status .status', (e) => e.textContent)).toBe(health.status);
    expect((await cells(page, '#system-checks')).map((r) => r.slice(0, 2))).toEqual(health.checks.map((c: any) => [c.check, c.status]));
    for (const f of factors) {
      const section = `section[data-factor="${f.factor_id}"]`;
      const nodes = [f, ...f.drivers];
      expect(await cells(page, `${section} table.factor-tree`), f.factor_id).toEqual(nodes.map((n: any) => [n.name, expectedPct(n.level), expectedPoints(n.change), expectedPct(n.market_level), `${n.n_leaves} (${n.n_with_consensus})`]));
      const h = health.factors.find((x: any) => x.factor_id === f.factor_id);
      expect(await page.$eval(`${section} p.meta`, (p) => p.textContent), f.factor_id).toBe(
        `coverage ${expectedPct(h.coverage, 0)} · ${h.stale_leaves.length} stale · ${h.n_contradictions} contradictions · disagreement ${expectedNum(h.disagreement)} · ${h.n_scored === 0 ? 'no resolved question scored yet' : `Brier ${expectedNum(h.brier)} vs market ${expectedNum(h.market_brier)} on ${h.n_scored} resolved`}`);
      // the statement's change since the previous run, or that there is none to show (outside test: "– since the previous run")
      expect(await page.$eval(`${section} > p`, (p) => p.textContent), f.factor_id).toContain(f.change === null ? '(no change to show since the previous run; ' : `(${expectedPoints(f.change)} since the previous run; `);
      // the leaves: every question of the factor, linked to its page
      expect(await page.$$eval(`${section} details li a`, (as) => as.map((a) => decodeURIComponent(a.getAttribute('href')!.replace('#/questions/', '')))), f.factor_id)
        .toEqual(f.leaves.map((l: any) => l.question_id));
    }
    clean(problems);
    await page.close();
  });

  it('scenarios: each component\'s implied, direct and gap and the record\'s worlds are the API\'s; the status menu lists the API\'s scenarios of that status', async () => {
    const { page, problems } = await tab(1200);
    const all = (await api('/api/scenarios/?limit=100')).scenarios as any[];
    await open(page, '#/scenarios');
    expect(await page.$$eval('section[data-scenario]', (ss) => ss.map((s) => (s as HTMLElement).dataset.scenario))).toEqual(all.map((s) => s.scenario_id));
    for (const s of all) {
      const section = `section[data-scenario="${s.scenario_id}"]`;
      expect(await cells(page, `${section} table.scenario-components`), s.scenario_id).toEqual(s.components.map((c: any) => [String(c.ord), c.label ?? c.title ?? c.question_id,
        c.outcome === null ? (c.status ?? '') : `resolved ${c.outcome === 1 ? 'YES' : 'NO'}`, expectedPct(c.implied), expectedPct(c.direct), expectedPoints(c.coherence_gap)]));
    }
    // the archived record's worlds, most likely first: the chart's rows are the API's pathway's
    const demo = all.find((s) => s.scenario_id === SCENARIO)!;
    expect(demo.latest_record?.pathway.length).toBeGreaterThan(0);
    const texts = await page.$$eval(`#pathway-${SCENARIO} svg text`, (ts) => ts.map((t) => t.textContent ?? ''));
    const top = demo.latest_record.pathway.filter((w: any) => w.probability !== null).slice(0, 8);
    const read = (world: string) => [...world].map((d) => (d === '1' ? 'YES' : 'NO')).join(' · ');
    expect(texts.filter((t) => /^[01]+ {2}/.test(t))).toEqual(top.map((w: any) => `${w.world}  ${read(w.world)}`));
    expect(await page.$$eval(`#pathway-${SCENARIO} .q-point rect`, (rs) => rs.length)).toBe(top.length);
    // the status menu: the API's scenarios of that status
    await rerender(page, () => page.select('select[name=status]', 'resolved'));
    const resolved = (await api('/api/scenarios/?limit=100&status=resolved')).scenarios.map((s: any) => s.scenario_id);
    expect(resolved.length).toBeGreaterThan(0);
    expect(await page.$$eval('section[data-scenario]', (ss) => ss.map((s) => (s as HTMLElement).dataset.scenario))).toEqual(resolved);
    expect(await page.$eval('main p.meta', (p) => p.textContent)).toMatch(new RegExp(`^${resolved.length} resolved scenarios?\\.`));
    clean(problems);
    await page.close();
  });

  it('a scenario\'s page: its components, each current joint and the consensus\' worlds, and its record history with the scores, are the API\'s; older records through the records cursor; an unknown id says so', async () => {
    const { page, problems } = await tab(1200);
    const d = (await api(`/api/scenarios/${SCENARIO}/`)).scenario;
    expect(d.records.length, 'a record per run').toBe(2);
    // from the list, the scenario's link
    await open(page, '#/scenarios');
    await rerender(page, () => page.click(`section[data-scenario="${SCENARIO}"] a[href="#/scenarios/${SCENARIO}"]`));
    expect(await page.evaluate(() => location.hash)).toBe(`#/scenarios/${SCENARIO}`);
    expect(await page.$eval('h1', (e) => e.textContent)).toBe(d.title);
    expect(await page.title()).toBe(`${d.title} · Quorum`);
    expect(await page.$eval('#scenario-meta', (e) => e.textContent)).toBe(`${SCENARIO} · ${d.status} · ${d.n_components} components, ${d.n_resolved} resolved · ${d.n_records} archived records`);
    expect(await cells(page, 'table.scenario-components')).toEqual(d.components.map((c: any) => [String(c.ord), c.label ?? c.title ?? c.question_id,
      c.outcome === null ? (c.status ?? '') : `resolved ${c.outcome === 1 ? 'YES' : 'NO'}`, expectedPct(c.implied), expectedPct(c.direct), expectedPoints(c.coherence_gap)]));
    const read = (world: string) => [...world].map((x) => (x === '1' ? 'YES' : 'NO')).join(' · ');
    // each current joint: the consensus first, then each model's, with its method and most likely world
    expect(d.current.length).toBeGreaterThan(1);
    expect(await cells(page, '#scenario-joints')).toEqual(d.current.map((j: any) => [j.model ?? `consensus (mean of ${j.n_models} model${j.n_models === 1 ? '' : 's'})`,
      j.methods.join(', '), `${j.pathway[0].world}  ${read(j.pathway[0].world)}`, expectedPct(j.pathway[0].probability)]));
    // every world of the consensus joint, most likely first, with the models' disagreement on it
    const consensus = d.current.find((j: any) => j.model === null);
    expect(await cells(page, '#scenario-worlds')).toEqual(consensus.pathway.map((w: any) => [String(w.rank), w.world, read(w.world), expectedPct(w.probability), expectedPct(w.disagreement_sd),
      w.consistent === null ? '–' : w.consistent ? 'yes' : 'no']));
    // the record history, newest first: its time (UTC), most likely world, resolutions so far and scores
    // the components resolved so far in words ('1-0': YES · open · NO; none while '---')
    const resolved = (p: string | null) => (p === null ? '–' : /[01]/.test(p) ? [...p].map((x) => ({ 1: 'YES', 0: 'NO' } as Record<string, string>)[x] ?? 'open').join(' · ') : 'none');
    const history = (records: any[]) => records.map((r) => [r.as_of.slice(0, 16).replace('T', ' '), `${r.top_world} (${expectedPct(r.top_probability)})`, resolved(r.resolved_pattern),
      expectedPct(r.consistent_mass), r.complete ? expectedNum(r.log_score) : '–', r.complete ? expectedNum(r.brier) : '–', expectedNum(r.component_brier)]);
    expect(await cells(page, '#scenario-records')).toEqual(history(d.records));
    expect(await page.$('nav[aria-label="Pages of records"] a')).toBeNull(); // two records: one page
    // a link with the API's records cursor: the older records, and the newest a link away
    const first = await api(`/api/scenarios/${SCENARIO}/?records_limit=1`);
    await open(page, `#/scenarios/${SCENARIO}?records_cursor=${encodeURIComponent(first.scenario.next_records_cursor)}`);
    expect(await cells(page, '#scenario-records')).toEqual(history(d.records.slice(1)));
    expect(await page.$eval('nav[aria-label="Pages of records"] a', (a) => [a.getAttribute('href'), a.textContent])).toEqual([`#/scenarios/${SCENARIO}`, '« Newest records']);
    clean(problems);
    // an unknown scenario: the API's 404 said, and the list a link away
    await open(page, '#/scenarios/no-such-scenario');
    expect(await page.$eval('main [data-state="error"]', (e) => e.textContent)).toMatch(/HTTP 404/);
    expect(await page.$eval('main a[href="#/scenarios"]', (a) => a.textContent)).toBe('All scenarios');
    await page.close();
  });

  it('a link whose cursor the API does not take (cut short when copied): the list\'s notice, and its first page, filters kept, a link away (outside test: the notice alone)', async () => {
    // keyed (api plan), so the ranked track records and a source's claims are read too
    const { page, problems } = await tab(1200, apiKey);
    for (const [hash, first, rows] of [
      ['#/predictions?category=politics&cursor=eyJ2Ijox&sort=p&dir=asc', '#/predictions?category=politics&sort=p&dir=asc', '#predictions tbody tr'],
      ['#/sources?kind=market&cursor=eyJ2Ijox', '#/sources?kind=market', '#sources tbody tr'],
      ['#/sources/manifold?kind=probability&cursor=eyJ2Ijox', '#/sources/manifold?kind=probability', '#claims tbody tr'],
      ['#/theses?origin=computed&cursor=eyJ2Ijox', '#/theses?origin=computed', '#theses-table tbody tr'],
      ['#/factors?cursor=eyJ2Ijox', '#/factors', 'section[data-factor]'],
      ['#/scenarios?status=active&cursor=eyJ2Ijox', '#/scenarios?status=active', 'section[data-scenario]'],
    ]) {
      await open(page, hash);
      expect(await page.$eval('main [data-state="error"]', (e) => e.textContent), hash).toMatch(/not a cursor this endpoint issued.*\(HTTP 400\)\.$/);
      expect(await page.$eval('main nav.pager a', (a) => [a.getAttribute('href'), a.textContent]), hash).toEqual([first, '« First page']);
      await rerender(page, () => page.click('main nav.pager a'));
      expect(await page.evaluate(() => location.hash), hash).toBe(first);
      expect(await page.$$eval(rows, (rs) => rs.length), hash).toBeGreaterThan(0);
    }
    expect(problems.failed.filter((f) => !/cursor=eyJ2Ijox.* 400$/.test(f))).toEqual([]);
    expect(problems.failed).toHaveLength(6);
    await page.close();
  });

  it('at 375 px: no sideways scroll, nothing wider than the screen outside a scrolling table, no raw value shown, and axe-core passes, on each page in the states an analyst reaches', async () => {
    const { page, problems } = await tab(375, apiKey);
    const thesesNext = (await api('/api/clusters/?limit=30&vintages=0')).next_cursor as string;
    const hashes = ['', '#/?mode=informed', '#/predictions?category=politics&sort=edge', '#/theses', `#/theses?cursor=${thesesNext}`, '#/theses/agi-soon',
      '#/theses/no-such-thesis', '#/factors', '#/scenarios', '#/scenarios?status=resolved', `#/scenarios/${SCENARIO}`, '#/scenarios/no-such-scenario'];
    for (const hash of hashes) {
      await open(page, hash);
      const found = await page.evaluate(() => {
        const text = document.querySelector('main')!.innerText;
        const raw = text.match(/\bundefined\b|\bNaN\b|\bnull\b|\[object Object\]|\d{4}-\d\d-\d\dT\d\d:\d\d|\bInfinity\b/g);
        const vw = document.documentElement.clientWidth;
        // an element reaching past the screen's edge that no scrolling box holds
        const past = [...document.querySelectorAll('main *')].filter((e) => {
          const r = e.getBoundingClientRect();
          if (r.width === 0 || r.right <= vw + 1) return false;
          for (let p = e.parentElement; p; p = p.parentElement) if (['auto', 'scroll', 'hidden'].includes(getComputedStyle(p).overflowX)) return false;
          return true;
        }).map((e) => e.outerHTML.slice(0, 100));
        return { raw, past, scroll: document.documentElement.scrollWidth - vw };
      });
      expect.soft(found, hash).toEqual({ raw: null, past: [], scroll: 0 });
      // every chart is named, by its caption or a label (outside test: the theses', factors' and
      // scenarios' charts were figures of no name beside their figures' list)
      expect.soft(await page.$$eval('main figure.chart', (fs) => fs.filter((f) => !f.querySelector(':scope > figcaption') && !f.getAttribute('aria-label')).map((f) => f.id)), hash).toEqual([]);
      expect.soft(await audit(page), hash).toEqual([]);
    }
    // the two pages whose request fails on purpose (the unknown thesis and scenario: 404)
    expect(problems.console).toEqual(Array(2).fill('Failed to load resource: the server responded with a status of 404 (Not Found)'));
    expect(problems.failed).toEqual([`${server.url}/api/clusters/no-such-thesis/?vintages_limit=500 404`, `${server.url}/api/scenarios/no-such-scenario/?records_limit=25 404`]);
    await page.close();
  });

  it('a server stopped under an open page: every panel of each page then opened says the server could not be reached, and each page keeps its heading', async () => {
    // a server of its own, on a copy of the data (one server per data directory)
    const copy = mkdtempSync(path.join(tmpdir(), 'quorum-dashboard-pages-stopped-'));
    cpSync(dir, copy, { recursive: true, filter: (src) => !['server.lock', 'server.json'].includes(path.basename(src)) });
    const doomed = await startServer(copy);
    const page = await browser.newPage();
    await page.setViewport({ width: 1200, height: 900 });
    await page.goto(`${doomed.url}/favicon.svg`);
    await page.evaluate((k) => localStorage.setItem('quorum.apiKey', k), apiKey);
    // Opened on a page that reads nothing (the API's answers may be kept by the browser for up to
    // 60 s, Cache-Control max-age, and would be read from its cache), with the key checked and the
    // charts' chunk (preloaded by the shell) fetched while the server still ran.
    await page.goto(`${doomed.url}/#/no-such-page`, { waitUntil: 'load' });
    await page.waitForSelector('main[data-ready="1"]');
    await page.waitForFunction(() => (performance.getEntriesByType('resource') as PerformanceResourceTiming[])
      .some((r) => r.name.includes('/dashboard/chunk-') && r.responseEnd > 0) && document.querySelector('.key-status')?.textContent?.includes('plan: api'));
    await stopQuorum(doomed.child);
    for (const [hash, h1] of [['#/', 'Overview'], ['#/predictions', 'Active predictions'], ['#/theses', 'Theses'], ['#/theses/agi-soon', 'Thesis'],
      ['#/factors', 'Factors'], ['#/scenarios', 'Scenarios']]) {
      await rerender(page, () => page.evaluate((x) => { location.hash = x; }, hash));
      expect(await page.$$eval('h1', (hs) => hs.map((x) => x.textContent)), hash).toEqual([h1]);
      const state = await page.evaluate(() => ({
        errors: [...document.querySelectorAll('main [data-state="error"]')].map((e) => e.textContent ?? ''),
        silentPanels: [...document.querySelectorAll('main section.panel')].filter((s) => !s.querySelector('[data-state="error"]')).map((s) => s.querySelector('h2')?.textContent),
        failed: document.querySelector('main')!.textContent!.includes('This page failed'),
      }));
      expect(state.errors.length, hash).toBeGreaterThan(0);
      for (const e of state.errors) expect(e, hash).toMatch(/^Could not load [a-z].*: the server could not be reached .*Reload the page to try again\.$/);
      expect(state.silentPanels, hash).toEqual([]);
      expect(state.failed, hash).toBe(false);
      // the overview's readiness line: no answer is not a server that answered "not ready" (QA: "readiness: not ready")
      if (hash === '#/') expect(await readiness(page)).toBe('the service cannot be reached (no answer from the server)');
    }
    await page.close();
    rmSync(copy, { recursive: true, force: true });
  });
});
