/**
 * Operational routes (open, not rate limited):
 * `GET /healthz`: 200 whenever the process answers.
 * `GET /readyz`: 200 once a snapshot is loaded (naming it) and still whole on disk, else 503
 *   `not_ready` (QA: a served snapshot pruned from under the server was `ready` while every data
 *   endpoint answered 500).
 * `GET /metrics`: Prometheus text exposition.
 */
import { z } from 'zod';
import { ApiError } from '../errors/problem.ts';
import { rawRoute } from '../http/registry.ts';
import { isoTime } from '../openapi/common.ts';

export const healthRoute = rawRoute({
  id: 'health.live',
  path: '/healthz',
  summary: 'Liveness',
  tags: ['operations'],
  responses: { 'application/json': { schema: z
        .object({ status: z.literal('ok').meta({ description: 'Always `ok`: the process answers.' }) })
        .meta({ id: 'Health' }) } },
  handle: (_req, res) => {
    res.status(200).json({ status: 'ok' });
  },
});

export const readyRoute = rawRoute({
  id: 'health.ready',
  path: '/readyz',
  summary: 'Readiness: a snapshot is loaded',
  tags: ['operations'],
  errors: [503],
  responses: {
    'application/json': {
      schema: z
        .object({
          status: z.literal('ready').meta({ description: 'Always `ready`: a snapshot is loaded and its files are on disk (otherwise the answer is a 503).' }),
          snapshot: z.string().meta({ description: 'The id of the loaded snapshot (its run id, as in the X-Snapshot header).' }),
          as_of: isoTime.meta({ description: 'The loaded snapshot\'s as_of: the point in time its run saw.' }),
          loaded_at: isoTime.meta({ description: 'When this server loaded the snapshot.' }),
        })
        .meta({ id: 'Ready' }),
    },
  },
  handle: async (_req, res, { services }) => {
    const current = services.snapshots.current;
    if (!current) {
      const failure = services.snapshots.lastFailure;
      throw ApiError.notReady(
        failure
          ? `No snapshot is loaded yet; the published snapshot ${failure.id} could not be loaded.`
          : 'No data snapshot has been published yet; retry later.',
      );
    }
    const missing = await services.snapshots.servedMissing();
    if (missing !== null) {
      const failure = services.snapshots.lastFailure;
      throw ApiError.notReady(failure ? `${missing} The published snapshot ${failure.id} could not be loaded.` : missing);
    }
    res.setHeader('X-Snapshot', current.id);
    res.status(200).json({ status: 'ready', snapshot: current.id, as_of: current.asOf, loaded_at: current.loadedAt });
  },
});

export const metricsRoute = rawRoute({
  id: 'metrics',
  path: '/metrics',
  summary: 'Prometheus metrics',
  tags: ['operations'],
  responses: { 'text/plain': { schema: z.string() } },
  handle: async (_req, res, { services }) => {
    const { contentType, body } = await services.metricsText();
    res.setHeader('Cache-Control', 'no-store');
    res.status(200).type(contentType).send(body);
  },
});
