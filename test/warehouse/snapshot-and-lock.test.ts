import { describe, expect, it } from 'vitest';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { spawnSync } from 'node:child_process';
import { hostname } from 'node:os';
import { publishSnapshot, pruneSnapshots, readCurrent, readManifest, removeAbandonedSnapshots } from '../../pipeline/warehouse/snapshot.ts';
import { acquireRunLock, RunLockedError } from '../../pipeline/warehouse/lock.ts';
import { lockFile, newRunId, RUN_ID_PATTERN } from '../../pipeline/warehouse/layout.ts';
import { tempDir } from '../helpers/temp-dir.ts';

describe('snapshots', () => {
  it('publishes atomically and keeps the previous snapshot when a build fails', async () => {
    const { dir, cleanup } = tempDir();
    try {
      expect(readCurrent(dir)).toBeNull();
      const first = newRunId(new Date('2026-01-01T00:00:00Z'));
      expect(first).toMatch(RUN_ID_PATTERN);
      await publishSnapshot(dir, first, { asOf: new Date('2026-01-01T00:00:00Z'), headlineModes: ['augmented'] }, async (d) => {
        writeFileSync(join(d, 'accuracy.parquet'), 'x');
        return { tables: ['accuracy'] };
      });
      expect(readCurrent(dir)).toBe(first);
      expect(readManifest(dir, first)).toMatchObject({ run_id: first, tables: ['accuracy'], as_of: '2026-01-01T00:00:00.000Z' });

      const second = newRunId(new Date('2026-01-02T00:00:00Z'));
      await expect(
        publishSnapshot(dir, second, { asOf: new Date(), headlineModes: [] }, async () => {
          throw new Error('scoring failed');
        }),
      ).rejects.toThrow('scoring failed');
      expect(readCurrent(dir)).toBe(first);
      expect(existsSync(join(dir, 'snapshots', second))).toBe(false);
    } finally {
      cleanup();
    }
  });

  it('sweeps directories of runs that died, and prunes to N without touching CURRENT', async () => {
    const { dir, cleanup } = tempDir();
    try {
      mkdirSync(join(dir, 'snapshots', 'r20260101T000000Z-dead0001.tmp-123'), { recursive: true });
      expect(removeAbandonedSnapshots(dir)).toEqual(['r20260101T000000Z-dead0001.tmp-123']);
      const ids: string[] = [];
      for (let i = 0; i < 4; i++) {
        const id = newRunId(new Date(Date.UTC(2026, 0, 1 + i)));
        ids.push(id);
        await publishSnapshot(dir, id, { asOf: new Date(), headlineModes: [] }, async () => ({ tables: [] }));
        await new Promise((r) => setTimeout(r, 5));
      }
      const removed = pruneSnapshots(dir, 2);
      expect(removed.sort()).toEqual(ids.slice(0, 2).sort());
      expect(readCurrent(dir)).toBe(ids[3]);
    } finally {
      cleanup();
    }
  });
});

describe('run lock', () => {
  it('admits one holder at a time and frees on release', () => {
    const { dir, cleanup } = tempDir();
    try {
      const release = acquireRunLock(dir, 'r1');
      expect(() => acquireRunLock(dir, 'r2')).toThrow(RunLockedError);
      release();
      const again = acquireRunLock(dir, 'r3');
      again();
    } finally {
      cleanup();
    }
  });

  it('takes over a stale lock left by a dead process', () => {
    const { dir, cleanup } = tempDir();
    try {
      // A real process that has exited: its pid is no longer alive.
      const child = spawnSync(process.execPath, ['-e', 'process.stdout.write(String(process.pid))']);
      const deadPid = Number(child.stdout.toString());
      writeFileSync(lockFile(dir), JSON.stringify({ pid: deadPid, host: hostname(), started_at: '2026-01-01T00:00:00Z' }));
      const release = acquireRunLock(dir, 'r4');
      expect(JSON.parse(readFileSync(lockFile(dir), 'utf8')).pid).toBe(process.pid);
      release();
      expect(existsSync(lockFile(dir))).toBe(false);
    } finally {
      cleanup();
    }
  });
});
