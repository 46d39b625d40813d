/**
 * What a published snapshot looks like on disk, and the strict checks applied before any of it
 * reaches a file path or a SQL identifier.
 *
 * `<dataDir>/CURRENT` holds the published snapshot id (first line); `<dataDir>/snapshots/<id>/`
 * holds `manifest.json` and `<table>.parquet` for every table the manifest lists.
 */
import { z } from 'zod';

/** A snapshot id: letters, digits, `.`, `_`, `-`; starts alphanumeric; no `..`; ≤ 128 chars. */
export const SNAPSHOT_ID = /^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$/;

/** A derived table name as it may appear in a manifest and become a view name. */
export const TABLE_NAME = /^[a-z][a-z0-9_]{0,62}$/;

/** The schema a snapshot's views live in; derived from the id, re-checked before every use. */
export const SCHEMA_NAME = /^snap_[0-9]{1,9}_[a-z0-9_]{1,64}$/;

export function isSnapshotId(id: string): boolean {
  return SNAPSHOT_ID.test(id) && !id.includes('..');
}

/** `snap_<generation>_<id folded to [a-z0-9_]>`: unique per load even if two ids fold alike. */
export function schemaNameFor(id: string, generation: number): string {
  const folded = id.toLowerCase().replace(/[^a-z0-9_]/g, '_').slice(0, 64) || 'x';
  const name = `snap_${generation}_${folded}`;
  if (!SCHEMA_NAME.test(name)) throw new Error(`cannot derive a schema name from snapshot id ${JSON.stringify(id)}`);
  return name;
}

const isoInstant = z
  .string()
  .refine((s) => !Number.isNaN(Date.parse(s)), { message: 'not an ISO 8601 timestamp' })
  .transform((s) => new Date(s).toISOString());

export const manifestSchema = z.looseObject({
  run_id: z.string().min(1),
  as_of: isoInstant,
  created_at: isoInstant,
  tables: z.array(z.string().regex(TABLE_NAME, 'invalid table name')),
  headline_modes: z.array(z.string()).default(['augmented', 'informed', 'blind']),
  /** The fingerprint of the sql/derive files that derived it (absent: published before it was recorded). */
  derive_sql_hash: z.string().optional(),
});

export type SnapshotManifest = z.infer<typeof manifestSchema>;
