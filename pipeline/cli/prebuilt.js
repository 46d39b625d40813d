// The prebuilt CLI: the same TypeScript sources bundled by esbuild into dist/cli/
// (scripts/build-cli.ts; `npm test` and `npm start` build it first, `npm run build:cli` on its
// own). It starts on about half the CPU of loading the sources through tsx (0.6 s instead of
// 1.1 s for `quorum keys list` here; the test suite spawns the CLI some 300 times). Plain
// JavaScript: it runs before tsx is registered.
//
// It is used only while it is current: dist/cli/inputs.json lists every source file the bundle
// was built from with its size and modification time, and any one that differs or is gone (an
// edit, a checkout, a pull) means the sources run through tsx, as they always did. A bundle
// that is missing or unreadable means the same. Packages stay outside the bundle (loaded from
// node_modules as before), and dist/cli/ lies two directories below the checkout, as the
// sources do, so their paths relative to their own file (../../sql, ../../data) name the same
// files.
import { readFileSync, statSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

/** The checkout (this file is pipeline/cli/prebuilt.js). */
export const CHECKOUT = resolve(dirname(fileURLToPath(import.meta.url)), '..', '..');
/** Where scripts/build-cli.ts writes the bundle. */
export const PREBUILT_DIR = join(CHECKOUT, 'dist', 'cli');
/** Where scripts/build-dashboard.ts writes the dashboard's build (its entry: app.js). */
export const DASHBOARD_DIST = join(CHECKOUT, 'dashboard', 'dist');
/** The bundle's entry, and the list of its inputs, in a prebuilt directory. */
export const PREBUILT_ENTRY = 'main.js';
export const PREBUILT_INPUTS = 'inputs.json';

/**
 * The inputs.json text of a build made from `files` (paths relative to the checkout, as esbuild's
 * metafile names its inputs): each with its size and mtime now, the list currentPrebuilt checks.
 */
export function inputsJson(files, checkout = CHECKOUT) {
  const inputs = [...files].sort().map((file) => {
    const st = statSync(join(checkout, file));
    return [file, st.size, st.mtimeMs];
  });
  return `${JSON.stringify({ inputs })}\n`;
}

/**
 * The URL of the prebuilt entry in `dir` when every input it was built from is unchanged, else
 * null. inputs.json: `{ "inputs": [[path relative to the checkout, size, mtimeMs], ...] }`. The
 * dashboard's build (scripts/build-dashboard.ts) writes one too: its entry is `app.js`.
 */
export function currentPrebuilt(dir = PREBUILT_DIR, checkout = CHECKOUT, entry = PREBUILT_ENTRY) {
  let inputs;
  try {
    inputs = JSON.parse(readFileSync(join(dir, PREBUILT_INPUTS), 'utf8')).inputs;
    statSync(join(dir, entry));
  } catch {
    return null;
  }
  if (!Array.isArray(inputs) || inputs.length === 0) return null;
  for (const input of inputs) {
    if (!Array.isArray(input) || typeof input[0] !== 'string') return null;
    const [file, size, mtimeMs] = input;
    try {
      const st = statSync(join(checkout, file));
      if (st.size !== size || st.mtimeMs !== mtimeMs) return null;
    } catch {
      return null;
    }
  }
  return pathToFileURL(join(dir, entry)).href;
}
