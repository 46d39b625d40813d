/**
 * fromColumns: a schema's fields read from the same-named columns by their zod type (the table of
 * readers in cells.ts), overrides for the rest, and a clear error for a field it cannot read.
 */
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { zNum, zProb, count, isoTime } from '../openapi/common.ts';
import { fromColumns } from './cells.ts';

const Item = z.object({
  id: z.string(),
  label: z.string().nullable(),
  at: isoTime.nullable(),
  n: count,
  p: zProb,
  x: zNum,
  ok: z.boolean(),
  flag: z.boolean().nullable(),
  kind: z.enum(['a', 'b']),
});

describe('fromColumns', () => {
  it('reads each field by its type: nullable ones to null, counts to 0, ids to strings', () => {
    const row = { id: 7, label: 'L', at: '2026-01-01T00:00:00.000Z', n: 3, p: 0.25, x: Number.NaN, ok: true, flag: false, extra: 'dropped' };
    expect(fromColumns(Item, row, { kind: 'b' })).toEqual({ id: '7', label: 'L', at: '2026-01-01T00:00:00.000Z', n: 3, p: 0.25, x: null, ok: true, flag: false, kind: 'b' });
    expect(fromColumns(Item, { id: 'q' }, { kind: 'a' })).toEqual({ id: 'q', label: null, at: null, n: 0, p: null, x: null, ok: false, flag: null, kind: 'a' });
    expect(fromColumns(Item, { id: 'q', label: 5, n: 'many', ok: 'yes' }, { kind: 'a', n: 9 })).toMatchObject({ label: null, n: 9, ok: false });
  });

  it('a field it cannot read (an enum here) must be given', () => {
    expect(() => fromColumns(Item, { id: 'q' })).toThrow(/no cell reader for field kind \(enum\)/);
  });
});
