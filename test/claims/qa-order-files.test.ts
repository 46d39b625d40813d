/**
 * `quorum import claims csv` (QA, third pass): which files of the directory are read, and the
 * order that settles slug collisions. Real files, the real importer, real DuckDB and Parquet.
 */
import { execFileSync } from 'node:child_process';
import { closeSync, constants, mkdirSync, openSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { assignSlugs } from '../../pipeline/claims/slug.ts';
import { tempDir } from '../helpers/temp-dir.ts';
import { CSV_HEAD, claimParts, csvFolder, importAll, rawQuery } from './helpers.ts';

const tmp = tempDir('quorum-claims-qa-order-');
afterAll(() => tmp.cleanup());
let n = 0;

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

describe('the files of the directory', () => {
  it('a .CSV (any case of the extension) is read like a .csv (QA: Claims.CSV was skipped silently beside b.csv, its claims never imported)', async () => {
    const data = join(tmp.dir, `wh-${n++}`);
    const dir = csvFolder(tmp.dir, {
      'Claims.CSV': CSV_HEAD + 'c1,Acme,2024-01-01,probability,x,0.4,,\n',
      'b.csv': CSV_HEAD + 'c2,Acme,2024-01-01,probability,y,0.6,,\n',
      'notes.txt': 'not claims\n',
    });
    const [res] = await importAll(data, [['csv', dir]]);
    expect(res!.claims).toMatchObject({ received: 2, written: 2 });
    expect(await rawQuery(data, 'SELECT claim_id, provenance_file AS file FROM {claims} ORDER BY claim_id')).toEqual([
      { claim_id: 'c1', file: 'Claims.CSV' },
      { claim_id: 'c2', file: 'b.csv' },
    ]);
  });
  it('a named pipe called *.csv is refused naming it, nothing written (outside test: the import opened it and waited for a writer for good)', async () => {
    const data = join(tmp.dir, `wh-${n++}`);
    const dir = csvFolder(tmp.dir, { 'a.csv': CSV_HEAD + 'p1,Acme,2024-01-01,probability,x,0.4,,\n' });
    const pipe = join(dir, 'b.csv');
    execFileSync('mkfifo', [pipe]);
    try {
      await expect(importAll(data, [['csv', dir]])).rejects.toThrow(`${pipe}: not a regular file (a named pipe): only files are read`);
      expect(claimParts(data)).toEqual([]);
    } finally {
      // a reader blocked on the pipe (the defect) is released, so that the run can end
      try {
        closeSync(openSync(pipe, constants.O_WRONLY | constants.O_NONBLOCK));
      } catch {
        // no reader: nothing to release
      }
    }
  }, 15_000);

  it('a symbolic link called *.csv to a directory is skipped like the directory (it was refused with EISDIR)', async () => {
    const data = join(tmp.dir, `wh-${n++}`);
    const dir = csvFolder(tmp.dir, { 'a.csv': CSV_HEAD + 'l1,Acme,2024-01-01,probability,x,0.4,,\n' });
    symlinkSync(tmp.dir, join(dir, 'linked.csv'));
    const [res] = await importAll(data, [['csv', dir]]);
    expect(res!.claims).toMatchObject({ received: 1, written: 1 });
  });
  /** Each stored claim's id with the file and line it was read from. */
  const provenance = (data: string) => rawQuery(data, 'SELECT claim_id, provenance_file AS file, provenance_line AS line FROM {claims} ORDER BY claim_id');
  it('a directory or file name holding * ? [ is read as itself, not as a glob (outside test: a directory f* imported its sibling fx\'s claims too)', async () => {
    const data = join(tmp.dir, `wh-${n++}`);
    const root = join(tmp.dir, `glob-${n++}`);
    mkdirSync(join(root, 'f*'), { recursive: true });
    mkdirSync(join(root, 'fx'));
    writeFileSync(join(root, 'f*', 'a.csv'), CSV_HEAD + 'g1,Acme,2024-01-01,probability,x,0.4,,\n');
    writeFileSync(join(root, 'fx', 'a.csv'), CSV_HEAD + 'stray1,Stray,2024-01-01,probability,x,0.4,,\n');
    const [res] = await importAll(data, [['csv', join(root, 'f*')]]);
    expect(res!.claims).toMatchObject({ received: 1, written: 1 });
    // in the file names too: a*.csv beside ab.csv, a?.csv, a[b].csv
    const dir = csvFolder(tmp.dir, {
      'a*.csv': CSV_HEAD + 'g2,Acme,2024-01-01,probability,x,0.4,,\n',
      'a?.csv': CSV_HEAD + 'g3,Acme,2024-01-01,probability,x,0.4,,\n',
      'a[b].csv': CSV_HEAD + 'g4,Acme,2024-01-01,probability,x,0.4,,\n',
      'ab.csv': CSV_HEAD + 'g5,Acme,2024-01-01,probability,x,0.4,,\n',
    });
    await importAll(data, [['csv', dir]]);
    expect(await provenance(data)).toEqual([
      { claim_id: 'g1', file: 'a.csv', line: 2n },
      { claim_id: 'g2', file: 'a*.csv', line: 2n },
      { claim_id: 'g3', file: 'a?.csv', line: 2n },
      { claim_id: 'g4', file: 'a[b].csv', line: 2n },
      { claim_id: 'g5', file: 'ab.csv', line: 2n },
    ]);
  });
  it('a name holding a backslash beside * ? [ is read as itself too (DuckDB splits a glob at \\: a\\[1].csv was refused as "malformed CSV: IO Error: No files found")', async () => {
    const data = join(tmp.dir, `wh-${n++}`);
    const dir = csvFolder(tmp.dir, {
      'a\\[1].csv': CSV_HEAD + 'b1,Acme,2024-01-01,probability,x,0.4,,\n',
      'a\\*.csv': CSV_HEAD + 'b2,Acme,2024-01-01,probability,x,0.4,,\n',
      'a\\x.csv': CSV_HEAD + 'b3,Acme,2024-01-01,probability,x,0.4,,\n',
    });
    await importAll(data, [['csv', dir]]);
    expect(await provenance(data)).toEqual([
      { claim_id: 'b1', file: 'a\\[1].csv', line: 2n },
      { claim_id: 'b2', file: 'a\\*.csv', line: 2n },
      { claim_id: 'b3', file: 'a\\x.csv', line: 2n },
    ]);
    // the directory's name too, and an error names the file, not the link it was read through
    const root = join(tmp.dir, `glob-${n++}`, 'f\\*');
    mkdirSync(root, { recursive: true });
    writeFileSync(join(root, 'a.csv'), CSV_HEAD + 'b4,Acme,2024-01-01,probability,x,0.4,,\nb5,Acme,2024-01-01,probability,x,0.4,,,,,\n');
    const failed = await importAll(join(tmp.dir, `wh-${n++}`), [['csv', root]]).then(() => null, (e: Error) => e);
    expect(failed?.message).toContain(`${join(root, 'a.csv')}:3`);
    expect(failed?.message).not.toContain('quorum-csv-link-');
    writeFileSync(join(root, 'a.csv'), CSV_HEAD + 'b4,Acme,2024-01-01,probability,x,0.4,,\n');
    const [res] = await importAll(join(tmp.dir, `wh-${n++}`), [['csv', root]]);
    expect(res!.claims).toMatchObject({ received: 1, written: 1 });
  });
});

