/**
 * The dashboard's charts, drawn with Observable Plot. Each mark that a test counts carries a class
 * (className): q-bin (one dot per calibration bin), q-interval (one rule per interval), q-point.
 */
import * as Plot from '@observablehq/plot';

/**
 * Okabe–Ito: distinguishable under the common colour-vision deficiencies. Defined here, not in
 * ui.ts: the charts chunk imports nothing from app.js's modules, so app.js never waits on a shared
 * chunk behind the charts.
 */
export const PALETTE = ['#0072B2', '#E69F00', '#009E73', '#CC79A7', '#56B4E9', '#D55E00', '#000000', '#F0E442'];

/**
 * The part of Plot the pages draw their own charts with (they reach it through lazy-charts.ts).
 * Named members, not the namespace: re-exporting the namespace would keep all of Plot in the
 * bundle (+30 kB compressed), since nothing could be shaken off.
 */
export const PagePlot = { plot: Plot.plot, dot: Plot.dot, line: Plot.line, ruleX: Plot.ruleX, barX: Plot.barX };

const FONT = { fontSize: '12px' };

/**
 * The tooltips' numbers, rounded as format.ts rounds every figure of the pages (half away from
 * zero on the decimal value: 0.6455 → 64.6%). A copy, not an import: the charts chunk imports
 * nothing from app.js's modules (see PALETTE).
 */
function fixed(x: number, digits: number): string {
  const decimal = (v: number) => Number(v.toPrecision(12));
  const rounded = Math.round(decimal(Math.abs(decimal(x)) * 10 ** digits)) / 10 ** digits;
  return `${x < 0 && rounded !== 0 ? '-' : ''}${rounded.toFixed(digits)}`;
}
const pct = (p: number): string => `${fixed(Number(p.toPrecision(12)) * 100, 1)}%`;

/**
 * A chart made readable without a mouse: Plot labels each mark's <g> with aria-label (the mark's
 * name), and ARIA allows a label only on an element with a role (axe: aria-prohibited-attr), so
 * each such group becomes a role="group"; and every mark's tooltip (its <title>, shown on hover
 * only) is listed under the chart, word for word, in a disclosure a keyboard reaches ("Figures of
 * this chart", a <details> whose list takes focus to scroll): QA, the figures behind a chart's
 * marks were out of reach of a keyboard (and of a touch screen). The tooltips of the axes' own
 * labels (a name shortened to fit) are not marks: the tables beside the charts name them whole.
 * A chart with no tooltip is returned as it is; one with, inside a <div class="q-chart">.
 */
export function accessible(chart: Element): Element {
  for (const g of chart.querySelectorAll('g[aria-label]:not([role])')) g.setAttribute('role', 'group');
  const tips = [...chart.querySelectorAll('svg title')]
    .filter((t) => !/axis/.test(t.closest('g[aria-label]')?.getAttribute('aria-label') ?? ''))
    .map((t) => t.textContent ?? '')
    .filter((t) => t !== '');
  if (tips.length === 0) return chart;
  const doc = chart.ownerDocument;
  const el = <K extends keyof HTMLElementTagNameMap>(tag: K, attrs: Record<string, string>, ...children: (Node | string)[]): HTMLElementTagNameMap[K] => {
    const e = doc.createElement(tag);
    for (const [k, v] of Object.entries(attrs)) e.setAttribute(k, v);
    e.append(...children);
    return e;
  };
  const figures = el('details', { class: 'chart-data' },
    el('summary', {}, `Figures of this chart (${tips.length} ${tips.length === 1 ? 'mark' : 'marks'}), as its tooltips give them`),
    // focusable: a long list scrolls inside its box (CSS), and a keyboard scrolls what has focus
    el('ul', { tabindex: '0', 'aria-label': 'Figures of this chart' }, ...tips.map((t) => el('li', {}, t))));
  return el('div', { class: 'q-chart' }, chart, figures);
}

