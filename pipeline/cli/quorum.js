#!/usr/bin/env node
// The `quorum` command (package.json "bin"): the prebuilt CLI when it is current (./prebuilt.js),
// else the TypeScript CLI loaded through tsx.
// DuckDB shares libuv's thread pool, so size it before anything starts.
process.env.UV_THREADPOOL_SIZE ??= '8';
const { currentPrebuilt } = await import('./prebuilt.js');
const prebuilt = currentPrebuilt();
if (prebuilt) {
  await import(prebuilt);
} else {
  const { register } = await import('tsx/esm/api');
  register();
  await import('./main.ts');
}
