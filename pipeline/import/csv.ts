/**
 * A small RFC 4180 CSV parser: comma separator, `"`-quoted fields with `""` escapes, quoted fields
 * may hold commas and line breaks, CRLF or LF line ends, optional final line break.
 * Each record carries the 1-based physical line it starts on, for error messages.
 */

export interface CsvRecord {
  /** 1-based physical line number where the record starts. */
  line: number;
  fields: string[];
}

/** A syntax error (unterminated quote, text after a closing quote) at a 1-based line. */
export class CsvSyntaxError extends Error {
  constructor(
    readonly line: number,
    message: string,
  ) {
    super(message);
    this.name = 'CsvSyntaxError';
  }
}

/** Parses CSV text into records (the header, if any, is the first record). Empty text → []. */
export function parseCsv(text: string): CsvRecord[] {
  const records: CsvRecord[] = [];
  if (text.charCodeAt(0) === 0xfeff) text = text.slice(1); // BOM
  let i = 0;
  let line = 1;
  const n = text.length;
  while (i < n) {
    const start = line;
    const fields: string[] = [];
    // One record.
    for (;;) {
      let value = '';
      if (text[i] === '"') {
        const quoteLine = line;
        i++;
        for (;;) {
          if (i >= n) throw new CsvSyntaxError(quoteLine, 'unterminated quoted field (file truncated?)');
          const c = text[i]!;
          if (c === '"') {
            if (text[i + 1] === '"') {
              value += '"';
              i += 2;
              continue;
            }
            i++;
            break;
          }
          if (c === '\n') line++;
          value += c;
          i++;
        }
        if (i < n && text[i] !== ',' && text[i] !== '\n' && text[i] !== '\r') {
          throw new CsvSyntaxError(line, 'unexpected character after closing quote');
        }
      } else {
        let j = i;
        while (j < n && text[j] !== ',' && text[j] !== '\n' && text[j] !== '\r') j++;
        value = text.slice(i, j);
        if (value.includes('"')) throw new CsvSyntaxError(line, 'quote inside an unquoted field');
        i = j;
      }
      fields.push(value);
      if (i < n && text[i] === ',') {
        i++;
        continue;
      }
      // End of record: \r\n, \n, \r, or end of text.
      if (text[i] === '\r') i++;
      if (text[i] === '\n') i++;
      line++;
      break;
    }
    records.push({ line: start, fields });
  }
  return records;
}
