/**
 * OpenAPI entry of the export route, which api/export/routes.ts (the export module) mounts itself
 * with `registerExportRoutes` (app.ts calls it). `mountedElsewhere`: documented here, not mounted
 * by the registry. Its plan rules live in api/export/plans.ts (pro: CSV up to a row cap; api and
 * enterprise: every format, no cap); ENTITLEMENTS rows: `export.predictions`, `export.bulk`.
 */
import { z } from 'zod';
import { CATEGORIES } from '../../pipeline/warehouse/tables.ts';
import { EXPORT_FORMATS } from '../export/formats.ts';
import { EXPORT_STATUSES, MAX_EXPORT_LIMIT } from '../export/params.ts';
import { EXPORT_TABLES } from '../export/tables.ts';
import { rawRoute } from '../http/registry.ts';

export const exportRouteDoc = rawRoute({
  id: 'export.predictions',
  path: '/api/export/{table}/',
  mountedElsewhere: true,
  summary: 'Bulk export',
  description:
    'Exports a table of the served snapshot as a file (produced completely, then streamed: a failure is a 500 ' +
    'problem, never a truncated success). Headers: Content-Disposition, X-Snapshot, X-Export-Rows, and for capped ' +
    'plans X-Export-Row-Cap / X-Export-Truncated. Pro: CSV up to the row cap; api and enterprise: every format. ' +
    'At most 2 exports run at once (429 with Retry-After beyond).',
  tags: ['export'],
  params: z.object({ table: z.enum(EXPORT_TABLES).meta({ description: 'The table to export.' }) }),
  query: z.object({
    output: z.enum(EXPORT_FORMATS).default('csv').optional(),
    limit: z.int().min(1).max(MAX_EXPORT_LIMIT).optional().meta({ description: 'At most this many rows.' }),
    status: z.enum(EXPORT_STATUSES).default('all').optional().meta({ description: 'predictions only.' }),
    since: z.string().optional().meta({ description: 'ISO 8601 date or date-time: rows at or after it.' }),
    category: z.enum(CATEGORIES).optional(),
  }),
  errors: [400, 403, 404],
  responses: {
    'text/csv': { schema: z.string() },
    'application/json': { schema: z.array(z.record(z.string(), z.unknown())) },
    'application/x-ndjson': { schema: z.string() },
    'application/vnd.apache.parquet': { schema: z.string().meta({ format: 'binary' }) },
  },
  handle: () => {
    throw new Error('mounted by api/export/routes.ts');
  },
});
