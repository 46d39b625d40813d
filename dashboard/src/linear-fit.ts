/**
 * When the disagreement scatter can draw its linear fit with a 95% band. The band's t interval has
 * n − 2 degrees of freedom, so through two points it is undefined, and points all at one x have no
 * slope: Plot then drew a path of NaN coordinates (outside test: a young deployment's two resolved
 * questions gave the browser console "<path> attribute d: Expected number, "M40,NaNL44,NaN…"", and
 * the caption promised a fit that was not there).
 */

/** The fewest points a fit and its 95% band are drawn through. */
export const FIT_MIN_POINTS = 3;

/** Whether points at these x values can take a linear fit and its band. */
export function canFitLine(xs: readonly number[]): boolean {
  return xs.length >= FIT_MIN_POINTS && new Set(xs).size >= 2;
}
