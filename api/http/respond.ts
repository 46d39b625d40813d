/**
 * Response helpers: every data response names its snapshot (`X-Snapshot` header and `as_of` in
 * the body); JSON goes out as `application/json; charset=utf-8`.
 */
import type { Response } from 'express';
import type { SnapshotInfo } from '../snapshot/reader.ts';

export const API_VERSION = '1';

/**
 * An answer no cache may keep, the browser's included: one key's own (its usage, its partners'
 * answers) or one carrying a secret (a webhook's whsec_). `private, no-cache` would let a cache
 * store it on disk and only revalidate it.
 */
export function noStore(res: Response): void {
  res.setHeader('Cache-Control', 'private, no-store');
}

/** Sends `body` plus `as_of` with the snapshot's headers. */
export function sendSnapshotJson(res: Response, snapshot: SnapshotInfo, body: Record<string, unknown>): void {
  res.setHeader('X-Snapshot', snapshot.id);
  res.status(200).json({ ...body, as_of: snapshot.asOf });
}
