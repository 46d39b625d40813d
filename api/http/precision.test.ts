import { describe, expect, test } from 'vitest';
import { roundFine, roundPercent, roundProbability } from './precision.ts';
import { zDays, zFine } from '../openapi/common.ts';

describe('published precision', () => {
  test('probabilities go out with 6 decimals, binary noise removed', () => {
    expect(roundProbability(0.49999999999999994)).toBe(0.5);
    expect(roundProbability(0.1234565)).toBe(0.123457);
    expect(roundProbability(1)).toBe(1);
    expect(roundProbability(null)).toBe(null);
    expect(roundProbability(undefined)).toBe(null);
  });
  test('percentages go out with 2 decimals and never as -0', () => {
    expect(roundPercent(66.666666)).toBe(66.67);
    expect(roundPercent(-0.001)).toBe(0);
    expect(Object.is(roundPercent(-0.001), -0)).toBe(false);
    expect(roundPercent(null)).toBe(null);
  });
  test('a half on the decimal value rounds away from zero, however the binary value falls (QA: 1.005 → 1, 2.0865625 → 2.086562)', () => {
    expect(roundPercent(1.005)).toBe(1.01);
    expect(roundPercent(-1.005)).toBe(-1.01);
    expect(roundPercent(0.145)).toBe(0.15);
    expect(roundProbability(2.0865625)).toBe(2.086563); // a track record's bias, published by the trends route
    expect(roundProbability(0.5042705)).toBe(0.504271); // a Brier at rounds=all
    expect(roundProbability(0.0001245)).toBe(0.000125);
    // every half at the 7th decimal of [0, 1), and at the 3rd of [0, 1000)
    for (let i = 0; i < 1_000_000; i++) {
      const got = roundProbability(Number(`0.${String(i).padStart(6, '0')}5`));
      if (got !== Number(((i + 1) / 1e6).toFixed(6))) expect(got, `0.${String(i).padStart(6, '0')}5`).toBe((i + 1) / 1e6);
    }
    for (let i = 0; i < 100_000; i++) {
      const text = `${Math.floor(i / 100)}.${String(i % 100).padStart(2, '0')}5`;
      const got = roundPercent(Number(text));
      if (got !== Number(((i + 1) / 100).toFixed(2))) expect(got, text).toBe((i + 1) / 100);
    }
  });
  test('whole numbers, values below the last decimal, large and tiny values', () => {
    expect(roundProbability(0)).toBe(0);
    expect(roundProbability(-0.0000004)).toBe(0);
    expect(Object.is(roundProbability(-0.0000004), -0)).toBe(false);
    expect(roundProbability(1e-7)).toBe(0);
    expect(roundProbability(12345.1234565)).toBe(12345.123457);
    expect(roundPercent(-12345.125)).toBe(-12345.13);
    expect(roundPercent(5e-324)).toBe(0);
    expect(roundPercent(1e21)).toBe(1e21);
    expect(roundProbability(Number.POSITIVE_INFINITY)).toBe(Number.POSITIVE_INFINITY);
  });
  test('durations in days and values in their own unit go out with 6 decimals, half away from zero on the decimal value (QA: horizon days had 14; a claim\'s error 2.0865625 went out as 2.086562)', () => {
    expect(zDays.parse(10 / 3)).toBe(3.333333);
    expect(zDays.parse(null)).toBe(null);
    expect(zFine.parse(2.0865625)).toBe(2.086563);
    expect(zFine.parse(-2.0865625)).toBe(-2.086563);
    expect(roundFine(1234567.0000005)).toBe(1234567.000001);
    expect(roundFine(undefined)).toBe(null);
  });
});
