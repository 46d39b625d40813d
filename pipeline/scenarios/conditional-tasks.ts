/**
 * A scenario's conditional questions (issue 13): for each component k ≥ 2 of a scenario, open at
 * the run's as-of, and each combination of the earlier components' outcomes, the task "assume the
 * earlier components resolved this way; what is the probability of component k?" — at most
 * 2^(k−1) conditions per component, in pathway order, capped per scenario
 * (QUORUM_SCENARIO_MAX_CONDITIONS, default 31: all 30 conditions of a 5-component scenario).
 * When the cap binds, the conditions that agree with the earlier components already resolved at
 * the as-of are asked first (then the others, each group in pathway order): only those bear on the
 * worlds still possible, which the archived record is scored on. QA: with fed-2026-path's first
 * three components resolved '100' and two more added, the cap spent its 31 calls on 4:000…4:111,
 * 5:0000…5:1111 and 6:00000…6:00110, and never asked P(c6 | 100··), run after run.
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
  /**
   * The outcome (1 YES, 0 NO) of each question resolved at the run's as-of (the others: absent):
   * when the cap binds, the conditions agreeing with them are asked first.
   */
  outcomes?: ReadonlyMap<string, 0 | 1>;
  mode: Mode;
  maxConditions: number;
}

/**
 * The conditional tasks of every scenario, in pathway order, at most `maxConditions` per scenario:
 * those agreeing with the earlier components' resolutions first when the cap binds.
 */
export function conditionalTasks(o: ConditionalTasksOptions): ForecastTask[] {
  const out: ForecastTask[] = [];
  for (const s of o.scenarios) {
    // every condition of the scenario, pathway order, and whether it agrees with the resolutions
    const all: { k: number; outcomes: (0 | 1)[]; agrees: boolean }[] = [];
    for (let k = 2; k <= s.components.length; k++) {
      if (!o.openTasks.has(s.components[k - 1]!.question)) continue; // closed, resolved or unknown at the run's as-of: nothing to forecast
      const earlier = s.components.slice(0, k - 1);
      if (!earlier.every((c) => o.titles.has(c.question))) continue; // an earlier one created after the as-of
      for (const outcomes of combinations(k - 1)) {
        const agrees = earlier.every((c, i) => (o.outcomes?.get(c.question) ?? outcomes[i]) === outcomes[i]);
        all.push({ k, outcomes, agrees });
      }
    }
    const chosen = new Set([...all.filter((c) => c.agrees), ...all.filter((c) => !c.agrees)].slice(0, o.maxConditions));
    for (const c of all.filter((x) => chosen.has(x))) {
      const base = o.openTasks.get(s.components[c.k - 1]!.question)!;
      const earlier = s.components.slice(0, c.k - 1);
      out.push({
        ...base,
        mode: o.mode,
        evidence: [],
        condition: {
          code: conditionCode(s.id, c.k, c.outcomes),
          scenario_id: s.id,
          scenario_title: s.title,
          assumed: earlier.map((e, i) => ({ question_id: e.question, title: o.titles.get(e.question)!, outcome: c.outcomes[i]! })),
        },
      });
    }
  }
  return out;
}
