/**
 * The exportable tables of `GET /api/export/{table}/`, table-driven: which SQL file produces the
 * rows, which snapshot tables it reads, which filters apply, and the least plan allowed.
 */
import type { Plan } from './plans.ts';

export const EXPORT_TABLES = ['predictions', 'resolved', 'scores', 'forecasts'] as const;
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
  /** What `since` compares against (documentation; the SQL file implements it). */
  readonly sinceColumn: string;
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
    sinceColumn: 'updated_at',
    minPlan: 'pro',
  },
  resolved: {
    name: 'resolved',
    sqlFile: 'export-resolved',
    snapshotTables: ['resolved_predictions'],
    rawForecasts: false,
    status: false,
    sinceColumn: 'resolved_at',
    minPlan: 'pro',
  },
  scores: {
    name: 'scores',
    sqlFile: 'export-scores',
    snapshotTables: ['scored_forecasts'],
    rawForecasts: false,
    status: false,
    sinceColumn: 'resolved_at',
    minPlan: 'pro',
  },
  forecasts: {
    name: 'forecasts',
    sqlFile: 'export-forecasts',
    snapshotTables: ['questions'],
    rawForecasts: true,
    status: false,
    sinceColumn: 'created_at',
    minPlan: 'enterprise',
  },
};

export function isExportTable(value: string): value is ExportTable {
  return (EXPORT_TABLES as readonly string[]).includes(value);
}
