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
import {
  decodeKeyset, decodeResolvedCursor, encodeCursorJson, encodeKeyset, encodeResolvedCursor, int64String,
} from '../../api/http/cursor.ts';
import { parseBoolean, parseEnum, parseInteger, parseNumber, parseTimestamp, parseTimestampValue } from '../../api/http/params.ts';
import { z } from 'zod';
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

/** Runs `f` and returns the ApiError it throws (fails the test on anything else, or on no throw). */
function problemOf(f: () => unknown): ApiError {
  try {
    f();
  } catch (err) {
    expect(err).toBeInstanceOf(ApiError);
    return err as ApiError;
  }
  throw new Error('expected an ApiError');
}

describe('keyset cursors', () => {
  const shape = z.tuple([int64String, z.string().min(1)]);

  it('round-trip their own kind', () => {
    const c = encodeKeyset('events.lang', ['1735689600000000', 'metaculus:1']);
    expect(decodeKeyset(c, 'events.lang', shape)).toEqual(['1735689600000000', 'metaculus:1']);
  });

  it('refuse a key whose int64 element is not a number (it used to reach BigInt: 500) and other kinds', () => {
    for (const c of [
      encodeKeyset('events.lang', ['abc', 'metaculus:1']),
      encodeKeyset('events.lang', ['1e5', 'metaculus:1']),
      encodeKeyset('events.lang', ['99999999999999999999', 'metaculus:1']),
      encodeKeyset('edges', ['abc', 'metaculus:1']), // another route's kind with a bad element
      encodeKeyset('edges', [0.5, 'metaculus:1']),
      encodeCursorJson({ v: 1, k: 'events.lang', a: [1, 'x'] }),
      encodeCursorJson({ v: 1, k: 'events.lang', a: ['1', 'x'], extra: 1 }),
      encodeCursorJson({ v: 1, r: null, q: 'x' }), // the resolved cursor
      encodeCursorJson(null),
      encodeCursorJson([1, 2]),
      'not base64!',
      'QQ', // canonical base64url of "A": not JSON
    ]) {
      const e = problemOf(() => decodeKeyset(c, 'events.lang', shape));
      expect(e.status).toBe(400);
      expect(e.code).toBe('invalid_parameter');
      expect(e.extras.parameter).toBe('cursor');
    }
  });

  it('answer arbitrary JSON with a 400, never another error', () => {
    fc.assert(
      fc.property(fc.jsonValue(), fc.constantFrom('events.lang', 'edges', 'predictions.lang'), (json, kind) => {
        const c = encodeCursorJson(json);
        for (const decode of [
          () => decodeKeyset(c, kind, shape),
          () => decodeResolvedCursor(c),
          () => decodeKeyset(encodeCursorJson({ v: 1, k: kind, a: json }), kind, shape),
        ]) {
          try {
            decode();
          } catch (err) {
            expect(err).toBeInstanceOf(ApiError);
            expect((err as ApiError).status).toBe(400);
          }
        }
      }),
      { numRuns: 300 },
    );
  });
});

