#!/usr/bin/env node
// The `quorum` command (package.json "bin"): loads the TypeScript CLI through tsx.
// DuckDB shares libuv's thread pool, so size it before anything starts.
process.env.UV_THREADPOOL_SIZE ??= '8';
const { register } = await import('tsx/esm/api');
register();
await import('./main.ts');
