/**
 * The question ids the curated definitions name (theses' members, links, factors' leaves,
 * scenarios' components) that the warehouse does not have at all. Such a member is left out
 * where it appears (the derive joins on questions), which is right for a question that has not
 * reached the warehouse yet but hid a curator's typo: a thesis published with fewer members, or
 * not at all, and nothing said why (QA). A run warns of them, naming each file.
 */
import { listValue, type DuckDBConnection } from '@duckdb/node-api';
import { loadFactorDefinitions, type FactorDefinition } from '../factors/definitions.ts';
import { loadScenarioDefinitions } from '../scenarios/definitions.ts';
import { queryFile } from '../warehouse/sql-files.ts';
import { loadStructureDefinitions } from './definitions.ts';

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

/** The named question ids no version of raw `questions` has, grouped by file (reads the connection's raw views). */
export async function unknownCuratedQuestions(
  conn: DuckDBConnection,
  root: string,
): Promise<{ file: string; question_ids: string[] }[]> {
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
  return [...byFile].map(([file, qs]) => ({ file, question_ids: [...qs].sort() }));
}
