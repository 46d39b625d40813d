/**
 * Webhook subscriptions, kept in `<data dir>/state/webhooks.json` (replaced atomically: write,
 * fsync, rename). The server and the `quorum webhooks` CLI share the file; the server rereads it
 * when its inode, size or time changes, and whole, under its lock, before every change it makes.
 * Secrets are stored (they sign every delivery) but shown
 * only when created or rotated.
 */
import { mkdirSync, readFileSync } from 'node:fs';
import { writeFileAtomicSync } from '../../../pipeline/fs/durable.ts';
import { fileStamp } from '../../../pipeline/fs/file-stamp.ts';
import { withFileLock } from '../../../pipeline/fs/file-lock.ts';
import { join } from 'node:path';
import { randomBytes } from 'node:crypto';
import { IDEMPOTENCY_TTL_MS } from '../../http/idempotency.ts';
import { newSecret } from './signing.ts';

/** How long a rotated-out secret keeps signing beside the new one. */
export const ROTATION_OVERLAP_MS = 24 * 3600_000;

export interface Subscription {
  id: string;
  key_id: string;
  url: string;
  /** Event types delivered; null: every type. */
  types: string[] | null;
  description: string | null;
  created_at: string;
  status: 'enabled' | 'disabled';
  disabled_reason: string | null;
  disabled_at: string | null;
  /** The current secret first (no expiry), then the rotated-out ones with their expiry. */
  secrets: { secret: string; expires_at: string | null }[];
  /** The Idempotency-Key of the request that created it, and that request's body hash (API only). */
  idempotency?: { key: string; body_hash: string } | null;
}

/** What a new subscription is made of (`idempotency`: the API's Idempotency-Key and body hash). */
export interface NewSubscription {
  keyId: string;
  url: string;
  types: string[] | null;
  description: string | null;
  idempotency?: { key: string; body_hash: string };
}

/** What the API shows of a subscription (no secret). */
export function publicView(s: Subscription) {
  return {
    id: s.id, url: s.url, types: s.types, description: s.description, created_at: s.created_at,
    status: s.status, disabled_reason: s.disabled_reason, disabled_at: s.disabled_at,
  };
}

/**
 * The secrets that sign now (the current one, and every rotated-out one within its 24 h). Cache: the
 * signing secrets computed from a subscription's `secrets` array, until the first of them
 * expires (every delivery asks). Keyed by the array: a rotation replaces it, never mutates it.
 */
const secretsCache = new WeakMap<Subscription['secrets'], { secrets: string[]; until: number }>();

/** The secrets that sign now. */
export function signingSecrets(s: Subscription, now = Date.now()): string[] {
  const cached = secretsCache.get(s.secrets);
  if (cached && now < cached.until) return cached.secrets;
  const live = s.secrets.filter((x) => x.expires_at === null || Date.parse(x.expires_at) > now);
  const until = Math.min(Infinity, ...live.map((x) => (x.expires_at === null ? Infinity : Date.parse(x.expires_at))));
  const secrets = live.map((x) => x.secret);
  secretsCache.set(s.secrets, { secrets, until });
  return secrets;
}

export class SubscriptionStore {
  readonly file: string;
  #subs = new Map<string, Subscription>();
  /**
   * The file as last read: inode, size and modification time (the writers replace it whole, so a
   * new inode; its time alone can repeat, the kernel's file clock being coarse: a change within the
   * same few milliseconds as the last write was not seen). '' before the first read.
   */
  #stamp = '';
  #checkedAt = 0;
  /** Why the file as it is now cannot be read (null: it was read), see refresh. */
  #unreadable: Error | null = null;

