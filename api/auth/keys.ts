/**
 * API keys: `qrm_` + 32 base62 characters (190 bits from crypto.randomBytes, rejection sampling so
 * every character is uniform). The key is shown once, at creation; only its SHA-256 is stored.
 *
 * Store: `<dataDir>/state/keys.json` = `{ "version": 1, "keys": [KeyRecord...] }`, written
 * atomically (temp file + fsync + rename + directory fsync), mode 0600. The CLI (`quorum keys`)
 * writes it, each read-modify-write under `keys.json.lock` (withFileLock: two commands at once);
 * the server re-reads it when its mtime/size/inode change, checking at most every
 * `recheckMs` (default 1 s), so created and revoked keys take effect without a restart.
 *
 * Lookup: a presented key that is not well-formed (prefix, length, charset) is rejected without
 * hashing. A well-formed one is hashed; the record is found by digest and the digests are compared
 * again with `crypto.timingSafeEqual`. The key itself is never stored or logged.
 */
import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { z } from 'zod';
import { writeFileAtomicSync } from '../../pipeline/fs/durable.ts';
import { fileStamp } from '../../pipeline/fs/file-stamp.ts';
import { withFileLock } from '../../pipeline/fs/file-lock.ts';
import { KEY_PLANS, SCOPES, type KeyPlan, type Scope } from './plans.ts';

export const KEY_PREFIX = 'qrm_';
export const KEY_RANDOM_LENGTH = 32;
export const KEY_LENGTH = KEY_PREFIX.length + KEY_RANDOM_LENGTH;
const BASE62 = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz';
const KEY_SHAPE = /^qrm_[0-9A-Za-z]{32}$/;

export const keyRecordSchema = z.object({
  id: z.string().regex(/^key_[0-9a-f]{12}$/),
  name: z.string().min(1).max(200),
  plan: z.enum(KEY_PLANS),
  scopes: z.array(z.enum(SCOPES)),
  sha256: z.string().regex(/^[0-9a-f]{64}$/),
  created_at: z.string(),
  revoked_at: z.string().nullable(),
  /** The last 4 characters of the key, to tell keys apart in listings. */
  hint: z.string().length(4),
});
export type KeyRecord = z.infer<typeof keyRecordSchema>;

const keysFileSchema = z.object({ version: z.literal(1), keys: z.array(keyRecordSchema) });

/** A fresh key: prefix + 32 uniform base62 characters. */
export function generateKey(): string {
  let out = KEY_PREFIX;
  while (out.length < KEY_LENGTH) {
    for (const b of randomBytes(48)) {
      // 248 = 62 * 4: bytes >= 248 are rejected so that b % 62 is uniform.
      if (b < 248) out += BASE62[b % 62];
      if (out.length === KEY_LENGTH) break;
    }
  }
  return out;
}

/** True when `key` has the shape of an issued key (checked before any hashing). */
export function isWellFormedKey(key: string): boolean {
  return key.length === KEY_LENGTH && KEY_SHAPE.test(key);
}

export function sha256Hex(key: string): string {
  return createHash('sha256').update(key, 'utf8').digest('hex');
}

export function keysFile(dataDir: string): string {
  return join(dataDir, 'state', 'keys.json');
}

/** Reads the key file; a missing file is an empty store. A corrupt file throws. */
export function readKeys(file: string): KeyRecord[] {
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return [];
    throw err;
  }
  const parsed = keysFileSchema.safeParse(JSON.parse(text));
  if (!parsed.success) throw new Error(`invalid key file ${file}: ${parsed.error.message}`);
  return parsed.data.keys;
}

export function writeKeys(file: string, keys: readonly KeyRecord[]): void {
  writeFileAtomicSync(file, `${JSON.stringify({ version: 1, keys }, null, 2)}\n`);
}

export interface CreateKeyInput {
  name: string;
  plan: KeyPlan;
  scopes?: Scope[];
}

/** Creates a key in the store at `dataDir`; returns the key (shown once) and its record. */
export function createKey(dataDir: string, input: CreateKeyInput, now = new Date()): { key: string; record: KeyRecord } {
  const file = keysFile(dataDir);
  // QA: without the lock, of eight revocations run beside eight creations five were lost (each
  // printed its revoked record, but a create that had read the file first wrote it back
  // unrevoked: the keys stayed valid), and so were four of the created keys (printed, never stored)
  return withFileLock(file, () => createLocked(file, input, now));
}

