/**
 * `quorum import claims csv`: fields as operators' files write them (QA, second pass): a source
 * name with a leading U+FEFF, whitespace other than spaces around a field. Real files, the real
 * importer, real DuckDB and Parquet; nothing mocked.
 */
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { ImportError } from '../../pipeline/import/import-error.ts';
import { tempDir } from '../helpers/temp-dir.ts';
import { get, newKey, serve, auth } from '../api/helpers.ts';
import { claimParts, CSV_HEAD, csvFolder, importAll, publishScores, rawQuery } from './helpers.ts';

const tmp = tempDir('quorum-claims-qa-fields-');
afterAll(() => tmp.cleanup());
let n = 0;

const folder = (files: Record<string, string | Buffer>) => csvFolder(tmp.dir, files);


describe('source names', () => {
  it('a name that starts with U+FEFF: every claim written once, under its source (QA: c1 was dropped, c2 written twice)', async () => {
    const data = join(tmp.dir, `wh-${n++}`);
    const dir = folder({ 'a.csv': CSV_HEAD + 'c1,\uFEFFAcme,2024-01-01,probability,x,0.4,,\nc2,Acme,2024-01-01,probability,y,0.6,,\n' });
    const [res] = await importAll(data, [['csv', dir]]);
    expect(res!.claims).toMatchObject({ received: 2, written: 2 });
    const got = await rawQuery(data, 'SELECT claim_id, subject, provenance_line::INTEGER AS line FROM {claims} ORDER BY claim_id');
    expect(got).toEqual([
      { claim_id: 'c1', subject: 'x', line: 2 },
      { claim_id: 'c2', subject: 'y', line: 3 },
    ]);
    // Every claim names a stored source.
    expect(await rawQuery(data, 'SELECT count(*)::INTEGER AS n FROM {claims} WHERE source_slug NOT IN (SELECT source_slug FROM {sources})')).toEqual([{ n: 0 }]);
  });
});

describe('whitespace around fields', () => {
  it('a tab, CR, form feed or U+FEFF around a field is trimmed like a space: one source, the same claim as the plain file (QA: "Acme<TAB>" was a second source, acme-2)', async () => {
    const plain = CSV_HEAD + 'c1,Acme,2024-01-01,probability,Rain,0.4,1,2024-02-01\nc2,Acme,2024-01-02,probability,Snow,0.6,,\n';
    // The fields of the claims above padded with whitespace other than a space, in plain ASCII
    // records (the fast path that skips trim) and in a non-ASCII one (NBSP).
    const padded =
      CSV_HEAD + 'c1,Acme\t,\t2024-01-01,probability\t,"Rain\r",0.4\t,\t1,2024-02-01\f\n' + 'c2\t,"Acme\u000b",2024-01-02,probability,\u00a0Snow\uFEFF,0.6,,\n';
    const a = join(tmp.dir, `wh-${n++}`);
    const b = join(tmp.dir, `wh-${n++}`);
    await importAll(a, [['csv', folder({ 'a.csv': plain })]]);
    const [res] = await importAll(b, [['csv', folder({ 'a.csv': padded })]]);
    expect(res!.sources).toMatchObject({ received: 1, written: 1 });
    const sql = 'SELECT * EXCLUDE (ingested_at, provenance_dataset) FROM {claims} ORDER BY claim_id';
    expect(await rawQuery(b, sql)).toEqual(await rawQuery(a, sql));
    expect(await rawQuery(b, 'SELECT source_slug, name FROM {sources}')).toEqual([{ source_slug: 'acme', name: 'Acme' }]);
    // And the padded file imported over the plain one is the same claims again (nothing written).
    const [again] = await importAll(a, [['csv', folder({ 'a.csv': padded })]]);
    expect(again!.claims.written).toBe(0);
    expect(again!.sources.written).toBe(0);
  });
});

describe('line endings', () => {
  it('mixed line endings or a record ended by a lone CR: rejected at that line, saying so (QA: "state machine reached an invalid state", no line)', async () => {
    const row = (id: string) => `${id},Acme,2024-01-01,probability,x,0.4,1,2024-02-01`;
    const cases: [string, number, RegExp][] = [
      [CSV_HEAD + row('c1') + '\r\n' + row('c2') + '\n', 2, /mixed line endings: line 2 ends in CR LF, the header in LF/],
      [CSV_HEAD.replace('\n', '\r\n') + row('c1') + '\r\n' + row('c2') + '\n' + row('c3') + '\r\n', 3, /mixed line endings: line 3 ends in LF, the header in CR LF/],
      [CSV_HEAD + row('c1') + '\n\r\n' + row('c2') + '\n', 3, /mixed line endings/],
      [CSV_HEAD + row('c1') + '\r' + row('c2') + '\n' + row('c3') + '\n', 2, /carriage return \(CR\) alone/],
    ];
    for (const [text, line, reason] of cases) {
      const data = join(tmp.dir, `wh-${n++}`);
      const e = await importAll(data, [['csv', folder({ 'a.csv': text })]]).then(() => null, (err: unknown) => err);
      expect(e, JSON.stringify(text)).toBeInstanceOf(ImportError);
      expect((e as ImportError).line, JSON.stringify(text)).toBe(line);
      expect((e as ImportError).reason).toMatch(reason);
      expect(claimParts(data)).toEqual([]);
    }
    // A CR inside quotes is text, and a file of CR LF lines is read as usual.
    const data = join(tmp.dir, `wh-${n++}`);
    const [res] = await importAll(data, [['csv', folder({ 'a.csv': (CSV_HEAD + row('c1') + '\n').replaceAll('\n', '\r\n') + 'c2,Acme,2024-01-01,probability,"x\ry",0.4,,\r\n' })]]);
    expect(res!.claims.written).toBe(2);
  });
});

