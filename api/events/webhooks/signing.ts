/**
 * Standard Webhooks signing (https://www.standardwebhooks.com): `webhook-signature` is
 * `v1,<base64 HMAC-SHA256 of "<webhook-id>.<webhook-timestamp>.<body>">`, keyed with the base64
 * part of a `whsec_` secret; several signatures (a rotation) are separated by spaces.
 */
import { createHmac, randomBytes } from 'node:crypto';

const PREFIX = 'whsec_';

/** A new secret: `whsec_` + 32 random bytes in base64. */
export function newSecret(): string {
  return PREFIX + randomBytes(32).toString('base64');
}

/** One `v1,` signature of (id, timestamp in seconds, body) with `secret`. */
export function sign(secret: string, msgId: string, timestampS: number, body: string): string {
  if (!secret.startsWith(PREFIX)) throw new Error('a webhook secret starts with whsec_');
  const key = Buffer.from(secret.slice(PREFIX.length), 'base64');
  return `v1,${createHmac('sha256', key).update(`${msgId}.${timestampS}.${body}`).digest('base64')}`;
}

/** The `webhook-signature` value: one `v1,` signature per secret, space-separated. */
export function signatureHeader(secrets: readonly string[], msgId: string, timestampS: number, body: string): string {
  return secrets.length === 1 ? sign(secrets[0]!, msgId, timestampS, body) : secrets.map((s) => sign(s, msgId, timestampS, body)).join(' ');
}

/** The three Standard Webhooks headers, signed with every secret given (space-separated). */
export function webhookHeaders(secrets: readonly string[], msgId: string, timestampS: number, body: string): Record<string, string> {
  return {
    'webhook-id': msgId,
    'webhook-timestamp': String(timestampS),
    'webhook-signature': signatureHeader(secrets, msgId, timestampS, body),
  };
}