function createLocked(file: string, input: CreateKeyInput, now: Date): { key: string; record: KeyRecord } {
  const keys = readKeys(file);
  const key = generateKey();
  const record = keyRecordSchema.parse({
    id: `key_${randomBytes(6).toString('hex')}`,
    name: input.name,
    plan: input.plan,
    scopes: [...new Set(input.scopes ?? [])],
    sha256: sha256Hex(key),
    created_at: now.toISOString(),
    revoked_at: null,
    hint: key.slice(-4),
  });
  writeKeys(file, [...keys, record]);
  return { key, record };
}

/** Revokes the key with `id`; returns its record (already revoked: unchanged), or null if unknown. */
export function revokeKey(dataDir: string, id: string, now = new Date()): KeyRecord | null {
  const file = keysFile(dataDir);
  return withFileLock(file, () => revokeLocked(file, id, now));
}

function revokeLocked(file: string, id: string, now: Date): KeyRecord | null {
  const keys = readKeys(file);
  const i = keys.findIndex((k) => k.id === id);
  if (i < 0) return null;
  const rec = keys[i]!;
  if (rec.revoked_at !== null) return rec;
  const updated = { ...rec, revoked_at: now.toISOString() };
  keys[i] = updated;
  writeKeys(file, keys);
  return updated;
}

export type LookupResult =
  | { ok: true; record: KeyRecord }
  | { ok: false; reason: 'malformed' | 'unknown' | 'revoked' };

/**
 * The server's view of the key file: reloaded when the file changes (checked at most every
 * `recheckMs`). A file that cannot be read or parsed keeps the previous keys (logged by `onError`).
 */
export class KeyStore {
  readonly file: string;
  readonly #recheckMs: number;
  readonly #onError: (err: unknown) => void;
  #byDigest = new Map<string, { record: KeyRecord; digest: Buffer }>();
  #byId = new Map<string, KeyRecord>();
  #stamp = '';
  #checkedAt = 0;

  constructor(dataDir: string, opts: { recheckMs?: number; onError?: (err: unknown) => void } = {}) {
    this.file = keysFile(dataDir);
    this.#recheckMs = opts.recheckMs ?? 1000;
    this.#onError = opts.onError ?? (() => undefined);
    this.refresh(true);
  }

  /** Re-reads the file if it changed (and at least recheckMs passed, unless `force`). */
  refresh(force = false): void {
    const now = Date.now();
    if (!force && now - this.#checkedAt < this.#recheckMs) return;
    this.#checkedAt = now;
    let stamp: string;
    try {
      stamp = fileStamp(this.file);
    } catch (err) {
      this.#onError(err);
      return;
    }
    if (stamp === this.#stamp) return;
    try {
      const keys = stamp === 'missing' ? [] : readKeys(this.file);
      const byDigest = new Map<string, { record: KeyRecord; digest: Buffer }>();
      const byId = new Map<string, KeyRecord>();
      for (const record of keys) {
        byDigest.set(record.sha256, { record, digest: Buffer.from(record.sha256, 'hex') });
        byId.set(record.id, record);
      }
      this.#byDigest = byDigest;
      this.#byId = byId;
      this.#stamp = stamp;
    } catch (err) {
      this.#onError(err);
    }
  }

  /** Finds the record of a presented key. */
  lookup(presented: string): LookupResult {
    if (!isWellFormedKey(presented)) return { ok: false, reason: 'malformed' };
    this.refresh();
    const digest = createHash('sha256').update(presented, 'utf8').digest();
    const hit = this.#byDigest.get(digest.toString('hex'));
    if (!hit || !timingSafeEqual(hit.digest, digest)) return { ok: false, reason: 'unknown' };
    if (hit.record.revoked_at !== null) return { ok: false, reason: 'revoked' };
    return { ok: true, record: hit.record };
  }

  /** The current record of key `id` (null if unknown). */
  byId(id: string): KeyRecord | null {
    this.refresh();
    return this.#byId.get(id) ?? null;
  }
}
