/**
 * The prebuilt CLI (pipeline/cli/prebuilt.js, scripts/build-cli.ts): `quorum` runs the bundle
 * only while every source it was built from is unchanged, and the bundle, two directories below
 * the checkout as the sources are, finds the same files beside the checkout as they do.
 */
import { afterAll, describe, expect, it } from 'vitest';
import { spawnSync } from 'node:child_process';
import { mkdirSync, rmSync, statSync, utimesSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { currentPrebuilt, PREBUILT_ENTRY, PREBUILT_INPUTS } from '../../pipeline/cli/prebuilt.js';
import { buildCli } from '../../scripts/build-cli.ts';
import { CLI, REPO } from '../helpers/cli.ts';
import { tempDir } from '../helpers/temp-dir.ts';

const tmp = tempDir('quorum-prebuilt-');
afterAll(() => tmp.cleanup());

/** A fake checkout with two sources and a prebuilt directory listing them as they are now. */
function fakeBuild(name: string): { checkout: string; dist: string; source: string } {
  const checkout = join(tmp.dir, name);
  const dist = join(checkout, 'dist', 'cli');
  mkdirSync(join(checkout, 'src'), { recursive: true });
  mkdirSync(dist, { recursive: true });
  writeFileSync(join(checkout, 'src', 'a.ts'), 'export const a = 1;\n');
  writeFileSync(join(checkout, 'src', 'b.ts'), 'export const b = 2;\n');
  writeFileSync(join(dist, PREBUILT_ENTRY), '');
  const inputs = ['src/a.ts', 'src/b.ts'].map((f) => {
    const st = statSync(join(checkout, f));
    return [f, st.size, st.mtimeMs];
  });
  writeFileSync(join(dist, PREBUILT_INPUTS), JSON.stringify({ inputs }));
  return { checkout, dist, source: join(checkout, 'src', 'b.ts') };
}

describe('whether the prebuilt CLI is current', () => {
  it('is, while every input is as it was built', () => {
    const { checkout, dist } = fakeBuild('current');
    expect(fileURLToPath(currentPrebuilt(dist, checkout)!)).toBe(join(dist, PREBUILT_ENTRY));
  });

  it('is not once a source is edited, touched or removed', () => {
    const edited = fakeBuild('edited');
    writeFileSync(edited.source, 'export const b = 22;\n');
    expect(currentPrebuilt(edited.dist, edited.checkout)).toBeNull();
    // Same size, new time (a checkout of another version of the same length).
    const touched = fakeBuild('touched');
    const later = new Date(statSync(touched.source).mtimeMs + 5_000);
    utimesSync(touched.source, later, later);
    expect(currentPrebuilt(touched.dist, touched.checkout)).toBeNull();
    const removed = fakeBuild('removed');
    rmSync(removed.source);
    expect(currentPrebuilt(removed.dist, removed.checkout)).toBeNull();
  });

  it('is not when the bundle or its list is missing or not one', () => {
    const noEntry = fakeBuild('no-entry');
    rmSync(join(noEntry.dist, PREBUILT_ENTRY));
    expect(currentPrebuilt(noEntry.dist, noEntry.checkout)).toBeNull();
    for (const [name, text] of [['no-list', null], ['truncated', '{"inputs":[["src/a.ts",2'], ['empty', '{"inputs":[]}'], ['not-a-list', '{"inputs":{}}'], ['bad-row', '{"inputs":[[1,2,3]]}']] as const) {
      const b = fakeBuild(name);
      if (text === null) rmSync(join(b.dist, PREBUILT_INPUTS));
      else writeFileSync(join(b.dist, PREBUILT_INPUTS), text);
      expect(currentPrebuilt(b.dist, b.checkout), name).toBeNull();
    }
  });
});

describe('the bundle', () => {
  // Two directories below the checkout, as dist/cli is (a directory of its own: the suite's other
  // files may be running dist/cli meanwhile).
  const outdir = join(REPO, 'dist', `cli-test-${process.pid}`);
  afterAll(() => rmSync(outdir, { recursive: true, force: true }));

  it('is current once built, and answers as the sources do, reading the files beside the checkout', async () => {
    const inputs = await buildCli(outdir);
    expect(inputs).toBeGreaterThan(50);
    expect(currentPrebuilt(outdir)).not.toBeNull();
    const fixture = join(REPO, 'test', 'fixtures', 'forecastbench', 'valid');
    const answers = ['bundle', 'sources'].map((how) => {
      const dataDir = join(tmp.dir, `data-${how}`);
      // The sources through quorum.js with no current bundle beside it would need a stale
      // dist/cli; tsx's loader runs them directly instead, as quorum.js's fallback does.
      const entry = how === 'bundle' ? [join(outdir, PREBUILT_ENTRY)] : ['--import', 'tsx', join(REPO, 'pipeline', 'cli', 'main.ts')];
      const r = spawnSync(process.execPath, [...entry, 'import', 'forecastbench', fixture], {
        cwd: REPO,
        env: { ...process.env, QUORUM_DATA_DIR: dataDir, LOG_LEVEL: 'warn' },
        encoding: 'utf8',
        timeout: 60_000,
      });
      expect(r.status, r.stderr).toBe(0);
      return r.stdout.replaceAll(dataDir, '<data>');
    });
    expect(answers[0]).toBe(answers[1]);
    expect(JSON.parse(answers[0]!).written.questions.written).toBeGreaterThan(0);
    // The package's version, read from ../../package.json of the entry.
    const version = spawnSync(process.execPath, [join(outdir, PREBUILT_ENTRY), '--version'], { encoding: 'utf8' });
    expect(version.stdout.trim()).toMatch(/^\d+\.\d+\.\d+/);
    expect(CLI).toContain('quorum.cjs');
  });
});