/**
 * The y axis of a chart whose rows are named (sources, theses, factor nodes, scenario worlds): a
 * name longer than the left margin is shortened with an ellipsis at its end, so it starts inside
 * the chart (QA: Plot draws a tick label whole, right-aligned to the axis, so a long one ran out of
 * the chart at its left edge and lost its start: a source's rank, a world's code, a thesis's first
 * words). The full name stays in the label's own tooltip and in the table beside the chart.
 */
export function labelAxis(marginLeft: number, tickFormat?: (key: string) => string, textOverflow: 'ellipsis' | 'ellipsis-middle' = 'ellipsis'): Plot.CompoundMark {
  const tickRoom = 9; // the tick (6 px) and its padding (3 px) between the label and the axis
  // Plot measures text with Helvetica's widths; the browser's sans-serif (DejaVu Sans on Debian) is
  // up to 15% wider, so the labels are given 85% of the room (in ems of the charts' 12 px font).
  // tickFormat: the rows are keyed by an id and the axis shows each id's name, so two rows whose
  // names are alike (or equal) stay two rows; 'ellipsis-middle' keeps the names' ends, where
  // statements that begin alike differ.
  return Plot.axisY({ label: null, textOverflow, lineWidth: ((marginLeft - tickRoom) * 0.85) / 12, ...(tickFormat ? { tickFormat } : {}) });
}

export interface BinRow {
  forecaster: string;
  /** null: a bin no forecast fell into. */
  mean_p: number | null;
  observed: number | null;
  wilson_lo?: number | null;
  wilson_hi?: number | null;
  n: number;
}

/** Reliability diagram: the diagonal, each forecaster's bins (dot + line) and their Wilson bands. */
export function reliability(rows: BinRow[], forecasters: string[], width: number): Element {
  const shown = rows.filter((r) => r.observed !== null && r.mean_p !== null && r.n > 0);
  const withBand = shown.filter((r) => r.wilson_lo !== null && r.wilson_lo !== undefined);
  return accessible(Plot.plot({
    width,
    height: Math.min(width, 420),
    style: FONT,
    x: { domain: [0, 1], label: 'forecast probability (bin mean)', grid: true },
    y: { domain: [0, 1], label: 'observed frequency', grid: true },
    color: { domain: forecasters, range: PALETTE, legend: true },
    marks: [
      Plot.line([[0, 0], [1, 1]], { stroke: '#6b7280', strokeDasharray: '4,3', className: 'q-diagonal' }),
      Plot.ruleX(withBand, { x: 'mean_p', y1: 'wilson_lo', y2: 'wilson_hi', stroke: 'forecaster', strokeOpacity: 0.45, className: 'q-interval' }),
      Plot.line(shown, { x: 'mean_p', y: 'observed', stroke: 'forecaster', z: 'forecaster', strokeWidth: 1.5 }),
      Plot.dot(shown, {
        x: 'mean_p', y: 'observed', fill: 'forecaster', r: 3.5, className: 'q-bin',
        title: (d: BinRow) => `${d.forecaster}: forecast ${pct(d.mean_p ?? 0)}, observed ${pct(d.observed ?? 0)} (n = ${d.n})`,
      }),
    ],
  }));
}

export interface IntervalRow {
  label: string;
  value: number;
  lo: number;
  hi: number;
  group?: string;
  /** The tooltip, when the default (label, group, value [lo, hi]) would not say what the value is. */
  title?: string;
}

/** Plot's right margin beside an x axis (its default). */
const MARGIN_RIGHT = 20;
/** The least room the x axis of an interval chart keeps beside its labels: three ticks MIN_TICK_SPACING apart. */
const MIN_PLOT_WIDTH = 150;
/** The least distance between two ticks of a linear axis (Plot's own default is one tick per 80 px), so a wide chart is not crowded. */
const MIN_TICK_SPACING = 50;

