/**
 * A published snapshot's manifest lists every table's columns as its Parquet file has them, and a
 * schema_hash that stays the same while the shape does: a reader tells a shape change from new
 * data without opening a file.
 */
import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { readManifest, type SnapshotManifest } from '../../pipeline/warehouse/snapshot.ts';
import { fixture, forecasts, publish, question, snapshotRows, writeRaw, type Fixture } from '../structure/helpers.ts';

const AT = new Date('2026-01-15T00:00:00Z');

describe('snapshot manifest schema', () => {
  let f: Fixture;
  let first: SnapshotManifest;
  let second: SnapshotManifest;
  beforeAll(async () => {
    f = fixture();
    await writeRaw(f.dataDir, {
      questions: [question('manifold:m1', 'first unrelated otter'), question('manifold:m2', 'second unrelated lynx')],
      forecasts: [...forecasts('r-1', 'manifold:m1', AT, [0.6, 0.7, 0.5, 0.4]), ...forecasts('r-1', 'manifold:m2', AT, [0.2, 0.3, 0.1, 0.25])],
    });
    first = readManifest(f.dataDir, await publish(f, new Date('2026-02-01T00:00:00Z')));
    second = readManifest(f.dataDir, await publish(f, new Date('2026-02-02T00:00:00Z')));
  });
  afterAll(() => f.cleanup());

  it('lists the columns of every published table, as the Parquet files have them', async () => {
    expect(Object.keys(first.columns!)).toEqual(first.tables);
    for (const table of first.tables) {
      // the Parquet footer's own schema (parquet_schema: one row per leaf and group, the root
      // included), read independently of the manifest's DESCRIBE
      const file = join(f.dataDir, 'snapshots', first.run_id, `${table}.parquet`);
      const names = (await snapshotRows(f.dataDir, first.run_id, `SELECT name FROM parquet_schema('${file}')`)).map((r) => String(r.name));
      for (const c of first.columns![table]!) expect(names, `${table}.${c.name}`).toContain(c.name);
      expect(first.columns![table]!.length, table).toBeGreaterThan(0);
    }
    expect(first.columns!.scenario_records).toContainEqual({ name: 'probabilities', type: 'DOUBLE[]' });
    expect(first.columns!.leaderboard).toContainEqual({ name: 'brier', type: 'DOUBLE' });
  });

  it("names every field of the manifest in the README's analysts' section (QA: created_at was not)", () => {
    const readme = readFileSync(new URL('../../README.md', import.meta.url), 'utf8');
    const start = readme.indexOf('## The warehouse, for analysts');
    const section = readme.slice(start, readme.indexOf('\n## ', start + 1));
    const from = section.indexOf("A snapshot's `manifest.json`");
    const paragraph = section.slice(from, section.indexOf('\n\n', from));
    for (const field of Object.keys(first)) expect(paragraph, field).toMatch(new RegExp(`\`${field}\``));
  });

  it("the README's analysts' section counts and lists exactly the published tables, and sql/README.md has a heading for each (QA: 53 listed, taxonomy_history missing, 54 published)", () => {
    const readme = readFileSync(new URL('../../README.md', import.meta.url), 'utf8');
    const sqlReadme = readFileSync(new URL('../../sql/README.md', import.meta.url), 'utf8');
    const from = readme.indexOf('Derived tables are rebuilt on every run');
    const paragraph = readme.slice(from, readme.indexOf('\nDESIGN §4', from));
    const count = /every one of the (\d+) published tables/.exec(paragraph);
    expect(count, 'the README says how many tables are published').not.toBeNull();
    expect(Number(count![1])).toBe(first.tables.length);
    // the list after the count, without the raw tables it names in passing (`raw: \`thesis_vintages\``)
    const list = paragraph.slice(paragraph.indexOf('published tables.')).replace(/raw:?\s+`[a-z_]+`/g, '');
    const listed = [...list.matchAll(/`([a-z_]+)`/g)].map((m) => m[1]!);
    expect([...new Set(listed)].sort()).toEqual([...first.tables].sort());
    const headed = new Set(
      sqlReadme.split('\n').filter((l) => l.startsWith('### ')).flatMap((l) => [...l.split(' — ')[0]!.matchAll(/`([a-z_]+)`/g)].map((m) => m[1]!)),
    );
    for (const t of first.tables) expect(headed.has(t), `sql/README.md documents ${t}`).toBe(true);
  });

  it('fingerprints the schema: sha256 of the columns, the same for the same shape', () => {
    expect(first.schema_hash).toBe(createHash('sha256').update(JSON.stringify(first.columns)).digest('hex'));
    expect(second.run_id).not.toBe(first.run_id);
    expect(second.schema_hash).toBe(first.schema_hash);
  });
});
