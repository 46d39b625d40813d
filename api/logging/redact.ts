/**
 * THE key redaction: anything with the shape of an API key (api/auth/keys.ts: `qrm_` + 32 base62
 * characters) is replaced wherever the API writes text it did not author: every log line (a pino
 * streamWrite hook, api/logging/logger.ts), the request log's path and query (request-log.ts) and
 * every problem body (api/errors/problem.ts `toProblem`). A caller who pastes a key into a path, a
 * query string, a cursor or an odd header must not find it echoed or logged.
 *
 * Three spellings are recognized, because each reaches us through a different door:
 * - literal: `qrm_AbC…` (also inside a longer token: the key part is replaced);
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
const KEY_ANYHOW = new RegExp(`${PREFIX}${BASE62_CHAR}{${KEY_RANDOM_LENGTH}}`, 'g');
/** The key as it is, in decoded text. */
const KEY_LITERAL = new RegExp(`${KEY_PREFIX}[0-9A-Za-z]{${KEY_RANDOM_LENGTH}}`);
const MIN_B64 = 4 * Math.ceil((KEY_PREFIX.length + KEY_RANDOM_LENGTH) / 3);
const BASE64_RUN = new RegExp(`[A-Za-z0-9+/_-]{${MIN_B64},}={0,2}`, 'g');

/** True when the base64/base64url run decodes, at some alignment, to text holding a key. */
function base64HoldsKey(run: string): boolean {
  for (let shift = 0; shift < 4; shift++) {
    const decoded = Buffer.from(run.slice(shift), 'base64').toString('latin1');
    if (KEY_LITERAL.test(decoded)) return true;
  }
  return false;
}

/** `text` with every key-shaped part replaced (see the module comment). */
export function redactKeys(text: string): string {
  let out = text.replace(KEY_ANYHOW, REDACTED_KEY);
  if (out.length >= MIN_B64) out = out.replace(BASE64_RUN, (run) => (base64HoldsKey(run) ? REDACTED_TOKEN : run));
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
