/**
 * The question ids the curated definitions name (theses' members, links, factors' leaves,
 * scenarios' components) that the warehouse does not have at all. Such a member is left out
 * where it appears (the derive joins on questions), which is right for a question that has not
 * reached the warehouse yet but hid a curator's typo: a thesis published with fewer members, or
 * not at all, and nothing said why (QA). A run warns of them, naming each file and the lines.
 * A scenario is not a list one member can leave: its worlds are the outcomes of every component,
 * so a scenario naming such a question is not published at all (99_scenario_1_joint.sql), and
 * the warning names it (QA: it said only "left out: <the component>", and the scenario, with its
 * record history, vanished from GET /api/scenarios/).
 */
import { readFileSync } from 'node:fs';
import { listValue, type DuckDBConnection } from '@duckdb/node-api';
import { loadFactorDefinitions, type FactorDefinition } from '../factors/definitions.ts';
import { loadScenarioDefinitions } from '../scenarios/definitions.ts';
import { loadScenarios } from '../scenarios/from-theses.ts';
import { queryFile } from '../warehouse/sql-files.ts';
import { loadStructureDefinitions, parseYaml, type Path } from './definitions.ts';

/** Every (file, question id) the definitions under `root` name, in file order. */
export function curatedQuestionIds(root: string): { file: string; question_id: string }[] {
  const defs = loadStructureDefinitions(root);
  return [
    ...defs.links.flatMap((l) => [l.a, l.b].map((q) => ({ file: l.file, question_id: q }))),
    ...defs.theses.flatMap((t) => t.members.map((m) => ({ file: t.file, question_id: m.question }))),
    ...loadFactorDefinitions(root).flatMap(factorLeaves),
    // (the curated ones: those made from theses name the theses' members, listed above)
    ...loadScenarioDefinitions(root).flatMap((s) => s.components.map((c) => ({ file: s.file, question_id: c.question }))),
  ];
}

/** A factor's hand-listed leaves, at every level of its tree. */
function factorLeaves(f: FactorDefinition): { file: string; question_id: string }[] {
  const drivers = f.drivers.flatMap((d) => [d, ...d.drivers]);
  return drivers.flatMap((d) => d.questions.map((q) => ({ file: f.file, question_id: q.question })));
}

/** A definition file's question ids the warehouse does not have. */
export interface UnknownQuestions {
  file: string;
  question_ids: string[];
  /** The 1-based lines naming them (as a `question`, `a` or `b` value), ascending. */
  lines: number[];
  /** The file's scenarios not published because a component is among them. */
  scenarios: string[];
}

/** The named question ids no version of raw `questions` has, grouped by file (reads the connection's raw views). */
export async function unknownCuratedQuestions(conn: DuckDBConnection, root: string): Promise<UnknownQuestions[]> {
  const named = curatedQuestionIds(root);
  if (named.length === 0) return [];
  const ids = [...new Set(named.map((n) => n.question_id))];
  const known = new Set(
    (await queryFile<{ question_id: string }>(conn, 'pipeline/known_questions.sql', { ids: listValue(ids) })).map((r) => r.question_id),
  );
  const byFile = new Map<string, Set<string>>();
  for (const n of named) {
    if (known.has(n.question_id)) continue;
    byFile.set(n.file, (byFile.get(n.file) ?? new Set()).add(n.question_id));
  }
  // (every scenario of a run: the curated ones and those made from theses, named by their thesis' file)
  const withheld = loadScenarios(root).filter((s) => s.components.some((c) => !known.has(c.question)));
  return [...byFile].map(([file, qs]) => ({
    file,
    question_ids: [...qs].sort(),
    lines: linesNaming(file, qs),
    scenarios: withheld.filter((s) => s.file === file).map((s) => s.id),
  }));
}

/** The run's note (and warning) on one file's unknown question ids: the ids, their lines, the scenarios withheld. */
export function unknownQuestionsNote(u: UnknownQuestions): string {
  // file:line as the definition errors name a place (StructureFileError), or the file and its lines
  const lines = u.lines.length === 1 ? `:${u.lines[0]}` : u.lines.length > 1 ? ` (lines ${u.lines.join(', ')})` : '';
  const scenarios = u.scenarios.length
    ? `; ${u.scenarios.length === 1 ? 'scenario' : 'scenarios'} ${u.scenarios.join(', ')} ${u.scenarios.length === 1 ? 'is' : 'are'} not published, as a scenario needs every component`
    : '';
  return `${u.file}${lines} names ${u.question_ids.length === 1 ? 'a question' : 'questions'} the warehouse does not have, left out: ${u.question_ids.join(', ')}${scenarios}`;
}

/** The lines of `file` where one of `ids` is the value of a `question`, `a` or `b` key (every definition format names questions so). */
function linesNaming(file: string, ids: ReadonlySet<string>): number[] {
  const { value, lineOf } = parseYaml(readFileSync(file, 'utf8'), file);
  const lines = new Set<number>();
  const walk = (v: unknown, path: Path): void => {
    if (Array.isArray(v)) v.forEach((x, i) => walk(x, [...path, i]));
    else if (v !== null && typeof v === 'object') {
      for (const [k, x] of Object.entries(v)) {
        const line = typeof x === 'string' && ids.has(x) && (k === 'question' || k === 'a' || k === 'b') ? lineOf([...path, k]) : null;
        if (line !== null) lines.add(line);
        else walk(x, [...path, k]);
      }
    }
  };
  walk(value, []);
  return [...lines].sort((a, b) => a - b);
}
