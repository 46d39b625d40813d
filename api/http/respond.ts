/**
 * Response helpers: every data response names its snapshot (`X-Snapshot` header and `as_of` in
 * the body); JSON goes out as `application/json; charset=utf-8`.
 */
import type { Response } from 'express';
import type { SnapshotInfo } from '../snapshot/reader.ts';

export const API_VERSION = '1';

/** Sends `body` plus `as_of` with the snapshot's headers. */
export function sendSnapshotJson(res: Response, snapshot: SnapshotInfo, body: Record<string, unknown>): void {
  res.setHeader('X-Snapshot', snapshot.id);
  res.status(200).json({ ...body, as_of: snapshot.asOf });
}