  constructor(dataDir: string) {
    this.file = join(dataDir, 'state', 'webhooks.json');
    this.refresh();
    // a file unreadable at start is the operator's to fix: nothing to serve from
    if (this.#unreadable) throw this.#unreadable;
  }

  /** Why the file cannot be read now (an operator's hand edit gone wrong), or null. */
  get unreadable(): Error | null {
    return this.#unreadable;
  }

  /**
   * Rereads the file if it changed (another process, e.g. the CLI, wrote it). `maxAgeMs` > 0 skips
   * the check when the last one is that recent (the delivery loop: one stat per delivery is waste).
   * `force`: read it whatever its stamp says (#change).
   */
  refresh(maxAgeMs = 0, force = false): void {
    const now = Date.now();
    if (!force && maxAgeMs > 0 && now - this.#checkedAt < maxAgeMs) return;
    this.#checkedAt = now;
    const m = fileStamp(this.file);
    if (m === this.#stamp && !force) return;
    // A file that does not parse (a hand edit gone wrong; the writers replace it whole, atomically)
    // leaves the subscriptions last read in place, and is read again at the next check until it is
    // fixed; meanwhile no change is written over it (#change). Outside test: its time was taken
    // before the parse, so it was never read again, and the next create wrote the old subscriptions
    // over it, dropping whatever else it held.
    let list: Subscription[];
    try {
      list = m === 'missing' ? [] : (JSON.parse(readFileSync(this.file, 'utf8')) as { subscriptions: Subscription[] }).subscriptions;
      if (!Array.isArray(list)) throw new Error('no "subscriptions" list');
    } catch (err) {
      this.#unreadable = new Error(`${this.file} cannot be read (${(err as Error).message}): fix or restore it (nothing is written over it meanwhile)`);
      return;
    }
    this.#unreadable = null;
    this.#stamp = m;
    this.#subs = new Map(list.map((s) => [s.id, s]));
  }

  /**
   * Runs a change (`fn`, which saves) on the file as it is now, holding its lock: the server and
   * `quorum webhooks` both write the file whole, and a change made by one between the other's read
   * and write was lost (QA: eight `quorum webhooks create` at once printed eight subscriptions
   * with their secrets and stored six).
   */
  #change<T>(fn: () => T): T {
    return withFileLock(this.file, () => {
      // Read whole, not judged by its stamp: inode, size and time can all repeat (an inode freed by
      // one replacement taken again by the next within the same tick of the kernel's file clock, the
      // same size), and a change written over what was not read loses it (review). The file is
      // small and changes are rare; reads between changes keep to the stamp.
      this.refresh(0, true);
      if (this.#unreadable) throw this.#unreadable;
      return fn();
    });
  }

  #save(): void {
    mkdirSync(join(this.file, '..'), { recursive: true });
    writeFileAtomicSync(this.file, `${JSON.stringify({ subscriptions: [...this.#subs.values()] }, null, 2)}\n`);
    this.#stamp = fileStamp(this.file);
  }

  all(): Subscription[] {
    this.refresh();
    return [...this.#subs.values()];
  }

  /** The subscriptions of one key (null: every key), oldest first. */
  list(keyId: string | null): Subscription[] {
    return this.all().filter((s) => keyId === null || s.key_id === keyId).sort((a, b) => a.created_at.localeCompare(b.created_at) || a.id.localeCompare(b.id));
  }

  get(id: string, keyId: string | null = null, maxAgeMs = 0): Subscription | null {
    this.refresh(maxAgeMs);
    const s = this.#subs.get(id);
    return s && (keyId === null || s.key_id === keyId) ? s : null;
  }

  /**
   * The subscription a key created with this Idempotency-Key within the last IDEMPOTENCY_TTL_MS
   * (null: none, or deleted since).
   */
  byIdempotencyKey(keyId: string, key: string, now = Date.now()): Subscription | null {
    return this.list(keyId).find((s) => s.idempotency?.key === key && now - Date.parse(s.created_at) < IDEMPOTENCY_TTL_MS) ?? null;
  }

  create(input: NewSubscription): Subscription {
    return this.#change(() => this.#create(input));
  }

  #create(input: NewSubscription): Subscription {
    const s: Subscription = {
      id: `wh_${randomBytes(8).toString('hex')}`,
      key_id: input.keyId,
      url: input.url,
      types: input.types === null ? null : [...new Set(input.types)], // a type named twice is one
      description: input.description,
      created_at: new Date().toISOString(),
      status: 'enabled',
      disabled_reason: null,
      disabled_at: null,
      secrets: [{ secret: newSecret(), expires_at: null }],
      ...(input.idempotency ? { idempotency: input.idempotency } : {}),
    };
    this.#subs.set(s.id, s);
    this.#save();
    return s;
  }

  remove(id: string): boolean {
    return this.#change(() => this.#remove(id));
  }

  #remove(id: string): boolean {
    const had = this.#subs.delete(id);
    if (had) this.#save();
    return had;
  }

  /**
   * A new current secret; the previous current one keeps signing for 24 h, and every secret
   * rotated out earlier keeps signing until the expiry its own rotation announced (a second
   * rotation within 24 h must not cut the first one's promise short). Expired ones are dropped, so
   * the list is bounded by the current secret plus those rotated out in the last 24 h. Returns
   * the new secret and when the previous one stops signing.
   */
  rotate(id: string, now = Date.now()): { secret: string; previous_expires_at: string } | null {
    return this.#change(() => this.#rotate(id, now));
  }

  #rotate(id: string, now: number): { secret: string; previous_expires_at: string } | null {
    const s = this.#subs.get(id);
    if (!s) return null;
    const expires = new Date(now + ROTATION_OVERLAP_MS).toISOString();
    const secret = newSecret();
    const [current, ...older] = s.secrets;
    const stillSigning = older.filter((x) => x.expires_at !== null && Date.parse(x.expires_at) > now);
    // A new array, never a mutated one: signingSecrets caches by the array.
    s.secrets = [{ secret, expires_at: null }, { secret: current!.secret, expires_at: expires }, ...stillSigning];
    this.#save();
    return { secret, previous_expires_at: expires };
  }

  /**
   * Enables a disabled subscription again (`quorum webhooks enable`; the caller checks its key).
   * Deliveries finished while it was disabled stay finished: a replay re-sends them. False if
   * there is no such subscription.
   */
  enable(id: string): boolean {
    return this.#change(() => this.#enable(id));
  }

  #enable(id: string): boolean {
    const s = this.#subs.get(id);
    if (!s) return false;
    if (s.status === 'enabled') return true;
    s.status = 'enabled';
    s.disabled_reason = null;
    s.disabled_at = null;
    this.#save();
    return true;
  }

  disable(id: string, reason: string): void {
    this.#change(() => this.#disable(id, reason));
  }

  #disable(id: string, reason: string): void {
    const s = this.#subs.get(id);
    if (!s || s.status === 'disabled') return;
    s.status = 'disabled';
    s.disabled_reason = reason;
    s.disabled_at = new Date().toISOString();
    this.#save();
  }
}
