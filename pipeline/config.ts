/**
 * Configuration from the environment, validated with zod at start. A bad value is a clear message
 * naming the variable, and the CLI exits 1.
 */
import { resolve } from 'node:path';
import { validate as validateCron } from 'node-cron';
import { z } from 'zod';
import { MODES, type Mode } from './warehouse/tables.ts';

const modeList = z
  .string()
  .transform((s) => s.split(',').map((m) => m.trim()).filter(Boolean))
  .pipe(z.array(z.enum(MODES)).min(1).max(3));

const EnvSchema = z.object({
  QUORUM_DATA_DIR: z.string().min(1).default('data/warehouse'),
  QUORUM_SAMPLE_DIR: z.string().min(1).default('data/sample/forecastbench'),
  PORT: z.coerce.number().int().min(0).max(65535).default(3000),
  HOST: z.string().min(1).default('0.0.0.0'),
  QUORUM_SCHEDULE: z
    .string()
    .default('0 */4 * * *')
    .refine((s) => validateCron(s), { message: 'not a valid cron expression' }),
  QUORUM_HEADLINE_MODES: modeList.default(['augmented', 'informed', 'blind']),
  QUORUM_MODES: modeList.default([...MODES]),
  QUORUM_MODELS_FILE: z.string().min(1).optional(),
  QUORUM_KEEP_SNAPSHOTS: z.coerce.number().int().min(1).max(1000).default(5),
  QUORUM_CALL_TIMEOUT_MS: z.coerce.number().int().min(100).max(600_000).default(60_000),
  QUORUM_SIMULATOR_LATENCY_MS: z.coerce.number().int().min(0).max(60_000).default(0),
  QUORUM_LANG: z.string().regex(/^[a-z]{2}$/).default('en'),
  LOG_LEVEL: z.enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']).default('info'),
});

export interface QuorumConfig {
  dataDir: string;
  sampleDir: string;
  port: number;
  host: string;
  schedule: string;
  headlineModes: Mode[];
  modes: Mode[];
  modelsFile: string | undefined;
  keepSnapshots: number;
  callTimeoutMs: number;
  simulatorLatencyMs: number;
  lang: string;
  logLevel: string;
}

export class ConfigError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'ConfigError';
  }
}

/** Reads and validates the configuration; throws ConfigError naming each bad variable. */
export function loadConfig(env: NodeJS.ProcessEnv = process.env): QuorumConfig {
  const parsed = EnvSchema.safeParse(
    Object.fromEntries(Object.entries(env).filter(([, v]) => v !== undefined && v !== '')),
  );
  if (!parsed.success) {
    const lines = parsed.error.issues.map((i) => `  ${i.path.join('.')}: ${i.message}`);
    throw new ConfigError(`invalid configuration:\n${lines.join('\n')}`);
  }
  const e = parsed.data;
  return {
    dataDir: resolve(e.QUORUM_DATA_DIR),
    sampleDir: resolve(e.QUORUM_SAMPLE_DIR),
    port: e.PORT,
    host: e.HOST,
    schedule: e.QUORUM_SCHEDULE,
    headlineModes: e.QUORUM_HEADLINE_MODES,
    modes: e.QUORUM_MODES,
    modelsFile: e.QUORUM_MODELS_FILE,
    keepSnapshots: e.QUORUM_KEEP_SNAPSHOTS,
    callTimeoutMs: e.QUORUM_CALL_TIMEOUT_MS,
    simulatorLatencyMs: e.QUORUM_SIMULATOR_LATENCY_MS,
    lang: e.QUORUM_LANG,
    logLevel: e.LOG_LEVEL,
  };
}