/**
 * The width of a tick label at 12 px: Plot measures none, so it is estimated from the browser's
 * sans-serif (DejaVu Sans on Debian: a digit 7.6 px, the point 3.8 px, the minus sign 10 px).
 */
const tickLabelWidth = (label: string): number => [...label].reduce((w, c) => w + (c === '.' ? 4 : c === '−' ? 10.5 : 8), 0);

/**
 * A linear axis over the values `values` drawn `px` long: the finest round step (1, 2 or 5 times
 * a power of ten) whose labels stand apart (each label's width and 8 px between neighbours, and
 * ticks at least MIN_TICK_SPACING apart), over
 * the domain that step rounds the values out to, so both ends carry a tick. Null without a finite
 * value, or when not even two ticks fit `px` (under MIN_TICK_SPACING, or under two labels' width
 * and their gap: whatever the values, as a step as coarse as needed is tried, `linearTicks([1], 60)`
 * is [0, 2]): Plot's own axis then. QA: Plot's default (one tick per 80 px) gave the leaderboard a
 * single tick at 375 px, where its axis has some 120 px beside the names.
 */
export function linearTicks(values: number[], px: number): { domain: [number, number]; ticks: number[]; format: (x: number) => string } | null {
  const finite = values.filter(Number.isFinite);
  if (finite.length === 0) return null;
  let [lo, hi] = [Math.min(...finite), Math.max(...finite)];
  // A zero range (one value, or all equal) is widened around it, not below zero when it is a
  // non-negative measure (a Brier, a disagreement): a negative tick would read as a value.
  if (hi - lo < 1e-12) {
    const pad = Math.max(Math.abs(lo) * 0.05, 1e-3);
    [lo, hi] = [lo >= 0 && lo - pad < 0 ? 0 : lo - pad, hi + pad];
  }
  const fit = (step: number) => {
    const decimals = Math.max(0, Math.ceil(-Math.log10(step) - 1e-9));
    const format = (x: number) => `${x < 0 ? '−' : ''}${Math.abs(x).toFixed(decimals)}`;
    const [first, last] = [Math.floor(lo / step + 1e-9), Math.ceil(hi / step - 1e-9)];
    const ticks = Array.from({ length: last - first + 1 }, (_, i) => Number(((first + i) * step).toFixed(decimals)));
    const apart = px / Math.max(1, last - first);
    // Two ticks at least: a step so large that the 1e-9 slack floors and ceils both ends to one
    // multiple made the domain a point ([0, 0]) that "fitted" any width, the values outside it.
    const fits = last > first && apart >= MIN_TICK_SPACING && ticks.every((t, i) => i === 0 || (tickLabelWidth(format(t)) + tickLabelWidth(format(ticks[i - 1]!))) / 2 + 8 <= apart);
    return { domain: [ticks[0]!, ticks[ticks.length - 1]!] as [number, number], ticks, format, fits };
  };
  let power = 10 ** Math.floor(Math.log10((hi - lo) / 20));
  for (let tries = 0; tries < 40; tries++, power *= 10) {
    for (const m of [1, 2, 5]) {
      const found = fit(m * power);
      if (found.fits) return { domain: found.domain, ticks: found.ticks, format: found.format };
    }
  }
  return null;
}

/** Plot's options for an axis of linearTicks (none when it is null: Plot's own axis). */
const axisOptions = (axis: ReturnType<typeof linearTicks>) => (axis ? { domain: axis.domain, ticks: axis.ticks, tickFormat: axis.format } : {});

/**
 * A linear x axis (linearTicks) of a chart `width` px wide with `marginLeft`, and the right margin
 * that holds half its last label, which stands centred on the axis's end (QA: "0.0026", a
 * leaderboard of small Briers, ran out of the chart past Plot's 20 px margin).
 */
