/**
 * Scenarios from theses (issue 13, optional): with QUORUM_SCENARIOS_FROM_THESES = n (2 to 6; 0,
 * the default, turns it off), every curated thesis (data/structure/theses/) also makes a scenario
 * of its n most weighted members, most weighted first (ties in the order the thesis lists them):
 * how the thesis' main questions are expected to resolve together, asked, archived and scored like
 * every curated scenario. Its id is `thesis-<thesis id>` (cut to the scenario id's 63 characters),
 * its title the thesis' statement. A curated scenario with the same id wins: the thesis' one is
 * left out, so a hand-written pathway can replace the generated one.
 *
 * `loadScenarios` is the one list of scenarios every stage reads (the forecast stage's conditional
 * questions and the derive's joints and records), so both always agree on it.
 */
import { basename } from 'node:path';
import { z } from 'zod';
import { envSettings, wholeNumber } from '../env.ts';
import { loadStructureDefinitions, structureDir, StructureFileError, type CuratedThesis } from '../structure/definitions.ts';
import { MAX_COMPONENTS, MIN_COMPONENTS, loadScenarioDefinitions, type ScenarioDefinition } from './definitions.ts';

const Env = z.object({
  // Digits only, as every count (QA: z.coerce took 0x3, 3e0 and -0, and `maybe` was "received NaN").
  QUORUM_SCENARIOS_FROM_THESES: wholeNumber(0)
    .refine((n) => n === 0 || (n >= MIN_COMPONENTS && n <= MAX_COMPONENTS), `expected 0 (off) or ${MIN_COMPONENTS} to ${MAX_COMPONENTS} members`)
    .default(0),
});

/** How many top members of each thesis make its scenario (0: none); a bad value is an error naming the variable. */
export function loadThesisScenarioSize(env: NodeJS.ProcessEnv = process.env): number {
  return envSettings(Env, env).QUORUM_SCENARIOS_FROM_THESES;
}

/** The scenario id of thesis `id`: `thesis-<id>`, within the 63 characters a scenario id allows. */
export function thesisScenarioId(id: string): string {
  return `thesis-${id}`.slice(0, 63).replace(/-+$/, '');
}

/** One scenario per thesis: its `size` most weighted members, most weighted first. */
export function thesisScenarios(theses: readonly CuratedThesis[], size: number): ScenarioDefinition[] {
  if (size === 0) return [];
  return theses.map((t) => {
    const top = t.members
      .map((m, i) => ({ m, i }))
      .sort((a, b) => b.m.weight - a.m.weight || a.i - b.i)
      .slice(0, size)
      .map(({ m }) => m);
    const statement = t.statement.length > 200 ? `${t.statement.slice(0, 199)}…` : t.statement;
    return {
      id: thesisScenarioId(t.id),
      title: statement,
      // the file named within the structure directory (theses/<file>), never by the path it was
      // read from: that is absolute when the directory is outside the working directory, and the
      // description is public (QA: GET /api/scenarios/ showed /etc/quorum/structure/theses/…)
      description: `The ${top.length} most weighted members of thesis ${t.id} (theses/${basename(t.file)}), most weighted first.`,
      components: top.map((m) => ({ question: m.question })),
      file: t.file,
    };
  });
}

/**
 * Every scenario of a run: the curated ones, then those of the theses (when turned on) whose id is
 * not taken. Two theses whose ids cut to the same scenario id (ids of 57 characters or more that
 * share their first 56) are a StructureFileError naming both: two definitions of one scenario id
 * would be joined into one scenario of both theses' components.
 */
export function loadScenarios(root: string = structureDir(), env: NodeJS.ProcessEnv = process.env): ScenarioDefinition[] {
  const curated = loadScenarioDefinitions(root);
  const size = loadThesisScenarioSize(env);
  if (size === 0) return curated;
  const taken = new Set(curated.map((s) => s.id));
  const theses = loadStructureDefinitions(root).theses;
  const generated = thesisScenarios(theses, size);
  const first = new Map<string, CuratedThesis>();
  generated.forEach((s, i) => {
    if (taken.has(s.id)) return;
    const t = theses[i]!;
    const other = first.get(s.id);
    if (other) {
      throw new StructureFileError(t.file, null, 'id', `thesis ${t.id} makes scenario id ${s.id}, as thesis ${other.id} (${other.file}) does: ids are cut to 63 characters; shorten one of them`);
    }
    first.set(s.id, t);
  });
  return [...curated, ...generated.filter((s) => !taken.has(s.id))];
}
