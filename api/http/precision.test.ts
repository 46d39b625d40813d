import { describe, expect, test } from 'vitest';
import { roundPercent, roundProbability } from './precision.ts';

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
});
