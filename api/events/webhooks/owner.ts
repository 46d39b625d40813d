/**
 * Whether a subscription's owning API key may (still) have webhooks: the key must exist, must not
 * be revoked and must be on the enterprise plan (DESIGN §7: webhooks are enterprise-only). One
 * rule for the three places that ask: `quorum webhooks create` and `enable` (refused), and the
 * dispatcher before every attempt (a key revoked or moved off enterprise after the subscription
 * was made gets nothing more: see dispatcher.ts).
 */
import type { KeyRecord } from '../../auth/keys.ts';
import { planAtLeast } from '../../auth/plans.ts';

/**
 * Why a key may not own a subscription. For a revoked or non-enterprise key `outcome` is also the
 * status its unattempted deliveries end with (GET /api/webhooks/{id}/deliveries); a missing key's
 * deliveries are held, not ended (dispatcher.ts).
 */
export type OwnerRefusal =
  | { outcome: 'key_unknown'; reason: string }
  | { outcome: 'key_revoked'; reason: string }
  | { outcome: 'plan_required'; reason: string };

/** Null when the key `keyId` (its record, or null if absent) may own webhooks; else why not. */
export function ownerRefusal(keyId: string, record: KeyRecord | null): OwnerRefusal | null {
  if (!record) return { outcome: 'key_unknown', reason: `API key ${keyId} does not exist` };
  if (record.revoked_at !== null) {
    return { outcome: 'key_revoked', reason: `API key ${keyId} was revoked at ${record.revoked_at}` };
  }
  if (!planAtLeast(record.plan, 'enterprise')) {
    return { outcome: 'plan_required', reason: `API key ${keyId} is on the ${record.plan} plan, not enterprise` };
  }
  return null;
}
