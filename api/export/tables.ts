/**
 * The exportable tables of `GET /api/export/{table}/`, table-driven: which SQL file produces the
 * rows, which snapshot tables it reads, which filters apply, how it is sliced, and the least plan
 * allowed.
 *
 * Time filters are named for the column they compare (DESIGN §7): `updated_since` keeps rows with
 * `updated_at` at or after it, `resolved_since` `resolved_at`, `created_since` `created_at`.
 * Each table accepts those of its columns that say when a row changed; `since` is the alias of
 * the table's main one (`sinceAlias`). A filter a table does not have is a 400 naming the ones it
 * has. The SQL file takes every filter of `timeFilters` as a bound parameter of the same name.
 *
 * Slicing (first byte fast, engine.ts): a table with `sliceSource` is exported in ordered slices
 * of that snapshot table's rows, in its Parquet file's row order (the published order). Only a
 * query that reads that table once, filters it and keeps its order can be sliced so: the rows of
 * slice k all precede those of slice k + 1. Queries with a global ORDER BY over a join
 * (predictions, forecasts) cannot emit a first row before the whole sort, so they keep the
 * whole-file path.
 */
import type { TimeFilter } from './params.ts';
import type { Plan } from './plans.ts';

export const EXPORT_TABLES = ['predictions', 'resolved', 'scores', 'forecasts', 'claims', 'track_records', 'scenario_records'] as const;
export type ExportTable = (typeof EXPORT_TABLES)[number];

export interface ExportTableSpec {
  readonly name: ExportTable;
  /** `sql/api/<sqlFile>.sql`: one SELECT with bound parameters, wrapped in COPY by the engine. */
  readonly sqlFile: string;
  /** Snapshot tables read (exposed to the query under these names). */
  readonly snapshotTables: readonly string[];
  /** Whether the query reads the warehouse's raw forecasts (as `raw_forecasts`). */
  readonly rawForecasts: boolean;
  /** Whether `status` applies (otherwise only `status=all` is accepted). */
  readonly status: boolean;
  /** The time filters this table accepts and the column each compares (the SQL file implements it). */
  readonly timeFilters: Readonly<Partial<Record<TimeFilter, string>>>;
  /** The filter `since` stands for. */
  readonly sinceAlias: TimeFilter;
  /** The snapshot table sliced in file order for a streamed export, or null (whole file). */
  readonly sliceSource: string | null;
  /** The least plan that may export this table (formats and caps are per plan on top). */
  readonly minPlan: Exclude<Plan, 'anonymous'>;
}

export const TABLE_SPECS: Readonly<Record<ExportTable, ExportTableSpec>> = {
  predictions: {
    name: 'predictions',
    sqlFile: 'export-predictions',
    snapshotTables: ['questions', 'consensus'],
    rawForecasts: false,
    status: true,
    timeFilters: { updated_since: 'updated_at', resolved_since: 'resolved_at' },
    sinceAlias: 'updated_since',
    sliceSource: null,
    minPlan: 'pro',
  },
  resolved: {
    name: 'resolved',
    sqlFile: 'export-resolved',
    snapshotTables: ['resolved_predictions'],
    rawForecasts: false,
    status: false,
    timeFilters: { resolved_since: 'resolved_at' },
    sinceAlias: 'resolved_since',
    sliceSource: 'resolved_predictions',
    minPlan: 'pro',
  },
  scores: {
    name: 'scores',
    sqlFile: 'export-scores',
    snapshotTables: ['scored_forecasts'],
    rawForecasts: false,
    status: false,
    timeFilters: { resolved_since: 'resolved_at' },
    sinceAlias: 'resolved_since',
    sliceSource: 'scored_forecasts',
    minPlan: 'pro',
  },
  forecasts: {
    name: 'forecasts',
    sqlFile: 'export-forecasts',
    snapshotTables: ['questions'],
    rawForecasts: true,
    status: false,
    timeFilters: { created_since: 'created_at' },
    sinceAlias: 'created_since',
    sliceSource: null,
    minPlan: 'enterprise',
  },
  /** The claims database (issue 11): `claims`, made_at and resolved_at; api, like GET /api/claims/. */
  claims: {
    name: 'claims',
    sqlFile: 'export-claims',
    snapshotTables: ['claims'],
    rawForecasts: false,
    status: false,
    timeFilters: { created_since: 'made_at', resolved_since: 'resolved_at' },
    sinceAlias: 'created_since',
    sliceSource: 'claims',
    minPlan: 'api',
  },
  /**
   * Every source's track record (issue 11); pro, like GET /api/track-records/. `updated_since`:
   * the latest claim, or a claim's resolution (claims is read for that only).
   */
  track_records: {
    name: 'track_records',
    sqlFile: 'export-track-records',
    snapshotTables: ['track_records', 'claims'],
    rawForecasts: false,
    status: false,
    timeFilters: { updated_since: 'last_claim_at, or a claim\'s resolved_at' },
    sinceAlias: 'updated_since',
    sliceSource: 'track_records',
    minPlan: 'pro',
  },
  /**
   * The scenarios' archived records with their scores (issue 13; GET /api/scenarios/ pages them):
   * `created_since` compares the record's as_of (when its run archived it). Whole file: the query
   * joins the records to their scores and sorts them (by scenario, then as_of).
   */
  scenario_records: {
    name: 'scenario_records',
    sqlFile: 'export-scenario-records',
    snapshotTables: ['scenario_records', 'scenario_record_scores', 'questions'],
    rawForecasts: false,
    status: false,
    timeFilters: { created_since: 'as_of' },
    sinceAlias: 'created_since',
    sliceSource: null,
    minPlan: 'pro',
  },
};

export function isExportTable(value: string): value is ExportTable {
  return (EXPORT_TABLES as readonly string[]).includes(value);
}

/**
 * The route id of an export request for metrics, request logs and `/api/usage/`: `export.<table>`
 * for an exportable table, `export.unknown` for any other name. Bounded to the known tables (never
 * the raw path segment): a Prometheus label per path a client makes up would grow without end.
 */
export function exportRouteId(table: string): `export.${ExportTable | 'unknown'}` {
  return isExportTable(table) ? `export.${table}` : 'export.unknown';
}
