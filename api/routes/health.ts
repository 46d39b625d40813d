/**
 * `GET /healthz`: 200 whenever the process answers.
 * `GET /readyz`: 200 once a snapshot is loaded (naming it), else 503 `not_ready`.
 */
import type { Express } from 'express';
import { ApiError } from '../errors/problem.ts';
import { getRoute } from '../http/route.ts';
import type { SnapshotReader } from '../snapshot/reader.ts';

export function registerHealthRoutes(app: Express, snapshots: SnapshotReader): void {
  getRoute(app, '/healthz', (_req, res) => {
    res.status(200).json({ status: 'ok' });
  });

  getRoute(app, '/readyz', (_req, res) => {
    const current = snapshots.current;
    if (!current) {
      const failure = snapshots.lastFailure;
      throw ApiError.notReady(
        failure
          ? `No snapshot is loaded yet; the published snapshot ${failure.id} could not be loaded.`
          : 'No data snapshot has been published yet; retry later.',
      );
    }
    res.setHeader('X-Snapshot', current.id);
    res.status(200).json({ status: 'ready', snapshot: current.id, as_of: current.asOf, loaded_at: current.loadedAt });
  });
}
