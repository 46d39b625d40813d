/**
 * The dashboard on a service run without English (outside test): QUORUM_LANGS=pt-BR,zh-Hant, one
 * run's language stored as `he` and another's as `iw` (one language, two codes). The predictions
 * page asked for /api/predictions/lang/en whatever the snapshot held (a 404: the page showed only an
 * error), the question page's `?lang=iw` did not find the question's `he`, and at 375 px the
 * leaderboard's x axis had a single tick; and the charts on the fixture's awkward data (one
 * resolved question, a leaderboard of small Briers, a question forecast once, runs a day apart, an
 * annulled question with no forecast) at 320, 375, 768 and 1440 px. A real `quorum serve` (port 0)
 * over a fixture snapshot of real Parquet (test/api/fixtures.ts: the feeds with every code renamed,
 * withoutEnglish).
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import type { Browser, Page } from 'puppeteer-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildDashboard } from '../../scripts/build-dashboard.ts';
import { FEED, fixtureData, publish, withFeeds, withoutEnglish, writeSnapshot } from '../api/fixtures.ts';
import { SNAP, get, newKey } from '../api/helpers.ts';
import { launchChromium, serveQuorum, stopQuorum, type Served } from './browser-server.ts';
import { loadRoute, openTab, type Problems } from './browser-tab.ts';
import { axisTicks, clean, nonFiniteAttributes, tickFaults } from './page-checks.ts';

const dir = mkdtempSync(path.join(tmpdir(), 'quorum-dashboard-languages-'));
const profile = mkdtempSync(path.join(tmpdir(), 'quorum-chromium-languages-'));
let server: Served;
let browser: Browser;
let apiKey: string;

/**
 * The overview's leaderboard (augmented mode, the latest round, overall): the consensus, the market
 * and four models with 95% intervals a few Brier points wide, as a round of 40-odd questions gives.
 */
const LEADERBOARD = [
  ['consensus', 'consensus', 0.162, 0.128, 0.199], ['gpt-5', 'model', 0.171, 0.133, 0.212], ['claude-sonnet-4-5', 'model', 0.178, 0.140, 0.219],
  ['market', 'market', 0.184, 0.149, 0.222], ['gemini-2.5-pro', 'model', 0.193, 0.151, 0.236], ['deepseek-v3', 'model', 0.207, 0.163, 0.251],
].map(([forecaster, kind, brier, lo, hi], i) => ({
  mode: 'augmented', rounds: 'latest', dimension: 'overall', key: 'all', forecaster: forecaster as string, kind: kind as string, rank: i + 1,
  is_best: i === 0, n: 42, brier: brier as number, brier_ci95_lo: lo as number, brier_ci95_hi: hi as number, brier_adjusted: (brier as number) - 0.01,
  log_loss: 0.5, n_directional: 40, accuracy_pct: 70, ece: 0.05, vs_market_n: 42, vs_market_diff: (brier as number) - 0.184, vs_market_ci95_lo: -0.03,
  vs_market_ci95_hi: 0.03, best: 'consensus', vs_best_n: 42, vs_best_diff: (brier as number) - 0.162, vs_best_ci95_lo: -0.02, vs_best_ci95_hi: 0.04,
  tied_with_best: true, n_questions: 42, sufficient: true,
}));

/**
 * The blind mode's leaderboard: the same forecasters scored on near-certain questions, Briers a
 * hundredth of the above (0.0013 to 0.0025), so the axis's labels carry four decimals.
 */
const LEADERBOARD_SMALL = LEADERBOARD.map((r) => ({ ...r, mode: 'blind', brier: r.brier / 100, brier_ci95_lo: r.brier_ci95_lo / 100, brier_ci95_hi: r.brier_ci95_hi / 100, brier_adjusted: r.brier_adjusted / 100 }));

