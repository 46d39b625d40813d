/**
 * The stages' own settings, checked when a command starts. Structure (links, theses), factors'
 * health, scenarios and FRED read their QUORUM_* variables when their stage runs (pipeline/env.ts);
 * a bad value found there failed a run after its model calls were made and paid for, and `quorum
 * start` / `serve` accepted it, so every scheduled run failed (QA). `quorum run`, `sync`, `start`
 * and `serve` call this right after loadConfig: a bad value is the same `invalid configuration`
 * message naming the variable, exit 1, before anything runs.
 */
import { existsSync, statSync } from 'node:fs';
import { idleTimeoutFromEnv } from '../api/export/settings.ts';
import { ConfigError } from './config.ts';
import { loadHealthParams } from './factors/stage.ts';
import { loadMaxConditions } from './scenarios/conditional-tasks.ts';
import { loadThesisScenarioSize } from './scenarios/from-theses.ts';
import { loadIpfSweeps } from './scenarios/stage.ts';
import { fredConfigFromEnv } from './sources/fred.ts';
import { loadStructureConfig } from './structure/stage.ts';

/**
 * Throws a ConfigError naming the first bad stage setting of `env`; `serving` (start, serve): the
 * API's own settings read when the server starts too (export), so that a first start does not find
 * them bad only after its whole bootstrap.
 */
export function checkStageSettings(env: NodeJS.ProcessEnv = process.env, opts: { serving?: boolean } = {}): void {
  try {
    loadStructureConfig(env);
    loadHealthParams(env);
    loadIpfSweeps(env);
    loadMaxConditions(env);
    loadThesisScenarioSize(env);
    fredConfigFromEnv(env);
    if (opts.serving) idleTimeoutFromEnv(env);
  } catch (err) {
    throw new ConfigError(`invalid configuration:\n  ${(err as Error).message}`);
  }
  // A structure directory that does not exist read as "no links, theses, factors or scenarios":
  // a run published a snapshot without any, silently.
  const dir = env.QUORUM_STRUCTURE_DIR;
  if (dir && !(existsSync(dir) && statSync(dir).isDirectory())) {
    throw new ConfigError(`invalid configuration:\n  QUORUM_STRUCTURE_DIR: ${JSON.stringify(dir)} is not a directory`);
  }
}
