import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { loadSources, loadSourcesFile, parseSources, SOURCE_KINDS, sourceBySlug, SourceRegistryError } from '../../pipeline/sources/registry.ts';
import { RAW_TABLES } from '../../pipeline/warehouse/tables.ts';
import { GDELT_SOURCE_SLUG } from '../../pipeline/evidence/gdelt.ts';
import { tempDir } from '../helpers/temp-dir.ts';

describe('source registry', () => {
  it('holds the required sources with their kinds, as sources rows', () => {
    const rows = loadSources();
    const kinds = Object.fromEntries(rows.map((r) => [r.source_slug, r.kind]));
    expect(kinds).toMatchObject({
      fred: 'government',
      bls: 'government',
      bea: 'government',
      'federal-reserve': 'central_bank',
      ecb: 'central_bank',
      'sec-edgar': 'regulatory',
      'company-ir': 'primary_financial',
      reuters: 'secondary_reporting',
      ap: 'secondary_reporting',
      polymarket: 'market',
      kalshi: 'market',
      manifold: 'market',
      metaculus: 'market',
      infer: 'market',
    });
    for (const r of rows) {
      expect(Object.keys(r).sort()).toEqual(Object.keys(RAW_TABLES.sources.columns).sort());
      expect(SOURCE_KINDS).toContain(r.kind);
    }
    expect(new Set(rows.map((r) => r.source_slug)).size).toBe(rows.length);
  });

  it('names every source the evidence providers write (GDELT evidence had no source name in evidence_used)', () => {
    expect(sourceBySlug(GDELT_SOURCE_SLUG)).toMatchObject({ kind: 'secondary_reporting', url: 'https://www.gdeltproject.org' });
  });

  it('looks sources up by slug', () => {
    expect(sourceBySlug('fred')).toEqual({ source_slug: 'fred', name: 'Federal Reserve Bank of St. Louis FRED', kind: 'government', url: 'https://fred.stlouisfed.org', description: null, attribution: null });
    expect(sourceBySlug('nope')).toBeUndefined();
    // Callers get copies: mutating one does not change the registry.
    sourceBySlug('fred')!.name = 'x';
    expect(sourceBySlug('fred')!.name).toBe('Federal Reserve Bank of St. Louis FRED');
  });

  it('rejects bad entries naming the file, entry and field', () => {
    const ok = { source_slug: 'a', name: 'A', kind: 'market', url: 'https://a.example' };
    expect(() => parseSources({ sources: [ok, { ...ok, source_slug: 'b', kind: 'blog' }] }, 'f.json')).toThrow(
      /^f\.json: sources\[1\]\.kind \(source_slug "b"\): expected one of government/,
    );
    expect(() => parseSources({ sources: [ok, ok] }, 'f.json')).toThrow('f.json: sources[1]: duplicate source_slug "a"');
    expect(() => parseSources({ sources: [{ ...ok, url: 'ftp://x' }] }, 'f.json')).toThrow(/sources\[0\]\.url/);
    expect(() => parseSources({ sources: [{ ...ok, source_slug: 'Bad Slug' }] }, 'f.json')).toThrow(/kebab-case/);
  });

  it('reports unreadable and non-JSON files', () => {
    const { dir, cleanup } = tempDir();
    try {
      const p = join(dir, 's.json');
      writeFileSync(p, '{');
      expect(() => loadSourcesFile(p)).toThrow(SourceRegistryError);
      expect(() => loadSourcesFile(join(dir, 'none.json'))).toThrow(/cannot read/);
    } finally {
      cleanup();
    }
  });
});
