/**
 * Builds the prebuilt CLI (pipeline/cli/prebuilt.js says when `quorum` uses it): esbuild bundles
 * pipeline/cli/main.ts and every source it imports, statically or by import(), into dist/cli/
 * (code splitting keeps each command's lazily loaded parts in chunks of their own); packages
 * stay external, loaded from node_modules. inputs.json lists the sources with their size and
 * mtime, so an edited source makes the bundle stale at once. The new build is written beside
 * the old and swapped in by renames: a `quorum` starting meanwhile runs one or the other whole.
 * Run by `npm test` and `npm start` (pretest/prestart) and by `npm run build:cli`; about a
 * second.
 */
import { existsSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { build } from 'esbuild';
import { CHECKOUT, inputsJson, PREBUILT_DIR, PREBUILT_ENTRY, PREBUILT_INPUTS } from '../pipeline/cli/prebuilt.js';

export async function buildCli(outdir: string = PREBUILT_DIR): Promise<number> {
  const staging = `${outdir}.building-${process.pid}`;
  rmSync(staging, { recursive: true, force: true });
  const result = await build({
    entryPoints: { main: path.join(CHECKOUT, 'pipeline', 'cli', 'main.ts') },
    outdir: staging,
    bundle: true,
    splitting: true,
    format: 'esm',
    platform: 'node',
    target: 'node20',
    packages: 'external',
    metafile: true,
    absWorkingDir: CHECKOUT,
    logLevel: 'warning',
  });
  if (!existsSync(path.join(staging, PREBUILT_ENTRY))) throw new Error(`esbuild wrote no ${PREBUILT_ENTRY}`);
  // The metafile names its inputs relative to absWorkingDir, the checkout.
  const inputs = Object.keys(result.metafile.inputs);
  writeFileSync(path.join(staging, PREBUILT_INPUTS), inputsJson(inputs));
  const old = `${outdir}.old-${process.pid}`;
  if (existsSync(outdir)) renameSync(outdir, old);
  renameSync(staging, outdir);
  rmSync(old, { recursive: true, force: true });
  return inputs.length;
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  await buildCli();
}
