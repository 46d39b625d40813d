/**
 * The physical lines of a generic-format claims file that DuckDB's `read_csv` does not report
 * (generic-sql.ts): its header line, read here so that DuckDB reads the records with explicit
 * columns (no sniffing: a short, long or truncated record is then an error at its own line instead
 * of a "sniffing" error at line 1 or a record taken for the header), and its blank lines, which
 * `read_csv` skips without a trace (a record's line is its position among the records plus the
 * blank lines before it).
 */
import { isAscii, isUtf8 } from 'node:buffer';
import { open } from 'node:fs/promises';
import { parseCsv, CsvSyntaxError } from '../import/csv.ts';
import { ImportError } from '../import/import-error.ts';

/** Longest header line read (a longer one is not a claims header). */
const MAX_HEADER_BYTES = 1 << 20;
/** Bytes read at a time when scanning for blank lines (1 MiB stays in cache: 8 MiB took 2-3x longer). */
const CHUNK_BYTES = 1 << 20;
const LF = 0x0a;
const CR = 0x0d;
const QUOTE = 0x22;
const COMMA = 0x2c;
/** The ASCII characters other than a space that trim removes and a record may hold unquoted (LF ends it). */
const CONTROL_BYTES = [0x09, 0x0b, 0x0c, CR];
// Buffer needles: Buffer#indexOf with a string needle took 14x longer on a 126 MB file (167 vs 12 ms).
const BLANK_LF = Buffer.from('\n\n');
const BLANK_CRLF = Buffer.from('\n\r\n');

/**
 * The header's column names (trimmed), from the file's first line. An empty file, a blank first
 * line or a quoted line break in the header (records are one line each) is an ImportError at line 1.
 */
export async function readHeader(file: string): Promise<string[]> {
  const fh = await open(file, 'r');
  let bytes: Buffer;
  try {
    const buf = Buffer.alloc(MAX_HEADER_BYTES);
    let n = 0;
    let end = -1;
    while (end < 0 && n < buf.length) {
      const { bytesRead } = await fh.read(buf, n, Math.min(64 << 10, buf.length - n), n);
      if (bytesRead === 0) break;
      end = buf.subarray(n, n + bytesRead).indexOf(LF);
      if (end >= 0) end += n;
      n += bytesRead;
    }
    if (end < 0 && n === buf.length) throw new ImportError(file, 1, null, `header line longer than ${MAX_HEADER_BYTES} bytes`);
    bytes = buf.subarray(0, end < 0 ? n : end);
  } finally {
    await fh.close();
  }
  // Said here, not as "missing required column claim_id" (QA: a UTF-16 export, a Latin-1 header).
  if ((bytes[0] === 0xff && bytes[1] === 0xfe) || (bytes[0] === 0xfe && bytes[1] === 0xff) || bytes.includes(0)) {
    throw new ImportError(file, 1, null, 'the file is UTF-16 encoded (a spreadsheet\'s "Unicode text" export?): save it as UTF-8');
  }
  let text: string;
  try {
    text = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true }).decode(bytes);
  } catch {
    throw new ImportError(file, 1, null, 'the file is not UTF-8 encoded (a Latin-1 or Windows-1252 export?): save it as UTF-8');
  }
  const line = text.replace(/^\uFEFF/, '').replace(/\r$/, '');
  if (line.trim() === '') throw new ImportError(file, 1, null, 'empty first line (expected the CSV header)');
  let records;
  try {
    records = parseCsv(line);
  } catch (e) {
    if (e instanceof CsvSyntaxError) throw new ImportError(file, 1, null, `header: ${e.message} (a header name cannot hold a line break)`);
    throw e;
  }
  if (records.length !== 1) throw new ImportError(file, 1, null, 'header: a line break (CR) inside the header line');
  return records[0]!.fields.map((f) => f.trim());
}

/** What the bytes of a file say of all its records (fileTraits). */
export interface FileTraits {
  /** Every byte is ASCII and none is a tab, VT, FF or CR: no field holds a character that trim removes other than a space. */
  plain: boolean;
  /** No `"`: no field holds a line break (an unquoted LF ends the record). */
  unquoted: boolean;
  /** Some line is empty (nothing, or a lone CR, before its LF): a line read_csv skips. */
  blank: boolean;
}

/**
 * One pass over the bytes of `file` (the header included, so a file is taken for less than it is
 * at worst): what they rule out for all of its records (generic-sql.ts then tests neither `plain`
 * nor a line break per record), and whether any line is blank (blankLines then numbers them).
 * A few byte searches per 1 MiB chunk (Buffer#indexOf and isAscii are vectorized): ~25 ms of CPU
 * for the bench's 126 MB, read from the page cache. Each chunk starts 2 bytes before the previous
 * one ended, so a blank line across a boundary is seen (the traits are the same for bytes seen twice).
 */