beforeAll(async () => {
  const built = buildDashboard();
  const data = withoutEnglish(withFeeds(fixtureData(1)));
  // one resolved question, as on a new deployment: the disagreement scatter has one point
  await writeSnapshot(dir, SNAP, { ...data, leaderboard: [...LEADERBOARD, ...LEADERBOARD_SMALL], resolved_predictions: data.resolved_predictions!.filter((r) => r.question_id === FEED.resolved) });
  await publish(dir, SNAP);
  await built;
  apiKey = newKey(dir, 'api').key; // before the server reads the key file
  server = await serveQuorum({ QUORUM_DATA_DIR: dir, QUORUM_VENUES: 'none', QUORUM_FRED_API_KEY: '' });
  browser = await launchChromium(profile);
}, 120_000);

afterAll(async () => {
  await browser?.close();
  if (server) await stopQuorum(server.child);
  for (const d of [dir, profile]) rmSync(d, { recursive: true, force: true });
});

async function tab(width: number): Promise<{ page: Page; problems: Problems }> {
  return openTab(await browser.createBrowserContext(), server.url, width, apiKey);
}
const open = (page: Page, hash: string) => loadRoute(page, server.url, hash);
const rowIds = (page: Page) => page.$$eval('#predictions tbody tr td:first-child a', (as) => as.map((a) => a.getAttribute('href') ?? ''));

