/**
 * Published precision (issue 9 §12): probabilities (and other unit-interval figures such as Brier
 * scores, edges and disagreement) go out rounded to 6 decimals, percentages to 2. The Parquet
 * snapshot keeps full precision; only JSON answers are rounded, at the moment a row is mapped.
 * Null stays null, so a missing figure is never published as 0.
 */

/**
 * Rounds half away from zero at `decimals` on the decimal value, after removing binary noise
 * (0.49999999999999994 → 0.5). The decimal point is moved in the number's decimal text, not by
 * multiplying by 10^decimals: the product brings binary noise back (QA: 1.005 × 100 is
 * 100.49999999999999, so 1.005 went out as 1, and a bias of 2.0865625 as 2.086562 rather than
 * 2.086563, unlike the dashboard, which rounds on the decimal value as the README says).
 */
export function roundTo(value: number, decimals: number): number {
  if (!Number.isFinite(value)) return value;
  // toPrecision(15) strips the floating-point tail, so 1.0049999999999999 → 1.005.
  const clean = Number(value.toPrecision(15));
  // Fast path (most values): far from a half, the product's noise cannot change the rounding, and
  // an integer divided by 10^decimals is the nearest double to the decimal result.
  const scale = 10 ** decimals;
  const scaledFast = Math.abs(clean) * scale;
  if (scaledFast < 1e9 && Math.abs(scaledFast - Math.floor(scaledFast) - 0.5) > 1e-6) {
    const fast = (Math.sign(clean) * Math.round(scaledFast)) / scale;
    return Object.is(fast, -0) ? 0 : fast;
  }
  // The shortest decimal text of `clean`, its exponent moved by `decimals`: parsed, a half
  // (…x.5, at most 15 significant digits) is exact, so Math.round sees it as one.
  const [mantissa, exponent] = clean.toExponential().split('e') as [string, string];
  const scaled = Number(`${mantissa}e${Number(exponent) + decimals}`);
  // and back, the same way (in exponent form: a whole number of 1e21 or more prints as one)
  const [m, e] = (Math.sign(scaled) * Math.round(Math.abs(scaled))).toExponential().split('e') as [string, string];
  const rounded = Number(`${m}e${Number(e) - decimals}`);
  return Object.is(rounded, -0) ? 0 : rounded;
}

/** A probability-scale figure (probability, Brier, log loss, edge, disagreement) to 6 decimals. */
export function roundProbability(value: number): number;
export function roundProbability(value: number | null): number | null;
export function roundProbability(value: number | null | undefined): number | null;
export function roundProbability(value: number | null | undefined): number | null {
  return value === null || value === undefined ? null : roundTo(value, 6);
}

/**
 * A figure in a unit of its own (a duration in days, a claim's value in its unit) to 6 decimals:
 * a day's millionth is under a tenth of a second.
 */
export const roundFine: typeof roundProbability = roundProbability;

/** A percentage (accuracy_pct, accuracy_score, shares given in percent) to 2 decimals. */
export function roundPercent(value: number): number;
export function roundPercent(value: number | null): number | null;
export function roundPercent(value: number | null | undefined): number | null;
export function roundPercent(value: number | null | undefined): number | null {
  return value === null || value === undefined ? null : roundTo(value, 2);
}
