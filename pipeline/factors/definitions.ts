/**
 * Anchor factors with driver trees (issue 12), written by hand under `data/structure/factors/`
 * (format: data/structure/README.md).
 *
 * A factor states a direction ("US monetary policy eases"); its tree goes factor → drivers →
 * (optional sub-drivers) → questions, the leaves. A leaf's sign says whether its YES pushes the
 * factor that way (+1) or against it (−1). Besides the questions listed by hand, each driver has
 * rules that attach new questions automatically: a rule matches a question of one of its
 * categories whose title holds a term of every `match` group and none of `exclude`. Titles and
 * terms are compared normalized (sql/derive/99_factor_1_tree.sql): lower-cased, every run of
 * characters other than letters and digits a single space, so a term matches whole words only.
 *
 * Every file is validated with zod; the first problem is a StructureFileError naming the file, the
 * line and the field. Loading is all-or-nothing. `flattenFactors` turns the trees into the rows
 * sql/derive/99_factors.sql reads.
 */
import { z } from 'zod';
import { CATEGORIES } from '../warehouse/tables.ts';
import { DEFAULT_STRUCTURE_DIR, loadDefinitionFiles, parseFile, QuestionId, shownText, Sign, StructureFileError, type Path } from '../structure/definitions.ts';

const NodeId = z.string().regex(/^[a-z0-9][a-z0-9-]{1,62}$/, 'id: lower-case letters, digits and dashes (2-63)');
/** A word or phrase matched as whole words (see termsOf); it needs a letter or a digit. */
const Term = z.string().trim().min(1).max(60).regex(/[\p{L}\p{N}]/u, 'a term needs a letter or a digit');

const LeafDef = z.strictObject({
  question: QuestionId,
  /** +1: YES pushes the factor in its stated direction; −1: against it. */
  sign: Sign,
  weight: z.number().gt(0).max(100).default(1),
  note: z.string().optional(),
});

const RuleDef = z.strictObject({
  /** Only questions of these categories (default: every category). */
  categories: z.array(z.enum(CATEGORIES)).min(1).optional(),
  /** Every group must have a term in the title (groups are ANDed, terms within one ORed). */
  match: z.array(z.array(Term).min(1)).min(1).max(8),
  /** No term of these in the title. */
  exclude: z.array(Term).default([]),
  sign: Sign,
  weight: z.number().gt(0).max(100).default(1),
});

const SubDriverDef = z.strictObject({
  id: NodeId,
  name: shownText(1, 200),
  description: z.string().max(2000).optional(),
  questions: z.array(LeafDef).default([]),
  rules: z.array(RuleDef).default([]),
});

const DriverDef = SubDriverDef.extend({ drivers: z.array(SubDriverDef).default([]) });

/** Factor ids the API's paths take for themselves: GET /api/factors/health/ is the health view (QA: a factor "health" had no detail). */
const RESERVED_FACTOR_IDS = ['health'];

const FactorDef = z.strictObject({
  id: NodeId.refine((id) => !RESERVED_FACTOR_IDS.includes(id), { error: 'id "health" is reserved (GET /api/factors/health/ is the health view)' }),
  name: shownText(1, 200),
  statement: shownText(3, 500),
  description: z.string().max(2000).optional(),
  drivers: z.array(DriverDef).min(1, 'a factor needs at least one driver'),
});

const FactorsFile = z.strictObject({ factors: z.array(FactorDef) });

export type FactorDefinition = z.infer<typeof FactorDef> & { file: string };
type DriverDefinition = z.infer<typeof DriverDef>;
type SubDriverDefinition = z.infer<typeof SubDriverDef>;

