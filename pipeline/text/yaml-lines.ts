/**
 * Line numbers of a parsed YAML (or JSON) document, for the errors of the definition and question
 * files (pipeline/structure/definitions.ts, pipeline/questions/question-file.ts): both name the
 * file and the line of what is wrong.
 */
import { visit, type Document, type LineCounter } from 'yaml';

/** The line of the node at `path`, or of its nearest ancestor that has one (a missing field: its parent's). */
export function lineOfPath(doc: Document, lineCounter: LineCounter): (path: readonly (string | number)[]) => number | null {
  return (path) => {
    for (let p = path; ; p = p.slice(0, -1)) {
      let node: unknown;
      try {
        node = p.length === 0 ? doc.contents : doc.getIn(p, true);
      } catch {
        node = undefined;
      }
      const range = (node as { range?: [number, number, number] } | null | undefined)?.range;
      if (range) return lineCounter.linePos(range[0]).line;
      if (p.length === 0) return null;
    }
  };
}

/**
 * The line of the document's first alias, or null. The reader refuses aliases that expand past its
 * limit (an alias bomb) only in toJS, with a bare ReferenceError naming no file or line (QA): the
 * callers name the file and this line.
 */
export function firstAliasLine(doc: Document, lineCounter: LineCounter): number | null {
  let line: number | null = null;
  visit(doc, {
    Alias: (_key, node) => {
      if (node.range) line = lineCounter.linePos(node.range[0]).line;
      return visit.BREAK;
    },
  });
  return line;
}
