/**
 * Whether this process has opened its shared DuckDB instance (./duckdb.ts). Apart from that
 * module so that a command ending without having opened it (one refused for a bad setting, a
 * `--help`) can tell there is nothing to close without loading DuckDB (some 0.2 s of CPU).
 */
let opened = false;

/** Called by ./duckdb.ts as it creates the shared instance. */
export function markDuckdbOpened(): void {
  opened = true;
}

/** True once the shared instance was created (it may have been closed since). */
export function duckdbOpened(): boolean {
  return opened;
}
