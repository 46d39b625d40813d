/**
 * Builds the dashboard (dashboard/src → dashboard/dist/app.js + app.css) with esbuild: one
 * minified ES module with Observable Plot and d3 inside (no CDN, no inline script: the helmet CSP
 * allows scripts from 'self' only). Run by `npm start` and `npm test` (prestart/pretest), by
 * `npm run build:dashboard`, and by the browser tests themselves. Takes well under a second.
 */
import { mkdirSync } from 'node:fs';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { build } from 'esbuild';

export const DASHBOARD_ROOT = path.resolve(import.meta.dirname, '..', 'dashboard');
export const DASHBOARD_DIST = path.join(DASHBOARD_ROOT, 'dist');

export async function buildDashboard(outdir: string = DASHBOARD_DIST): Promise<void> {
  mkdirSync(outdir, { recursive: true });
  await build({
    entryPoints: { app: path.join(DASHBOARD_ROOT, 'src', 'main.ts'), style: path.join(DASHBOARD_ROOT, 'src', 'style.css') },
    outdir,
    bundle: true,
    minify: true,
    format: 'esm',
    target: ['es2020'],
    platform: 'browser',
    legalComments: 'none',
    logLevel: 'warning',
  });
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  await buildDashboard();
}
