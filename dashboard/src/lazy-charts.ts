/**
 * The charts (Observable Plot and d3, most of the dashboard's JavaScript) load as their own chunk:
 * a page asks for it while its API calls are in flight, and the shell preloads it
 * (<link rel="modulepreload">), so neither waits on the other. Only types are imported statically
 * from charts.ts; a static value import would pull Plot back into the first chunk.
 */
import { h } from './ui.ts';

export type Charts = typeof import('./charts.ts');

let loading: Promise<Charts> | null = null;

/**
 * Stands in for the charts module when it could not be fetched: each chart is a notice saying so,
 * and everything else of the page (its heading, tables, figures in text) is drawn, as a failed API
 * request costs only its panel (QA: the page failed whole, with no heading, "Failed to fetch
 * dynamically imported module").
 */
function unavailable(err: unknown): Charts {
  const notice = (): HTMLElement => h('p', { class: 'notice error', 'data-state': 'error', role: 'alert' },
    `Could not load the chart: its script could not be fetched (${(err as Error)?.message ?? String(err)}). Reload the page to try again.`);
  const mark = (): null => null;
  const stub = {
    PALETTE: [],
    PagePlot: { plot: notice, dot: mark, line: mark, ruleX: mark, barX: mark },
    accessible: (chart: Element): Element => chart,
    labelAxis: mark,
    reliability: notice,
    intervals: notice,
    scatter: notice,
    timeline: notice,
    calibration: notice,
  };
  return stub as unknown as Charts;
}

/**
 * The charts module, fetched and evaluated once. A failed fetch is not kept: the page that asked
 * draws a notice in each chart's place, and the next page asks again instead of inheriting the
 * failure until a reload.
 */
export function loadCharts(): Promise<Charts> {
  return (loading ??= import('./charts.ts').catch((err: unknown) => {
    loading = null;
    return unavailable(err);
  }));
}
