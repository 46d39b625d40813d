/**
 * `GET /api/analysis/resolution-sources/` (api plan): the reliability of each source of
 * resolutions — resolutions, annulled, disputed or amended, later changed, and the median lag from
 * close to resolution. Source: `resolution_sources` (sql/derive/56_resolution_sources.sql).
 */
import { z } from 'zod';
import { jsonRoute } from '../http/registry.ts';
import { count, published, zDays, zProb } from '../openapi/common.ts';
import type { PinnedSnapshot } from '../snapshot/reader.ts';
import { numOrNull } from './analysis-params.ts';

export const ResolutionSource = z
  .object({
    source_slug: z.string().meta({ description: 'The source of the final resolution (`unknown` when not recorded).' }),
    name: z.string().nullable().meta({ description: 'The source\'s display name (null when the source is not in the sources table).' }),
    kind: z.string().nullable().meta({ description: 'The source\'s kind (market, institution, …; null when unknown).' }),
    resolutions: count.meta({ description: 'Questions whose final resolution comes from this source (annulled included).' }),
    annulled: count.meta({ description: 'Of those, annulled (the market was voided: no outcome).' }),
    amended: count.meta({
      description: 'Questions with more than one distinct (outcome, resolved_at) among their records: disputed or amended.',
    }),
    changed: count.meta({ description: 'Questions whose first recorded outcome differs from the final one (annulment counts).' }),
    share_changed: zProb.meta({ description: 'changed / resolutions.' }),
    median_lag_days: zDays.meta({
      description: 'Median days from close_time to the final resolved_at (negative: resolved before the scheduled close).',
    }),
    n_lag: count.meta({ description: 'Questions with a close_time (the lag\'s sample).' }),
  })
  .meta({ id: 'ResolutionSource' });

export const ResolutionSources = z
  .object({
    total: count.meta({ description: 'Entries in `items`.' }),
    items: z.array(ResolutionSource).meta({ description: 'One entry per source of final resolutions, most resolutions first.' }),
  })
  .meta({ id: 'ResolutionSources' });

async function body(snap: PinnedSnapshot): Promise<Record<string, unknown>> {
  snap.require('resolution_sources');
  const r = await snap.query('analysis-resolution-sources');
  const items = r.map((x) => ({
    source_slug: String(x.source_slug),
    name: typeof x.name === 'string' ? x.name : null,
    kind: typeof x.kind === 'string' ? x.kind : null,
    resolutions: Number(x.resolutions),
    annulled: Number(x.annulled),
    amended: Number(x.amended),
    changed: Number(x.changed),
    share_changed: numOrNull(x.share_changed),
    median_lag_days: numOrNull(x.median_lag_days),
    n_lag: Number(x.n_lag),
  }));
  return published(ResolutionSources, { total: items.length, items });
}

export const analysisResolutionSourcesRoute = jsonRoute({
  id: 'analysis.resolution_sources',
  path: '/api/analysis/resolution-sources/',
  summary: 'Reliability of each source of resolutions',
  description:
    'Per source of resolutions: resolutions, annulled, disputed or amended, the share later changed, and the ' +
    'median lag from close to resolution.',
  tags: ['scoring'],
  response: ResolutionSources,
  errors: [400],
  cache: true,
  data: (snap) => body(snap),
});