describe('a very long line', () => {
  it('a record longer than DuckDB reads (2,000,000 bytes) is rejected at its line, saying so (QA: "malformed CSV: ... CSV Error on Line: 3", no reason)', async () => {
    const data = join(tmp.dir, `wh-${n++}`);
    const text = CSV_HEAD + 'c1,Acme,2024-01-01,probability,x,0.4,,\n' + `c2,Acme,2024-01-01,probability,${'y'.repeat(2_100_000)},0.4,,\n` + 'c3,Acme,2024-01-01,probability,x,0.4,,\n';
    const e = await importAll(data, [['csv', folder({ 'a.csv': text })]]).then(() => null, (err: unknown) => err);
    expect(e).toBeInstanceOf(ImportError);
    expect([(e as ImportError).line, (e as ImportError).field]).toEqual([3, null]);
    expect((e as ImportError).reason).toBe('the line is 2,100,037 bytes long: a record is at most 2,000,000 bytes');
    expect(claimParts(data)).toEqual([]);
  });
});

describe('encodings', () => {
  it('a UTF-16 file, or a header that is not UTF-8, is said not to be UTF-8 at line 1 (QA: "missing required column in header", field claim_id)', async () => {
    const text = CSV_HEAD + 'c1,Acme,2024-01-01,probability,x,0.4,,\n';
    const utf16le = Buffer.concat([Buffer.from([0xff, 0xfe]), Buffer.from(text, 'utf16le')]);
    const utf16be = Buffer.from(text, 'utf16le').swap16(); // no byte order mark
    const latin1 = Buffer.from(CSV_HEAD.replace('\n', ',r\u00e9f\n') + 'c1,Acme,2024-01-01,probability,x,0.4,,,\n', 'latin1');
    for (const [bytes, said] of [[utf16le, /UTF-16/], [utf16be, /UTF-16/], [latin1, /not UTF-8/]] as const) {
      const data = join(tmp.dir, `wh-${n++}`);
      const e = await importAll(data, [['csv', folder({ 'a.csv': bytes })]]).then(() => null, (err: unknown) => err);
      expect(e).toBeInstanceOf(ImportError);
      expect([(e as ImportError).line, (e as ImportError).field]).toEqual([1, null]);
      expect((e as ImportError).reason).toMatch(said);
      expect(claimParts(data)).toEqual([]);
    }
  });
});

