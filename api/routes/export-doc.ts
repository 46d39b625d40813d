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
import { EXPORT_COLUMNS, exportColumnsText, PARQUET_TYPES } from '../export/columns.ts';
import { EXPORT_FORMATS } from '../export/formats.ts';
import { EXPORT_STATUSES, MAX_EXPORT_LIMIT } from '../export/params.ts';
import { EXPORT_TABLES, TABLE_SPECS } from '../export/tables.ts';
import type { TimeFilter } from '../export/params.ts';
import { rawRoute } from '../http/registry.ts';

/** Which tables take time filter `name`, and the column each compares: from TABLE_SPECS, so a table's filters are documented as they are. */
function timeFilterDoc(name: TimeFilter): string {
  const uses = EXPORT_TABLES.flatMap((t) => {
    const column = TABLE_SPECS[t].timeFilters[name];
    return column ? [`${t} (${column})`] : [];
  });
  return `Rows whose column is at or after this ISO 8601 date or date-time: ${uses.join(', ')}.`;
}

/** `since`: which filter it stands for, per table. */
const SINCE_DOC =
  "Alias of the table's main time filter: " + EXPORT_TABLES.map((t) => `${TABLE_SPECS[t].sinceAlias} (${t})`).join(', ') + '.';

/** Each table's columns in order, for the CSV and Parquet bodies (whose schema is no JSON object). */
const COLUMNS_DOC = EXPORT_TABLES.map((t) => `${t}: ${exportColumnsText(t)}`).join('\n\n');

/** The Parquet type of each column type (api/export/columns.ts). */
const PARQUET_TYPES_DOC = Object.entries(PARQUET_TYPES).map(([type, names]) => `${type} ${names.join(' or ')}`).join(', ');

/** The rows of the JSON body: an array of the requested table's row objects (components Export<Table>Row). */
const JSON_BODY = z.union(EXPORT_TABLES.map((t) => z.array(EXPORT_COLUMNS[t]))).meta({
  description: `An array of the table's rows, one object per row with the table's columns in order: ${EXPORT_TABLES.map((t) => `${t} ${String(z.globalRegistry.get(EXPORT_COLUMNS[t])?.id)}`).join(', ')}.`,
});

/** The tables exported in ordered slices (uncapped plans, CSV/JSON/JSONL). */
const SLICED = EXPORT_TABLES.filter((t) => TABLE_SPECS[t].sliceSource !== null).join(', ');

/** Each table's least plan, from TABLE_SPECS (what the export enforces): `predictions, ...: pro; claims: api; ...`. */
const TABLE_PLANS = (['pro', 'api', 'enterprise'] as const)
  .map((plan) => [plan, EXPORT_TABLES.filter((t) => TABLE_SPECS[t].minPlan === plan)] as const)
  .filter(([, tables]) => tables.length > 0)
  .map(([plan, tables]) => `${tables.join(', ')}: ${plan}`)
  .join('; ');

