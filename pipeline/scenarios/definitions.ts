/**
 * Curated scenarios (issue 13), written by hand under `data/structure/scenarios/` (format:
 * data/structure/README.md).
 *
 * A scenario is a small set of related binary questions, its components (2 to 6), in an order, the
 * pathway: `scenarios: [{id, title, description, components: [{question, label?}]}]`. The order of
 * `components` is the pathway order; a world is written as one digit per component in that order
 * ('10' = the first resolved YES, the second NO).
 *
 * Every file is validated with zod; the first problem is a StructureFileError naming the file, the
 * 1-based line and the field. Loading is all-or-nothing: a bad file loads nothing. Scenario ids
 * are unique across files.
 */
import { z } from 'zod';
import { DEFAULT_STRUCTURE_DIR, loadDefinitionFiles, parseFile, QuestionId, shownText, StructureFileError } from '../structure/definitions.ts';

/** At most 6 components: 64 worlds per model, so every joint stays small enough to list. */
export const MAX_COMPONENTS = 6;
export const MIN_COMPONENTS = 2;

export const ScenarioId = z.string().regex(/^[a-z0-9][a-z0-9-]{1,62}$/, 'id: lower-case letters, digits and dashes (2-63)');

const ComponentDef = z.strictObject({
  question: QuestionId,
  /** A short name of this step of the pathway (default: the question's title). */
  label: shownText(1, 200).optional(),
  note: z.string().optional(),
});

const ScenarioDef = z.strictObject({
  id: ScenarioId,
  title: shownText(3, 200),
  description: shownText(3, 2000),
  components: z
    .array(ComponentDef)
    .min(MIN_COMPONENTS, `a scenario needs at least ${MIN_COMPONENTS} components`)
    .max(MAX_COMPONENTS, `a scenario has at most ${MAX_COMPONENTS} components`),
  note: z.string().optional(),
});

const ScenariosFile = z.strictObject({ scenarios: z.array(ScenarioDef) });

export type ScenarioDefinition = z.infer<typeof ScenarioDef> & { file: string };

/** Parses one scenarios file (exported for tests): a question may be a component only once. */
export function parseScenariosFile(text: string, file: string): ScenarioDefinition[] {
  const { data, lineOf } = parseFile(text, file, ScenariosFile);
  data.scenarios.forEach((s, i) => {
    const seen = new Set<string>();
    s.components.forEach((c, j) => {
      if (seen.has(c.question)) {
        const path = ['scenarios', i, 'components', j, 'question'];
        throw new StructureFileError(file, lineOf(path), path.join('.'), `question ${c.question} is a component twice`);
      }
      seen.add(c.question);
    });
  });
  return data.scenarios.map((s) => ({ ...s, file }));
}

/**
 * Loads every `scenarios/*.yaml` under `root`. Scenario ids are unique across files; paths in
 * errors are relative to the working directory when below it.
 */
export function loadScenarioDefinitions(root: string = DEFAULT_STRUCTURE_DIR): ScenarioDefinition[] {
  return loadDefinitionFiles(root, 'scenarios', 'scenario', parseScenariosFile);
}
