/**
 * DESIGN §4 names the derived tables by concept: "consensus, scores, accuracy (with breakdowns),
 * calibration, leaderboard, edges, source_track_records, clusters, factors, scenarios,
 * service_stats". Four of those are no file of a snapshot (scores, source_track_records, clusters,
 * service_stats), and the README's warehouse section did not say where they are: an analyst
 * opening snapshots/<id>/scores.parquet as the design names it found nothing, with no pointer.
 * Each name must be a published table (named in a `### ` heading of sql/README.md, which documents
 * every published table under a heading naming it) or be mapped in the README to published tables (or to the SQL the API
 * composes it from).
 */
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';

const ROOT = path.resolve(import.meta.dirname, '../..');
const README = readFileSync(path.join(ROOT, 'README.md'), 'utf8');
const SQL_README = readFileSync(path.join(ROOT, 'sql/README.md'), 'utf8');

/** DESIGN §4's derived tables, as it lists them. */
const DESIGN_DERIVED = [
  'consensus', 'scores', 'accuracy', 'calibration', 'leaderboard', 'edges', 'source_track_records',
  'clusters', 'factors', 'scenarios', 'service_stats',
];

/** Every table sql/README.md documents under a `### ` heading (one heading may name several). */
const published = new Set(
  SQL_README.split('\n')
    .filter((l) => l.startsWith('### '))
    .flatMap((l) => [...l.split(' — ')[0]!.matchAll(/`([a-z_]+)`/g)].map((m) => m[1]!)),
);

/** The README's "DESIGN §4's names" paragraph: `name` → `table`, `table` …; entries split by ';'. */
function designMap(): Map<string, string[]> {
  const at = README.indexOf("DESIGN §4's names");
  expect(at, "README's warehouse section maps DESIGN §4's table names").toBeGreaterThan(0);
  const para = README.slice(at, README.indexOf('\n\n', at));
  const out = new Map<string, string[]>();
  for (const entry of para.split(';')) {
    const m = /`([a-z_]+)` →(.*)/s.exec(entry);
    if (m) out.set(m[1]!, [...m[2]!.matchAll(/`([a-z_]+)`/g)].map((x) => x[1]!));
  }
  return out;
}

describe("DESIGN §4's derived table names", () => {
  it('each is a published table or mapped in the README to published tables', () => {
    expect(published.size).toBeGreaterThan(40);
    const map = designMap();
    for (const name of DESIGN_DERIVED) {
      if (published.has(name)) continue;
      const targets = map.get(name);
      expect(targets, `README maps ${name}`).toBeDefined();
      expect(targets!.length, `README maps ${name} to tables`).toBeGreaterThan(0);
      for (const t of targets!) expect(published.has(t), `${name} → ${t} is a published table`).toBe(true);
    }
  });
});