export const exportRouteDoc = rawRoute({
  id: 'export.predictions',
  path: '/api/export/{table}/',
  mountedElsewhere: true,
  summary: 'Bulk export',
  description:
    'Exports a table of the served snapshot as a file. Timestamps: ISO 8601 UTC with milliseconds and Z in CSV, ' +
    'JSON and JSONL (2025-10-16T00:00:00.000Z), TIMESTAMP WITH TIME ZONE in Parquet; outcome is an integer (0/1, ' +
    'null when annulled or unresolved) in the question tables, a number in claims (0.5 for a tie). ' +
    `${SLICED} as CSV/JSON/JSONL (uncapped plans) stream in ordered ` +
    'slices as they are produced (chunked, X-Export-Sliced: true, trailer X-Export-Rows); a failure after the first ' +
    'byte cuts the connection without the final chunk (a failed transfer, never a clean end). Other exports are ' +
    'produced completely, then sent with Content-Length and X-Export-Rows (a failure is a 500 problem). For capped ' +
    'plans X-Export-Row-Cap / X-Export-Truncated. Pro: CSV up to the row cap; api and enterprise: every format. ' +
    `The least plan of each table (a key below it: 403 plan_required naming it): ${TABLE_PLANS}. ` +
    'Lists and structs (key_factors, evidence_ids, categories) are JSON in every text format: JSON arrays in ' +
    'JSON and JSONL, the same JSON as the cell\'s text in CSV; Parquet lists in Parquet. ' +
    'CSV only: a text cell beginning with =, +, -, @, a tab or a carriage return that is not a number gets a leading ' +
    'apostrophe, so that a spreadsheet shows it as text instead of running it as a formula; the other formats carry ' +
    'the exact text. ' +
    'At most 2 exports run at once, and at most 1 per key (a key\'s second export waits up to a second for its first ' +
    'to end): beyond, 429 rate_limited with Retry-After (policy exports, or exports_per_key). A download whose client ' +
    'takes no byte for QUORUM_EXPORT_IDLE_TIMEOUT_MS (default 60 s) is cut off (a failed transfer) and its slot freed; ' +
      'the socket is watched a write (up to 4 MiB) at a time, so a client reading slower than about 4 MiB per timeout ' +
      '(70 kB/s at the default) may be cut too. A graceful shutdown lets downloads finish for QUORUM_SHUTDOWN_TIMEOUT_MS ' +
      '(10 s), then cuts the rest. ' +
    'Metrics, request logs and /api/usage/ count each table as its own route, export.<table>. ' +
    'Columns: every format has the same columns in the same order (the CSV header, the JSON keys, the Parquet schema), ' +
    'documented per table as the JSON row schemas Export<Table>Row and, for CSV and Parquet, listed with the ' +
    'response\'s media type.',
  tags: ['export'],
  params: z.object({ table: z.enum(EXPORT_TABLES).meta({ description: `The table to export, with the least plan that may export it: ${TABLE_PLANS}.` }) }),
  query: z.object({
    output: z.enum(EXPORT_FORMATS).default('csv').optional().meta({
      description: 'The file\'s format (csv by default). The only selector: the Accept header is not consulted, so a client that sends Accept: application/json still gets CSV unless it asks output=json.',
    }),
    limit: z.int().min(1).max(MAX_EXPORT_LIMIT).optional().meta({ description: 'At most this many rows.' }),
    status: z.enum(EXPORT_STATUSES).default('all').optional().meta({ description: "predictions only: the question's status." }),
    updated_since: z.string().optional().meta({ description: timeFilterDoc('updated_since') }),
    resolved_since: z.string().optional().meta({ description: timeFilterDoc('resolved_since') }),
    created_since: z.string().optional().meta({ description: timeFilterDoc('created_since') }),
    since: z.string().optional().meta({ description: SINCE_DOC }),
    category: z.enum(CATEGORIES).optional().meta({
      description:
        "Rows of this category (one of the nine, case-insensitive): predictions, resolved, scores and forecasts (the question's " +
        "category), claims (the claim's category), track_records (sources with a claim in it: each row is still the source's " +
        'whole record, its categories listing them all), scenario_records (records with a component in it, of the ' +
        'components each record archived, a retired scenario\'s too: each record is still over all of its components).',
    }),
  }),
  errors: [400, 403, 404, 503],
  responseHeaders: {
    'Content-Disposition': '`attachment; filename="quorum-<table>-<snapshot id>.<ext>"`.',
    'X-Snapshot': 'The snapshot exported (its run id).',
    'X-Export-Rows': 'Rows in the file (a trailer when the export is sliced).',
    'X-Export-Sliced': '`true` when the export streams in ordered slices (chunked, X-Export-Rows as a trailer).',
    'X-Export-Row-Cap': 'Capped plans (pro): the most rows an export may hold.',
    'X-Export-Truncated': 'Capped plans: `true` when the cap cut the export.',
  },
  responses: {
    'text/csv': {
      schema: z.string().meta({
        description: `A header line, then one line per row; the table's columns in this order, each as name (type, and "null" when it may be null): meaning. A null is an empty cell.\n\n${COLUMNS_DOC}`,
      }),
    },
    'application/json': { schema: JSON_BODY },
    'application/x-ndjson': {
      schema: z.string().meta({
        description: 'One JSON object per line: each line is one row, the items of the application/json body (the table\'s Export<Table>Row).',
      }),
    },
    'application/vnd.apache.parquet': {
      schema: z.string().meta({
        format: 'binary',
        description: `A Parquet file with the table's columns in the order of the CSV header (see text/csv); column types: ${PARQUET_TYPES_DOC}.`,
      }),
    },
  },
  handle: () => {
    throw new Error('mounted by api/export/routes.ts');
  },
});
