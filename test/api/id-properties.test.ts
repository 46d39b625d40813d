/**
 * fast-check properties of what the API reads from a client and gives back: keyset cursors (round
 * trip of every key a list issues, tampering a 400), the closest ids of a 404, language codes.
 */
import fc from 'fast-check';
import { z } from 'zod';
import { describe, expect, it } from 'vitest';
import { ApiError } from '../../api/errors/problem.ts';
import { closestIds } from '../../api/http/closest.ts';
import { cursorKeyText, decodeKeyset, decodeResolvedCursor, decodeSnapshotKeyset, encodeKeyset, encodeResolvedCursor, encodeSnapshotKeyset, int64String } from '../../api/http/cursor.ts';
import { matchLang, storedLanguages } from '../../api/routes/prediction-params.ts';
import { languageKey } from '../../dashboard/src/languages.ts';

/** The 400 of a bad cursor, or nothing when `decode` returns. */
function badOrDecoded(decode: () => unknown): void {
  try {
    decode();
  } catch (err) {
    expect(err).toBeInstanceOf(ApiError);
    expect((err as ApiError).status).toBe(400);
    expect((err as ApiError).code).toBe('invalid_parameter');
  }
}

/** Ids as lists issue them: question ids, claim ids, slugs (ASCII, up to 233 characters), and any text. */
const id = fc.oneof(
  fc.stringMatching(/^[a-z][a-z0-9_-]{0,31}:[A-Za-z0-9_.-]{1,200}$/),
  fc.stringMatching(/^[A-Za-z0-9][A-Za-z0-9:._-]{0,199}$/),
  fc.string({ minLength: 1, maxLength: 60 }),
  fc.string({ unit: 'grapheme', minLength: 1, maxLength: 40 }),
);
const int64 = fc.bigInt({ min: -(2n ** 63n), max: 2n ** 63n - 1n });
const snapshotId = fc.stringMatching(/^[A-Za-z0-9._:-]{1,128}$/);

describe('keyset cursors', () => {
  const shape = z.tuple([int64String, cursorKeyText]);
  const numberShape = z.tuple([z.number(), cursorKeyText]);

  it('take back every key they issue: int64 and text, a double of any size, with the snapshot (property)', () => {
    fc.assert(
      fc.property(int64, id, fc.double({ noNaN: true, noDefaultInfinity: true }), snapshotId, (n, text, x, snap) => {
        expect(decodeKeyset(encodeKeyset('k', [n.toString(), text]), 'k', shape)).toEqual([n.toString(), text]);
        const s = decodeSnapshotKeyset(encodeSnapshotKeyset('k:rank', [x, text], snap), 'k:rank', numberShape);
        expect(s).toEqual({ key: [x === 0 ? 0 : x, text], snapshot: snap });
        expect(decodeResolvedCursor(encodeResolvedCursor({ resolvedUs: n, questionId: text }))).toEqual({ resolvedUs: n, questionId: text });
        expect(decodeResolvedCursor(encodeResolvedCursor({ resolvedUs: null, questionId: text }))).toEqual({ resolvedUs: null, questionId: text });
      }),
      { numRuns: 300 },
    );
  });

  it('tampered (a character replaced, dropped or added) are the 400 or a key of the route\'s shape, never another error (property)', () => {
    const edit = fc.record({ at: fc.nat(), char: fc.oneof(fc.constantFrom(...'AZaz09-_=+/.'), fc.string({ minLength: 1, maxLength: 1 })), how: fc.constantFrom('replace', 'drop', 'add') });
    fc.assert(
      fc.property(int64, id, snapshotId, edit, (n, text, snap, { at, char, how }) => {
        for (const cursor of [encodeKeyset('k', [n.toString(), text]), encodeSnapshotKeyset('k', [n.toString(), text], snap), encodeResolvedCursor({ resolvedUs: n, questionId: text })]) {
          const i = at % cursor.length;
          const tampered = cursor.slice(0, i) + (how === 'drop' ? '' : char) + cursor.slice(how === 'add' ? i : i + 1);
          badOrDecoded(() => expect(decodeKeyset(tampered, 'k', shape)).toHaveLength(2));
          badOrDecoded(() => decodeSnapshotKeyset(tampered, 'k', shape));
          badOrDecoded(() => decodeResolvedCursor(tampered));
        }
      }),
      { numRuns: 300 },
    );
  });
});

describe('closestIds', () => {
  it('an id of the list comes first when it is asked for; at most five, all of the list, the same whatever the list\'s order (property)', () => {
    fc.assert(
      fc.property(
        fc.uniqueArray(fc.oneof(fc.stringMatching(/^[a-z0-9-]{1,12}$/), fc.string({ maxLength: 8 })), { maxLength: 30 }).chain((ids) =>
          fc.tuple(fc.constant(ids), fc.shuffledSubarray(ids, { minLength: ids.length }), ids.length ? fc.oneof(fc.constantFrom(...ids), fc.string({ maxLength: 12 })) : fc.string({ maxLength: 12 }))),
        ([ids, shuffled, wanted]) => {
          const closest = closestIds(wanted, ids);
          expect(closest.length).toBe(Math.min(5, ids.length));
          for (const c of closest) expect(ids).toContain(c);
          expect(new Set(closest).size).toBe(closest.length);
          if (ids.includes(wanted)) expect(closest[0]).toBe(wanted);
          expect(closestIds(wanted, shuffled)).toEqual(closest);
        },
      ),
      { numRuns: 300 },
    );
  });
});

describe('language codes', () => {
  const code = fc.oneof(
    fc.stringMatching(/^[A-Za-z]{2,3}(-[A-Za-z0-9]{1,8}){0,3}$/),
    fc.constantFrom('en', 'EN', 'eng', 'he', 'iw', 'sh', 'sr-Latn', 'pt-BR', 'pt-br', 'zh-Hant-TW', 'mo', 'ro', 'no', 'nb', 'i-klingon', 'art-lojban', 'bh', 'BH', 'Tw'),
    fc.string({ maxLength: 10 }),
  );

  it('languageKey is idempotent and blind to case (property)', () => {
    fc.assert(
      fc.property(code, (c) => {
        const key = languageKey(c);
        expect(languageKey(key)).toBe(key);
        expect(languageKey(c.toUpperCase())).toBe(languageKey(c.toLowerCase()));
      }),
      { numRuns: 1000 },
    );
  });

  it('a feed\'s language is found by any of its stored codes in any case, or by any code of the same language; the groups do not depend on the order of the codes (property)', () => {
    fc.assert(
      fc.property(fc.uniqueArray(code, { minLength: 1, maxLength: 6 }).chain((codes) => fc.tuple(fc.constant(codes), fc.shuffledSubarray(codes, { minLength: codes.length }), fc.constantFrom(...codes))), ([codes, shuffled, asked]) => {
        expect(storedLanguages(shuffled)).toEqual(storedLanguages(codes));
        const hit = matchLang(asked.toUpperCase(), codes);
        expect(hit.codes).toContain(asked);
        for (const c of hit.codes) expect(languageKey(c)).toBe(languageKey(asked));
      }),
      { numRuns: 300 },
    );
  });
});
