/**
 * A 404 for an id the client typed (a source slug, a factor, thesis or scenario id) names the
 * closest ids the snapshot has, so a typo is one look away from the right URL (`closest`, as the
 * problem's member, and in its detail).
 */
import { editDistance } from '../../pipeline/text/edit-distance.ts';
import { ApiError } from '../errors/problem.ts';

/** At most `n` of `ids` nearest to `wanted`: by edit distance, an id containing it (or contained) first. */
export function closestIds(wanted: string, ids: readonly string[], n = 5): string[] {
  return ids
    .map((id) => ({ id, d: editDistance(wanted, id) - (id.includes(wanted) || wanted.includes(id) ? 100 : 0) }))
    .sort((a, b) => a.d - b.d || (a.id < b.id ? -1 : 1))
    .slice(0, n)
    .map((x) => x.id);
}

/**
 * The ids of `ids` closest to `wanted` (closestIds), and the sentence a problem's detail ends with
 * naming them (` Closest slugs: a, b.`; empty when there is none).
 */
export function closestNote(wanted: string, ids: readonly string[], label: 'ids' | 'slugs'): { closest: string[]; text: string } {
  const closest = closestIds(wanted, ids);
  return { closest, text: closest.length ? ` Closest ${label}: ${closest.join(', ')}.` : '' };
}

/**
 * The 404 of `what` `id` (path parameter `parameter`) unknown to the snapshot, naming the closest
 * of its `ids` (`Closest slugs:` for source slugs, else `Closest ids:`).
 */
export function notFoundClosest(what: string, id: string, parameter: string, ids: readonly string[]): ApiError {
  const { closest, text } = closestNote(id, ids, parameter === 'source_slug' ? 'slugs' : 'ids');
  return ApiError.notFound(`No ${what} '${id}' in this snapshot.${text}`, { parameter, closest });
}
