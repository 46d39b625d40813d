#!/usr/bin/env node
// The `quorum` command (package.json "bin"). CommonJS on purpose: libuv sizes its thread pool
// (shared by DuckDB and the file system) from UV_THREADPOOL_SIZE when the pool first starts, and
// Node's ESM loader starts it reading the entry module, before any line of an .mjs/.js entry runs
// (outside test: `process.env.UV_THREADPOOL_SIZE ??= '8'` in quorum.js left `quorum simulator` on
// libuv's 4 threads). A CommonJS entry is read synchronously, so the default set here is the one
// the pool starts with. An empty or blank value counts as unset, as loadConfig reads it (outside
// test: " " was kept, and libuv read it as one thread); a value the operator set is kept (and
// checked by loadConfig).
'use strict';
if (!process.env.UV_THREADPOOL_SIZE?.trim()) process.env.UV_THREADPOOL_SIZE = '8';
import('./quorum.js');
