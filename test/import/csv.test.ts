import fc from 'fast-check';
import { stringify } from 'csv-stringify/sync';
import { describe, expect, it } from 'vitest';
import { CsvSyntaxError, parseCsv } from '../../pipeline/import/csv.ts';

describe('parseCsv (RFC 4180)', () => {
  it('parses quotes, escaped quotes, embedded commas and line breaks, CRLF', () => {
    const text = 'a,b,c\r\n"x, y","say ""hi""","two\nlines"\r\nplain,,end\r\n';
    expect(parseCsv(text)).toEqual([
      { line: 1, fields: ['a', 'b', 'c'] },
      { line: 2, fields: ['x, y', 'say "hi"', 'two\nlines'] },
      { line: 4, fields: ['plain', '', 'end'] },
    ]);
  });

  it('accepts a missing final line break and a BOM', () => {
    expect(parseCsv('\uFEFFa,b\n1,2')).toEqual([
      { line: 1, fields: ['a', 'b'] },
      { line: 2, fields: ['1', '2'] },
    ]);
    expect(parseCsv('')).toEqual([]);
  });

  it('reports an unterminated quote at the line where it opened', () => {
    expect(() => parseCsv('a,b\n1,"open\nmore')).toThrow(CsvSyntaxError);
    try {
      parseCsv('a,b\n1,"open\nmore');
    } catch (e) {
      expect((e as CsvSyntaxError).line).toBe(2);
    }
  });

  it('rejects stray quotes', () => {
    expect(() => parseCsv('a,b"c\n')).toThrow(/quote inside an unquoted field/);
    expect(() => parseCsv('"a"b,c\n')).toThrow(/after closing quote/);
  });

  it('round-trips whatever csv-stringify writes', () => {
    const cell = fc.string({ unit: fc.constantFrom('a', 'b', ',', '"', '\n', '\r\n', ' ', 'é') });
    fc.assert(
      fc.property(fc.array(fc.array(cell, { minLength: 2, maxLength: 2 }), { minLength: 1, maxLength: 6 }), (rows) => {
        const text = stringify(rows, { quoted: true });
        expect(parseCsv(text).map((r) => r.fields)).toEqual(rows);
      }),
    );
  });
});