function xAxisWithin(values: number[], width: number, marginLeft: number): { axis: ReturnType<typeof linearTicks>; marginRight: number } {
  const first = linearTicks(values, width - marginLeft - MARGIN_RIGHT);
  const marginRight = Math.max(MARGIN_RIGHT, first ? Math.ceil(tickLabelWidth(first.format(first.ticks[first.ticks.length - 1]!)) / 2) + 2 : 0);
  return { axis: marginRight === MARGIN_RIGHT ? first : linearTicks(values, width - marginLeft - marginRight), marginRight };
}

/** Horizontal interval bars: one rule from lo to hi per row and a dot at the value. */
export function intervals(rows: IntervalRow[], opts: { width: number; xLabel: string; zero?: boolean; groups?: string[] }): Element {
  const groups = opts.groups ?? [...new Set(rows.map((r) => r.group ?? ''))];
  // The labels' margin: room for the longest (8 px a character at 12 px: labelAxis gives a label
  // 85% of it, so a label that fitted the earlier 7 px a character still shows whole), up to 45% of
  // the chart or 200 px, the earlier cap, whichever is more, leaving the axis MIN_PLOT_WIDTH; a
  // longer label is shortened (labelAxis), so it starts inside the chart with its rank.
  const marginLeft = Math.min(Math.round(Math.max(200, opts.width * 0.45)), opts.width - MARGIN_RIGHT - MIN_PLOT_WIDTH,
    12 + 8 * Math.max(...rows.map((r) => r.label.length), 4));
  const { axis, marginRight } = xAxisWithin([...rows.flatMap((r) => [r.lo, r.hi, r.value]), ...(opts.zero ? [0] : [])], opts.width, marginLeft);
  return accessible(Plot.plot({
    width: opts.width,
    height: 48 + rows.length * 20,
    marginLeft,
    marginRight,
    style: FONT,
    x: { label: opts.xLabel, grid: true, ...axisOptions(axis) },
    y: { label: null, domain: [...new Set(rows.map((r) => r.label))] },
    color: { domain: groups, range: PALETTE, legend: groups.length > 1 },
    marks: [
      labelAxis(marginLeft),
      opts.zero ? Plot.ruleX([0], { stroke: '#6b7280' }) : null,
      Plot.ruleY(rows, { y: 'label', x1: 'lo', x2: 'hi', stroke: (d: IntervalRow) => d.group ?? '', strokeWidth: 3, strokeOpacity: 0.6, className: 'q-interval' }),
      Plot.dot(rows, {
        y: 'label', x: 'value', fill: (d: IntervalRow) => d.group ?? '', r: 4, className: 'q-point',
        title: (d: IntervalRow) => d.title ?? `${d.label}${d.group ? ` (${d.group})` : ''}: ${fixed(d.value, 4)} [${fixed(d.lo, 4)}, ${fixed(d.hi, 4)}]`,
      }),
    ],
  }));
}

export interface ScatterRow {
  x: number;
  y: number;
  label: string;
}

/**
 * Disagreement (x) against error (y), one dot per resolved question, with a linear trend and its
 * 95% band when `fit` (the page decides: linear-fit.ts, which this chunk does not import; see PALETTE).
 */
