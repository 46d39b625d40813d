/**
 * What the browser tests check a page against, defined once: the figures the README says the
 * dashboard shows, worked out on integers from the API's 6-decimal values (never with the
 * dashboard's own formats), and axe-core's audit of the page as served.
 */
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import type axe from 'axe-core';
import type { Page } from 'puppeteer-core';
import { expect } from 'vitest';
import type { Problems } from './browser-tab.ts';

/** axe-core's minified build (the package's own axe.min.js, the same version as axe.source): under
 *  half of axe.source's 1.5 MB to send through the DevTools protocol and parse on each audit. */
const AXE_SOURCE = readFileSync(createRequire(import.meta.url).resolve('axe-core/axe.min.js'), 'utf8');

/** A tab had no console error and no failed or >= 400 request. */
export const clean = (p: Problems) => expect(p, 'console errors and failed requests').toEqual({ console: [], failed: [] });

/** Every axe-core violation on the page, of any impact, as "id (impact): help: nodes". */
export async function violations(page: Page): Promise<{ id: string; impact: string; text: string }[]> {
  // Evaluated through the DevTools protocol: not an inline script, so the page's CSP stays as served.
  await page.evaluate(AXE_SOURCE);
  const result = await page.evaluate(async () => {
    const r = await (window as unknown as { axe: typeof axe }).axe.run(document, { resultTypes: ['violations'] });
    return r.violations.map((v) => ({ id: v.id, impact: v.impact ?? '', nodes: v.nodes.map((n) => n.html.slice(0, 160)), help: v.help }));
  });
  return result.map((v) => ({ id: v.id, impact: v.impact, text: `${v.id} (${v.impact}): ${v.help}: ${v.nodes.join(' | ')}` }));
}

/** The serious and critical axe-core violations. */
export async function audit(page: Page): Promise<string[]> {
  return (await violations(page)).filter((v) => v.impact === 'serious' || v.impact === 'critical').map((v) => v.text);
}

/**
 * A probability of the API (6 decimals) as the README says it is shown, worked out on integers: one
 * decimal of a percentage, half away from zero (0.6455 → "64.6%", 0.3405 → "34.1%"); null → "–".
 */
export function expectedPct(p: number | null, digits = 1): string {
  if (p === null) return '–';
  const millionths = Math.round(p * 1e6); // exact: the API publishes 6 decimals
  const unit = 10 ** (4 - digits); // millionths per last digit shown
  const units = Math.floor((millionths + unit / 2) / unit);
  return digits === 0 ? `${units}%` : `${Math.floor(units / 10 ** digits)}.${String(units % 10 ** digits).padStart(digits, '0')}%`;
}

/** A difference of probabilities in `unit` (pp, pts), a tenth of a point, sign and a true minus: "+3.2 pp", "−1.0 pp". */
export function expectedPoints(x: number | null, unit = 'pp'): string {
  if (x === null) return '–';
  const tenths = Math.floor((Math.abs(Math.round(x * 1e6)) + 500) / 1000);
  // no sign on a change that rounds to nothing ("0.0 pp": "+0.0 pp" read as a rise)
  return `${tenths === 0 ? '' : x < 0 ? '−' : '+'}${Math.floor(tenths / 10)}.${tenths % 10} ${unit}`;
}

/** A figure at `digits` decimals, half away from zero, with a true minus: expectedNum(-0.01772, 3) = "−0.018". */
export function expectedNum(x: number | null, digits = 3): string {
  if (x === null) return '–';
  const scaled = Math.floor(Math.abs(Math.round(x * 1e6)) / 10 ** (6 - digits) + 0.5);
  const s = `${Math.floor(scaled / 10 ** digits)}${digits ? `.${String(scaled % 10 ** digits).padStart(digits, '0')}` : ''}`;
  return x < 0 && scaled !== 0 ? `−${s}` : s;
}

/** One axis's tick labels in a chart: their text and where they are drawn, and the chart's box. */
export interface AxisTicks { axis: string; labels: { text: string; left: number; right: number; top: number; bottom: number }[]; svg: { left: number; right: number; top: number; bottom: number } }

/**
 * The tick labels of every axis of the charts (Plot's svg) under `selector`: Plot labels each
 * axis's group "x-axis tick label", "y-axis tick label"; a label of two lines ("12 AM" over "Mar
 * 6") reads as its lines joined by a space.
 */
export function axisTicks(page: Page, selector: string): Promise<AxisTicks[]> {
  return page.$$eval(`${selector} svg g[aria-label$="axis tick label"]`, (gs) => gs.map((g) => {
    const box = (r: DOMRect) => ({ left: r.left, right: r.right, top: r.top, bottom: r.bottom });
    return {
      axis: g.getAttribute('aria-label')!,
      labels: [...g.querySelectorAll('text')].map((t) => ({ text: t.querySelectorAll('tspan').length ? [...t.querySelectorAll('tspan')].map((s) => s.textContent).join(' ') : (t.textContent ?? ''), ...box(t.getBoundingClientRect()) })),
      svg: box(g.closest('svg')!.getBoundingClientRect()),
    };
  }));
}

/**
 * What is wrong with an axis's tick labels, as sentences (none: an empty list): fewer than
 * `least`, two of one text (0.1, 0.1 after rounding), two drawn over each other, or one drawn
 * outside its chart (cut at its edge, or over the content beside it).
 */
export function tickFaults(a: AxisTicks, least: number): string[] {
  const texts = a.labels.map((l) => l.text);
  const faults: string[] = [];
  if (texts.length < least) faults.push(`${a.axis}: ${texts.length} ticks (${texts.join(', ')}), fewer than ${least}`);
  if (new Set(texts).size < texts.length) faults.push(`${a.axis}: a label twice (${texts.join(', ')})`);
  a.labels.forEach((l, i) => {
    if (l.left < a.svg.left - 0.5 || l.right > a.svg.right + 0.5 || l.top < a.svg.top - 0.5 || l.bottom > a.svg.bottom + 0.5) faults.push(`${a.axis}: "${l.text}" outside the chart`);
    for (const m of a.labels.slice(i + 1)) {
      if (l.left < m.right && m.left < l.right && l.top < m.bottom && m.top < l.bottom) faults.push(`${a.axis}: "${l.text}" over "${m.text}"`);
    }
  });
  return faults;
}

/** Every attribute of the page whose value holds NaN or Infinity (a coordinate worked out of nothing), as `tag attr="value"`. */
export function nonFiniteAttributes(page: Page): Promise<string[]> {
  return page.$$eval('*', (es) => es.flatMap((e) => [...e.attributes].filter((a) => /NaN|Infinity/.test(a.value)).map((a) => `${e.tagName} ${a.name}="${a.value.slice(0, 60)}"`)));
}
