/**
 * THE key redaction: anything with the shape of an API key (api/auth/keys.ts: `qrm_` + 32 base62
 * characters) is replaced wherever the API writes text it did not author: every log line (a pino
 * streamWrite hook, api/logging/logger.ts), the request log's path and query (request-log.ts) and
 * every problem body (api/errors/problem.ts `toProblem`). A caller who pastes a key into a path, a
 * query string, a cursor or an odd header must not find it echoed or logged.
 *
 * Three spellings are recognized, because each reaches us through a different door:
 * - literal: `qrm_AbC…` (also inside a longer token), and a key cut short (a detail that quotes a
 *   value cut at 64 characters may end inside one): the prefix and at least 8 base62 characters,
 *   the whole run replaced;
 * - percent-encoded, any character of it (`q%72m_%41bC…`), as it sits in a raw path or query;
 * - inside base64 / base64url (a cursor or token carrying the key in JSON): a run of at least 48
 *   base64 characters (the encoding of 36 bytes) whose decoding, at any alignment, holds a key is
 *   replaced whole.
 */
import { KEY_PREFIX, KEY_RANDOM_LENGTH } from '../auth/keys.ts';

export const REDACTED_KEY = `${KEY_PREFIX}[redacted]`;
export const REDACTED_TOKEN = '[redacted]';

/** One character of the key's random part, literal or percent-encoded (hex digits in any case). */
const BASE62_CHAR = '(?:[0-9A-Za-z]|%3[0-9]|%4[1-9A-Fa-f]|%5[0-9Aa]|%6[1-9A-Fa-f]|%7[0-9Aa])';
const PREFIX = [...KEY_PREFIX]
  .map((c) => `(?:${c}|%${c.charCodeAt(0).toString(16).replace(/[a-f]/g, (h) => `[${h}${h.toUpperCase()}]`)})`)
  .join('');
/** Shortest tail after the prefix that counts as (part of) a key: nothing legitimate looks like this. */
const MIN_KEY_TAIL = 8;
const KEY_ANYHOW = new RegExp(`${PREFIX}${BASE62_CHAR}{${MIN_KEY_TAIL},}`, 'g');
/** The key as it is, in decoded text. */
const KEY_LITERAL = new RegExp(`${KEY_PREFIX}[0-9A-Za-z]{${KEY_RANDOM_LENGTH}}`);
const MIN_B64 = 4 * Math.ceil((KEY_PREFIX.length + KEY_RANDOM_LENGTH) / 3);

/** Character codes of the base64 and base64url alphabets (both, since either may carry a key). */
const B64_CHAR = new Uint8Array(128);
for (const c of 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/-_') B64_CHAR[c.charCodeAt(0)] = 1;

/** True when the base64/base64url run decodes, at some alignment, to text holding a key. */
function base64HoldsKey(run: string): boolean {
  for (let shift = 0; shift < 4; shift++) {
    const decoded = Buffer.from(run.slice(shift), 'base64').toString('latin1');
    if (KEY_LITERAL.test(decoded)) return true;
  }
  return false;
}

/** `text` with every run of ≥ MIN_B64 base64 characters that decodes to a key replaced (one linear scan). */
function redactBase64Runs(text: string): string {
  let out: string | null = null;
  let copied = 0;
  let start = -1;
  for (let i = 0; i <= text.length; i++) {
    const c = i < text.length ? text.charCodeAt(i) : 0;
    if (c < 128 && B64_CHAR[c] === 1) {
      if (start === -1) start = i;
      continue;
    }
    if (start !== -1 && i - start >= MIN_B64) {
      let end = i;
      while (end < text.length && end - i < 2 && text.charCodeAt(end) === 61) end++; // '=' padding
      if (base64HoldsKey(text.slice(start, end))) {
        out = (out ?? '') + text.slice(copied, start) + REDACTED_TOKEN;
        copied = end;
      }
    }
    start = -1;
  }
  return out === null ? text : out + text.slice(copied);
}

/** `text` with every key-shaped part replaced (see the module comment). */
export function redactKeys(text: string): string {
  // Most text holds neither the prefix nor a percent sign: skip the pattern then.
  let out = text.includes(KEY_PREFIX) || text.includes('%') ? text.replace(KEY_ANYHOW, REDACTED_KEY) : text;
  if (out.length >= MIN_B64) out = redactBase64Runs(out);
  return out;
}

/** A copy of `value` with redactKeys applied to every string in it (plain objects and arrays). */
export function redactDeep<T>(value: T): T {
  if (typeof value === 'string') return redactKeys(value) as T;
  if (Array.isArray(value)) return value.map((v) => redactDeep(v)) as T;
  if (value !== null && typeof value === 'object' && Object.getPrototypeOf(value) === Object.prototype) {
    const out: Record<string, unknown> = {};
    for (const [k, v] of Object.entries(value)) out[redactKeys(k)] = redactDeep(v);
    return out as T;
  }
  return value;
}
