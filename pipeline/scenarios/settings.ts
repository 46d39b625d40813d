/**
 * The scenario stage's setting (QUORUM_SCENARIO_IPF_SWEEPS), apart from the stage itself
 * (./stage.ts) so that checking it at a command's start (pipeline/stage-settings.ts) loads no
 * DuckDB: a command refused for a bad setting starts on less.
 */
import { z } from 'zod';
import { envSettings, wholeNumber } from '../env.ts';

const ScenarioEnv = z.object({
  /** Sweeps over the constraints of an IPF fit (each sweep projects onto every constraint once). */
  QUORUM_SCENARIO_IPF_SWEEPS: wholeNumber(1, 10_000).default(200),
});

/** The IPF sweeps from the environment; a bad value is an error naming the variable. */
export function loadIpfSweeps(env: NodeJS.ProcessEnv = process.env): number {
  return envSettings(ScenarioEnv, env).QUORUM_SCENARIO_IPF_SWEEPS;
}
