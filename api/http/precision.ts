/**
 * Published precision (issue 9 §12): probabilities (and other unit-interval figures such as Brier
 * scores, edges and disagreement) go out rounded to 6 decimals, percentages to 2. The Parquet
 * snapshot keeps full precision; only JSON answers are rounded, at the moment a row is mapped.
 * Null stays null, so a missing figure is never published as 0.
 */

/** Rounds half away from zero at `decimals`, after removing binary noise (0.49999999999999994 → 0.5). */
function roundTo(value: number, decimals: number): number {
  if (!Number.isFinite(value)) return value;
  const scale = 10 ** decimals;
  // toPrecision(15) strips the floating-point tail before scaling, so 1.0049999999999999 → 1.005.
  const clean = Number(value.toPrecision(15));
  const rounded = Math.sign(clean) * Math.round(Math.abs(clean) * scale) / scale;
  return Object.is(rounded, -0) ? 0 : rounded;
}

/** A probability-scale figure (probability, Brier, log loss, edge, disagreement) to 6 decimals. */
export function roundProbability(value: number): number;
export function roundProbability(value: number | null): number | null;
export function roundProbability(value: number | null | undefined): number | null;
export function roundProbability(value: number | null | undefined): number | null {
  return value === null || value === undefined ? null : roundTo(value, 6);
}

/** A percentage (accuracy_pct, accuracy_score, shares given in percent) to 2 decimals. */
export function roundPercent(value: number): number;
export function roundPercent(value: number | null): number | null;
export function roundPercent(value: number | null | undefined): number | null;
export function roundPercent(value: number | null | undefined): number | null {
  return value === null || value === undefined ? null : roundTo(value, 2);
}
