import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { DuckDBInstance } from '@duckdb/node-api';
import { describe, expect, it } from 'vitest';
import { DEFAULT_SQL_DIR, listSqlFiles } from './derive.ts';
import { splitSqlStatements } from './sql-statements.ts';

const texts = (sql: string) => splitSqlStatements(sql).map((s) => s.text.trim());

describe('splitSqlStatements', () => {
  it('splits at the semicolons that end statements and gives the line each starts on', () => {
    const sql = '-- heading\n\nSELECT 1;\nSELECT\n  2;\n\n  SELECT 3';
    expect(splitSqlStatements(sql)).toEqual([
      { text: '-- heading\n\nSELECT 1;', line: 3 },
      { text: '\nSELECT\n  2;', line: 4 },
      { text: '\n\n  SELECT 3', line: 7 },
    ]);
  });

  it('keeps semicolons inside strings, quoted identifiers and comments', () => {
    expect(texts(`SELECT 'a;b' || 'it''s;' AS "x;y", """;""" ; SELECT 2 -- c;d\n;`)).toEqual([
      `SELECT 'a;b' || 'it''s;' AS "x;y", """;""" ;`,
      'SELECT 2 -- c;d\n;',
    ]);
    expect(texts('SELECT /* a; b\n c; */ 1; SELECT 2;')).toEqual(['SELECT /* a; b\n c; */ 1;', 'SELECT 2;']);
    expect(texts(`SELECT '';SELECT '''';`)).toEqual([`SELECT '';`, `SELECT '''';`]);
  });

  it('counts lines inside strings and comments', () => {
    const sql = "SELECT 'a\nb';\n/* x\ny */\nSELECT 2;";
    expect(splitSqlStatements(sql).map((s) => s.line)).toEqual([1, 5]);
  });

  it('leaves out parts that hold only comments and blanks, and empty statements', () => {
    expect(texts('SELECT 1;\n-- trailing note;\n/* more; */\n  ;;')).toEqual(['SELECT 1;']);
    expect(splitSqlStatements('')).toEqual([]);
    expect(splitSqlStatements('-- only a comment')).toEqual([]);
  });

  it('takes an unterminated string or comment to the end of the script', () => {
    expect(texts("SELECT 'open; still open")).toEqual(["SELECT 'open; still open"]);
    expect(texts('SELECT 1 /* open; still open')).toEqual(['SELECT 1 /* open; still open']);
  });

  it('finds in every sql/derive file as many statements as DuckDB does', async () => {
    const db = await DuckDBInstance.create(':memory:');
    const conn = await db.connect();
    try {
      for (const file of await listSqlFiles(DEFAULT_SQL_DIR)) {
        const sql = readFileSync(join(DEFAULT_SQL_DIR, file), 'utf8');
        const extracted = await conn.extractStatements(sql);
        expect({ file, n: splitSqlStatements(sql).length }).toEqual({ file, n: extracted.count });
      }
    } finally {
      conn.closeSync();
      db.closeSync();
    }
  });
});
