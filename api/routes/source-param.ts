/**
 * A source as a client names it, in the track records' path (`source_slug`) and the claims'
 * `source` filter: its slug, capitals A-Z read as lower case (`SurveyUSA` is `surveyusa`), or its
 * name typed instead ("Acme Polls", "Société Générale": no slug). A name is a 400 naming the slugs
 * closest to the one the import would give it (pipeline/claims/slug.ts slugify), so that the
 * right URL is one look away, as for an unknown slug (outside test: `?source=Acme%20Polls` was a
 * 400 saying only what a slug is, while the README promises the closest slugs for a name).
 */
import { slugify } from '../../pipeline/claims/slug.ts';
import { ApiError } from '../errors/problem.ts';
import { closestNote } from '../http/closest.ts';
import type { PinnedSnapshot } from '../snapshot/reader.ts';

/** A source slug as the API takes it (at most 200 characters: the import's slugs leave room). */
export const SOURCE_SLUG = /^[a-z0-9][a-z0-9-]{0,199}$/;

/** Longest name compared with the slugs (edit distance is quadratic); a longer one gets no closest. */
const MAX_NAME_COMPARED = 400;

/** What a client gave for a source: a slug, or, when it is none, the text as given (`name`). */
export type SourceGiven = { slug: string; name: null } | { slug: null; name: string };

/** `raw` read as a source slug (capitals A-Z folded: only those, a fold of other letters would make a slug of what is none). */
export function sourceGiven(raw: string): SourceGiven {
  const folded = raw.replace(/[A-Z]/g, (c) => c.toLowerCase());
  return SOURCE_SLUG.test(folded) ? { slug: folded, name: null } : { slug: null, name: raw };
}

/** Every source slug of the snapshot's track records (none without the table). */
export async function snapshotSourceSlugs(snap: PinnedSnapshot): Promise<string[]> {
  if (!snap.tables.has('track_records')) return [];
  return (await snap.query('track-records-slugs')).map((r) => String(r.source_slug));
}

/**
 * The 400 of `given.name` given for the source parameter `parameter` (`what`: "Query parameter
 * 'source'", "Path parameter 'source_slug'"): what a slug is, and the slugs closest to the name's
 * own slug (`closest`).
 */
export async function sourceNameError(snap: PinnedSnapshot, parameter: string, what: string, name: string): Promise<ApiError> {
  const { closest, text } = name.length <= MAX_NAME_COMPARED ? closestNote(slugify(name), await snapshotSourceSlugs(snap), 'slugs') : { closest: [], text: '' };
  return new ApiError(400, 'invalid_parameter', `${what} must be a source slug (a-z, 0-9, '-'; at most 200 characters), not a name.${text}`, {
    parameter,
    allowed: { pattern: SOURCE_SLUG.source },
    closest,
  });
}
