/**
 * The temp files of atomic writes (`.<name>.<pid>.<hex>.tmp` beside CURRENT, FORMAT, keys.json, …)
 * that a process SIGKILLed between creating one and renaming it leaves are removed by the next run
 * once an hour old (QA: SIGKILLed `quorum start`s left `.FORMAT.<pid>.<hex>.tmp` in the data
 * directory, which nothing ever removed), as raw parts' `*.parquet.tmp` are.
 */
import { afterAll, describe, expect, it } from 'vitest';
import { existsSync, mkdirSync, utimesSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { quorum, REPO } from '../helpers/cli.ts';
import { tempDir } from '../helpers/temp-dir.ts';

const tmp = tempDir('quorum-atomic-temps-');
afterAll(() => tmp.cleanup());

describe('a run after processes killed mid atomic write', () => {
  it('removes their temp files once an hour old, and nothing else', () => {
    const root = join(tmp.dir, 'w');
    const env = { QUORUM_DATA_DIR: root, QUORUM_VENUES: 'none', QUORUM_FRED_API_KEY: '', QUORUM_MAX_QUESTIONS: '4', QUORUM_MODES: 'blind' };
    expect(quorum(['import', 'forecastbench', join(REPO, 'data', 'sample', 'forecastbench')], env).status).toBe(0);
    const twoHoursAgo = new Date(Date.now() - 2 * 3_600_000);
    const plant = (rel: string, old: boolean) => {
      const f = join(root, rel);
      mkdirSync(join(f, '..'), { recursive: true });
      writeFileSync(f, 'x');
      if (old) utimesSync(f, twoHoursAgo, twoHoursAgo);
      return f;
    };
    const abandoned = [
      plant('.FORMAT.48213.de993e9a.tmp', true),
      plant('.CURRENT.48213.0a1b2c3d.tmp', true),
      plant('events/.pending.json.48213.0a1b2c3d.tmp', true),
      plant('state/.keys.json.48213.0a1b2c3d.tmp', true),
      plant('state/probability/requests/.p1.json.48213.0a1b2c3d.tmp', true),
      plant('webhooks/.queue.jsonl.48213.0a1b2c3d.tmp', true),
    ];
    const kept = [
      plant('.CURRENT.48214.0a1b2c3d.tmp', false), // young: a write may be in progress
      plant('.operator-notes', true), // not an atomic write's temp file
      plant('state/keys.json.bak', true),
    ];

    const r = quorum(['run', '--as-of', '2025-10-16T00:00:00Z'], env);
    expect(r.status, r.stderr).toBe(0);
    for (const f of abandoned) expect(existsSync(f), f).toBe(false);
    for (const f of kept) expect(existsSync(f), f).toBe(true);
    expect(r.stderr).toContain('removed temp files left by a process killed while writing');
  }, 300_000);
});
