/**
 * The disagreement verdict's figures (api/routes/analysis-disagreement.ts `verdictLine`) are rounded
 * to 3 decimals half away from zero on their decimal value, as every figure the API and the
 * dashboard publish (README: "a consensus of 0.6455 is 64.6%"), not by toFixed on the binary value
 * (0.6455 is 0.64549999… in binary: toFixed(3) gives 0.645).
 */
import { describe, expect, it } from 'vitest';
import { verdictLine } from '../../api/routes/analysis-disagreement.ts';

describe('disagreement verdict', () => {
  it('quotes Spearman and its interval rounded half away from zero on the decimal value', () => {
    // 0.6455 → 0.646, 0.1235 → 0.124, 0.7215 → 0.722 (all three are a last bit below the half in binary)
    expect(verdictLine({ n: 50, spearman: 0.6455, spearman_ci95_lo: 0.1235, spearman_ci95_hi: 0.7215, predicts_error: 'true' }))
      .toBe('Disagreement predicts error: more disagreement, larger errors (Spearman 0.646, 95% interval [0.124, 0.722], n = 50).');
    // negative figures: half away from zero, −0.2345 → −0.235
    expect(verdictLine({ n: 30, spearman: -0.2345, spearman_ci95_lo: -0.5, spearman_ci95_hi: 0.0645, predicts_error: 'inconclusive' }))
      .toBe('Inconclusive: the interval contains 0 (Spearman -0.235, 95% interval [-0.500, 0.065], n = 30).');
  });
});
