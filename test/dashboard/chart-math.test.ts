/**
 * Properties of the dashboard's chart arithmetic, free of the DOM: the interval charts' x axis
 * (linearTicks) and the Wilson interval of an accuracy (wilson).
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { linearTicks } from '../../dashboard/src/charts.ts';
import { wilson } from '../../dashboard/src/ui.ts';

/** The figures the interval charts draw: scores, skills, percentages, amounts (|x| up to 1e15), zero ranges, tiny and huge spans. */
const figure = fc.oneof(
  fc.double({ min: -1, max: 1, noNaN: true }),
  fc.double({ min: -1e15, max: 1e15, noNaN: true }),
  fc.double({ min: -1e-9, max: 1e-9, noNaN: true }),
  fc.integer({ min: -1000, max: 1000 }).map((x) => x / 100),
  fc.integer({ min: -1000, max: 1000 }).map((x) => 5 + x / 1e6),
);

describe('linearTicks', () => {
  it('draws every value inside its domain, both ends ticked, ticks strictly increasing with distinct labels, no more than fit the width (property)', () => {
    fc.assert(
      fc.property(fc.array(figure, { minLength: 1, maxLength: 6 }), fc.integer({ min: 150, max: 2000 }), (values, px) => {
        const axis = linearTicks(values, px);
        expect(axis).not.toBeNull();
        const { domain, ticks, format } = axis!;
        expect(ticks.length).toBeGreaterThanOrEqual(2);
        // 50 px apart at least (MIN_TICK_SPACING)
        expect(ticks.length).toBeLessThanOrEqual(Math.floor(px / 50) + 1);
        expect([ticks[0], ticks.at(-1)]).toEqual(domain);
        for (let i = 1; i < ticks.length; i++) expect(ticks[i]!).toBeGreaterThan(ticks[i - 1]!);
        // inside, up to the rounding slack the step search allows (far below a pixel)
        const slack = 1e-6 * (domain[1] - domain[0]);
        for (const v of values) {
          expect(v).toBeGreaterThanOrEqual(domain[0] - slack);
          expect(v).toBeLessThanOrEqual(domain[1] + slack);
        }
        const labels = ticks.map(format);
        expect(new Set(labels).size).toBe(labels.length);
        for (const label of labels) expect(label).not.toMatch(/^−0(\.0+)?$/);
      }),
      { numRuns: 400 },
    );
  });

  it('a width too narrow for two ticks is Plot\'s own axis (null), never a point domain the values fall outside (QA: [0, 1] at 30 px was the domain [0, 0], one tick)', () => {
    expect(linearTicks([0, 1], 30)).toBeNull();
    expect(linearTicks([0], 49)).toBeNull();
    // a zero range at 0 (a non-negative measure) is widened upwards only: [0, 0.001] fits 50 px
    expect(linearTicks([0], 50)?.domain).toEqual([0, 0.001]);
    expect(linearTicks([0, 1], 50)?.domain).toEqual([0, 1]);
    fc.assert(
      fc.property(fc.array(figure, { minLength: 1, maxLength: 4 }), fc.integer({ min: 1, max: 149 }), (values, px) => {
        const axis = linearTicks(values, px);
        if (axis === null) return;
        expect(axis.ticks.length).toBeGreaterThanOrEqual(2);
        expect(axis.domain[1]).toBeGreaterThan(axis.domain[0]);
      }),
      { numRuns: 200 },
    );
  });

  it('is null without a finite value', () => {
    expect(linearTicks([], 300)).toBeNull();
    expect(linearTicks([Number.NaN, Number.POSITIVE_INFINITY], 300)).toBeNull();
  });
});

describe('wilson', () => {
  it('holds the estimate k/n, within [0, 1] (property)', () => {
    fc.assert(
      fc.property(fc.integer({ min: 1, max: 100_000 }), fc.double({ min: 0, max: 1, noNaN: true }), (n, share) => {
        const k = Math.round(share * n);
        const [lo, hi] = wilson(k, n);
        expect(0).toBeLessThanOrEqual(lo);
        expect(lo).toBeLessThanOrEqual(k / n);
        expect(k / n).toBeLessThanOrEqual(hi);
        expect(hi).toBeLessThanOrEqual(1);
      }),
      { numRuns: 500 },
    );
  });

  it('is [0, 1] without a trial, and ends exactly at 0 for no success and 1 for all (QA: wilson(0, 125) began at 1.7e-18, above the estimate)', () => {
    expect(wilson(0, 0)).toEqual([0, 1]);
    expect(wilson(0, 125)[0]).toBe(0);
    expect(wilson(125, 125)[1]).toBe(1);
  });

  it('narrows as n grows at a fixed share', () => {
    fc.assert(
      fc.property(fc.integer({ min: 1, max: 1000 }), fc.integer({ min: 0, max: 10 }), (n, tenths) => {
        const [lo1, hi1] = wilson((n * tenths), n * 10);
        const [lo2, hi2] = wilson((n * tenths) * 4, n * 40);
        expect(hi2 - lo2).toBeLessThanOrEqual(hi1 - lo1);
      }),
      { numRuns: 200 },
    );
  });
});
