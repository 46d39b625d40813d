/**
 * The stages' own settings, checked when a command starts, and their definition files, checked
 * when a run starts (checkDefinitionFiles). Structure (links, theses), factors'
 * health, scenarios and FRED read their QUORUM_* variables when their stage runs (pipeline/env.ts);
 * a bad value found there failed a run after its model calls were made and paid for, and `quorum
 * start` / `serve` accepted it, so every scheduled run failed (QA). `quorum run`, `sync`, `start`
 * and `serve` call this right after loadConfig: a bad value is the same `invalid configuration`
 * message naming the variable, exit 1, before anything runs.
 */
import { idleTimeoutFromEnv } from '../api/export/settings.ts';
import { ConfigError } from './config.ts';
import { existingDirectoryProblem } from './fs/paths.ts';
import { loadHealthParams } from './factors/settings.ts';
import { loadMaxConditions } from './scenarios/conditional-tasks.ts';
import { loadScenarios, loadThesisScenarioSize } from './scenarios/from-theses.ts';
import { loadIpfSweeps } from './scenarios/settings.ts';
import { fredConfigFromEnv } from './sources/fred.ts';
import { loadStructureConfig } from './structure/settings.ts';
import { loadStructureDefinitions, structureDir } from './structure/definitions.ts';
import { loadFactorDefinitions } from './factors/definitions.ts';
import { loadEventsConfig } from './events/config.ts';

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
    // The events' (thresholds, the stream, webhooks): every run reads them under its lock and the
    // server as it starts (QA: a bad one failed `start` after its sample and claims imports, and
    // `serve` after it took its lock, leaving server.lock and a new data directory behind).
    loadEventsConfig(env);
    if (opts.serving) idleTimeoutFromEnv(env);
  } catch (err) {
    // (the events' loader prefixes its own heading: the variable comes first here, as for the others)
    throw new ConfigError(`invalid configuration:\n  ${(err as Error).message.replace(/^invalid events configuration: /, '')}`);
  }
  // An input directory set but missing: a structure directory read as "no links, theses, factors
  // or scenarios" (a run published a snapshot without any, silently), an evidence directory as no
  // evidence, and a questions directory failed every sync (QA: not refused at start).
  for (const name of ['QUORUM_STRUCTURE_DIR', 'QUORUM_QUESTIONS_DIR', 'QUORUM_EVIDENCE_DIR']) {
    const dir = env[name]?.trim();
    const problem = dir ? existingDirectoryProblem(dir) : null;
    if (problem) throw new ConfigError(`invalid configuration:\n  ${name}: ${problem}`);
  }
}

/**
 * Reads every definition file a run uses (links, theses, factors, scenarios under
 * QUORUM_STRUCTURE_DIR) and throws the first StructureFileError (`<file>:<line> (field …)`). A run
 * calls it before it syncs or calls a model: the files were read only at publish, so a bad one
 * failed the run after all its model calls were made and paid for (QA: 2,048 calls, then the
 * file's error; every scheduled run the same until the file was fixed).
 */
export function checkDefinitionFiles(env: NodeJS.ProcessEnv = process.env): void {
  const dir = structureDir(env);
  loadStructureDefinitions(dir);
  loadFactorDefinitions(dir);
  loadScenarios(dir, env);
}
