/**
 * Test helpers for the scoring SQL: a real in-memory DuckDB with empty raw_* tables, typed row
 * inserts through prepared statements, and small readers.
 */
import {
  BIGINT,
  BOOLEAN,
  DOUBLE,
  DuckDBInstance,
  INTEGER,
  LIST,
  TIMESTAMP,
  VARCHAR,
  listValue,
  timestampValue,
  type DuckDBConnection,
  type DuckDBType,
  type DuckDBValue,
} from '@duckdb/node-api';
import { createRawTables, deriveTables } from '../../pipeline/warehouse/derive.ts';
import { RAW_TABLES, type DuckType, type Mode, type RawTableName } from '../../pipeline/warehouse/tables.ts';

const BIND_TYPE: Record<DuckType, DuckDBType> = {
  VARCHAR: VARCHAR,
  DOUBLE: DOUBLE,
  BIGINT: BIGINT,
  INTEGER: INTEGER,
  BOOLEAN: BOOLEAN,
  TIMESTAMP: TIMESTAMP,
  'VARCHAR[]': LIST(VARCHAR),
  'DOUBLE[]': LIST(DOUBLE),
};

export type Row = Record<string, string | number | boolean | null | string[] | number[] | Date | undefined>;

export async function openDb(): Promise<{ conn: DuckDBConnection; close: () => void }> {
  const db = await DuckDBInstance.create(':memory:');
  const conn = await db.connect();
  await createRawTables(conn);
  return {
    conn,
    close: () => {
      conn.closeSync();
      db.closeSync();
    },
  };
}

/** Parses 'YYYY-MM-DD[THH:MM:SS]' as UTC. */
export function ts(s: string): Date {
  return new Date(s.length === 10 ? `${s}T00:00:00Z` : s.endsWith('Z') ? s : `${s}Z`);
}

function toValue(type: DuckType, v: Row[string]): DuckDBValue {
  if (v === undefined || v === null) return null;
  switch (type) {
    case 'TIMESTAMP': {
      const d = v instanceof Date ? v : ts(String(v));
      return timestampValue(BigInt(d.getTime()) * 1000n);
    }
    case 'VARCHAR[]':
      return listValue(v as string[]);
    case 'DOUBLE[]':
      return listValue(v as number[]);
    case 'BIGINT':
      return BigInt(v as number);
    default:
      return v as DuckDBValue;
  }
}

/**
 * Appends rows to raw_<table> through DuckDB's appender (unlisted columns are NULL): the property
 * tests load a warehouse a hundred-odd times, and a prepared INSERT per row cost more than the
 * derive's smaller files.
 */
export async function insert(conn: DuckDBConnection, table: RawTableName, rows: Row[]): Promise<void> {
  const columns = Object.entries(RAW_TABLES[table].columns as Record<string, DuckType>);
  for (const row of rows) {
    for (const k of Object.keys(row)) {
      if (!(k in RAW_TABLES[table].columns)) throw new Error(`fixture: ${table} has no column ${k}`);
    }
  }
  // The raw table's columns are RAW_TABLES' in order (createRawTables), which the appender follows.
  const appender = await conn.createAppender(`raw_${table}`);
  try {
    for (const row of rows) {
      for (const [n, t] of columns) {
        const v = toValue(t, row[n]);
        if (v === null) appender.appendNull();
        else appender.appendValue(v, BIND_TYPE[t]);
      }
      appender.endRow();
    }
    appender.flushSync();
  } finally {
    appender.closeSync();
  }
}

/** Rows of a query as plain objects (BIGINT → number, TIMESTAMP → ISO string). */
export async function rows(conn: DuckDBConnection, sql: string): Promise<Record<string, unknown>[]> {
  const reader = await conn.runAndReadAll(sql);
  return reader.getRowObjectsJson().map((r) => {
    const out: Record<string, unknown> = {};
    for (const [k, v] of Object.entries(r)) {
      out[k] = typeof v === 'string' && /^-?\d+$/.test(v) && k !== 'key' && !k.endsWith('_id') ? Number(v) : v;
    }
    return out;
  });
}

export async function one(conn: DuckDBConnection, sql: string): Promise<Record<string, unknown>> {
  const r = await rows(conn, sql);
  if (r.length !== 1) throw new Error(`expected one row, got ${r.length}: ${sql}`);
  return r[0]!;
}

export async function derive(
  conn: DuckDBConnection,
  asOf = ts('2025-06-01'),
  headlineModes?: Mode[],
): Promise<string[]> {
  return deriveTables(conn, { asOf, headlineModes });
}

/** A question row with defaults. */
export function question(id: string, extra: Row = {}): Row {
  return {
    question_id: id,
    venue: 'polymarket',
    venue_market_id: id,
    title: `Question ${id}`,
    category: 'politics',
    domain: 'policy',
    created_at: '2025-01-01',
    close_time: null,
    status: 'active',
    ingested_at: '2025-01-01',
    ...extra,
  };
}

/** A forecast row with defaults. */
export function forecast(
  question_id: string,
  model: string,
  mode: Mode,
  run_id: string,
  created_at: string,
  probability: number,
  extra: Row = {},
): Row {
  return { question_id, model, mode, run_id, created_at, probability, provider: 'simulated', ...extra };
}

export function resolution(question_id: string, outcome: number | null, resolved_at: string, extra: Row = {}): Row {
  return { question_id, outcome, resolved_at, source_slug: 'fred', method: 'api', ...extra };
}
