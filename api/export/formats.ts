/**
 * The export encoders, one per output format (roapi style): a table-driven map from the `output`
 * parameter to the DuckDB `COPY ... TO` options that write it, the response's content type, the
 * file extension, how TIMESTAMP columns are typed, and how the format is cut into slices.
 * Adding a format is adding a row here.
 *
 * Timestamps. The warehouse stores naive TIMESTAMPs that are UTC by convention. CSV, JSON and
 * JSONL write every timestamp as ISO 8601 UTC with milliseconds and `Z`, always the same shape:
 * `2025-10-16T00:00:00.000Z` (EXPORT_TIMESTAMP_FORMAT; JavaScript's toISOString form). Sub-millisecond
 * digits are truncated, so a value read back and used as the next `*_since` never skips a row.
 * Parquet writes them as TIMESTAMP WITH TIME ZONE (UTC-adjusted, microseconds kept): the engine
 * casts every TIMESTAMP column of the query to TIMESTAMPTZ for it (`castTimestamps`), on a
 * connection whose TimeZone is UTC. CSV/JSON do not cast: formatting a TIMESTAMPTZ goes through
 * ICU per value (measured ~2× slower) and the naive value is already the UTC instant.
 *
 * Slices (first byte fast): a sliced export COPYs its rows in ordered slices, each to its own
 * file, and streams each file as it completes. `slices` says how a format's slice files join
 * into one body: CSV writes its header in the first slice only; JSONL concatenates; JSON writes
 * slices as JSON lines and frames them into one array while streaming (api/export/stream.ts).
 * Parquet is not sliced (a Parquet file is one footer over all row groups; concatenated files are
 * not a file): it keeps the whole-file path.
 *
 * Nested values (LIST, STRUCT, MAP: `key_factors`, `evidence_ids`, `categories`, `tags`) are JSON
 * in every text format: JSON and JSONL write them as JSON arrays and objects; CSV writes the same
 * JSON as the cell's text (`["a","b c"]`, RFC 4180-quoted), not DuckDB's own list notation
 * (`[a, 'b c']`), which no reader can parse back (`nestedAsJson`: the engine wraps each nested
 * column in `to_json`). Parquet keeps them as Parquet lists and structs.
 *
 * Spreadsheet formulas (CSV only): a text cell that begins with `=`, `+`, `-`, `@`, a tab or a
 * carriage return, and is not a number, is written with a leading apostrophe (`'=HYPERLINK(...)`),
 * which spreadsheets show as text instead of evaluating (OWASP's CSV-injection advice). Question
 * titles come from venues where anyone can write one (Manifold), from operators' question files
 * and from claims files; a pro customer opening an export in a spreadsheet must not run them.
 * Numbers written as text (`-2.5`) stay as they are. JSON, JSONL and Parquet carry the exact text.
 *
 * `USE_TMP_FILE false`: DuckDB writes straight to our `quorum-export-<pid>-<uuid>.<ext>` path (no
 * `tmp_` sibling that the stale-file sweep would not recognise); a failed COPY leaves at most that
 * one file, which the export lifecycle deletes.
 */

export const EXPORT_FORMATS = ['csv', 'json', 'jsonl', 'parquet'] as const;
export type ExportFormat = (typeof EXPORT_FORMATS)[number];

/** strftime format of every exported timestamp in CSV, JSON and JSONL: ISO 8601, UTC, millis, `Z`. */
export const EXPORT_TIMESTAMP_FORMAT = '%Y-%m-%dT%H:%M:%S.%gZ';
const TS = `TIMESTAMPFORMAT '${EXPORT_TIMESTAMP_FORMAT}'`;

/** How the slice files of a sliced export join into one response body. */
export type SliceJoin =
  /** Concatenate; the first slice carries the header (COPY options `first`, later ones `rest`). */
  | { kind: 'concat'; first: string; rest: string }
  /** Slices are JSON lines; the body frames them as one JSON array. */
  | { kind: 'json-array'; options: string };

export interface ExportEncoder {
  /** The options of `COPY (<query>) TO '<file>' (<copyOptions>)`: constants, never user input. */
  readonly copyOptions: string;
  readonly contentType: string;
  readonly extension: string;
  /** Cast TIMESTAMP columns to TIMESTAMPTZ (UTC) before writing. */
  readonly castTimestamps: boolean;
  /** Write LIST/ARRAY/STRUCT/MAP/UNION columns as their JSON text (a format without nested values). */
  readonly nestedAsJson: boolean;
  /** Prefix text that a spreadsheet would run as a formula with an apostrophe (see above). */
  readonly formulaSafe: boolean;
  /** How slices join, or null: the format is written as one whole file. */
  readonly slices: SliceJoin | null;
}

export const ENCODERS: Readonly<Record<ExportFormat, ExportEncoder>> = {
  csv: {
    copyOptions: `FORMAT csv, HEADER true, ${TS}, USE_TMP_FILE false`,
    contentType: 'text/csv; charset=utf-8; header=present',
    extension: 'csv',
    castTimestamps: false,
    nestedAsJson: true,
    formulaSafe: true,
    slices: {
      kind: 'concat',
      first: `FORMAT csv, HEADER true, ${TS}, USE_TMP_FILE false`,
      rest: `FORMAT csv, HEADER false, ${TS}, USE_TMP_FILE false`,
    },
  },
  json: {
    // One JSON array of row objects.
    copyOptions: `FORMAT json, ARRAY true, ${TS}, USE_TMP_FILE false`,
    contentType: 'application/json; charset=utf-8',
    extension: 'json',
    castTimestamps: false,
    nestedAsJson: false,
    formulaSafe: false,
    slices: { kind: 'json-array', options: `FORMAT json, ${TS}, USE_TMP_FILE false` },
  },
  jsonl: {
    // One JSON object per line (newline-delimited JSON).
    copyOptions: `FORMAT json, ${TS}, USE_TMP_FILE false`,
    contentType: 'application/x-ndjson; charset=utf-8',
    extension: 'jsonl',
    castTimestamps: false,
    nestedAsJson: false,
    formulaSafe: false,
    slices: {
      kind: 'concat',
      first: `FORMAT json, ${TS}, USE_TMP_FILE false`,
      rest: `FORMAT json, ${TS}, USE_TMP_FILE false`,
    },
  },
  parquet: {
    copyOptions: 'FORMAT parquet, COMPRESSION zstd, USE_TMP_FILE false',
    contentType: 'application/vnd.apache.parquet',
    extension: 'parquet',
    castTimestamps: true,
    nestedAsJson: false,
    formulaSafe: false,
    slices: null,
  },
};

export function isExportFormat(value: string): value is ExportFormat {
  return (EXPORT_FORMATS as readonly string[]).includes(value);
}
