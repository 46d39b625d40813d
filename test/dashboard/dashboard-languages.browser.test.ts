/**
 * The dashboard on a service run without English (outside test): QUORUM_LANGS=pt-BR,zh-Hant, one
 * run's language stored as `he` and another's as `iw` (one language, two codes). The predictions
 * page asked for /api/predictions/lang/en whatever the snapshot held (a 404: the page showed only an
 * error), and the question page's `?lang=iw` did not find the question's `he`. A real `quorum serve` (port 0) over a fixture snapshot of
 * real Parquet (test/api/fixtures.ts: the feeds with every code renamed, withoutEnglish).
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
import { clean } from './page-checks.ts';

const dir = mkdtempSync(path.join(tmpdir(), 'quorum-dashboard-languages-'));
const profile = mkdtempSync(path.join(tmpdir(), 'quorum-chromium-languages-'));
let server: Served;
let browser: Browser;
let apiKey: string;

beforeAll(async () => {
  const built = buildDashboard();
  await writeSnapshot(dir, SNAP, withoutEnglish(withFeeds(fixtureData(1))));
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
});