/** Checks what zod cannot: ids unique within a factor, a question listed once, no empty driver. */
function checkFactor(f: z.infer<typeof FactorDef>, at: Path, file: string, lineOf: (p: Path) => number | null): void {
  const fail = (path: Path, reason: string): never => {
    throw new StructureFileError(file, lineOf(path), path.join('.'), reason);
  };
  const ids = new Set<string>();
  const questions = new Set<string>();
  const visit = (d: SubDriverDefinition & { drivers?: SubDriverDefinition[] }, path: Path) => {
    if (ids.has(d.id)) fail([...path, 'id'], `driver id ${d.id} is used twice in factor ${f.id}`);
    ids.add(d.id);
    if (d.questions.length === 0 && d.rules.length === 0 && (d.drivers?.length ?? 0) === 0) {
      fail(path, `driver ${d.id} has no questions, rules or drivers`);
    }
    d.questions.forEach((q, i) => {
      if (questions.has(q.question)) fail([...path, 'questions', i, 'question'], `question ${q.question} is a leaf of factor ${f.id} twice`);
      questions.add(q.question);
    });
    d.drivers?.forEach((s, i) => visit(s, [...path, 'drivers', i]));
  };
  f.drivers.forEach((d, i) => visit(d, [...at, 'drivers', i]));
}

/** Parses one factors file (exported for tests). */
export function parseFactorsFile(text: string, file: string): FactorDefinition[] {
  const { data, lineOf } = parseFile(text, file, FactorsFile);
  data.factors.forEach((f, i) => checkFactor(f, ['factors', i], file, lineOf));
  return data.factors.map((f) => ({ ...f, file }));
}

/** Loads `factors/*.yaml` under `root`; factor ids are unique across files. */
export function loadFactorDefinitions(root: string = DEFAULT_STRUCTURE_DIR): FactorDefinition[] {
  return loadDefinitionFiles(root, 'factors', 'factor', parseFactorsFile);
}

/** One node of a tree: the factor itself (depth 0), a driver (1) or a sub-driver (2). */
export interface FactorNodeRow {
  node_id: string;
  factor_id: string;
  parent_id: string | null;
  depth: number;
  /** Depth-first order within the factor: a question matched by several rules goes to the first. */
  ord: number;
  name: string;
  description: string | null;
}

export interface FactorLeafRow {
  node_id: string;
  factor_id: string;
  question_id: string;
  sign: number;
  weight: number;
}

/** A rule, one row per term: of a match group (`group_ord` 0..n_groups-1), or of its exclude list (group_ord -1). */
export interface FactorRuleTermRow {
  node_id: string;
  factor_id: string;
  rule_ord: number;
  n_groups: number;
  group_ord: number;
  term: string;
  categories: string | null;
  sign: number;
  weight: number;
}

/** The factors' trees as the rows of the temp tables 99_factors.sql reads. */
export function flattenFactors(factors: readonly FactorDefinition[]): {
  factors: { factor_id: string; name: string; statement: string; description: string | null }[];
  nodes: FactorNodeRow[];
  leaves: FactorLeafRow[];
  rules: FactorRuleTermRow[];
} {
  const nodes: FactorNodeRow[] = [];
  const leaves: FactorLeafRow[] = [];
  const rules: FactorRuleTermRow[] = [];
  for (const f of factors) {
    let ord = 0;
    let ruleOrd = 0;
    nodes.push({ node_id: f.id, factor_id: f.id, parent_id: null, depth: 0, ord: ord++, name: f.name, description: f.description ?? null });
    const visit = (d: SubDriverDefinition & Partial<Pick<DriverDefinition, 'drivers'>>, parent: string, depth: number) => {
      const nodeId = `${parent}/${d.id}`;
      nodes.push({ node_id: nodeId, factor_id: f.id, parent_id: parent, depth, ord: ord++, name: d.name, description: d.description ?? null });
      for (const q of d.questions) leaves.push({ node_id: nodeId, factor_id: f.id, question_id: q.question, sign: q.sign, weight: q.weight });
      for (const r of d.rules) {
        const order = ruleOrd++;
        const base = { node_id: nodeId, factor_id: f.id, rule_ord: order, n_groups: r.match.length, categories: r.categories ? r.categories.join(',') : null, sign: r.sign, weight: r.weight };
        r.match.forEach((group, g) => group.forEach((term) => rules.push({ ...base, group_ord: g, term })));
        for (const term of r.exclude) rules.push({ ...base, group_ord: -1, term });
      }
      for (const s of d.drivers ?? []) visit(s, nodeId, depth + 1);
    };
    for (const d of f.drivers) visit(d, f.id, 1);
  }
  return {
    factors: factors.map((f) => ({ factor_id: f.id, name: f.name, statement: f.statement, description: f.description ?? null })),
    nodes,
    leaves,
    rules,
  };
}
