/**
 * The one error type of the importers: names the file, the 1-based line and the field at fault,
 * so an operator can open the file at the right place. An import that throws returns nothing
 * (the caller writes nothing).
 */
export class ImportError extends Error {
  override readonly name = 'ImportError';
  /** Path of the offending file, as the importer opened it. */
  readonly file: string;
  /** 1-based physical line where the bad record starts; null when the whole file is at fault (missing). */
  readonly line: number | null;
  /** Field (column / JSON key) at fault; null when no single field is (invalid JSON, missing file). */
  readonly field: string | null;
  /** The problem, without the location prefix. */
  readonly reason: string;

  constructor(file: string, line: number | null, field: string | null, reason: string) {
    // "file:line" opens at the right place in editors; "line N, field F" reads well in a terminal.
    super(
      `${file}${line === null ? '' : `:${line}`}` +
        `${line === null ? '' : ` (line ${line}${field === null ? '' : `, field "${field}"`})`}` +
        `${line === null && field !== null ? ` field "${field}"` : ''}: ${reason}`,
    );
    this.file = file;
    this.line = line;
    this.field = field;
    this.reason = reason;
  }
}