export function scatter(rows: ScatterRow[], opts: { width: number; xLabel: string; yLabel: string; fit: boolean }): Element {
  // Round ticks from zero (both measures are non-negative), as many as fit, on both axes, and a left
  // margin as wide as the widest y label (QA: one question, or all of one value, gave each axis a
  // single tick at the value itself, "0.000189", cut at the chart's left edge by Plot's 40 px margin).
  const height = 300;
  const y = linearTicks([0, ...rows.map((r) => r.y)], height - 50); // Plot's top and bottom margins: 20 and 30
  const marginLeft = Math.max(40, 12 + Math.max(...(y ? y.ticks.map((t) => tickLabelWidth(y.format(t))) : [0])));
  const { axis: x, marginRight } = xAxisWithin([0, ...rows.map((r) => r.x)], opts.width, marginLeft);
  return accessible(Plot.plot({
    width: opts.width,
    height,
    marginLeft,
    marginRight,
    style: FONT,
    x: { label: opts.xLabel, grid: true, ...axisOptions(x) },
    y: { label: opts.yLabel, grid: true, ...axisOptions(y) },
    marks: [
      // the tooltip gives the dot's figures beside its question (QA: the title alone)
      Plot.dot(rows, { x: 'x', y: 'y', r: 2.5, fill: PALETTE[0], fillOpacity: 0.55, className: 'q-point', title: (d: ScatterRow) => `${d.label}: ${opts.xLabel} ${fixed(d.x, 3)}, ${opts.yLabel} ${fixed(d.y, 3)}` }),
      opts.fit ? Plot.linearRegressionY(rows, { x: 'x', y: 'y', stroke: PALETTE[5], ci: 0.95, clip: true }) : null,
    ],
  }));
}

export interface SeriesRow {
  t: Date;
  p: number;
  series: string;
}

/** A time to the minute in UTC, as the pages write one: "2026-03-06 00:00". */
const minuteUtc = (t: Date): string => t.toISOString().slice(0, 16).replace('T', ' ');

/** Probabilities over time: one line and dots per series. */
export function timeline(rows: SeriesRow[], series: string[], width: number): Element {
  // Every point at one time (one run so far): that time is the axis's one tick, written whole
  // (QA: Plot's own tick read "6 Mar", with no year, at a domain of no width).
  const times = [...new Set(rows.map((r) => r.t.getTime()))];
  const oneTime = times.length === 1 ? { domain: [new Date(times[0]! - 43_200_000), new Date(times[0]! + 43_200_000)], ticks: [new Date(times[0]!)], tickFormat: minuteUtc } : {};
  return accessible(Plot.plot({
    width,
    height: 280,
    marginLeft: 48, // room for the widest tick label, "100%" (40, Plot's default, cut its "1")
    // The axis says its times are UTC, as every date of the pages does (QA: runs within a day were
    // ticked "12 AM, 6 AM, 12 PM" with no zone); the bottom margin holds the ticks' two lines
    // ("12 AM" over "Mar 6") and the label under them.
    marginBottom: 46,
    style: FONT,
    x: { type: 'utc', label: 'time (UTC)', labelAnchor: 'right', grid: true, ...oneTime },
    y: { domain: [0, 1], label: 'probability', grid: true, tickFormat: '%' },
    color: { domain: series, range: PALETTE, legend: true },
    marks: [
      Plot.line(rows, { x: 't', y: 'p', stroke: 'series', z: 'series' }),
      Plot.dot(rows, { x: 't', y: 'p', fill: 'series', r: 3.5, className: 'q-point', title: (d: SeriesRow) => `${d.series}: ${pct(d.p)} at ${minuteUtc(d.t)} UTC` }),
    ],
  }));
}

/** A simple calibration curve of one source (no Wilson bands in its API). */
export function calibration(rows: { mean_probability: number; observed: number; n: number }[], width: number): Element {
  return accessible(Plot.plot({
    width,
    height: Math.min(width, 320),
    style: FONT,
    x: { domain: [0, 1], label: 'stated probability (bin mean)', grid: true },
    y: { domain: [0, 1], label: 'observed frequency', grid: true },
    marks: [
      Plot.line([[0, 0], [1, 1]], { stroke: '#6b7280', strokeDasharray: '4,3' }),
      Plot.line(rows, { x: 'mean_probability', y: 'observed', stroke: PALETTE[0] }),
      Plot.dot(rows, { x: 'mean_probability', y: 'observed', r: (d: { n: number }) => 2 + Math.sqrt(d.n), fill: PALETTE[0], className: 'q-bin', title: (d: { mean_probability: number; observed: number; n: number }) => `stated ${pct(d.mean_probability)}, observed ${pct(d.observed)} (n = ${d.n})` }),
    ],
  }));
}
