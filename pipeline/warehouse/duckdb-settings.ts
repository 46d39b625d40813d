/**
 * The settings of the process's DuckDB instance (./duckdb.ts), apart from it so that checking them
 * at a command's start (pipeline/config.ts) loads no DuckDB.
 */
import { z } from 'zod';
import { wholeNumber } from '../env.ts';

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
    .regex(/^\d+(\.\d+)?\s*(KB|MB|GB|TB|KiB|MiB|GiB|TiB)$/i, 'expected a size with its unit: 512MB, 4GB, 2GiB (KB, MB, GB, TB: powers of 1000; KiB, MiB, GiB, TiB: of 1024)')
    .transform((s) => s.replace(/\s+/g, ''))
    .refine((s) => parseFloat(s) > 0, 'a memory limit must be more than 0')
    .optional(),
};
