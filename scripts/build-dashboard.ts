/**
 * Builds the dashboard (dashboard/src → dashboard/dist) with esbuild: ES modules with Observable
 * Plot and d3 inside (no CDN, no inline script: the helmet CSP allows scripts from 'self' only).
 * The entry, app.js, holds the router, the pages and the API client; the charts (Plot and d3, most
 * of the bytes) are a chunk of their own, loaded while a page's API calls are in flight
 * (dashboard/src/lazy-charts.ts). manifest.json names the chunks app.js imports, so the shell can
 * preload them; chunks of earlier builds are removed. Run by `npm start` and `npm test`
 * (prestart/pretest), by `npm run build:dashboard`, and by the browser tests themselves. Takes
 * well under a second.
 */
import { mkdirSync, readdirSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { build } from 'esbuild';
import { CHECKOUT, DASHBOARD_DIST, inputsJson, PREBUILT_INPUTS } from '../pipeline/cli/prebuilt.js';

// From the checkout (prebuilt.js's): this file is also bundled into the prebuilt CLI (dist/cli/),
// where its own directory is not scripts/.
export const DASHBOARD_ROOT = path.join(CHECKOUT, 'dashboard');
export { DASHBOARD_DIST };

/** What the shell needs to know about a build: the chunks to preload beside app.js. */
export interface DashboardManifest {
  preload: string[];
}

/** `logLevel` `silent`: esbuild's messages are not printed (the server logs the error it throws as JSON). */
export async function buildDashboard(outdir: string = DASHBOARD_DIST, opts: { logLevel?: 'warning' | 'silent' } = {}): Promise<void> {
  mkdirSync(outdir, { recursive: true });
  const result = await build({
    entryPoints: { app: path.join(DASHBOARD_ROOT, 'src', 'main.ts'), style: path.join(DASHBOARD_ROOT, 'src', 'style.css') },
    outdir,
    bundle: true,
    splitting: true,
    chunkNames: 'chunk-[hash]',
    metafile: true,
    minify: true,
    format: 'esm',
    target: ['es2020'],
    platform: 'browser',
    legalComments: 'none',
    logLevel: opts.logLevel ?? 'warning',
    absWorkingDir: CHECKOUT,
  });
  const outputs = Object.entries(result.metafile.outputs).map(([file, out]) => ({ name: path.basename(file), out }));
  const app = outputs.find((o) => o.name === 'app.js');
  if (!app) throw new Error('esbuild wrote no app.js');
  // Every chunk app.js reaches, statically or by import(): the charts chunk and what it shares.
  const preload = new Set<string>();
  const visit = (imports: { path: string }[]): void => {
    for (const i of imports) {
      const name = path.basename(i.path);
      if (preload.has(name)) continue;
      preload.add(name);
      visit(outputs.find((o) => o.name === name)?.out.imports ?? []);
    }
  };
  visit(app.out.imports);
  const manifest: DashboardManifest = { preload: [...preload].sort() };
  writeFileSync(path.join(outdir, 'manifest.json'), `${JSON.stringify(manifest, null, 2)}\n`);
  // What the build was made from (as the prebuilt CLI's, pipeline/cli/prebuilt.js): `quorum serve`
  // and `quorum start` rebuild a build its sources have moved past (pipeline/cli/dashboard.ts).
  // by a rename: a `quorum serve` starting meanwhile (a test's, beside another test's build) reads
  // the old list or the new one whole, never half a file that would send it building too
  const staged = path.join(outdir, `${PREBUILT_INPUTS}.${process.pid}.tmp`);
  writeFileSync(staged, inputsJson(Object.keys(result.metafile.inputs)));
  renameSync(staged, path.join(outdir, PREBUILT_INPUTS));
  // Content-hashed chunks of earlier builds: nothing references them any more.
  const current = new Set(outputs.map((o) => o.name));
  for (const name of readdirSync(outdir)) {
    if (/^chunk-[\w-]+\.js$/.test(name) && !current.has(name)) rmSync(path.join(outdir, name), { force: true });
  }
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  await buildDashboard();
}
