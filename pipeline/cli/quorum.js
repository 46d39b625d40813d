#!/usr/bin/env node
// The `quorum` command (package.json "bin" is ./quorum.cjs, which loads this): the prebuilt CLI when it is current (./prebuilt.js),
// else the TypeScript CLI loaded through tsx.
// Loaded by quorum.cjs, which sets UV_THREADPOOL_SIZE before the pool starts (it cannot be set
// here: see there).
const { currentPrebuilt } = await import('./prebuilt.js');
const prebuilt = currentPrebuilt();
if (prebuilt) {
  await import(prebuilt);
} else {
  const { register } = await import('tsx/esm/api');
  register();
  await import('./main.ts');
}
