/**
 * `quorum import claims csv`: operators' own claims against what is already stored (QA findings):
 * a claim re-imported with other content, a claim id another source already has, a source named
 * like one of Quorum's own or a bundled dataset's, and the file checks (line breaks in ignored
 * columns, resolutions before the claim, encodings, delimiters, time offsets, the dataset name).
 * Real files, the real importer or CLI, real DuckDB and Parquet; nothing mocked.
 */
import { mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { importClaims } from '../../pipeline/claims/import.ts';
import { ImportError } from '../../pipeline/import/import-error.ts';
import { withConnection } from '../../pipeline/warehouse/duckdb.ts';
import { currentFile, rawTableDir, runDate, snapshotDir } from '../../pipeline/warehouse/layout.ts';
import { rawParts, rawRelation } from '../../pipeline/warehouse/raw-views.ts';
import { cli } from '../api/helpers.ts';
import { REPO } from '../helpers/cli.ts';
import { tempDir } from '../helpers/temp-dir.ts';
import { claimParts, CSV_HEAD, csvFolder, importAll, publishScores, rawQuery } from './helpers.ts';

const SAMPLE = join(REPO, 'data', 'sample');
const tmp = tempDir('quorum-claims-operators-');
afterAll(() => tmp.cleanup());
let n = 0;

const folder = (files: Record<string, string | Buffer>) => csvFolder(tmp.dir, files);

/** The ImportError an import of `dir` into `data` throws (it must throw one). */
async function rejected(data: string, dir: string): Promise<ImportError> {
  const e = await importAll(data, [['csv', dir]]).then(() => null, (err: unknown) => err);
  expect(e).toBeInstanceOf(ImportError);
  return e as ImportError;
}



describe('a claim already stored, imported again', () => {
  it('with another probability, made_at or subject: rejected at that field, naming where it was first stored; nothing written', async () => {
    const data = join(tmp.dir, 'wh-changed');
    const v1 = folder({ 'a.csv': CSV_HEAD + 'c1,Acme,2024-01-01,probability,X,0.7,,\nc2,Acme,2024-01-01,probability,Y,0.7,,\n' });
    const [first] = await importAll(data, [['csv', v1]]);
    expect(first!.claims.written).toBe(2);
    const before = claimParts(data);
    const cases: [string, string, RegExp][] = [
      ['c2,Acme,2024-01-01,probability,Y,0.8,,\n', 'probability', /^claim c2 already stored with another probability \(first stored from a\.csv:3\): "0\.8" here, "0\.7" stored$/],
      ['c2,Acme,2024-01-02,probability,Y,0.7,,\n', 'made_at', /another made_at/],
      ['c2,Acme,2024-01-01,probability,Z,0.7,,\n', 'subject', /another subject/],
    ];
    for (const [row, field, reason] of cases) {
      // b.csv: a new claim before it in the import, so a rejection must also drop that one.
      const v2 = folder({ 'a.csv': CSV_HEAD + 'c1,Acme,2024-01-01,probability,X,0.7,,\n' + row, 'b.csv': CSV_HEAD + 'c3,Acme,2024-01-01,probability,W,0.5,,\n' });
      const e = await rejected(data, v2);
      expect([e.file, e.line, e.field], row).toEqual([join(v2, 'a.csv'), 3, field]);
      expect(e.reason, row).toMatch(reason);
      expect(claimParts(data)).toEqual(before);
    }
    // The same claims again (another spelling of the same time, another file name): nothing new.
    const again = folder({ 'z.csv': CSV_HEAD + 'c2,Acme,2024-01-01T00:00:00Z,probability,Y,0.7,,\nc1,Acme,2024-01-01,probability,X,0.70,,\n' });
    const [res] = await importAll(data, [['csv', again]]);
    expect([res!.claims, res!.sources]).toEqual([{ received: 2, written: 0, duplicates: 0, changed: 0 }, { received: 1, written: 0 }]);
    expect(claimParts(data)).toEqual(before);
  });

  it('an open claim imported again resolved gets its resolution, scored; a stored resolution cannot change (QA: it stayed open silently)', async () => {
    const data = join(tmp.dir, 'wh-resolve');
    await importAll(data, [['csv', folder({ 'v1.csv': CSV_HEAD + 'c1,Acme,2024-01-01,probability,X,0.7,,\nc9,Acme,2024-01-01,probability,Q,0.2,0,2024-02-01\n' })]]);
    const v2 = folder({ 'v2.csv': CSV_HEAD + 'c1,Acme,2024-01-01,probability,X,0.7,1,2024-03-01\nc9,Acme,2024-01-01,probability,Q,0.2,0,2024-02-01\n' });
    const [added] = await importAll(data, [['csv', v2]]);
    expect(added!.resolutions).toEqual({ received: 1, written: 1 });
    expect(added!.claims.written).toBe(0);
    // the claim's own row is as first imported; the resolution is a row of its own, with where it came from
    expect(await rawQuery(data, 'SELECT claim_id, outcome FROM {claims} ORDER BY claim_id')).toEqual([
      { claim_id: 'c1', outcome: null },
      { claim_id: 'c9', outcome: 0 },
    ]);
    expect(await rawQuery(data, `SELECT claim_id, outcome, strftime(resolved_at, '%Y-%m-%d') AS at, provenance_file, provenance_line FROM (${rawRelation(data, 'claim_resolutions')})`)).toEqual([
      { claim_id: 'c1', outcome: 1, at: '2024-03-01', provenance_file: 'v2.csv', provenance_line: 2n },
    ]);
    // the same file again writes nothing
    const before = claimParts(data).concat(rawParts(data, 'claim_resolutions'));
    const [again] = await importAll(data, [['csv', v2]]);
    expect([again!.claims.written, again!.resolutions.written]).toEqual([0, 0]);
    // a stored resolution (its own, or one added later): another outcome, another time, or none at all
    for (const [row, field, id] of [
      ['c9,Acme,2024-01-01,probability,Q,0.2,1,2024-02-01\n', 'outcome', 'c9'],
      ['c9,Acme,2024-01-01,probability,Q,0.2,0,2024-02-02\n', 'resolved_at', 'c9'],
      ['c9,Acme,2024-01-01,probability,Q,0.2,,\n', 'outcome', 'c9'],
      ['c1,Acme,2024-01-01,probability,X,0.7,0,2024-03-01\n', 'outcome', 'c1'],
      ['c1,Acme,2024-01-01,probability,X,0.7,,\n', 'outcome', 'c1'],
    ] as const) {
      const e = await rejected(data, folder({ 'v3.csv': CSV_HEAD + row }));
      expect([e.line, e.field], row).toEqual([2, field]);
      expect(e.reason, row).toContain(`claim ${id} is stored resolved`);
    }
    expect(claimParts(data).concat(rawParts(data, 'claim_resolutions'))).toEqual(before);
    // the track record counts c1 resolved, with the outcome added: both claims scored, both hits
    const runId = await publishScores(data);
    const acme = await withConnection(async (conn) =>
      (await conn.runAndReadAll(
        "SELECT n_claims::INTEGER AS n, n_resolved::INTEGER AS resolved, accuracy_score AS accuracy FROM read_parquet($file) WHERE source_slug = 'acme'",
        { file: join(snapshotDir(data, runId), 'track_records.parquet') },
      )).getRowObjectsJS(),
    );
    expect(acme).toEqual([{ n: 2, resolved: 2, accuracy: 100 }]);
  });
});

describe('claim ids are unique across sources', () => {
  it('another source\'s file numbering its rows 1, 2 like the first: exit 1 at claim_id naming the source that has it; no empty source written', async () => {
    const data = join(tmp.dir, 'wh-ids');
    const acme = folder({ 'acme.csv': CSV_HEAD + '1,Acme,2024-01-01,probability,X,0.7,,\n2,Acme,2024-01-01,probability,Y,0.4,,\n' });
    const ok = await cli(data, 'import', 'claims', 'csv', acme);
    expect(ok.code, ok.stderr).toBe(0);
    const beta = folder({ 'beta.csv': CSV_HEAD + '1,Beta Research,2024-02-01,probability,P,0.1,,\n2,Beta Research,2024-02-01,probability,Q,0.2,,\n' });
    const fail = await cli(data, 'import', 'claims', 'csv', beta);
    expect(fail.code).toBe(1);
    expect(fail.stderr).toContain(`${join(beta, 'beta.csv')}:2 (line 2, field "claim_id"): claim_id 1 is already stored for another source, acme ("Acme") (first stored from acme.csv:2)`);
    expect(fail.stderr).toContain('beta-research:1');
    expect(await rawQuery(data, 'SELECT source_slug FROM {sources} ORDER BY ALL')).toEqual([{ source_slug: 'acme' }]);
    expect(await rawQuery(data, 'SELECT claim_id, source_slug FROM {claims} ORDER BY ALL')).toEqual([
      { claim_id: '1', source_slug: 'acme' },
      { claim_id: '2', source_slug: 'acme' },
    ]);
    // Ids of their own: both sources' claims are stored.
    const own = folder({ 'beta.csv': CSV_HEAD + 'b1,Beta Research,2024-02-01,probability,P,0.1,,\nb2,Beta Research,2024-02-01,probability,Q,0.2,,\n' });
    const again = await cli(data, 'import', 'claims', 'csv', own);
    expect(again.code, again.stderr).toBe(0);
    expect(JSON.parse(again.stdout)).toMatchObject({ claims: { written: 2 }, sources: { written: 1 } });
  }, 60_000);
});

describe('an operator\'s source never merges into Quorum\'s own sources or a bundled dataset\'s', () => {
  it('Quorum Consensus, AI sim-gpt, Polymarket and a bundled pollster\'s name get slugs of their own; the bundled track record is unchanged', async () => {
    const data = join(tmp.dir, 'wh-reserved');
    const [polls] = await importAll(data, [['fte-polls', join(SAMPLE, 'fte-pollster-raw-polls')]]);
    const ipsos = await rawQuery(data, "SELECT count(*)::INTEGER AS n FROM {claims} WHERE source_slug = 'ipsos'");
    expect(ipsos[0]!.n).toBeGreaterThan(0);
    const names = ['Quorum Consensus', 'AI sim-gpt', 'Polymarket', 'Ipsos', 'Kalshi'];
    const ops = folder({ 'ops.csv': CSV_HEAD + names.map((s, i) => `o${i},${s},2024-01-01,probability,E${i},0.9,1,2024-02-01\n`).join('') });
    const [res] = await importAll(data, [['csv', ops]]);
    expect(res!.claims.written).toBe(names.length);
    const slugs = await rawQuery(data, "SELECT s.name, c.source_slug FROM {claims} AS c JOIN {sources} AS s USING (source_slug) WHERE c.claim_id LIKE 'o%' ORDER BY c.claim_id");
    expect(slugs).toEqual([
      { name: 'Quorum Consensus', source_slug: 'quorum-consensus-2' },
      { name: 'AI sim-gpt', source_slug: 'source-ai-sim-gpt' },
      { name: 'Polymarket', source_slug: 'polymarket-2' },
      { name: 'Ipsos', source_slug: 'ipsos-2' },
      { name: 'Kalshi', source_slug: 'kalshi-2' },
    ]);
    // Re-importing keeps the slugs (the operator's names are now stored) and writes nothing.
    const [again] = await importAll(data, [['csv', ops]]);
    expect(again!.claims.written).toBe(0);
    // The published track records: the pollster keeps its claims, the operator's Ipsos is its own source.
    await publishScores(data);
    const snapshot = snapshotDir(data, readFileSync(currentFile(data), 'utf8').trim());
    const records = await withConnection(async (conn) =>
      (await conn.runAndReadAll(
        'SELECT source_slug, name, kind, n_claims::INTEGER AS n FROM read_parquet($file) WHERE source_slug IN (\'ipsos\', \'ipsos-2\', \'polymarket-2\', \'quorum-consensus-2\') ORDER BY source_slug',
        { file: join(snapshot, 'track_records.parquet') },
      )).getRowObjectsJS(),
    );
    expect(records).toEqual([
      { source_slug: 'ipsos', name: 'Ipsos', kind: 'pollster', n: ipsos[0]!.n },
      { source_slug: 'ipsos-2', name: 'Ipsos', kind: 'other', n: 1 },
      { source_slug: 'polymarket-2', name: 'Polymarket', kind: 'other', n: 1 },
      { source_slug: 'quorum-consensus-2', name: 'Quorum Consensus', kind: 'other', n: 1 },
    ]);
    expect(polls!.sources.written).toBe(517);
  }, 120_000);

  it('the other way round: a bundled pollster imported after an operator\'s source of the same name is not merged into it', async () => {
    const data = join(tmp.dir, 'wh-reserved-after');
    await importAll(data, [['csv', folder({ 'ops.csv': CSV_HEAD + 'o1,Ipsos,2024-01-01,probability,E,0.9,,\n' })]]);
    await importAll(data, [['fte-polls', join(SAMPLE, 'fte-pollster-raw-polls')]]);
    const got = await rawQuery(data, "SELECT source_slug, count(*) FILTER (WHERE provenance_dataset LIKE 'csv:%')::INTEGER AS operator, count(*) FILTER (WHERE provenance_dataset NOT LIKE 'csv:%')::INTEGER AS bundled FROM {claims} WHERE source_slug LIKE 'ipsos%' GROUP BY ALL ORDER BY ALL");
    expect(got.map((r) => [r.source_slug, r.operator, (r.bundled as number) > 0])).toEqual([
      ['ipsos', 1, false],
      ['ipsos-2', 0, true],
    ]);
  }, 60_000);
});

describe('generic CSV file checks', () => {
  it('a quoted line break in an ignored column is refused at its line (the later lines would shift)', async () => {
    const head = 'claim_id,source,made_at,kind,subject,probability,notes\n';
    const dir = folder({ 'a.csv': head + 'c1,S,2024-01-01,probability,x,0.4,fine\nc2,S,2024-01-01,probability,x,0.4,"two\nlines"\nc3,S,2024-01-01,probability,x,0.4,\n' });
    const e = await rejected(join(tmp.dir, `wh-${n++}`), dir);
    expect([e.line, e.field]).toEqual([3, 'notes']);
    expect(e.reason).toContain('line break');
  });

  it('a quoted line break or an unterminated quote names the field it opens in, past quoted commas and escaped quotes (outside test: both named the line only)', async () => {
    const head = 'claim_id,source,made_at,kind,subject,probability,horizon_days\n';
    const cases: [string, number, string, string][] = [
      ['c1,"Acme, ""Polls""",2024-01-01,probability,x,0.4,"31\n"\n', 2, 'horizon_days', 'line break'],
      ['c1,S,2024-01-01,probability,x,0.4,\nc2,S,2024-01-01,probability,"x, y",0.4,,"z\n', 3, '(extra)', 'unterminated'],
      ['c1,S,2024-01-01,probability,x,0.4,\nc2,"S",2024-01-01,probability,"x,0.4,', 3, 'subject', 'unterminated'],
    ];
    for (const [body, line, field, reason] of cases) {
      const data = join(tmp.dir, `wh-${n++}`);
      const e = await rejected(data, folder({ 'a.csv': head + body }));
      expect([e.line, e.field, e.reason], body).toEqual([line, field, expect.stringContaining(reason)]);
      expect(rawParts(data, 'claims')).toEqual([]);
    }
  });

  it('a claim resolved before it was made, or more than 36,525 days after, is rejected at resolved_at', async () => {
    const cases = [
      'c1,S,2024-06-01,probability,x,0.4,1,2024-01-05\n',
      'c1,S,1924-01-04,probability,x,0.4,1,2024-01-05\n',
      'c1,S,2024-06-01T12:00:00Z,probability,x,0.4,1,2024-06-01T11:59:59Z\n',
    ];
    for (const row of cases) {
      const data = join(tmp.dir, `wh-${n++}`);
      const e = await rejected(data, folder({ 'a.csv': CSV_HEAD + 'c0,S,2024-01-01,probability,x,0.4,,\n' + row }));
      expect([e.line, e.field], row).toEqual([3, 'resolved_at']);
      expect(e.reason, row).toMatch(/before it was made|36525 days/);
      expect(claimParts(data)).toEqual([]);
    }
    // The bounds themselves: resolved when made, and exactly 36,525 days later.
    const [res] = await importAll(join(tmp.dir, `wh-${n++}`), [['csv', folder({ 'a.csv': CSV_HEAD + 'c1,S,2024-06-01,probability,x,0.4,1,2024-06-01\nc2,S,1924-01-05,probability,x,0.4,1,2024-01-05\n' })]]);
    expect(res!.claims.written).toBe(2);
  });

  it('a Latin-1 file is said not to be UTF-8, at the line and field of its first byte that is none (outside test: the field was not named)', async () => {
    const latin1 = Buffer.concat([Buffer.from(CSV_HEAD), Buffer.from('c1,Caf'), Buffer.from([0xe9]), Buffer.from(' Polls,2024-01-01,probability,x,0.4,,\n')]);
    const e = await rejected(join(tmp.dir, `wh-${n++}`), folder({ 'a.csv': latin1 }));
    expect([e.line, e.field]).toEqual([2, 'source']);
    expect(e.reason).toMatch(/not UTF-8/);
    // after blank lines, a quoted comma and escaped quotes; in a column the format ignores
    const later = Buffer.concat([
      Buffer.from(CSV_HEAD.replace('\n', ',notes\n') + 'c1,S,2024-01-01,probability,x,0.4,,,\n\n' + 'c2,"S, ""Q""",2024-01-01,probability,"a, b",0.4,,,"caf'),
      Buffer.from([0xe9]),
      Buffer.from('"\n'),
    ]);
    const e2 = await rejected(join(tmp.dir, `wh-${n++}`), folder({ 'a.csv': later }));
    expect([e2.line, e2.field]).toEqual([4, 'notes']);
    expect(e2.reason).toMatch(/not UTF-8/);
    // a quote inside an unquoted field opens nothing: the fields after it are split at their commas
    const inner = Buffer.concat([Buffer.from(CSV_HEAD + 'c1,S,2024-01-01,probability,a"b,0.4,,'), Buffer.from([0xe9]), Buffer.from('\n')]);
    const e3 = await rejected(join(tmp.dir, `wh-${n++}`), folder({ 'a.csv': inner }));
    expect([e3.line, e3.field]).toEqual([2, 'resolved_at']);
  });

  it('a semicolon- or tab-separated file is said to be one, not "missing column claim_id"', async () => {
    for (const [sep, said] of [[';', "';'"], ['\t', 'tab']] as const) {
      const text = CSV_HEAD.replaceAll(',', sep) + ['c1', 'S', '2024-01-01', 'probability', 'x', '0,4', '', ''].join(sep) + '\n';
      const e = await rejected(join(tmp.dir, `wh-${n++}`), folder({ 'a.csv': text }));
      expect([e.line, e.field]).toEqual([1, null]);
      expect(e.reason).toBe(`the header has one column: fields must be comma-separated (found ${said})`);
    }
  });

  it('RFC 3339 times: an offset of hours only (+01, -05), lower-case t and z', async () => {
    const data = join(tmp.dir, `wh-${n++}`);
    await importAll(data, [['csv', folder({
      'a.csv': CSV_HEAD +
        't1,S,2024-11-03 12:00:00+01,probability,x,0.4,1,2024-11-10t08:00:00z\n' +
        't2,S,2024-11-03T12:00-05,probability,x,0.4,,\n' +
        't3,S,2024-11-03t12:00:00.25+0130,probability,x,0.4,,\n',
    })]]);
    const got = await rawQuery(data, "SELECT claim_id, strftime(claimed_at, '%Y-%m-%dT%H:%M:%S.%g') AS made, strftime(resolved_at, '%Y-%m-%dT%H:%M') AS resolved FROM {claims} ORDER BY claim_id");
    expect(got).toEqual([
      { claim_id: 't1', made: '2024-11-03T11:00:00.000', resolved: '2024-11-10T08:00' },
      { claim_id: 't2', made: '2024-11-03T17:00:00.000', resolved: null },
      { claim_id: 't3', made: '2024-11-03T10:30:00.250', resolved: null },
    ]);
    // Still refused: an offset of one digit, a time without minutes.
    for (const bad of ['2024-11-03T12:00+1', '2024-11-03T12']) {
      const e = await rejected(join(tmp.dir, `wh-${n++}`), folder({ 'a.csv': CSV_HEAD + `t1,S,${bad},probability,x,0.4,,\n` }));
      expect([e.line, e.field], bad).toEqual([2, 'made_at']);
    }
  });

  it('a header naming a column in another case or spelling (Outcome, Resolved_At, "horizon days") is rejected at line 1 naming the column, nothing written (QA: the resolution was dropped silently, the claim stored open)', async () => {
    const cases: [string, string, string][] = [
      ['claim_id,source,made_at,kind,subject,probability,Outcome,Resolved_At', 'outcome', 'Outcome'],
      ['claim_id,source,made_at,kind,subject,probability,outcome,resolved_at,horizon days', 'horizon_days', 'horizon days'],
      ['claim_id,source,made_at,kind,subject,probability,outcome,resolved_at,Question-ID', 'question_id', 'Question-ID'],
      // a required column too: said what it is, not only "missing"
      ['Claim_ID,source,made_at,kind,subject,probability,outcome,resolved_at', 'claim_id', 'Claim_ID'],
    ];
    for (const [head, field, written] of cases) {
      const data = join(tmp.dir, `wh-${n++}`);
      const extra = head.split(',').length > 8 ? ',x' : '';
      const e = await rejected(data, folder({ 'a.csv': `${head}\nc1,S,2024-01-01,probability,x,0.4,1,2024-02-01${extra}\n` }));
      expect([e.line, e.field], head).toEqual([1, field]);
      expect(e.reason, head).toBe(`column ${JSON.stringify(written)} is not read: columns are named as documented, in lower case (write ${field})`);
      expect(claimParts(data)).toEqual([]);
    }
    // Other extra columns are still ignored.
    const [res] = await importAll(join(tmp.dir, `wh-${n++}`), [['csv', folder({ 'a.csv': `${CSV_HEAD.trim()},Notes,outcome_note\nc1,S,2024-01-01,probability,x,0.4,1,2024-02-01,n,m\n` })]]);
    expect(res!.claims.written).toBe(1);
  });

  it('a claim made, or resolved with an outcome, more than a day after the import, or made before 1900, is rejected at that field (QA: 2052 for 2025 was written, counted, and never shown)', async () => {
    const now = new Date('2026-01-01T00:00:00Z');
    const cases: [string, string][] = [
      ['c1,S,2052-01-01,probability,x,0.4,,\n', 'made_at'],
      ['c1,S,2026-01-02T00:00:01Z,probability,x,0.4,,\n', 'made_at'],
      ['c1,S,2025-06-01,probability,x,0.4,1,2026-03-01\n', 'resolved_at'],
    ];
    for (const [row, field] of cases) {
      const data = join(tmp.dir, `wh-${n++}`);
      const e = await importAll(data, [['csv', folder({ 'a.csv': CSV_HEAD + 'c0,S,2024-01-01,probability,x,0.4,,\n' + row })]], now).then(() => null, (err: unknown) => err as ImportError);
      expect(e, row).toBeInstanceOf(ImportError);
      expect([e!.line, e!.field], row).toEqual([3, field]);
      expect(e!.reason, row).toMatch(/more than a day after this import/);
      expect(claimParts(data)).toEqual([]);
    }
    // A year before 1900 is a wrong year too (0024 for 2024 was stored as a claim of the first century)
    for (const [row, date] of [['c1,S,0024-01-01,probability,x,0.4,,\n', '0024'], ['c1,S,1899-12-31T23:59:59Z,probability,x,0.4,,\n', '1899']]) {
      const data = join(tmp.dir, `wh-${n++}`);
      const e = await importAll(data, [['csv', folder({ 'a.csv': CSV_HEAD + 'c0,S,2024-01-01,probability,x,0.4,,\n' + row })]], now).then(() => null, (err: unknown) => err as ImportError);
      expect(e, date).toBeInstanceOf(ImportError);
      expect([e!.line, e!.field, e!.reason], date).toEqual([3, 'made_at', 'before 1900-01-01: a claim is dated when it was made (a wrong year?)']);
      expect(claimParts(data)).toEqual([]);
    }
    // Within a day (a date that is already today east of UTC), and an open claim's expected
    // resolution date in the future (not stored: no resolution), are taken.
    const [res] = await importAll(join(tmp.dir, `wh-${n++}`), [['csv', folder({ 'a.csv': CSV_HEAD + 'c1,S,2026-01-02,probability,x,0.4,,\nc2,S,2025-06-01,probability,x,0.4,,2027-01-01\nc3,S,1900-01-01,probability,x,0.4,,\n' })]], now);
    expect(res!.claims.written).toBe(3);
  });

  it('`import claims csv .` names the directory itself as the dataset, not "."', async () => {
    const dir = folder({ 'a.csv': CSV_HEAD + 'c1,S,2024-01-01,probability,x,0.4,,\n' });
    const data = join(tmp.dir, `wh-${n++}`);
    // As a shell passes `.` from inside the directory: a path that ends in "."
    await withConnection((conn) => importClaims(conn, data, 'csv', join(relative(process.cwd(), dir), '.') + '/.'));
    expect(await rawQuery(data, 'SELECT provenance_dataset FROM {claims}')).toEqual([{ provenance_dataset: `csv:${dir.split('/').at(-1)}` }]);
  });
});

describe('a claims write that fails (as on a full disk)', () => {
  it('leaves nothing: no source without its claims; importing again writes both (QA)', async () => {
    const data = join(tmp.dir, `wh-${n++}`);
    const dir = folder({ 'a.csv': `${CSV_HEAD}c1,Acme Polls,2024-01-01,probability,x,0.4,1,2024-02-01\n` });
    // a file where today's claims partition goes (readers see no part there): the sources part is
    // written, the claims part fails
    mkdirSync(rawTableDir(data, 'claims'), { recursive: true });
    const blocker = join(rawTableDir(data, 'claims'), `run_date=${runDate(new Date())}`);
    writeFileSync(blocker, 'in the way');
    await expect(importAll(data, [['csv', dir]])).rejects.toThrow();
    expect(rawParts(data, 'sources')).toEqual([]);
    expect(readdirSync(join(data, 'raw'), { recursive: true }).map(String).filter((f) => f.endsWith('.tmp'))).toEqual([]);
    rmSync(blocker);
    await importAll(data, [['csv', dir]]);
    expect(await rawQuery(data, 'SELECT claim_id, source_slug FROM {claims}')).toEqual([{ claim_id: 'c1', source_slug: 'acme-polls' }]);
    expect((await rawQuery(data, 'SELECT source_slug FROM {sources}')).map((r) => r.source_slug)).toEqual(['acme-polls']);
  });
});

describe('a resolved claim carries what its kind is scored on (QA)', () => {
  const HEAD = 'claim_id,source,made_at,kind,subject,probability,side,value,outcome,realized_value,resolved_at\n';
  it('a value claim with an outcome but no realized_value, a direction or probability claim with a realized_value but no outcome: rejected at that field, nothing written (QA: stored, counted in n_resolved, in no metric)', async () => {
    const cases: [string, string, RegExp][] = [
      ['c2,S,2024-01-01,value,GDP,,,2.5,1,,2024-06-01\n', 'realized_value', /resolved value claim needs its realized_value/],
      ['c2,S,2024-01-01,direction,race,,yes,,,3,2024-06-01\n', 'outcome', /resolved direction claim needs its outcome/],
      ['c2,S,2024-01-01,probability,race,0.6,,,,1,2024-06-01\n', 'outcome', /resolved probability claim needs its outcome/],
    ];
    for (const [row, field, reason] of cases) {
      const data = join(tmp.dir, `wh-${n++}`);
      const dir = folder({ 'a.csv': HEAD + 'c1,S,2024-01-01,value,GDP,,,2.5,,2.4,2024-06-01\n' + row });
      const e = await rejected(data, dir);
      expect([e.file, e.line, e.field], row).toEqual([join(dir, 'a.csv'), 3, field]);
      expect(e.reason, row).toMatch(reason);
      expect(claimParts(data)).toEqual([]);
    }
    // What each kind is scored on is enough: a value claim with a realized value only, a direction
    // claim with an outcome only (and one carrying both), a probability claim with an outcome.
    const ok = HEAD + 'c1,S,2024-01-01,value,GDP,,,2.5,,2.4,2024-06-01\nc2,S,2024-01-01,direction,race,,yes,3,1,2,2024-06-01\n' +
      'c3,S,2024-01-01,direction,race,,yes,,0,,2024-06-01\nc4,S,2024-01-01,probability,race,0.6,,,0.5,,2024-06-01\nc5,S,2024-01-01,value,GDP,,,2.5,,,\n';
    const [res] = await importAll(join(tmp.dir, `wh-${n++}`), [['csv', folder({ 'a.csv': ok })]]);
    expect(res!.claims.written).toBe(5);
  });
});

describe('rows of only empty fields (a spreadsheet export) are skipped like blank lines (QA: rejected at claim_id)', () => {
  it('skipped, not counted, the lines after them exact', async () => {
    const data = join(tmp.dir, `wh-${n++}`);
    const text = CSV_HEAD + 'c1,S,2024-01-01,probability,x,0.4,,\n,,,,,,,\n , ,"",,\t,,,\n\nc2,S,2024-01-01,probability,y,0.6,,\n,,,,,,,\n';
    const [res] = await importAll(data, [['csv', folder({ 'a.csv': text })]]);
    expect([res!.claims.received, res!.claims.written, res!.sources.written]).toEqual([2, 2, 1]);
    expect(await rawQuery(data, 'SELECT claim_id, provenance_line FROM {claims} ORDER BY claim_id')).toEqual([
      { claim_id: 'c1', provenance_line: 2n },
      { claim_id: 'c2', provenance_line: 6n },
    ]);
    // an error after them names its own line
    const e = await rejected(join(tmp.dir, `wh-${n++}`), folder({ 'a.csv': CSV_HEAD + ',,,,,,,\nc1,S,2024-01-01,probability,x,1.4,,\n' }));
    expect([e.line, e.field]).toEqual([3, 'probability']);
    // a row with any value is still a record: rejected at its first missing field
    const e2 = await rejected(join(tmp.dir, `wh-${n++}`), folder({ 'a.csv': CSV_HEAD + ',,,,,0.4,,\n' }));
    expect([e2.line, e2.field]).toEqual([2, 'claim_id']);
  });
});

describe('a source\'s kind and url within one import (QA: the first row\'s were kept silently)', () => {
  const HEAD = 'claim_id,source,made_at,kind,subject,probability,source_kind,source_url\n';
  it('two rows of a source giving another source_kind or source_url: rejected at the later, naming the first; empty takes the given one', async () => {
    const data = join(tmp.dir, `wh-${n++}`);
    const dir = folder({ 'a.csv': HEAD + 'c1,Acme,2024-01-01,probability,x,0.4,pollster,https://acme.example\nc2,Acme,2024-01-01,probability,y,0.4,media,https://acme.example\n' });
    const e = await rejected(data, dir);
    expect([e.file, e.line, e.field]).toEqual([join(dir, 'a.csv'), 3, 'source_kind']);
    expect(e.reason).toMatch(/"media" here, "pollster" at a\.csv:2/);
    const dir2 = folder({
      'a.csv': HEAD + 'c1,Acme,2024-01-01,probability,x,0.4,,https://acme.example\n',
      // across files too
      'b.csv': HEAD + 'c2,Acme,2024-01-01,probability,y,0.4,,https://acme.example/\n',
    });
    const e2 = await rejected(data, dir2);
    expect([e2.file, e2.line, e2.field]).toEqual([join(dir2, 'b.csv'), 2, 'source_url']);
    expect(e2.reason).toMatch(/at a\.csv:2/);
    expect(claimParts(data)).toEqual([]);
    // rows that leave them empty take the ones given, wherever given
    await importAll(data, [['csv', folder({ 'a.csv': HEAD + 'c1,Caf\u0065\u0301,2024-01-01,probability,x,0.4,,\nc2,Caf\u00e9,2024-01-01,probability,y,0.4,pollster,https://cafe.example\nc3,Café,2024-01-01,probability,z,0.4,pollster,\n' })]]);
    expect(await rawQuery(data, 'SELECT name, kind, url FROM {sources}')).toEqual([{ name: 'Café', kind: 'pollster', url: 'https://cafe.example' }]);
  });
  it('a later import giving a stored source another source_kind or source_url: rejected at that field, naming the stored one; empty or the same takes it (QA: a new kind or url was dropped silently, the claims written)', async () => {
    const data = join(tmp.dir, `wh-${n++}`);
    await importAll(data, [['csv', folder({ 'a.csv': HEAD + 'c1,Acme,2024-01-01,probability,x,0.4,pollster,https://acme.example\nc2,Zeta,2024-01-01,probability,x,0.4,,\n' })]]);
    const parts = claimParts(data);
    for (const [row, field, said] of [
      ['c3,Acme,2024-01-02,probability,y,0.4,media,', 'source_kind', /"media" here, "pollster" stored/],
      ['c3,Acme,2024-01-02,probability,y,0.4,,https://acme.example/', 'source_url', /"https:\/\/acme\.example\/" here, "https:\/\/acme\.example" stored/],
      // none given when stored: "other" and no url
      ['c3,Zeta,2024-01-02,probability,y,0.4,forecaster,', 'source_kind', /"forecaster" here, "other" stored/],
      ['c3,Zeta,2024-01-02,probability,y,0.4,,https://zeta.example', 'source_url', /"https:\/\/zeta\.example" here, none stored/],
    ] as const) {
      const dir = folder({ 'a.csv': HEAD + 'c0,Acme,2024-01-02,probability,y,0.4,,\n' + row + '\n' });
      const e = await rejected(data, dir);
      expect([e.file, e.line, e.field], row).toEqual([join(dir, 'a.csv'), 3, field]);
      expect(e.reason, row).toMatch(said);
      expect(claimParts(data)).toEqual(parts);
    }
    // the same or empty: taken
    await importAll(data, [['csv', folder({ 'a.csv': HEAD + 'c3,Acme,2024-01-02,probability,y,0.4,,https://acme.example\nc4,Zeta,2024-01-02,probability,y,0.4,other,\n' })]]);
    expect(await rawQuery(data, 'SELECT count(*)::INTEGER AS n FROM {claims}')).toEqual([{ n: 4 }]);
  });
});
