/**
 * A claims import killed while it puts its parts in place (after the first part's rename, before
 * the next one's) is completed by importing again, with every source keeping the slug a clean
 * import gives it (QA: the sources part went in first; importing again found those sources named by
 * no claim, took their slugs as someone else's and stored every source again as `<slug>-2`, with
 * all its claims under it).
 *
 * The kill is the operating system's: `renameSync` (node:fs) fails from the batch's second part on,
 * as if the process had died there; nothing of the project is replaced.
 */
import { join } from 'node:path';
import { afterAll, beforeEach, describe, expect, it, vi } from 'vitest';
import { REPO } from '../helpers/cli.ts';
import { tempDir } from '../helpers/temp-dir.ts';
import { CSV_HEAD, csvFolder, importAll, rawQuery } from './helpers.ts';
import type { ClaimFormat } from '../../pipeline/claims/formats.ts';

const crash = vi.hoisted(() => ({ armed: false, renamed: 0 }));

vi.mock('node:fs', async (original) => {
  const fs = await original<typeof import('node:fs')>();
  const renameSync: typeof fs.renameSync = (from, to) => {
    if (crash.armed && String(from).endsWith('.parquet.tmp')) {
      if (crash.renamed >= 1) throw new Error('killed between the renames of the batch');
      crash.renamed++;
    }
    fs.renameSync(from, to);
  };
  return { ...fs, default: { ...fs, renameSync }, renameSync };
});

const tmp = tempDir('quorum-claims-killed-');
afterAll(() => tmp.cleanup());
beforeEach(() => {
  crash.armed = false;
  crash.renamed = 0;
});

const SAMPLE = join(REPO, 'data', 'sample');
let n = 0;

/** Claims per source slug, and the source rows, as a reader sees them. */
async function slugs(data: string) {
  return {
    claims: await rawQuery(data, 'SELECT source_slug, count(*)::INTEGER AS n FROM {claims} GROUP BY ALL ORDER BY ALL'),
    sources: await rawQuery(data, 'SELECT source_slug, name FROM {sources} ORDER BY ALL'),
  };
}

/** Imports `dir` cleanly, and again in a warehouse where the first attempt died between its renames. */
async function killedAndRedone(format: ClaimFormat, dir: string) {
  const clean = join(tmp.dir, `clean-${n}`);
  const killed = join(tmp.dir, `killed-${n++}`);
  await importAll(clean, [[format, dir]]);
  crash.armed = true;
  await expect(importAll(killed, [[format, dir]])).rejects.toThrow('killed between the renames');
  crash.armed = false;
  expect(crash.renamed).toBe(1); // one part of the batch went in, the next did not
  await importAll(killed, [[format, dir]]);
  return { clean: await slugs(clean), redone: await slugs(killed) };
}

describe('a claims import killed between the renames of its parts', () => {
  it('bundled (fte-polls): importing again gives every source its clean slug, stored once', async () => {
    const { clean, redone } = await killedAndRedone('fte-polls', join(SAMPLE, 'fte-pollster-raw-polls'));
    expect(clean.sources.length).toBe(517);
    expect(redone.sources).toEqual(clean.sources);
    expect(redone.claims).toEqual(clean.claims);
  }, 120_000);

  it('csv: importing again gives every source its clean slug, stored once', async () => {
    const dir = csvFolder(tmp.dir, {
      'a.csv':
        CSV_HEAD +
        'k1,Acme Research,2024-01-01,probability,Rain,0.7,1,2024-02-01\n' +
        'k2,Café Polls,2024-01-02,probability,Snow,0.2,0,2024-02-01\n' +
        'k3,Acme Research,2024-01-03,probability,Hail,0.4,,\n',
    });
    const { clean, redone } = await killedAndRedone('csv', dir);
    expect(clean.sources.map((s) => s.source_slug)).toEqual(['acme-research', 'cafe-polls']);
    expect(redone.sources).toEqual(clean.sources);
    expect(redone.claims).toEqual(clean.claims);
  }, 120_000);

  // QA review: the orphan claims' slugs were free to anyone, so an operator's source of the same
  // name imported before the dataset was imported again took the pollster's slug, and the
  // dataset's claims went back under it: the operator's claims counted in FiveThirtyEight's
  // pollster's track record (storedSources: "an operator's Ipsos is not FiveThirtyEight's pollster").
  it('another origin\'s source of the same name imported in between does not take the orphan claims\' slug', async () => {
    const fte = join(SAMPLE, 'fte-pollster-raw-polls');
    const csv = csvFolder(tmp.dir, { 'a.csv': CSV_HEAD + 'op1,SurveyUSA,2024-01-01,probability,Rain,0.7,1,2024-02-01\n' });
    const clean = join(tmp.dir, `clean-${n}`);
    const killed = join(tmp.dir, `killed-${n++}`);
    await importAll(clean, [['fte-polls', fte], ['csv', csv]]);
    crash.armed = true;
    await expect(importAll(killed, [['fte-polls', fte]])).rejects.toThrow('killed between the renames');
    crash.armed = false;
    await importAll(killed, [['csv', csv], ['fte-polls', fte]]);
    const mine = (data: string) => rawQuery(data, "SELECT DISTINCT source_slug FROM {claims} WHERE claim_id = 'op1' OR provenance_dataset LIKE 'csv%'");
    const theirs = (data: string) => rawQuery(data, "SELECT DISTINCT c.source_slug FROM {claims} AS c JOIN {sources} AS s USING (source_slug) WHERE s.name = 'SurveyUSA' AND c.provenance_dataset NOT LIKE 'csv%'");
    expect(await mine(clean)).toEqual([{ source_slug: 'surveyusa-2' }]);
    expect(await theirs(clean)).toEqual([{ source_slug: 'surveyusa' }]);
    const [op] = await mine(killed);
    expect(await mine(killed)).toHaveLength(1);
    expect(await theirs(killed)).not.toContainEqual(op); // the operator's source is not the pollster's
  }, 120_000);
});
