/**
 * The settings of the process's DuckDB instance (./duckdb.ts), apart from it so that checking them
 * at a command's start (pipeline/config.ts) loads no DuckDB.
 */
import { z } from 'zod';
import { wholeNumber } from '../env.ts';

/** The largest limit accepted, below DuckDB's own ceiling of 2^64 bytes with room for its rounding. */
const MAX_MEMORY_LIMIT_BYTES = 2 ** 63;

/**
 * The smallest limit accepted. Under a few tens of KiB DuckDB fails the command's first connection
 * ("Out of Memory Error: failed to allocate data of size 32.0 KiB"), after the start checks (outside
 * test: `import` with 1KB or 64KB had written FORMAT); under some 512 KiB it cannot hold a table of
 * 10,000 rows. (Quorum's smallest work, importing the bundled sample, needs some 32MB: a limit that
 * low fails as a run that runs out of memory does, README "Configuration".)
 */
const MIN_MEMORY_LIMIT_BYTES = 1e6;

/** The units DuckDB's memory_limit takes, by lower-cased name: their bytes. */
const UNIT_BYTES: Record<string, number> = { kb: 1e3, mb: 1e6, gb: 1e9, tb: 1e12, kib: 2 ** 10, mib: 2 ** 20, gib: 2 ** 30, tib: 2 ** 40 };

/** A size with one of those units (`512MB`, `1.5 GiB`): its amount and unit. */
const SIZE = new RegExp(`^(\\d+(?:\\.\\d+)?)\\s*(${Object.keys(UNIT_BYTES).join('|')})$`, 'i');

/** The bytes of a size SIZE took. */
function sizeBytes(size: string): number {
  const [, amount, unit] = SIZE.exec(size)!;
  return parseFloat(amount!) * UNIT_BYTES[unit!.toLowerCase()]!;
}

/**
 * The operator's settings of the instance (README "Configuration"), read when it is created and
 * checked by loadConfig at every command's start. Unset, DuckDB's own: a thread per core and 80%
 * of the machine's memory, which a run (a rescore of millions of forecasts) may take while `quorum
 * serve` runs beside it on the same machine.
 */
export const DuckdbEnv = {
  QUORUM_DUCKDB_THREADS: wholeNumber(1, 1024).optional(),
  QUORUM_DUCKDB_MEMORY_LIMIT: z
    .string()
    .trim()
    .regex(SIZE, 'expected a size with its unit: 512MB, 4GB, 2GiB (KB, MB, GB, TB: powers of 1000; KiB, MiB, GiB, TiB: of 1024)')
    .transform((s) => s.replace(/\s+/g, ''))
    .refine((s) => parseFloat(s) > 0, 'a memory limit must be more than 0')
    .refine((s) => parseFloat(s) === 0 || sizeBytes(s) >= MIN_MEMORY_LIMIT_BYTES, 'a memory limit must be at least 1MB (under a few tens of KiB DuckDB cannot open a connection, under 1MB it can hold next to nothing)')
    // DuckDB refuses a limit of 2^64 bytes or more ("Memory value out of range") only when the
    // instance is created, after the start checks; refused here with them (QA: 99999999999999999999GB)
    .refine((s) => sizeBytes(s) < MAX_MEMORY_LIMIT_BYTES, 'a memory limit must be less than 8 EiB (2^63 bytes)')
    .optional(),
};
