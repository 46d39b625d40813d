/**
 * A data directory whose path holds a glob character (`[ ] * ? { }`). DuckDB reads the warehouse's
 * Parquet parts by glob (`raw/<table>/**\/*.parquet`, and every file of a pinned view's list is a
 * pattern too), so under `/srv/quorum[prod]` no part is ever found: the first import wrote its
 * parts (an empty table needs no read), the second failed with DuckDB's "IO Error: No files found
 * that match the pattern", and so did every run after the first write (QA). It is refused at start,
 * as a bad value is: exit 1 naming QUORUM_DATA_DIR, nothing written.
 */
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { ConfigError, loadConfig } from '../../pipeline/config.ts';
import { quorum, REPO } from '../helpers/cli.ts';
import { tempDir } from '../helpers/temp-dir.ts';

const tmp = tempDir('quorum-glob-dir-');
afterAll(() => tmp.cleanup());

describe('QUORUM_DATA_DIR with a glob character', () => {
  it('is a configuration error naming the variable and the character', () => {
    // and a backslash, which DuckDB's glob reads as an escape (outside test: `quorum import` into
    // /tmp/q\\sl/wh wrote, and the second said "No files found that match the pattern")
    for (const name of ['wh[1]', 'wh*', 'wh?', 'wh{a}', 'wh\\sl']) {
      const dir = join(tmp.dir, name);
      expect(() => loadConfig({ QUORUM_DATA_DIR: dir, QUORUM_VENUES: 'none' }), name).toThrow(ConfigError);
      expect(() => loadConfig({ QUORUM_DATA_DIR: dir, QUORUM_VENUES: 'none' }), name).toThrow(/QUORUM_DATA_DIR: .*glob character/);
    }
    // other unusual characters are fine: quotes and spaces are quoted in SQL
    expect(loadConfig({ QUORUM_DATA_DIR: join(tmp.dir, "it's a (dir)"), QUORUM_VENUES: 'none' }).dataDir).toContain("it's a (dir)");
  });

  it('quorum import exits 1 naming it and writes nothing (it used to write once, then fail)', () => {
    const dir = join(tmp.dir, 'quorum[prod]');
    const r = quorum(['import', 'forecastbench', join(REPO, 'data', 'sample', 'forecastbench')], { QUORUM_DATA_DIR: dir, QUORUM_VENUES: 'none' }, 120_000);
    expect(r.status, r.stderr).toBe(1);
    expect(r.stderr).toMatch(/invalid configuration:\s+QUORUM_DATA_DIR: /);
    expect(existsSync(dir)).toBe(false);
  });
});
