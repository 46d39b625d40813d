/**
 * `quorum import claims csv` (QA, third pass): which files of the directory are read, and the
 * order that settles slug collisions. Real files, the real importer, real DuckDB and Parquet.
 */
import { describe, expect, it } from 'vitest';
import { assignSlugs } from '../../pipeline/claims/slug.ts';

describe('slug collisions', () => {
  it('are settled in code-point order, an astral character after every BMP one (QA: "Polls 😀" took the bare slug before "Polls ！", UTF-16 order)', () => {
    // U+FF01 (fullwidth !) < U+1F600 (😀) as code points; as UTF-16 units 0xFF01 > 0xD83D.
    const got = assignSlugs(['Polls 😀', 'Polls ！'], new Map(), new Set());
    expect(got.get('Polls ！')).toBe('polls');
    expect(got.get('Polls 😀')).toBe('polls-2');
    // BMP against BMP and astral against astral keep their plain order.
    const bmp = assignSlugs(['Polls ！', 'Polls ¡'], new Map(), new Set());
    expect(bmp.get('Polls ¡')).toBe('polls');
    const astral = assignSlugs(['Polls 😀', 'Polls 🎉'], new Map(), new Set());
    expect(astral.get('Polls 🎉')).toBe('polls');
    expect(astral.get('Polls 😀')).toBe('polls-2');
  });
});
