/**
 * The registry of authoritative sources: `data/sources.json`, the rows of the raw `sources` table
 * (pipeline/warehouse/tables.ts). Every resolution, evidence item and claim names its source by
 * `source_slug`; this file says what each slug is (name, kind, home page).
 *
 * File format: `{ "$comment"?: string | string[], "sources": [{ source_slug, name, kind, url }] }`,
 * validated with zod: slugs are kebab-case and unique, `kind` is one of {@link SOURCE_KINDS},
 * `url` is an http(s) URL or null (a slug standing for a class of sources, e.g. `company-ir`).
 */
import { readFileSync } from 'node:fs';
import { z } from 'zod';
import type { RawRow, RawTableName } from '../warehouse/tables.ts';

/** A row of raw table `N` (one definition, in tables.ts). */
export type Row<N extends RawTableName> = RawRow<N>;

export const SOURCE_KINDS = [
  'government',
  'central_bank',
  'regulatory',
  'primary_financial',
  'secondary_reporting',
  'market',
  'analyst',
] as const;
export type SourceKind = (typeof SOURCE_KINDS)[number];

/** One registry entry: a `sources` row with its kind checked. */
export interface SourceRow extends Row<'sources'> {
  source_slug: string;
  name: string;
  kind: SourceKind;
  url: string | null;
}

const httpUrl = z.url({ protocol: /^https?$/, message: 'expected an http(s) URL' });

const SourceSchema = z.strictObject({
  source_slug: z.string().regex(/^[a-z0-9][a-z0-9-]*$/, 'source_slug must be kebab-case (a-z, 0-9, -)'),
  name: z.string().trim().min(1),
  kind: z.enum(SOURCE_KINDS, { message: `expected one of ${SOURCE_KINDS.join(', ')}` }),
  url: httpUrl.nullable(),
});

const RegistrySchema = z.strictObject({
  $comment: z.union([z.string(), z.array(z.string())]).optional(),
  sources: z.array(SourceSchema).min(1),
});

/** An invalid or unreadable registry file; the message names the file and the entry. */
export class SourceRegistryError extends Error {
  override readonly name = 'SourceRegistryError';
}

/** The bundled registry. */
export const DEFAULT_SOURCES_PATH = new URL('../../data/sources.json', import.meta.url);

/** Validates parsed JSON as a registry. `file` names it in errors. */
export function parseSources(json: unknown, file: string): SourceRow[] {
  const parsed = RegistrySchema.safeParse(json);
  if (!parsed.success) {
    const issue = parsed.error.issues[0]!;
    const [, index] = issue.path;
    const at = issue.path.length ? issue.path.map((p, i) => (typeof p === 'number' ? `[${p}]` : `${i ? '.' : ''}${String(p)}`)).join('') : '(root)';
    const slug =
      typeof index === 'number' && typeof (json as { sources?: { source_slug?: unknown }[] }).sources?.[index]?.source_slug === 'string'
        ? ` (source_slug "${(json as { sources: { source_slug: string }[] }).sources[index]!.source_slug}")`
        : '';
    throw new SourceRegistryError(`${file}: ${at}${slug}: ${issue.message}`);
  }
  const seen = new Set<string>();
  return parsed.data.sources.map((s, i) => {
    if (seen.has(s.source_slug)) throw new SourceRegistryError(`${file}: sources[${i}]: duplicate source_slug "${s.source_slug}"`);
    seen.add(s.source_slug);
    return { source_slug: s.source_slug, name: s.name, kind: s.kind, url: s.url, description: null, attribution: null };
  });
}

/** Reads and validates a registry file (default: the bundled `data/sources.json`). */
export function loadSourcesFile(path: string | URL = DEFAULT_SOURCES_PATH): SourceRow[] {
  const file = path instanceof URL ? path.pathname : path;
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (e) {
    throw new SourceRegistryError(`${file}: cannot read: ${(e as Error).message}`);
  }
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch (e) {
    throw new SourceRegistryError(`${file}: not JSON: ${(e as Error).message}`);
  }
  return parseSources(json, file);
}

let cached: { rows: SourceRow[]; bySlug: Map<string, SourceRow> } | undefined;

function registry() {
  if (!cached) {
    const rows = loadSourcesFile();
    cached = { rows, bySlug: new Map(rows.map((r) => [r.source_slug, r])) };
  }
  return cached;
}

/** The bundled registry's rows (validated once, then cached), as fresh copies in file order. */
export function loadSources(): SourceRow[] {
  return registry().rows.map((r) => ({ ...r }));
}

/** The bundled registry's entry for `slug` (a copy), or undefined when it is not registered. */
export function sourceBySlug(slug: string): SourceRow | undefined {
  const r = registry().bySlug.get(slug);
  return r && { ...r };
}
