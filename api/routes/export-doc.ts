/**
 * OpenAPI entry of the export route, which api/export/routes.ts (the export module) mounts itself
 * with `registerExportRoutes` (app.ts calls it). `mountedElsewhere`: documented here, not mounted
 * by the registry. Its plan rules live in api/export/plans.ts (pro: CSV up to a row cap; api and
 * enterprise: every format, no cap); ENTITLEMENTS rows: `export.predictions`, `export.bulk`.
 * The operation id stays `export.predictions` (the entitlement row); requests are counted per table
 * (`export.<table>`, api/export/tables.ts exportRouteId).
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
    'Exports a table of the served snapshot as a file. Timestamps: ISO 8601 UTC with milliseconds and Z in CSV, ' +
    'JSON and JSONL (2025-10-16T00:00:00.000Z), TIMESTAMP WITH TIME ZONE in Parquet; outcome is an integer (0/1, ' +
    'null when annulled or unresolved). resolved and scores as CSV/JSON/JSONL (uncapped plans) stream in ordered ' +
    'slices as they are produced (chunked, X-Export-Sliced: true, trailer X-Export-Rows); a failure after the first ' +
    'byte cuts the connection without the final chunk (a failed transfer, never a clean end). Other exports are ' +
    'produced completely, then sent with Content-Length and X-Export-Rows (a failure is a 500 problem). For capped ' +
    'plans X-Export-Row-Cap / X-Export-Truncated. Pro: CSV up to the row cap; api and enterprise: every format. ' +
    'Lists and structs (key_factors, evidence_ids, categories, tags) are JSON in every text format: JSON arrays in ' +
    'JSON and JSONL, the same JSON as the cell\'s text in CSV; Parquet lists in Parquet. ' +
    'CSV only: a text cell beginning with =, +, -, @, a tab or a carriage return that is not a number gets a leading ' +
    'apostrophe, so that a spreadsheet shows it as text instead of running it as a formula; the other formats carry ' +
    'the exact text. ' +
    'At most 2 exports run at once, and at most 1 per key (a key\'s second export waits up to a second for its first ' +
    'to end): beyond, 429 rate_limited with Retry-After (policy exports, or exports_per_key). A download whose client ' +
    'takes no byte for QUORUM_EXPORT_IDLE_TIMEOUT_MS (default 60 s) is cut off (a failed transfer) and its slot freed. ' +
    'Metrics, request logs and /api/usage/ count each table as its own route, export.<table>.',
  tags: ['export'],
  params: z.object({ table: z.enum(EXPORT_TABLES).meta({ description: 'The table to export.' }) }),
  query: z.object({
    output: z.enum(EXPORT_FORMATS).default('csv').optional().meta({
      description: 'The file\'s format (csv by default). The only selector: the Accept header is not consulted, so a client that sends Accept: application/json still gets CSV unless it asks output=json.',
    }),
    limit: z.int().min(1).max(MAX_EXPORT_LIMIT).optional().meta({ description: 'At most this many rows.' }),
    status: z.enum(EXPORT_STATUSES).default('all').optional().meta({ description: "predictions only: the question's status." }),
    updated_since: z.string().optional().meta({ description: 'predictions: rows with updated_at at or after this ISO 8601 date or date-time.' }),
    resolved_since: z.string().optional().meta({ description: 'predictions, resolved, scores: rows with resolved_at at or after it.' }),
    created_since: z.string().optional().meta({ description: 'forecasts: rows with created_at at or after it.' }),
    since: z.string().optional().meta({
      description: 'Alias of the table\'s main time filter: updated_since (predictions), resolved_since (resolved, scores), created_since (forecasts).',
    }),
    category: z.enum(CATEGORIES).optional(),
  }),
  errors: [400, 403, 404, 503],
  responseHeaders: {
    'Content-Disposition': '`attachment; filename="<table>.<ext>"`.',
    'X-Export-Rows': 'Rows in the file (a trailer when the export is sliced).',
    'X-Export-Sliced': '`true` when the export streams in ordered slices (chunked, X-Export-Rows as a trailer).',
    'X-Export-Row-Cap': 'Capped plans (pro): the most rows an export may hold.',
    'X-Export-Truncated': 'Capped plans: `true` when the cap cut the export.',
  },
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
