/**
 * A tab of the browser tests: its console errors, page errors, failed and >= 400 requests
 * collected, and the reader's API key set in the server's origin before any page script runs.
 */
import type { Browser, BrowserContext, Page } from 'puppeteer-core';

export interface Problems {
  console: string[];
  failed: string[];
}

/** A new page of `opener` (the browser, or a context of its own) on the server at `serverUrl`. */
export async function openTab(opener: Browser | BrowserContext, serverUrl: string, width = 1200, key: string | null = null): Promise<{ page: Page; problems: Problems }> {
  const page = await opener.newPage();
  await page.setViewport({ width, height: 900 });
  const problems: Problems = { console: [], failed: [] };
  page.on('console', (m) => { if (m.type() === 'error') problems.console.push(m.text()); });
  page.on('pageerror', (e) => problems.console.push(String(e)));
  page.on('requestfailed', (r) => problems.failed.push(`${r.url()} ${r.failure()?.errorText}`));
  page.on('response', (r) => { if (r.status() >= 400) problems.failed.push(`${r.url()} ${r.status()}`); });
  await page.goto(`${serverUrl}/favicon.svg`);
  await page.evaluate((k) => { if (k) localStorage.setItem('quorum.apiKey', k); else localStorage.removeItem('quorum.apiKey'); }, key);
  return { page, problems };
}

/** Page loads so far (see loadRoute). */
let loads = 0;

/**
 * Loads route `hash` of the dashboard served at `serverUrl` as a fresh document and waits for the
 * page to say it rendered. Each load's URL differs in its query (the dashboard reads its hash
 * alone), so a route is always a new document, in one navigation (not one to about:blank first:
 * every navigation costs the browser CPU).
 */
export async function loadRoute(page: Page, serverUrl: string, hash: string): Promise<void> {
  await page.goto(`${serverUrl}/?load=${++loads}${hash}`, { waitUntil: 'load' });
  await page.waitForSelector('main[data-ready="1"]', { timeout: 15_000 });
}