export async function fileTraits(file: string): Promise<FileTraits> {
  const fh = await open(file, 'r');
  try {
    const buf = Buffer.alloc(CHUNK_BYTES);
    const traits: FileTraits = { plain: true, unquoted: true, blank: false };
    for (let pos = 0; traits.plain || traits.unquoted || !traits.blank; ) {
      const { bytesRead } = await fh.read(buf, 0, buf.length, pos);
      if (bytesRead === 0) break;
      const view = buf.subarray(0, bytesRead);
      if (traits.plain && (!isAscii(view) || CONTROL_BYTES.some((b) => view.indexOf(b) >= 0))) traits.plain = false;
      if (traits.unquoted && view.indexOf(QUOTE) >= 0) traits.unquoted = false;
      if (!traits.blank && (view.indexOf(BLANK_LF) >= 0 || view.indexOf(BLANK_CRLF) >= 0)) traits.blank = true;
      if (bytesRead < buf.length) break; // the end of the file
      pos += bytesRead - 2;
    }
    return traits;
  } finally {
    await fh.close();
  }
}

/**
 * The 1-based physical lines of `file` that are empty (nothing, or a lone CR, before the LF):
 * the lines read_csv skips. Most files have none, as fileTraits' pass over the bytes tells
 * (`blank`); only a file that has some is read again, line by line, to number them.
 */
export async function blankLines(file: string, traits: Pick<FileTraits, 'blank'>): Promise<number[]> {
  if (!traits.blank) return [];
  const fh = await open(file, 'r');
  try {
    return await numberBlankLines(fh, Buffer.alloc(CHUNK_BYTES));
  } finally {
    await fh.close();
  }
}

/** blankLines for a file with blank lines: every LF of the file, with the bytes before it. */
async function numberBlankLines(fh: Awaited<ReturnType<typeof open>>, buf: Buffer): Promise<number[]> {
  const out: number[] = [];
  let line = 1; // the line the next LF ends
  let before1 = -1; // the byte before the current position (across chunks)
  let before2 = -1; // and the one before it
  for (let pos = 0; ; ) {
    const { bytesRead } = await fh.read(buf, 0, buf.length, pos);
    if (bytesRead === 0) return out;
    const at = (i: number) => (i >= 0 ? buf[i]! : i === -1 ? before1 : before2);
    for (let i = buf.indexOf(LF, 0); i >= 0 && i < bytesRead; i = buf.indexOf(LF, i + 1)) {
      // Line 1 (the header) is never blank here: readHeader refused it.
      const p1 = at(i - 1);
      if (line > 1 && (p1 === LF || (p1 === CR && at(i - 2) === LF))) out.push(line);
      line++;
    }
    before2 = bytesRead >= 2 ? buf[bytesRead - 2]! : before1;
    before1 = buf[bytesRead - 1]!;
    pos += bytesRead;
  }
}

/**
 * The physical line of the record at `index` (0-based, among the records of a file whose header
 * is line 1) given the file's blank lines (sorted).
 */
export function recordLine(index: number, blanks: readonly number[]): number {
  let line = 2 + index;
  for (const b of blanks) {
    if (b > line) break;
    line++;
  }
  return line;
}

/**
 * The same as shifts: [index, n] pairs, "records from `index` on come after `n` blank lines",
 * increasing; blank lines after the last record (`count` records) give none.
 */
export function lineShifts(blanks: readonly number[], count: number): [number, number][] {
  const out: [number, number][] = [];
  blanks.forEach((b, j) => {
    // Lines 2 .. b-1 hold j blank lines (0-based j) and b - 2 - j records.
    const from = b - 2 - j;
    if (from >= count) return;
    if (out.length > 0 && out.at(-1)![0] === from) out.at(-1)![1] = j + 1;
    else out.push([from, j + 1]);
  });
  return out;
}

/**
 * Why DuckDB's strict reader refused `file` with no line ("the CSV Parser state machine reached an
 * invalid state"), when it is its line endings: the first line that ends otherwise than the
 * header (CR LF in a file of LF lines, or LF in a CR LF file: rows appended by another tool), or
 * that holds a CR outside quotes not followed by LF (a record ended by a lone CR). Null when the
 * line endings are consistent. Only read on that error path (byte by byte).
 */
export async function lineEndingProblem(file: string): Promise<{ line: number; reason: string } | null> {
  const fh = await open(file, 'r');
  try {
    const buf = Buffer.alloc(CHUNK_BYTES);
    let line = 1;
    let crlf: boolean | null = null; // how the header ends
    let quoted = false;
    let prev = -1;
    let loneCr = false; // the previous byte was a CR outside quotes
    const name = (c: boolean) => (c ? 'CR LF' : 'LF');
    for (let pos = 0; ; ) {
      const { bytesRead } = await fh.read(buf, 0, buf.length, pos);
      if (bytesRead === 0) break;
      for (let i = 0; i < bytesRead; i++) {
        const b = buf[i]!;
        if (loneCr && b !== LF) return { line, reason: `a carriage return (CR) alone ends a record inside line ${line} (lines must end in LF or CR LF)` };
        loneCr = false;
        if (b === QUOTE) quoted = !quoted;
        else if (b === CR && !quoted) loneCr = true;
        else if (b === LF) {
          const ends = prev === CR;
          if (crlf === null) crlf = ends;
          else if (ends !== crlf) {
            return { line, reason: `mixed line endings: line ${line} ends in ${name(ends)}, the header in ${name(crlf)} (save the file with one kind of line ending)` };
          }
          line++;
          quoted = false;
        }
        prev = b;
      }
      pos += bytesRead;
    }
    // The last line, not ended by LF: a CR there ends it alone.
    if (loneCr && crlf === false) return { line, reason: `mixed line endings: line ${line} ends in CR, the header in LF (save the file with one kind of line ending)` };
    return null;
  } finally {
    await fh.close();
  }
}

