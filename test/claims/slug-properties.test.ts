/**
 * fast-check properties of source slugs (issue 11, pipeline/claims/slug.ts): deterministic
 * ASCII-folded kebab-case, collisions resolved stably, the slugs of stored sources never changed by
 * another import of the same or more names, in any order.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { assignSlugs, isReservedSlug, MAX_SLUG_BASE, slugify, sourceName } from '../../pipeline/claims/slug.ts';

const VENUES: ReadonlySet<string> = new Set(['infer', 'kalshi', 'manifold', 'metaculus', 'polymarket', 'quorum']);

/** Source names: any text, names that collide once folded, reserved ones, composed and decomposed spellings. */
const sourceNameArb = fc.oneof(
  fc.string({ maxLength: 24 }),
  fc.string({ unit: 'grapheme', maxLength: 16 }),
  fc.constantFrom(
    'Polymarket', 'polymarket 2', 'AI Impacts', 'Source AI Impacts', 'Quorum Consensus', 'Société Générale', 'Societe Generale',
    'Se\u0301bastien', 'S\u00e9bastien', 'Øptimus Analytics', 'Optimus Analytics', '東京', 'ß', 'SS', 'x'.repeat(250),
  ),
);

/** The stored sources after importing `names` (name as stored: its NFC form → slug), as pipeline/claims/import.ts keeps them. */
function stored(slugs: ReadonlyMap<string, string>): { known: Map<string, string>; taken: Set<string> } {
  const known = new Map<string, string>();
  for (const [name, slug] of slugs) if (!known.has(sourceName(name))) known.set(sourceName(name), slug);
  return { known, taken: new Set(slugs.values()) };
}

describe('slugify', () => {
  it('is lower-case ASCII kebab-case of at most MAX_SLUG_BASE characters, idempotent, blind to case and to composed or decomposed spelling (property)', () => {
    fc.assert(
      fc.property(sourceNameArb, (name) => {
        const slug = slugify(name);
        expect(slug).toMatch(/^[a-z0-9]+(-[a-z0-9]+)*$/);
        expect(slug.length).toBeLessThanOrEqual(MAX_SLUG_BASE);
        expect(slugify(slug)).toBe(slug);
        expect(slugify(name.normalize('NFD'))).toBe(slugify(name.normalize('NFC')));
        expect(slugify(name.toUpperCase())).toBe(slugify(name.toLowerCase()));
      }),
      { numRuns: 500 },
    );
  });
});

describe('assignSlugs', () => {
  it('gives one slug per source (per NFC name), distinct, never reserved nor over 200 characters, whatever the order of the names (property)', () => {
    fc.assert(
      fc.property(fc.array(sourceNameArb, { maxLength: 10 }).chain((names) => fc.tuple(fc.constant(names), fc.shuffledSubarray(names, { minLength: names.length }))), ([names, shuffled]) => {
        const slugs = assignSlugs(names, new Map(), new Set(), VENUES);
        expect(assignSlugs(shuffled, new Map(), new Set(), VENUES)).toEqual(slugs);
        const bySource = new Map<string, string>();
        for (const name of names) {
          const slug = slugs.get(name)!;
          expect(isReservedSlug(slug, VENUES) || slug === 'quorum-consensus').toBe(false);
          expect(slug.length).toBeLessThanOrEqual(200);
          expect(bySource.get(sourceName(name)) ?? slug).toBe(slug);
          bySource.set(sourceName(name), slug);
        }
        expect(new Set(bySource.values()).size).toBe(bySource.size);
      }),
      { numRuns: 300 },
    );
  });

  it('keeps every stored slug when the names come again, in another order, in another spelling or with more sources; a new source takes no stored slug (property)', () => {
    fc.assert(
      fc.property(
        fc.array(sourceNameArb, { maxLength: 8 }),
        fc.array(sourceNameArb, { maxLength: 6 }),
        fc.boolean(),
        (first, more, decomposed) => {
          const before = assignSlugs(first, new Map(), new Set(), VENUES);
          const { known, taken } = stored(before);
          const again = [...more, ...first.map((n) => (decomposed ? n.normalize('NFD') : n))].reverse();
          const after = assignSlugs(again, known, taken, VENUES);
          for (const name of first) expect(after.get(decomposed ? name.normalize('NFD') : name)).toBe(before.get(name));
          const added = new Set(more.filter((n) => !known.has(sourceName(n))).map((n) => after.get(n)!));
          for (const slug of added) expect(taken.has(slug)).toBe(false);
          expect(added.size).toBe(new Set(more.filter((n) => !known.has(sourceName(n))).map(sourceName)).size);
        },
      ),
      { numRuns: 300 },
    );
  });
});
