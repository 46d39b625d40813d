/**
 * Number formats, free of the DOM (the tests import this module in Node). One rounding rule for
 * every figure shown: half away from zero on the decimal value, so 0.6455 shows 64.6% like 0.3405
 * shows 34.1%. Number.prototype.toFixed rounds the binary double instead (0.6455 is stored as
 * 0.64549999…, so toFixed gave 64.5% but 34.1% for 0.3405).
 */

/** The value as the decimal it stands for: binary noise past 12 significant digits dropped. */
const decimal = (x: number): number => Number(x.toPrecision(12));

/** `x` to `digits` decimals, half away from zero on its decimal value: fixed(0.1245, 3) = "0.125". */
export function fixed(x: number, digits: number): string {
  if (!Number.isFinite(x)) return String(x);
  const scaled = decimal(Math.abs(decimal(x)) * 10 ** digits);
  const rounded = Math.round(scaled) / 10 ** digits;
  // No "-0.0": a value that rounds to zero is shown without a sign.
  return `${x < 0 && rounded !== 0 ? '-' : ''}${rounded.toFixed(digits)}`;
}

/** A probability as a percentage: pct(0.6455) = "64.6%". */
export const pct = (p: number | null | undefined, digits = 1): string =>
  p === null || p === undefined ? '–' : `${fixed(decimal(p) * 100, digits)}%`;
/** A figure already in percent (accuracy_pct, accuracy_score): percent(85.71) = "85.7%". */
export const percent = (x: number | null | undefined, digits = 1): string =>
  x === null || x === undefined ? '–' : `${fixed(x, digits)}%`;
export const num = (x: number | null | undefined, digits = 3): string =>
  x === null || x === undefined ? '–' : fixed(x, digits);
/** An interval, its bounds with a true minus as every signed figure shown: interval([-0.0066, 0.0073], 4) = "[−0.0066, 0.0073]". */
export const interval = (ci: [number, number] | null | undefined, digits = 3): string =>
  ci ? `[${minus(fixed(ci[0], digits))}, ${minus(fixed(ci[1], digits))}]` : '';

/**
 * A signed difference of probabilities in `unit` (percentage points), with a true minus: "+3.2 pp",
 * "−1.0 pp", "0.0 pp" for one that rounds to nothing (no sign: QA, "+0.0 pp" read as a rise), "–".
 */
export function signedPoints(x: number | null | undefined, unit: 'pp' | 'pts' = 'pp'): string {
  return x === null || x === undefined ? '–' : `${signed(fixed(decimal(x) * 100, 1))} ${unit}`;
}

/** A signed figure already formatted (`num(x, 4)`): "+0.0123", "−0.0066", "0.0000" (no sign on a zero). */
export function signed(s: string): string {
  return s.startsWith('-') || /^[0.]+$/.test(s) || s === '–' ? minus(s) : `+${s}`;
}

/** A count with its noun, singular for one: counted(1, 'question') = "1 question", counted(2, 'question') = "2 questions". */
export const counted = (n: number, noun: string, plural = `${noun}s`): string => `${n} ${n === 1 ? noun : plural}`;

/** A figure with a true minus when negative (a bias, an error, a margin): minus(num(-10)) = "−10.000". */
export const minus = (s: string): string => (s.startsWith('-') ? `−${s.slice(1)}` : s);

/**
 * How each unit a claim names is read: the sign before everything, then `before`, the figure (its
 * thousands grouped where `grouped`), then `after`; `name` is the unit in words, for a table's unit
 * column and a sentence ("in billions of US dollars"). One table for every figure in a unit
 * (QA: the stored names were shown as they are stored: "1100 usd_bn", "−12 points"). A unit not
 * in it is shown by its own name, after the figure.
 */
interface UnitDisplay { before: string; after: string; name: string; grouped: boolean; /** `after` for a figure of exactly 1 */ one?: string }
const UNITS: Readonly<Record<string, UnitDisplay>> = {
  // a poll's margin (fte-polls): candidate 1 − candidate 2
  points: { before: '', after: ' points', one: ' point', name: 'points', grouped: false },
  pp: { before: '', after: ' pp', name: 'percentage points (pp)', grouped: false },
  percentage_points: { before: '', after: ' pp', name: 'percentage points (pp)', grouped: false },
  // the CBO's projections
  usd_bn: { before: '$', after: ' bn', name: 'billions of US dollars ($ bn)', grouped: true },
  usd: { before: '$', after: '', name: 'US dollars ($)', grouped: true },
  pct: { before: '', after: '%', name: 'percent (%)', grouped: false },
  pct_gdp: { before: '', after: '% of GDP', name: 'percent of GDP', grouped: false },
};

/** A unit in words, for a table's unit column or a sentence: unitName('usd_bn') = "billions of US dollars ($ bn)"; an unknown unit, as stored. */
export function unitName(unit: string): string {
  return Object.hasOwn(UNITS, unit) ? UNITS[unit]!.name : unit;
}

/**
 * A figure already formatted (`num(x)`, with "-" or a true minus) in `unit`, with a true minus
 * before the unit's sign: inUnit("-69.653", 'usd_bn') = "−$69.653 bn", inUnit("12", 'points') =
 * "12 points", inUnit("3", 'widgets') = "3 widgets"; no unit, the figure alone.
 */
export function inUnit(figure: string, unit: string | null | undefined): string {
  const negative = figure.startsWith('-') || figure.startsWith('−');
  const abs = negative ? figure.slice(1) : figure;
  const sign = negative ? '−' : '';
  if (!unit) return `${sign}${abs}`;
  const u = Object.hasOwn(UNITS, unit) ? UNITS[unit]! : null;
  if (!u) return `${sign}${abs} ${unit}`;
  return `${sign}${u.before}${u.grouped ? grouped(abs) : abs}${abs === '1' && u.one ? u.one : u.after}`;
}

/** Digits of an unsigned decimal grouped by thousands: grouped("1100.5") = "1,100.5". */
function grouped(abs: string): string {
  const [whole, frac] = abs.split('.');
  if (!/^\d+$/.test(whole ?? '')) return abs;
  return `${whole!.replace(/\B(?=(\d{3})+(?!\d))/g, ',')}${frac === undefined ? '' : `.${frac}`}`;
}

/**
 * A claimed or realized quantity as its decimal, at most `digits` decimals and no trailing zeros,
 * with a true minus and its unit as read (UNITS): quantity(-3.5, 'points') = "−3.5 points",
 * quantity(1100, 'usd_bn') = "$1,100 bn" (a poll's margin or a CBO projection, where "1100.000"
 * would claim precision the source never gave).
 */
export function quantity(x: number | null | undefined, unit: string | null | undefined, digits = 3): string {
  if (x === null || x === undefined) return '–';
  const s = fixed(x, digits).replace(/(\.\d*?)0+$/, '$1').replace(/\.$/, '');
  return inUnit(s, unit);
}
