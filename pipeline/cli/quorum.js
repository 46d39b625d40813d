#!/usr/bin/env node
// The `quorum` command (package.json "bin"): the prebuilt CLI when it is current (./prebuilt.js),
// else the TypeScript CLI loaded through tsx.
// UV_THREADPOOL_SIZE (libuv's pool, shared by DuckDB and the file system) cannot be set here: Node
// has started the pool loading this module, so an assignment to process.env now sizes nothing
// (outside test: `quorum simulator` had libuv's 4 threads unset as with UV_THREADPOOL_SIZE=4, though
// this file set 8). The package scripts set it (package.json); a value set is checked by loadConfig.
const { currentPrebuilt } = await import('./prebuilt.js');
const prebuilt = currentPrebuilt();
if (prebuilt) {
  await import(prebuilt);
} else {
  const { register } = await import('tsx/esm/api');
  register();
  await import('./main.ts');
}
