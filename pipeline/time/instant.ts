/**
 * The one grammar of instants the pipeline reads (question files, ForecastBench extracts, the CLI's
 * `--as-of`): `YYYY-MM-DD` (UTC midnight) or an ISO-8601 date-time (`T` or space; seconds and a
 * fraction optional; offset `Z` or `±HH[:]MM`, none = UTC). A date that does not exist
 * (2026-02-30) is rejected, not rolled over into the next month as `new Date()` would, and so is
 * a year before 1970 (the API's lower bound: Date.UTC would also have read years 0-99 as
 * 1900-1999, turning a typo such as 0025-10-16 into a real-looking 1925), written or once in UTC,
 * and an offset beyond ±18:00.
 */

const INSTANT_RE =
  /^(\d{4})-(\d{2})-(\d{2})(?:[T ](\d{2}):(\d{2})(?::(\d{2})(?:\.(\d{1,9}))?)?(Z|[+-]\d{2}:?\d{2})?)?$/;

/** The instant `text` names; null when malformed or not a real calendar date/time. */
export function parseInstant(text: string): Date | null {
  const m = INSTANT_RE.exec(text.trim());
  if (!m) return null;
  const [, y, mo, d, h = '0', mi = '0', s = '0', frac = '', tz = 'Z'] = m;
  const [year, month, day, hour, minute, second] = [y, mo, d, h, mi, s].map(Number) as [number, number, number, number, number, number];
  if (year < 1970 || month < 1 || month > 12 || day < 1 || hour > 23 || minute > 59 || second > 59) return null;
  const ms = Date.UTC(year, month - 1, day, hour, minute, second, Number(frac.padEnd(3, '0').slice(0, 3)));
  const check = new Date(ms);
  if (check.getUTCDate() !== day || check.getUTCMonth() !== month - 1) return null; // e.g. 2025-02-30
  let offsetMin = 0;
  if (tz !== 'Z') {
    const t = tz.replace(':', '');
    const oh = Number(t.slice(1, 3));
    const om = Number(t.slice(3, 5));
    // (±18:00 at most, as the API's grammar and ISO 8601 / RFC 3339 practice)
    if (oh > 18 || om > 59 || oh * 60 + om > 18 * 60) return null;
    offsetMin = (t[0] === '-' ? -1 : 1) * (oh * 60 + om);
  }
  const instant = ms - offsetMin * 60_000;
  // from 1970 once in UTC too: 1970-01-01T00:00:00+01:00 is 1969 (QA: a run dated 1969 was published)
  return instant < 0 ? null : new Date(instant);
}
