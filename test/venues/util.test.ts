import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { toDate } from '../../pipeline/venues/util.ts';

const pad = (n: number, width: number) => String(n).padStart(width, '0');

describe('toDate', () => {
  it('reads ISO timestamps exactly as the date parser does, in or out of range, any fraction, Z or offset', () => {
    const iso = fc
      .record({
        year: fc.oneof(fc.integer({ min: 0, max: 9999 }), fc.constantFrom(0, 99, 999, 1000, 1970, 2025)),
        month: fc.integer({ min: 0, max: 13 }),
        day: fc.integer({ min: 0, max: 32 }),
        hour: fc.oneof(fc.integer({ min: 0, max: 25 }), fc.constant(24)),
        minute: fc.integer({ min: 0, max: 60 }),
        second: fc.option(fc.integer({ min: 0, max: 60 })),
        fraction: fc.option(fc.stringMatching(/^\d{1,9}$/)),
        zone: fc.constantFrom('Z', '+00:00', '-05:30', '+14:00'),
      })
      .map(({ year, month, day, hour, minute, second, fraction, zone }) => {
        const time = `${pad(hour, 2)}:${pad(minute, 2)}${second === null ? '' : `:${pad(second, 2)}${fraction === null ? '' : `.${fraction}`}`}`;
        return `${pad(year, 4)}-${pad(month, 2)}-${pad(day, 2)}T${time}${zone}`;
      });
    fc.assert(
      fc.property(iso, (s) => {
        const expected = new Date(s).getTime();
        expect({ s, ms: toDate(s)?.getTime() ?? null }).toEqual({ s, ms: Number.isNaN(expected) ? null : expected });
      }),
      { numRuns: 5000 },
    );
  });

  it('reads the other shapes venues send', () => {
    expect(toDate('2024-11-06 14:32:10.123+00')).toEqual(new Date('2024-11-06T14:32:10.123Z'));
    expect(toDate('2026-03-01')).toEqual(new Date('2026-03-01T00:00:00Z'));
    expect(toDate('2026-03-01 12:00:00')).toEqual(new Date('2026-03-01T12:00:00Z'));
    expect(toDate(1754000000000)).toEqual(new Date(1754000000000));
    expect(toDate(' 2026-03-01T12:00:00Z ')).toEqual(new Date('2026-03-01T12:00:00Z'));
    for (const bad of ['', 'soon', '2026-13-01T00:00:00Z', null, undefined, {}, Number.NaN]) expect(toDate(bad)).toBeNull();
  });
});