describe('parameter parsers', () => {
  it('integer: digits only, in range', () => {
    expect(parseInteger('20', 'limit', { min: 1, max: 500 })).toBe(20);
    expect(parseInteger('007', 'limit', { min: 1, max: 500 })).toBe(7);
    for (const bad of ['0', '501', '-1', '1e3', '1.5', ' 1', '0x10', 'NaN', '', '9'.repeat(400), '１']) {
      expect(problemOf(() => parseInteger(bad, 'limit', { min: 1, max: 500 })).status).toBe(400);
    }
  });

  it('number: finite plain decimals in range', () => {
    expect(parseNumber('0.25', 'min_edge', { min: 0, max: 1 })).toBe(0.25);
    expect(parseNumber('.5', 'min_edge', { min: 0, max: 1 })).toBe(0.5);
    expect(parseNumber('-0.5', 'x', { min: -1, max: 1 })).toBe(-0.5);
    // a float printed in full, as String(0.1 + 0.2) gives it
    expect(parseNumber(String(0.1 + 0.2), 'min_edge', { min: 0, max: 1 })).toBe(0.1 + 0.2);
    for (const bad of ['-0.1', '1.01', '1e-3', 'Infinity', 'NaN', '+0.1', '0x1', '', '.', '-', '1'.repeat(400)]) {
      expect(problemOf(() => parseNumber(bad, 'min_edge', { min: 0, max: 1 })).status).toBe(400);
    }
    // leading zeros are digits like any others (QA: min_edge refused 00001 and took 01)
    expect(parseNumber('00001', 'min_edge', { min: 0, max: 1 })).toBe(1);
    expect(parseNumber('00.5', 'min_edge', { min: 0, max: 1 })).toBe(0.5);
    // the detail says which rule was broken: the grammar, or the range
    expect(problemOf(() => parseNumber(`0.${'5'.repeat(21)}`, 'min_edge', { min: 0, max: 1 })).detail).toMatch(/plain decimal number from 0 to 1 \(at most 15 integer and 20 fraction digits/);
    expect(problemOf(() => parseNumber('1.5', 'min_edge', { min: 0, max: 1 })).detail).toMatch(/must be a number from 0 to 1; got/);
  });

  it('boolean and enum: case-insensitive, nothing else', () => {
    expect(parseBoolean('TRUE', 'b')).toBe(true);
    expect(parseBoolean('false', 'b')).toBe(false);
    for (const bad of ['1', 'yes', '', 'truee']) expect(problemOf(() => parseBoolean(bad, 'b')).status).toBe(400);
    expect(parseEnum('CSV', 'output', ['csv', 'json'] as const)).toBe('csv');
    expect(problemOf(() => parseEnum('xml', 'output', ['csv', 'json'] as const)).extras.allowed).toEqual(['csv', 'json']);
  });

  it('timestamp: strict grammar, normalized to UTC with microseconds', () => {
    expect(parseTimestampValue('2025-03-01')).toEqual({
      iso: '2025-03-01T00:00:00.000000Z', sql: '2025-03-01 00:00:00.000000', epochUs: 1740787200000000n,
    });
    expect(parseTimestampValue('2025-03-01T12:30:00.000123Z')?.sql).toBe('2025-03-01 12:30:00.000123');
    expect(parseTimestampValue('2025-03-01T01:00:00-02:30')?.iso).toBe('2025-03-01T03:30:00.000000Z');
    expect(parseTimestampValue('2025-03-01t12:00+0100')?.iso).toBe('2025-03-01T11:00:00.000000Z');
    expect(parseTimestampValue('2025-03-01 12:00:00.123456z')?.iso).toBe('2025-03-01T12:00:00.123456Z');
    expect(parseTimestampValue('2024-02-29')).not.toBeNull();
    expect(parseTimestampValue('1970-01-01T00:00:00Z')?.epochUs).toBe(0n);
    expect(parseTimestampValue('1969-12-31T23:00:00-01:00')?.iso).toBe('1970-01-01T00:00:00.000000Z');
    expect(parseTimestampValue('9999-12-31T23:59:59.999999Z')?.iso).toBe('9999-12-31T23:59:59.999999Z');
    for (const bad of [
      '9999-12-31T23:59:59-18:00', // year 10000 in UTC: used to reach DuckDB and answer 500
      '9999-12-31T23:59:59-00:01',
      '1969-12-31T23:59:59Z',
      '0099-01-01', '0000-01-01', '2025-02-29', '2025-13-01', '2025-00-10', '2025-01-32',
      '2025-01-01T24:00', '2025-01-01T12:60', '2025-01-01T12:00:60', '2025-01-01T12:00+18:01',
      '2025-01-01T12:00+19:00', '2025-01-01T12', '2025-1-1', '+02025-01-01', '2025-01-01T12:00:00.Z',
      "2025-03-01' OR 1=1", '2025-01-01T12:00:00.1234567890Z', '', ' 2025-01-01', '２０２５-01-01',
      '2025-04-01T00:00:00.1234567Z', '2025-03-01 12:00:00.123456789z', // finer than the warehouse's microseconds
    ]) {
      expect(parseTimestampValue(bad), bad).toBeNull();
      expect(problemOf(() => parseTimestamp(bad, 'since')).status).toBe(400);
    }
  });

  it('timestamp: any date-time the grammar accepts agrees with Date, or is out of range', () => {
    fc.assert(
      fc.property(
        fc.date({ min: new Date('1969-01-01T00:00:00Z'), max: new Date('9999-12-31T23:59:59Z'), noInvalidDate: true }),
        fc.integer({ min: -18 * 60, max: 18 * 60 }),
        (d, offMin) => {
          const local = new Date(d.getTime() + offMin * 60_000);
          if (local.getUTCFullYear() > 9999 || local.getUTCFullYear() < 1969) return;
          const sign = offMin < 0 ? '-' : '+';
          const a = Math.abs(offMin);
          const text = `${local.toISOString().slice(0, 23)}${sign}${String(Math.floor(a / 60)).padStart(2, '0')}:${String(a % 60).padStart(2, '0')}`;
          const t = parseTimestampValue(text);
          const ms = d.getTime();
          if (ms < 0 || ms > Date.UTC(9999, 11, 31, 23, 59, 59, 999)) expect(t).toBeNull();
          else expect(t?.iso).toBe(`${d.toISOString().slice(0, 23)}000Z`);
        },
      ),
      { numRuns: 500 },
    );
  });
});
