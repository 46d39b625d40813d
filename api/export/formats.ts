/**
 * The export encoders, one per output format (roapi style): a table-driven map from the `output`
 * parameter to the DuckDB `COPY ... TO` options that write it, the response's content type and the
 * file extension. Adding a format is adding a row here.
 *
 * `USE_TMP_FILE false`: DuckDB writes straight to our `quorum-export-<uuid>.<ext>` path (no
 * `tmp_` sibling that the stale-file sweep would not recognise); a failed COPY leaves at most that
 * one file, which the export lifecycle deletes.
 */

export const EXPORT_FORMATS = ['csv', 'json', 'jsonl', 'parquet'] as const;
export type ExportFormat = (typeof EXPORT_FORMATS)[number];

export interface ExportEncoder {
  /** The options of `COPY (<query>) TO '<file>' (<copyOptions>)`: constants, never user input. */
  readonly copyOptions: string;
  readonly contentType: string;
  readonly extension: string;
}

export const ENCODERS: Readonly<Record<ExportFormat, ExportEncoder>> = {
  csv: {
    copyOptions: 'FORMAT csv, HEADER true, USE_TMP_FILE false',
    contentType: 'text/csv; charset=utf-8; header=present',
    extension: 'csv',
  },
  json: {
    // One JSON array of row objects.
    copyOptions: 'FORMAT json, ARRAY true, USE_TMP_FILE false',
    contentType: 'application/json; charset=utf-8',
    extension: 'json',
  },
  jsonl: {
    // One JSON object per line (newline-delimited JSON).
    copyOptions: 'FORMAT json, USE_TMP_FILE false',
    contentType: 'application/x-ndjson; charset=utf-8',
    extension: 'jsonl',
  },
  parquet: {
    copyOptions: 'FORMAT parquet, COMPRESSION zstd, USE_TMP_FILE false',
    contentType: 'application/vnd.apache.parquet',
    extension: 'parquet',
  },
};

export function isExportFormat(value: string): value is ExportFormat {
  return (EXPORT_FORMATS as readonly string[]).includes(value);
}