describe('times', () => {
  it('an offset outside RFC 3339 (hours past 23, minutes past 59) is rejected at its field (QA: +99:00 moved the claim by four days)', async () => {
    for (const bad of ['2024-01-01T12:30+99:00', '2024-01-01T12:30+24:00', '2024-01-01T12:30-05:99', '2024-01-01T12:30+0560', '2024-01-01T12:30-25']) {
      const data = join(tmp.dir, `wh-${n++}`);
      const e = await importAll(data, [['csv', folder({ 'a.csv': CSV_HEAD + 'c0,Acme,2024-01-01,probability,x,0.4,,\n' + `c1,Acme,${bad},probability,x,0.4,,\n` })]]).then(() => null, (err: unknown) => err);
      expect(e, bad).toBeInstanceOf(ImportError);
      expect([(e as ImportError).line, (e as ImportError).field], bad).toEqual([3, 'made_at']);
      expect(claimParts(data)).toEqual([]);
    }
    // The bounds themselves.
    const data = join(tmp.dir, `wh-${n++}`);
    await importAll(data, [['csv', folder({ 'a.csv': CSV_HEAD + 'c1,Acme,2024-01-01T12:30+23:59,probability,x,0.4,,\nc2,Acme,2024-01-01T12:30-2359,probability,x,0.4,,\nc3,Acme,2024-01-01T12:30:00-00:30,probability,x,0.4,,\n' })]]);
    expect(await rawQuery(data, "SELECT claim_id, strftime(claimed_at, '%Y-%m-%dT%H:%M') AS made FROM {claims} ORDER BY claim_id")).toEqual([
      { claim_id: 'c1', made: '2023-12-31T12:31' },
      { claim_id: 'c2', made: '2024-01-02T12:29' },
      { claim_id: 'c3', made: '2024-01-01T13:00' },
    ]);
  });
  /** A file whose line 3 gives `bad` as `field`: rejected at that line and field, nothing written. */
  async function expectDateRejected(field: string, bad: string): Promise<void> {
    const data = join(tmp.dir, `wh-${n++}`);
    const row = field === 'made_at' ? `c1,Acme,${bad},probability,x,0.4,,\n` : `c1,Acme,2024-01-01,probability,x,0.4,1,${bad}\n`;
    const e = await importAll(data, [['csv', folder({ 'a.csv': CSV_HEAD + 'c0,Acme,2024-01-01,probability,x,0.4,,\n' + row })]]).then(() => null, (err: unknown) => err);
    expect(e, bad).toBeInstanceOf(ImportError);
    expect([(e as ImportError).line, (e as ImportError).field], bad).toEqual([3, field]);
    expect(claimParts(data)).toEqual([]);
  }
  it('a time of day outside 00:00-23:59 is rejected at its field (QA: 2024-12-31T24:00 was taken as 2025-01-01, a claim of the next year in the trends)', async () => {
    for (const [field, bad] of [['made_at', '2024-12-31T24:00'], ['made_at', '2024-01-01 24:00:00Z'], ['resolved_at', '2024-06-01T24:00:00.000+02:00']]) await expectDateRejected(field, bad);
    const data = join(tmp.dir, `wh-${n++}`);
    await importAll(data, [['csv', folder({ 'a.csv': CSV_HEAD + 'c1,Acme,2024-12-31T23:59:59.999Z,probability,x,0.4,,\nc2,Acme,2024-12-31 00:00,probability,x,0.4,,\n' })]]);
    expect(await rawQuery(data, "SELECT claim_id, strftime(claimed_at, '%Y-%m-%dT%H:%M:%S') AS made FROM {claims} ORDER BY claim_id")).toEqual([
      { claim_id: 'c1', made: '2024-12-31T23:59:59' },
      { claim_id: 'c2', made: '2024-12-31T00:00:00' },
    ]);
  });
  it('a 10-character date that is not YYYY-MM-DD in digits is rejected at its field (QA: 2024-01-3x was 3 January, -024-01-01 the year 25 BC)', async () => {
    for (const [field, bad] of [['made_at', '2024-01-3x'], ['made_at', '-024-01-01'], ['made_at', '2024-01-1Z'], ['made_at', '2024-01-1T'], ['resolved_at', '2024-06-1.']]) await expectDateRejected(field, bad);
    const data = join(tmp.dir, `wh-${n++}`);
    await importAll(data, [['csv', folder({ 'a.csv': CSV_HEAD + 'c1,Acme,2024-02-29,probability,x,0.4,1,2024-03-01\n' })]]);
    expect(await rawQuery(data, "SELECT strftime(claimed_at, '%Y-%m-%dT%H:%M') AS made, strftime(resolved_at, '%Y-%m-%dT%H:%M') AS resolved FROM {claims}")).toEqual([
      { made: '2024-02-29T00:00', resolved: '2024-03-01T00:00' },
    ]);
  });
});

describe('a very long source name', () => {
  it("gets a slug the API serves (at most 200 characters), its collisions too (QA: a 299-character slug, its track record a 400)", async () => {
    const data = join(tmp.dir, `wh-${n++}`);
    const long = 'Very Long Name '.repeat(20);
    await importAll(data, [['csv', folder({ 'a.csv': CSV_HEAD + `c1,${long},2024-01-01,probability,x,0.7,1,2024-06-01\nc2,${long}!,2024-01-01,probability,x,0.7,1,2024-06-01\nc3,AI ${long},2024-01-01,probability,x,0.7,1,2024-06-01\n` })]]);
    const slugs = (await rawQuery(data, 'SELECT source_slug FROM {sources} ORDER BY source_slug')).map((r) => String(r.source_slug));
    expect(slugs).toHaveLength(3);
    for (const slug of slugs) expect(slug).toMatch(/^[a-z0-9][a-z0-9-]{0,199}$/);
    await publishScores(data);
    const server = await serve(data);
    try {
      const { key } = newKey(data, 'enterprise');
      for (const slug of slugs) {
        const got = await get(server, `/api/track-records/sources/${slug}/`);
        expect(got.res.status, slug).toBe(200);
        expect(got.body.source.n_claims).toBe(1);
        expect((await get(server, `/api/claims/?source=${slug}`, auth.x(key))).body.total).toBe(1);
      }
    } finally {
      await server.close();
    }
  });
});

