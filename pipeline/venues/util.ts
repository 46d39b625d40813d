/** Small parsing helpers shared by the venue adapters (pure, table-free). */
import { z } from 'zod';

const ISO_ZONED = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(?::\d{2}(?:\.\d+)?)?(?:Z|[+-]\d{2}:\d{2})$/;

/** Two ASCII digits at `i` as a number. */
const twoDigits = (s: string, i: number) => (s.charCodeAt(i) - 48) * 10 + (s.charCodeAt(i + 1) - 48);

/**
 * Epoch ms of an ISO_ZONED string ending in Z whose fields are all in range (year ≥ 1000, hour
 * < 24, …), read digit by digit: what `new Date(s)` gives, at a fraction of its cost (venues send
 * thousands of these per sync). Anything else → undefined, left to the date parser. Days past a
 * month's end roll over like V8's parser does (Feb 30 → Mar 2); extra fraction digits are
 * truncated to milliseconds like V8's.
 */
function isoUtcMs(s: string): number | undefined {
  if (s.charCodeAt(s.length - 1) !== 90 /* Z */) return undefined;
  const year = twoDigits(s, 0) * 100 + twoDigits(s, 2);
  const [month, day, hour, minute] = [twoDigits(s, 5), twoDigits(s, 8), twoDigits(s, 11), twoDigits(s, 14)];
  let second = 0;
  let ms = 0;
  if (s.length > 17) {
    second = twoDigits(s, 17);
    if (s.length > 20) {
      // ".f" … ".fffffffff": the first three digits, right-padded.
      const digits = s.slice(20, Math.min(23, s.length - 1));
      ms = Number(digits.padEnd(3, '0'));
    }
  }
  if (year < 1000 || month < 1 || month > 12 || day < 1 || day > 31 || hour > 23 || minute > 59 || second > 59) return undefined;
  return Date.UTC(year, month - 1, day, hour, minute, second, ms);
}

/** A timestamp from an ISO string, a "YYYY-MM-DD HH:MM:SS+00" string or epoch ms; null if unreadable. */
export function toDate(value: unknown): Date | null {
  if (value === null || value === undefined || value === '') return null;
  if (typeof value === 'number') {
    const d = new Date(value);
    return Number.isNaN(d.getTime()) ? null : d;
  }
  if (typeof value !== 'string') return null;
  let s = value.trim();
  // The common case, an ISO timestamp with its zone, goes straight to Date (the rewrites below
  // would leave it unchanged); in UTC it is read without the date parser.
  if (ISO_ZONED.test(s)) {
    const d = new Date(isoUtcMs(s) ?? s);
    return Number.isNaN(d.getTime()) ? null : d;
  }
  // Postgres-style "2024-11-06 14:32:10.123+00" (Polymarket closedTime) → ISO.
  const pg = /^(\d{4}-\d{2}-\d{2})[ T](\d{2}:\d{2}(?::\d{2}(?:\.\d+)?)?)([+-]\d{2})(?::?(\d{2}))?$/.exec(s);
  if (pg) s = `${pg[1]}T${pg[2]}${pg[3]}:${pg[4] ?? '00'}`;
  else if (/^\d{4}-\d{2}-\d{2}$/.test(s)) s = `${s}T00:00:00Z`;
  else if (/^\d{4}-\d{2}-\d{2}[ T]\d{2}:\d{2}(:\d{2}(\.\d+)?)?$/.test(s)) s = `${s.replace(' ', 'T')}Z`;
  const d = new Date(s);
  return Number.isNaN(d.getTime()) ? null : d;
}

/**
 * A venue's close time from its fields, the first present one read (absent, null or blank:
 * the next; none: no close, `close` null). `unreadable` when that field is present but not a time
 * `toDate` reads ("TBD", a bare "1735689600"): such a close is not "no close" (QA: it became null,
 * and the question was forecast until it resolved). The core skips a new market so, and keeps a
 * tracked one's stored close.
 */
export function readClose(...values: unknown[]): { close: Date | null; unreadable: boolean } {
  for (const v of values) {
    if (v === null || v === undefined || (typeof v === 'string' && v.trim() === '')) continue;
    const close = toDate(v);
    return { close, unreadable: close === null };
  }
  return { close: null, unreadable: false };
}

/** A finite number from a number or numeric string; null otherwise. */
export function toNumber(value: unknown): number | null {
  if (typeof value === 'number') return Number.isFinite(value) ? value : null;
  if (typeof value === 'string' && value.trim() !== '') {
    const n = Number(value);
    return Number.isFinite(n) ? n : null;
  }
  return null;
}

const DECIMAL = /^[+-]?\d+(?:\.\d+)?$/;

/**
 * A venue's fixed-point decimal string ("896792.27", "0.6400") as the nearest double, or null when
 * absent or not a plain decimal (no exponent, hex, blank or "Infinity": Number() would accept
 * those). ECMAScript's string-to-number conversion is correctly rounded, so the value is exactly
 * what a DOUBLE column can hold of the decimal; no arithmetic happens on the way.
 */
export function fixedPoint(value: unknown): number | null {
  if (typeof value === 'number') return Number.isFinite(value) ? value : null;
  if (typeof value !== 'string') return null;
  const s = value.trim();
  return DECIMAL.test(s) ? Number(s) : null;
}

/** A probability in [0, 1], or null. */
export function toProbability(value: unknown): number | null {
  const n = toNumber(value);
  return n !== null && n >= 0 && n <= 1 ? n : null;
}

export function blankToNull(s: string | null | undefined): string | null {
  if (s === null || s === undefined) return null;
  const t = s.trim();
  return t === '' ? null : t;
}

/** zod: a number or numeric string (venues send both), as a number. */
export const zNum = z.union([z.number(), z.string()]).transform((v, ctx) => {
  const n = toNumber(v);
  if (n === null) {
    ctx.addIssue({ code: 'custom', message: `not a number: ${JSON.stringify(v)}` });
    return z.NEVER;
  }
  return n;
});

/** Shortens a text for an evidence excerpt or log line. */
export function clip(s: string, max = 300): string {
  return s.length <= max ? s : `${s.slice(0, max - 1)}…`;
}

/** The first zod issue as "path: message". */
export function firstIssue(error: z.ZodError): string {
  const issue = error.issues[0];
  if (!issue) return 'invalid';
  return `${issue.path.join('.') || '(root)'}: ${issue.message}`;
}

/** Rounds float noise away (0.1 + 0.2 style) from prices computed from cents or mids. */
export function round6(n: number): number {
  return Math.round(n * 1e6) / 1e6;
}
