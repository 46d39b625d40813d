/**
 * `quorum import claims`: slugs, malformed files (rejected with file, line and field, nothing of
 * them written), the datasets' quirks, and the real CLI.
 */
import { copyFileSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { parseClaims, electionDay, type ClaimFormat } from '../../pipeline/claims/formats.ts';
import { importClaims } from '../../pipeline/claims/import.ts';
import { assignSlugs, foldAscii, slugify } from '../../pipeline/claims/slug.ts';
import { ImportError } from '../../pipeline/import/import-error.ts';
import { withConnection } from '../../pipeline/warehouse/duckdb.ts';
import { rawRelation } from '../../pipeline/warehouse/raw-views.ts';
import { cli } from '../api/helpers.ts';
import { REPO } from '../helpers/cli.ts';
import { tempDir } from '../helpers/temp-dir.ts';
import { importAll } from './helpers.ts';

const SAMPLE = join(REPO, 'data', 'sample');
const tmp = tempDir('quorum-claims-import-');
afterAll(() => tmp.cleanup());
let n = 0;

/** A copy of a bundled dataset folder with `file` replaced by `edit(original text)`. */
function edited(folder: string, files: string[], file: string, edit: (text: string) => string): string {
  const dir = join(tmp.dir, `case-${n++}`);
  mkdirSync(dir);
  for (const f of files) copyFileSync(join(SAMPLE, folder, f), join(dir, f));
  writeFileSync(join(dir, file), edit(readFileSync(join(SAMPLE, folder, file), 'utf8')));
  return dir;
}

async function rejection(format: ClaimFormat, dir: string): Promise<ImportError> {
  const attempt = format === 'csv' ? importAll(join(tmp.dir, `wh-${n++}`), [['csv', dir]]) : parseClaims(format, dir, new Date());
  const err = await attempt.then(
    () => null,
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(ImportError);
  return err as ImportError;
}

/** Replaces the `line`-th line (1-based) of a text. */
function atLine(line: number, f: (l: string) => string): (t: string) => string {
  return (t) => t.split('\n').map((l, i) => (i === line - 1 ? f(l) : l)).join('\n');
}

const POLLS = ['raw-polls.csv'];
const FORECASTS = ['forecast_results_2018.csv', 'historical-senate-predictions.csv'];
const CBO = ['deficit_projection_errors.csv', 'debt_projection_errors.csv'];

describe('slugs', () => {
  it('ASCII-folds and kebab-cases names', () => {
    expect(foldAscii('Øptimus Ærø Straße é')).toBe('Optimus AEro Strasse e');
    expect(slugify('Øptimus Analytics')).toBe('optimus-analytics');
    expect(slugify('Mason-Dixon Polling & Strategy')).toBe('mason-dixon-polling-strategy');
    expect(slugify('  --SurveyUSA-- ')).toBe('surveyusa');
    expect(slugify('東京')).toBe('source');
  });

  it('resolves collisions by code-point order and never renames a stored source', () => {
    const first = assignSlugs(['Zeta Poll', 'Zéta Poll', 'ZETA poll'], new Map(), new Set());
    expect([...first.entries()].sort()).toEqual([
      ['ZETA poll', 'zeta-poll'],
      ['Zeta Poll', 'zeta-poll-2'],
      ['Zéta Poll', 'zeta-poll-3'],
    ]);
    // Re-import with a new colliding name that sorts first: the stored names keep their slugs.
    const again = assignSlugs(['Zeta Poll', 'Zéta Poll', 'ZETA poll', 'ZETA POLL'], first, new Set(first.values()));
    expect(again.get('Zeta Poll')).toBe('zeta-poll-2');
    expect(again.get('ZETA poll')).toBe('zeta-poll');
    expect(again.get('ZETA POLL')).toBe('zeta-poll-4');
    // A slug taken by another kind of source (a venue) is skipped.
    expect(assignSlugs(['Polymarket Fans'], new Map(), new Set(['polymarket-fans'])).get('Polymarket Fans')).toBe('polymarket-fans-2');
  });
});

describe('malformed files are rejected with file, line and field', () => {
  it('polls: an unknown rightcall, a bad date, a truncated row, a missing column', async () => {
    let e = await rejection('fte-polls', edited('fte-pollster-raw-polls', POLLS, 'raw-polls.csv', atLine(5, (l) => l.replace(/,(1|0|\.5),([^,]*),([^,]*)$/, ',yes,$2,$3'))));
    expect([e.line, e.field]).toEqual([5, 'rightcall']);
    expect(e.message).toContain('raw-polls.csv:5');
    e = await rejection('fte-polls', edited('fte-pollster-raw-polls', POLLS, 'raw-polls.csv', atLine(7, (l) => l.replace('10/13/1998', '13/13/1998'))));
    expect([e.line, e.field]).toEqual([7, 'polldate']);
    e = await rejection('fte-polls', edited('fte-pollster-raw-polls', POLLS, 'raw-polls.csv', (t) => t.slice(0, Math.floor(t.length / 2))));
    expect(e.line).toBeGreaterThan(1000);
    expect(e.reason).toMatch(/truncated|expected/);
    e = await rejection('fte-polls', edited('fte-pollster-raw-polls', POLLS, 'raw-polls.csv', atLine(1, (l) => l.replace('margin_actual', 'margin_real'))));
    expect([e.line, e.field]).toEqual([1, 'margin_actual']);
  });

  it('Senate: a result that contradicts winflag, an unknown spelling, a race with two winners', async () => {
    let e = await rejection('fte-forecasts', edited('fte-election-forecasts', FORECASTS, 'historical-senate-predictions.csv', atLine(3, (l) => l.replace('Lose,0', 'Lose,1'))));
    expect([e.line, e.field]).toEqual([3, 'winflag']);
    e = await rejection('fte-forecasts', edited('fte-election-forecasts', FORECASTS, 'historical-senate-predictions.csv', atLine(3, (l) => l.replace('Lose,0', 'Lost,0'))));
    expect([e.line, e.field]).toEqual([3, 'result']);
    e = await rejection('fte-forecasts', edited('fte-election-forecasts', FORECASTS, 'historical-senate-predictions.csv', atLine(3, (l) => l.replace('Lose,0', 'Win,1'))));
    expect(e.field).toBe('winflag');
    expect(e.reason).toContain('2 winners');
  });

  it('2018: a probability outside [0, 1], a called race without a winner', async () => {
    let e = await rejection('fte-forecasts', edited('fte-election-forecasts', FORECASTS, 'forecast_results_2018.csv', atLine(4, (l) => l.replace(/,\.\d+,/, ',1.5,'))));
    expect([e.line, e.field]).toEqual([4, 'Democrat_WinProbability']);
    e = await rejection('fte-forecasts', edited('fte-election-forecasts', FORECASTS, 'forecast_results_2018.csv', atLine(2, (l) => l.replace(/,0,1,0$/, ',0,0,0'))));
    expect([e.line, e.field]).toEqual([2, 'Democrat_WinProbability'.replace('WinProbability', 'Won')]);
  });

  it('CBO: a projection_error in the other file\'s sign convention', async () => {
    // deficit row 2: projection_error 18.591 = −(adjusted − actual); the debt convention's sign is refused
    const e = await rejection('cbo', edited('cbo-budget-projections', CBO, 'deficit_projection_errors.csv', atLine(2, (l) => l.replace(',18.591,', ',-18.591,'))));
    expect([e.line, e.field]).toEqual([2, 'projection_error']);
    expect(e.message).toContain('deficit_projection_errors.csv:2');
  });

  it('generic CSV: missing side, bad kind, duplicate id, unresolved outcome without a time', async () => {
    const dir = join(tmp.dir, 'generic');
    mkdirSync(dir);
    const head = 'claim_id,source,made_at,kind,subject,probability,side,value,outcome,resolved_at\n';
    const cases: [string, number, string][] = [
      ['c1,S,2024-01-01,direction,x,,,,1,2024-02-01\n', 2, 'side'],
      ['c1,S,2024-01-01,guess,x,,,,,\n', 2, 'kind'],
      ['c1,S,2024-01-01,probability,x,0.4,,,,\nc1,S,2024-01-02,probability,x,0.5,,,,\n', 3, 'claim_id'],
      ['c1,S,2024-01-01,probability,x,0.4,,,1,\n', 2, 'resolved_at'],
      ['c1,S,2024-02-30,probability,x,0.4,,,,\n', 2, 'made_at'],
      ['c1,S,2024-01-01,probability,x,0.4,,,2,2024-03-01\n', 2, 'outcome'],
      ['c0,S,2024-01-01,value,x,,,7,,\nc1,S,2024-01-01,probability,x,1.4,,,,\n', 3, 'probability'],
      ['c1,S,2024-01-01,probability,x,0.4,,,,\nc2,S,2024-01-01,value,x,,,abc,,\n', 3, 'value'],
    ];
    for (const [body, line, field] of cases) {
      writeFileSync(join(dir, 'claims.csv'), head + body);
      const e = await rejection('csv', dir);
      expect([e.line, e.field], body).toEqual([line, field]);
      expect(e.file).toBe(join(dir, 'claims.csv'));
    }
    writeFileSync(join(dir, 'claims.csv'), 'claim_id,source,made_at,kind\nc1,S,2024-01-01,value\n');
    expect([(await rejection('csv', dir)).field]).toEqual(['subject']);
    writeFileSync(join(dir, 'claims.csv'), head + 'c1,S,2024-01-01,value,"two\nlines",,,3,,\n');
    expect((await rejection('csv', dir)).reason).toContain('line break');
  });

  it('generic CSV over several files: errors and provenance name each record\'s own file and line', async () => {
    const dir = join(tmp.dir, 'generic-files');
    mkdirSync(dir);
    const head = 'claim_id,source,made_at,kind,subject,probability,outcome,resolved_at\n';
    const rows = (ids: string[]) => ids.map((id) => `${id},S,2024-01-01,probability,x,0.4,,\n`).join('');
    writeFileSync(join(dir, 'a.csv'), head + rows(['a1', 'a2', 'a3']));
    writeFileSync(join(dir, 'b.csv'), head); // header only: no records, no rowids
    writeFileSync(join(dir, 'c.csv'), head + rows(['c1', 'c2']) + 'c3,S,2024-01-01,probability,x,1.5,,\n');
    let e = await rejection('csv', dir);
    expect([e.file, e.line, e.field]).toEqual([join(dir, 'c.csv'), 4, 'probability']);
    // A duplicate in a later file is reported there, at its own line, before a later invalid record.
    writeFileSync(join(dir, 'c.csv'), head + rows(['c1', 'a2', 'c2']) + 'c3,S,2024-01-01,probability,x,1.5,,\n');
    e = await rejection('csv', dir);
    expect([e.file, e.line, e.field, e.reason]).toEqual([join(dir, 'c.csv'), 3, 'claim_id', 'duplicate claim_id']);
    writeFileSync(join(dir, 'c.csv'), head + rows(['c1', 'c2', 'c3']));
    const data = join(tmp.dir, 'warehouse-files');
    await importAll(data, [['csv', dir]]);
    const got = await withConnection(async (conn) =>
      (await conn.runAndReadAll(`SELECT claim_id, provenance_file AS file, provenance_line::INTEGER AS line FROM (${rawRelation(data, 'claims')}) ORDER BY claim_id`)).getRowObjectsJS(),
    );
    // An instance with preserve_insertion_order off gets it on for the import, and back off after.
    const setting = await withConnection(async (conn) => {
      await conn.run('SET preserve_insertion_order = false');
      const res = await importClaims(conn, join(tmp.dir, 'warehouse-files-unordered'), 'csv', dir);
      expect(res.claims.written).toBe(6);
      return (await conn.runAndReadAll("SELECT current_setting('preserve_insertion_order') AS on")).getRowObjectsJS()[0]!.on;
    });
    expect(setting).toBe(false);
    expect(got).toEqual([
      { claim_id: 'a1', file: 'a.csv', line: 2 },
      { claim_id: 'a2', file: 'a.csv', line: 3 },
      { claim_id: 'a3', file: 'a.csv', line: 4 },
      { claim_id: 'c1', file: 'c.csv', line: 2 },
      { claim_id: 'c2', file: 'c.csv', line: 3 },
      { claim_id: 'c3', file: 'c.csv', line: 4 },
    ]);
  });

  it('generic CSV times: dates are UTC midnight, date-times keep their offset, no offset is UTC', async () => {
    const dir = join(tmp.dir, 'generic-times');
    mkdirSync(dir);
    writeFileSync(
      join(dir, 'a.csv'),
      'claim_id,source,made_at,kind,subject,probability,outcome,resolved_at\n' +
        't1,S,2024-01-01,probability,x,0.4,1,2024-02-01T10:00:00+02:00\n' +
        't2,S,2024-01-01 06:30,probability,x,0.4,,\n' +
        't3,S,2024-01-01T06:30:15.5Z,probability,x,0.4,,\n',
    );
    const data = join(tmp.dir, 'warehouse-times');
    await importAll(data, [['csv', dir]]);
    const got = await withConnection(async (conn) =>
      (await conn.runAndReadAll(`SELECT claim_id, strftime(claimed_at, '%Y-%m-%dT%H:%M:%S.%g') AS made, strftime(resolved_at, '%Y-%m-%dT%H:%M') AS resolved, provenance_line::INTEGER AS line FROM (${rawRelation(data, 'claims')}) ORDER BY claim_id`)).getRowObjectsJS(),
    );
    expect(got).toEqual([
      { claim_id: 't1', made: '2024-01-01T00:00:00.000', resolved: '2024-02-01T08:00', line: 2 },
      { claim_id: 't2', made: '2024-01-01T06:30:00.000', resolved: null, line: 3 },
      { claim_id: 't3', made: '2024-01-01T06:30:15.500', resolved: null, line: 4 },
    ]);
  });

  it('nothing of a rejected import is written, not even its valid rows or sources', async () => {
    const data = join(tmp.dir, 'warehouse-bad');
    const bad = edited('cbo-budget-projections', CBO, 'debt_projection_errors.csv', atLine(300, (l) => l.replace(/^debt,/, 'deficit,')));
    await expect(importAll(data, [['cbo', bad]])).rejects.toThrow(/debt_projection_errors\.csv:300 \(line 300, field "component"\)/);
    const counts = await withConnection(async (conn) => {
      const c = await conn.runAndReadAll(`SELECT (SELECT count(*) FROM (${rawRelation(data, 'claims')}))::INTEGER AS claims, (SELECT count(*) FROM (${rawRelation(data, 'sources')}))::INTEGER AS sources`);
      return c.getRowObjectsJS()[0];
    });
    expect(counts).toEqual({ claims: 0, sources: 0 });
  });

  it('election day: the Tuesday after the first Monday of November', () => {
    expect(electionDay(2008).toISOString().slice(0, 10)).toBe('2008-11-04');
    expect(electionDay(2010).toISOString().slice(0, 10)).toBe('2010-11-02');
    expect(electionDay(2012).toISOString().slice(0, 10)).toBe('2012-11-06');
    expect(electionDay(2018).toISOString().slice(0, 10)).toBe('2018-11-06');
  });
});

describe('the CLI', () => {
  it('quorum import claims cbo <dir> prints what it wrote; a malformed file exits 1 naming file, line and field', async () => {
    const data = join(tmp.dir, 'warehouse-cli');
    const ok = await cli(data, 'import', 'claims', 'cbo', join(SAMPLE, 'cbo-budget-projections'));
    expect(ok.code, ok.stderr).toBe(0);
    expect(JSON.parse(ok.stdout)).toMatchObject({ format: 'cbo', claims: { received: 694, written: 694 }, sources: { received: 1, written: 1 } });
    const bad = edited('cbo-budget-projections', CBO, 'deficit_projection_errors.csv', atLine(10, (l) => l.replace(/^deficit,Total,Total,\d{4}-\d{2}-01/, 'deficit,Total,Total,1990-13-01')));
    const fail = await cli(data, 'import', 'claims', 'cbo', bad);
    expect(fail.code).toBe(1);
    expect(fail.stderr).toMatch(/deficit_projection_errors\.csv:10 \(line 10, field "baseline_date"\)/);
    const unknown = await cli(data, 'import', 'claims', 'tweets', bad);
    expect(unknown.code).toBe(1);
    expect(unknown.stderr).toContain('fte-polls, fte-forecasts, cbo, csv');
  }, 60_000);
});
