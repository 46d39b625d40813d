/**
 * A scenario's conditional questions (issue 13): for each component k ≥ 2 of a scenario, open at
 * the run's as-of, and each combination of the earlier components' outcomes, the task "assume the
 * earlier components resolved this way; what is the probability of component k?" — at most
 * 2^(k−1) conditions per component, in pathway order, capped per scenario
 * (QUORUM_SCENARIO_MAX_CONDITIONS, default 31: every condition of a 5-component scenario).
 *
 * Every configured model answers each task in the scenario's mode (the run's first headline mode
 * among its modes) through the same runner as every other call: structured output, budget,
 * journal, retries and fault handling. The condition is stored with the call and its forecasts
 * (`condition` = `<scenario_id>:<k>:<outcomes>`), and scoring never reads those rows.
 */
import { z } from 'zod';
import { envSettings, wholeNumber } from '../env.ts';
import type { ForecastTask } from '../models/prompts.ts';
import type { Mode } from '../warehouse/tables.ts';
import type { ScenarioDefinition } from './definitions.ts';

const Env = z.object({
  QUORUM_SCENARIO_MAX_CONDITIONS: wholeNumber(0, 1000).default(31),
});

/** The cap on conditional tasks per scenario; a bad value is an error naming the variable. */
export function loadMaxConditions(env: NodeJS.ProcessEnv = process.env): number {
  return envSettings(Env, env).QUORUM_SCENARIO_MAX_CONDITIONS;
}

/** The condition code stored in the `condition` column: `<scenario_id>:<k>:<outcomes>`. */
export function conditionCode(scenarioId: string, k: number, outcomes: readonly (0 | 1)[]): string {
  return `${scenarioId}:${k}:${outcomes.join('')}`;
}

/** The 2^n outcome combinations of n components, '0…0' first, as digit arrays. */
function combinations(n: number): (0 | 1)[][] {
  return Array.from({ length: 2 ** n }, (_, i) =>
    Array.from({ length: n }, (_, j) => ((i >> (n - 1 - j)) & 1) as 0 | 1),
  );
}

export interface ConditionalTasksOptions {
  scenarios: readonly ScenarioDefinition[];
  /** The run's task of each question open at its as-of, in the scenario's mode (market, dates). */
  openTasks: ReadonlyMap<string, ForecastTask>;
  /**
   * Titles of every question known at the run's as-of (the earlier components may be closed or
   * resolved). A component whose earlier components are not all here is not asked: a run must not
   * assume the outcome of a question that did not exist yet.
   */
  titles: ReadonlyMap<string, string>;
  mode: Mode;
  maxConditions: number;
}

/** The conditional tasks of every scenario, pathway order, capped per scenario. */
export function conditionalTasks(o: ConditionalTasksOptions): ForecastTask[] {
  const out: ForecastTask[] = [];
  for (const s of o.scenarios) {
    let n = 0;
    for (let k = 2; k <= s.components.length && n < o.maxConditions; k++) {
      const base = o.openTasks.get(s.components[k - 1]!.question);
      if (!base) continue; // closed, resolved or unknown at the run's as-of: nothing to forecast
      const earlier = s.components.slice(0, k - 1);
      if (!earlier.every((c) => o.titles.has(c.question))) continue; // an earlier one created after the as-of
      for (const outcomes of combinations(k - 1)) {
        if (n >= o.maxConditions) break;
        n++;
        out.push({
          ...base,
          mode: o.mode,
          evidence: [],
          condition: {
            code: conditionCode(s.id, k, outcomes),
            scenario_id: s.id,
            scenario_title: s.title,
            assumed: earlier.map((c, i) => ({ question_id: c.question, title: o.titles.get(c.question)!, outcome: outcomes[i]! })),
          },
        });
      }
    }
  }
  return out;
}