describe('the dashboard in the languages the snapshot has', () => {
  it('the predictions page lists the main language\'s predictions, and the others through a menu (outside test: a 404 for `en`, only an error shown)', async () => {
    const { page, problems } = await tab(1200);
    await open(page, '#/predictions');
    expect(await page.$$eval('main .notice.error', (ns) => ns.map((n) => n.textContent))).toEqual([]);
    // the languages the service says the snapshot has (service_stats), the main one first
    const stats = (await get(server, '/api/events/service_stats/')).body.languages as { lang: string; predictions: number }[];
    expect(stats.map((l) => l.lang)).toEqual(['pt-BR', 'he', 'zh-Hant']);
    expect(await rowIds(page)).toHaveLength(28);
    expect(await page.$eval('main p.note', (p) => p.textContent ?? '')).toMatch(/^28 active predictions with reasoning in pt-BR; this page: 28/);
    // every language, each with its count, the one listed chosen
    expect(await page.$$eval('#f-lang option', (os) => os.map((o) => [o.value, o.textContent, (o as HTMLOptionElement).selected]))).toEqual([
      ['pt-BR', 'pt-BR (28)', true], ['he', 'he (2)', false], ['zh-Hant', 'zh-Hant (1)', false],
    ]);
    // another language from the menu: its predictions, in the URL, each question linked in it
    // (the page drawn before is marked, so the wait is for the page drawn after: dashboard-pages' rerender)
    await page.$eval('main > .page', (p) => p.setAttribute('data-stale', ''));
    await page.select('#f-lang', 'he');
    await page.waitForSelector('main[data-ready="1"] > .page:not([data-stale]) #predictions', { timeout: 15_000 });
    expect(new URLSearchParams((await page.evaluate(() => location.hash)).split('?')[1]).get('lang')).toBe('he');
    expect((await rowIds(page)).sort()).toEqual([FEED.c, FEED.d].map((id) => `#/questions/${encodeURIComponent(id)}?lang=he`).sort());
    expect(await page.$eval('main p.note', (p) => p.textContent ?? '')).toMatch(/^2 active predictions with reasoning in he; /);
    // another code of a language, in any case, is that language, as the API reads it
    await open(page, '#/predictions?lang=IW');
    expect(await rowIds(page)).toHaveLength(2);
    expect(await page.$$('#ignored-in-link')).toHaveLength(0);
    // a language the snapshot lacks is named, and the main one listed
    await open(page, '#/predictions?lang=en');
    expect(await page.$eval('#ignored-in-link', (e) => e.textContent)).toContain('lang=en (one of pt-BR, he, zh-Hant)');
    expect(await rowIds(page)).toHaveLength(28);
    clean(problems);
    await page.close();
  });

  it('the question page\'s ?lang= is matched as the API matches it: iw on a question stored as he is Hebrew (outside test: "no reasoning in iw")', async () => {
    const { page, problems } = await tab(1200);
    for (const asked of ['iw', 'HE', 'he']) {
      await open(page, `#/questions/${encodeURIComponent(FEED.c)}?lang=${asked}`);
      expect(await page.$$('#ignored-in-link'), asked).toHaveLength(0);
      const texts = await page.$$eval('table.models td.reasoning', (tds) => tds.map((t) => [t.getAttribute('lang'), t.textContent]));
      expect(texts.length, asked).toBe(3);
      for (const [lang, text] of texts) {
        expect(lang, asked).toBe('he');
        expect(text, asked).toMatch(/ he: reasoning about /);
      }
      expect(await page.$eval('#f-lang', (s) => (s as HTMLSelectElement).value), asked).toBe('he');
    }
    // a language the question lacks is still named
    await open(page, `#/questions/${encodeURIComponent(FEED.c)}?lang=zh-Hant`);
    expect(await page.$eval('#ignored-in-link', (e) => e.textContent)).toContain('lang=zh-Hant (one of he, pt-BR; shown in pt-BR)');
    clean(problems);
    await page.close();
  });

  it('at 375 px the leaderboard\'s x axis has at least three ticks, none over another (outside test: one tick)', async () => {
    for (const width of [375, 1200]) {
      const { page } = await tab(width);
      await open(page, '');
      await page.waitForSelector('#leaderboard svg');
      const ticks = await page.$$eval('#leaderboard svg [aria-label="x-axis tick label"] text', (ts) => ts.map((t) => {
        const box = t.getBoundingClientRect();
        const svg = t.closest('svg')!.getBoundingClientRect();
        return { text: t.textContent ?? '', left: box.left, right: box.right, inside: box.left >= svg.left - 0.5 && box.right <= svg.right + 0.5 };
      }));
      expect(ticks.length, `${width} px: ${ticks.map((t) => t.text).join(' ')}`).toBeGreaterThanOrEqual(3);
      for (const t of ticks) expect(t.inside, `${width} px: ${t.text} inside the chart`).toBe(true);
      // each label ends before the next begins, with room between them
      for (let i = 1; i < ticks.length; i++) expect(ticks[i]!.left, `${width} px: ${ticks[i - 1]!.text} and ${ticks[i]!.text}`).toBeGreaterThan(ticks[i - 1]!.right + 2);
      // the forecasters are drawn on it
      const drawn = await page.$$eval('#leaderboard svg .q-point circle', (cs) => cs.length);
      expect(drawn, `${width} px`).toBe(LEADERBOARD.length);
      await page.close();
    }
  });

  it('a leaderboard of small Briers: its last label, four decimals wide, lies whole inside the chart at every width (outside test: the last, "0.0026", ran past its right edge at 768 px)', async () => {
    const { page, problems } = await tab(320);
    for (const width of [320, 375, 768, 1440]) {
      await page.setViewport({ width, height: 900 });
      await open(page, '#/?mode=blind');
      await page.waitForSelector('#leaderboard svg');
      const x = (await axisTicks(page, '#leaderboard')).find((a) => a.axis === 'x-axis tick label');
      // at 768 px and over the step is 0.0005: four decimals (at phone width, 0.001: three)
      if (width >= 768) expect(x!.labels.every((l) => /^0\.\d{4}$/.test(l.text)), `${width} px: ${x!.labels.map((l) => l.text).join(' ')}`).toBe(true);
      expect(tickFaults(x!, 3), `${width} px`).toEqual([]);
      expect(await page.$$eval('#leaderboard svg .q-point circle', (cs) => cs.length), `${width} px`).toBe(LEADERBOARD_SMALL.length);
    }
    clean(problems);
    await page.close();
  });

  describe('the charts on awkward data, at 320, 375, 768 and 1440 px', () => {
    const WIDTHS = [320, 375, 768, 1440];

    it('the disagreement scatter of a single resolved question: round ticks on both axes, three or more each, whole and apart (outside test: each axis\'s one tick was the value itself, "0.000189", cut at the chart\'s left edge)', async () => {
      const { page, problems } = await tab(320);
      for (const width of WIDTHS) {
        await page.setViewport({ width, height: 900 });
        await open(page, '');
        await page.waitForSelector('#disagreement svg');
        expect(await page.$$eval('#disagreement .q-point circle', (cs) => cs.length), `${width} px`).toBe(1);
        const axes = await axisTicks(page, '#disagreement');
        expect(axes.map((a) => a.axis).sort(), `${width} px`).toEqual(['x-axis tick label', 'y-axis tick label']);
        for (const a of axes) expect(tickFaults(a, 3), `${width} px`).toEqual([]);
        // the axes start at zero: a disagreement and a Brier are never negative
        for (const a of axes) expect(a.labels.map((l) => Number(l.text.replace('−', '-'))).every((v) => v >= 0), `${width} px ${a.axis}`).toBe(true);
        expect(await nonFiniteAttributes(page), `${width} px`).toEqual([]);
      }
      clean(problems);
      await page.close();
    });

    it("a question's timeline says its times are UTC, and its ticks (two lines at runs a day apart, one at a single run) lie whole inside the chart (outside test: \"12 AM … 6 PM\" with no zone, the date line cut at the chart's foot; one run's tick \"31 Mar\", no year)", async () => {
      const { page, problems } = await tab(320);
      for (const width of WIDTHS) {
        await page.setViewport({ width, height: 900 });
        // FEED.a: runs a day apart, ticked in hours; FEED.c: one run
        for (const [id, least] of [[FEED.a, 3], [FEED.c, 1]] as const) {
          await open(page, `#/questions/${encodeURIComponent(id)}`);
          await page.waitForSelector('#timeline svg');
          const axes = await axisTicks(page, '#timeline');
          for (const a of axes) expect(tickFaults(a, a.axis.startsWith('x') ? least : 3), `${width} px ${id}`).toEqual([]);
          expect(await page.$$eval('#timeline svg [aria-label="x-axis label"] text', (ts) => ts.map((t) => t.textContent)), `${width} px ${id}`).toEqual([expect.stringContaining('(UTC)')]);
          expect(await nonFiniteAttributes(page), `${width} px ${id}`).toEqual([]);
        }
        // one run: its time, whole, is the one tick (Plot's own read "31 Mar", with no year)
        const once = (await axisTicks(page, '#timeline')).find((a) => a.axis.startsWith('x'))!.labels.map((l) => l.text);
        expect(once, `${width} px`).toEqual(['2025-03-31 00:00']);
        // hours of one day are ticked beside their date
        await open(page, `#/questions/${encodeURIComponent(FEED.a)}`);
        const hours = (await axisTicks(page, '#timeline')).find((a) => a.axis.startsWith('x'))!.labels.map((l) => l.text);
        expect(hours.some((t) => / [AP]M/.test(t)), `${width} px: ${hours.join(', ')}`).toBe(true);
      }
      clean(problems);
      await page.close();
    });

    it('a question with no consensus and no market price says there is nothing to draw, instead of empty axes (outside test: the annulled question)', async () => {
      const { page, problems } = await tab(375);
      await open(page, `#/questions/${encodeURIComponent(FEED.annulled)}`);
      const timePanel = await page.$$eval('main section', (ss) => ss.filter((s) => s.querySelector('h2')?.textContent === 'Consensus and market over time')
        .map((s) => ({ charts: s.querySelectorAll('svg').length, empty: s.querySelector('[data-state="empty"]')?.textContent ?? null })));
      expect(timePanel).toEqual([{ charts: 0, empty: expect.stringMatching(/^No consensus and no market price to draw yet/) }]);
      clean(problems);
      await page.close();
    });
  });
});