/**
 * The number of fields on physical line `line` (1-based) of `file`, parsed as CSV (a quoted comma
 * is inside its field), or null when the file has no such line or it does not parse. Only read on
 * the error path of a record whose width is wrong (generic-sql.ts): DuckDB's reader drops the
 * empty fields past the columns it was given, so their number is counted here.
 */
export async function fieldCount(file: string, line: number): Promise<number | null> {
  const text = await physicalLine(file, line);
  if (text === null) return null;
  try {
    const records = parseCsv(text);
    return records.length === 1 ? records[0]!.fields.length : null;
  } catch (e) {
    if (e instanceof CsvSyntaxError) return null;
    throw e;
  }
}

/**
 * The fields of one physical line as byte ranges, split at the commas outside quotes as the reader
 * splits them (a quote opens a field only at its start; `""` inside quotes is a quote), and whether
 * the line leaves its last field's quote open (that field then runs to the line's end). Commas and
 * quotes are ASCII, never inside a UTF-8 sequence, so the bytes are split whatever their encoding.
 */
function fieldSpans(bytes: Buffer): { spans: Array<[from: number, to: number]>; open: boolean } {
  const spans: Array<[number, number]> = [];
  let from = 0;
  let quoted = false;
  for (let i = 0; i < bytes.length; i++) {
    const b = bytes[i];
    if (quoted) {
      if (b === QUOTE) quoted = bytes[i + 1] === QUOTE ? (i++, true) : false;
    } else if (b === COMMA) {
      spans.push([from, i]);
      from = i + 1;
    } else if (b === QUOTE && i === from) {
      quoted = true;
    }
  }
  spans.push([from, bytes.length]);
  return { spans, open: quoted };
}

/**
 * The index of the field whose quote physical line `line` of `file` leaves open (0-based: the
 * field that holds a line break, or runs to the end of a truncated file), null when the line
 * closes every quote it opens or the file has no such line. Only read on the error path of a
 * record refused for a line break inside quotes or an unterminated quote (generic-sql.ts), to
 * name its field as every other refusal does (outside test: both named the line only).
 */
export async function openQuoteField(file: string, line: number): Promise<number | null> {
  const bytes = await physicalLineBytes(file, line);
  if (bytes === null) return null;
  const { spans, open } = fieldSpans(bytes);
  return open ? spans.length - 1 : null;
}

/**
 * The index of the first field of physical line `line` of `file` whose bytes are not UTF-8 (0-based;
 * fields split at the commas outside quotes), null when there is none or the file has no such line.
 * Only read on the error path of a file DuckDB refused as not UTF-8 at that line (generic-sql.ts),
 * to name the field as every other refusal does (outside test: it named the line only).
 */
export async function nonUtf8Field(file: string, line: number): Promise<number | null> {
  const bytes = await physicalLineBytes(file, line);
  if (bytes === null) return null;
  const at = fieldSpans(bytes).spans.findIndex(([from, to]) => !isUtf8(bytes.subarray(from, to)));
  return at < 0 ? null : at;
}

/** Physical line `line` (1-based) of `file` without its line ending; null when the file has no such line. */
async function physicalLine(file: string, line: number): Promise<string | null> {
  const bytes = await physicalLineBytes(file, line);
  return bytes === null ? null : bytes.toString('utf8');
}

/** The bytes of physical line `line` (1-based) of `file` without its line ending; null when the file has no such line. */
async function physicalLineBytes(file: string, line: number): Promise<Buffer | null> {
  const fh = await open(file, 'r');
  try {
    const buf = Buffer.alloc(CHUNK_BYTES);
    const parts: Buffer[] = [];
    let current = 1; // the line the bytes at the read position belong to
    for (let pos = 0; ; ) {
      const { bytesRead } = await fh.read(buf, 0, buf.length, pos);
      if (bytesRead === 0) break;
      let from = 0;
      while (current < line) {
        const lf = buf.indexOf(LF, from);
        if (lf < 0 || lf >= bytesRead) break;
        from = lf + 1;
        current++;
      }
      if (current === line) {
        const lf = buf.indexOf(LF, from);
        const end = lf >= 0 && lf < bytesRead ? lf : bytesRead;
        parts.push(Buffer.from(buf.subarray(from, end)));
        if (end < bytesRead) break;
      }
      pos += bytesRead;
    }
    if (current !== line) return null;
    const bytes = Buffer.concat(parts);
    return bytes.at(-1) === CR ? bytes.subarray(0, -1) : bytes;
  } finally {
    await fh.close();
  }
}
