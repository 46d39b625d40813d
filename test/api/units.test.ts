/**
 * Unit tests of the API's building blocks: problem rendering, cursors, parameter parsing,
 * DuckDB → JSON conversion.
 */
import { DuckDBInstance } from '@duckdb/node-api';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { rowsAsJson } from '../../api/db/convert.ts';
import { runQuery } from '../../api/db/query.ts';
import { ApiError, toApiError } from '../../api/errors/problem.ts';
import { decodeResolvedCursor, encodeResolvedCursor } from '../../api/http/cursor.ts';
import { isSnapshotId, schemaNameFor } from '../../api/snapshot/manifest.ts';

describe('ApiError', () => {
  it('renders RFC 9457 bodies with a stable code and extras', () => {
    const e = ApiError.invalidParameter('limit', 'bad', { min: 1, max: 500 });
    expect(e.toProblem('/x')).toEqual({
      type: 'urn:quorum:problem:invalid_parameter', title: 'Invalid parameter', status: 400,
      code: 'invalid_parameter', detail: 'bad', instance: '/x', parameter: 'limit', allowed: { min: 1, max: 500 },
    });
    expect(ApiError.notReady().status).toBe(503);
    expect(ApiError.notFound().code).toBe('not_found');
    expect(ApiError.rateLimited(2.2).headers['Retry-After']).toBe('3');
    expect(ApiError.methodNotAllowed('POST', ['GET']).headers.Allow).toBe('GET');
  });

  it('never leaks an unexpected error', () => {
    const p = toApiError(new Error('secret /etc/path at foo.ts:1')).toProblem();
    expect(p).toMatchObject({ status: 500, code: 'internal' });
    expect(JSON.stringify(p)).not.toContain('secret');
  });
});

describe('resolved cursor', () => {
  it('round-trips any key', () => {
    fc.assert(
      fc.property(
        fc.option(fc.bigInt({ min: -(2n ** 63n), max: 2n ** 63n - 1n }), { nil: null }),
        fc.string({ minLength: 1, maxLength: 100 }),
        (r, q) => {
          const c = encodeResolvedCursor({ resolvedUs: r, questionId: q });
          expect(c).toMatch(/^[A-Za-z0-9_-]+$/);
          expect(decodeResolvedCursor(c)).toEqual({ resolvedUs: r, questionId: q });
        },
      ),
    );
  });

  it('rejects arbitrary strings with a 400 ApiError, never another error', () => {
    fc.assert(
      fc.property(fc.string({ maxLength: 200 }), (s) => {
        try {
          decodeResolvedCursor(s);
        } catch (err) {
          expect(err).toBeInstanceOf(ApiError);
          expect((err as ApiError).status).toBe(400);
        }
      }),
    );
  });
});

describe('snapshot ids', () => {
  it('accepts run ids, refuses traversal and odd characters', () => {
    expect(isSnapshotId('r20261121T225700Z-ab12')).toBe(true);
    for (const bad of ['..', '../x', 'a/b', 'a\\b', '.hidden', '', 'a b', "x'y", 'a..b', 'x'.repeat(200)]) {
      expect(isSnapshotId(bad), bad).toBe(false);
    }
    expect(schemaNameFor('r20261121T225700Z-ab12', 3)).toBe('snap_3_r20261121t225700z_ab12');
  });
});

describe('DuckDB → JSON', () => {
  it('converts by type: timestamps ISO Z, BIGINT numbers, NaN null, lists arrays', async () => {
    const instance = await DuckDBInstance.create(':memory:');
    const conn = await instance.connect();
    try {
      const reader = await conn.runAndReadAll(`SELECT
        TIMESTAMP '2025-01-02 03:04:05.678901' AS ts,
        TIMESTAMP_MS '2025-01-02 03:04:05.678' AS ts_ms,
        TIMESTAMP_NS '2025-01-02 03:04:05.678901234' AS ts_ns,
        'infinity'::TIMESTAMP AS ts_inf,
        DATE '2025-01-02' AS d,
        42::BIGINT AS big,
        9007199254740993::BIGINT AS huge,
        'NaN'::DOUBLE AS nan,
        'inf'::DOUBLE AS inf,
        0.25::DOUBLE AS dbl,
        1.50::DECIMAL(4,2) AS dec,
        ['a', NULL]::VARCHAR[] AS list,
        [1.5, 'NaN'::DOUBLE] AS dlist,
        {'x': 1::BIGINT} AS st,
        NULL::VARCHAR AS nul,
        true AS b`);
      expect(rowsAsJson(reader)).toEqual([{
        ts: '2025-01-02T03:04:05.678Z', ts_ms: '2025-01-02T03:04:05.678Z', ts_ns: '2025-01-02T03:04:05.678Z',
        ts_inf: null, d: '2025-01-02', big: 42, huge: '9007199254740993', nan: null, inf: null, dbl: 0.25,
        dec: 1.5, list: ['a', null], dlist: [1.5, null], st: { x: 1 }, nul: null, b: true,
      }]);
    } finally {
      conn.closeSync();
      instance.closeSync();
    }
  });

  it('binds parameters by name and refuses missing or extra ones', async () => {
    const instance = await DuckDBInstance.create(':memory:');
    const conn = await instance.connect();
    try {
      const rows = await runQuery(conn, 'SELECT $a::VARCHAR AS a, $n + 1 AS n, $x IS NULL AS x', { a: "'; DROP", n: 41, x: null });
      expect(rows).toEqual([{ a: "'; DROP", n: 42, x: true }]);
      await expect(runQuery(conn, 'SELECT $a AS a', {})).rejects.toThrow(/not bound/);
      await expect(runQuery(conn, 'SELECT 1', { a: 1 })).rejects.toThrow(/does not occur/);
    } finally {
      conn.closeSync();
      instance.closeSync();
    }
  });
});
