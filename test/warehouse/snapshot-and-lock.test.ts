import { describe, expect, it } from 'vitest';
import { existsSync, mkdirSync, readFileSync, statSync, utimesSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { spawn, spawnSync } from 'node:child_process';
import { hostname } from 'node:os';
import { publishSnapshot, pruneSnapshots, readCurrent, readManifest, removeAbandonedSnapshots, SUPERSEDED_GRACE_MS } from '../../pipeline/warehouse/snapshot.ts';
import { acquireRunLock, LOCK_STALE_MS, processAlive, RunLockedError, SAME_PID_STALE_MS, takeOver } from '../../pipeline/warehouse/lock.ts';
import { lockFile, newRunId, RUN_ID_PATTERN } from '../../pipeline/warehouse/layout.ts';
import { tempDir } from '../helpers/temp-dir.ts';

describe('run ids', () => {
  it('of one as-of time, a run made later has the greater id (the scoring\'s tie-break), whatever the random digits', () => {
    const asOf = new Date('2026-03-06T00:00:00Z');
    for (let i = 0; i < 200; i++) {
      const made = Date.parse('2026-11-29T08:00:00Z') + i * 7919;
      const [earlier, later] = [newRunId(asOf, made), newRunId(asOf, made + 1)];
      expect(earlier).toMatch(RUN_ID_PATTERN);
      expect(later > earlier, `${later} > ${earlier}`).toBe(true);
    }
    // and the as-of time still orders first: a run dated earlier but made later sorts before
    expect(newRunId(new Date('2026-03-05T00:00:00Z'), Date.parse('2030-01-01T00:00:00Z')) < newRunId(asOf, Date.parse('2026-01-01T00:00:00Z'))).toBe(true);
    // fixed width: the made time is 8 base-36 digits (to 2059), the suffix 12 characters
    expect(newRunId(asOf, Date.parse('2059-01-01T00:00:00Z'))).toMatch(/^r20260306T000000Z-[0-9a-z]{12}$/);
  });
});

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

  it('sweeps directories of runs that died, and prunes to N without touching CURRENT, once the grace has passed', async () => {
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
      // Just superseded: a server may still be reading them, nothing goes yet.
      const now = Date.now();
      expect(await pruneSnapshots(dir, 2, new Date(now))).toEqual([]);
      expect(await pruneSnapshots(dir, 2, new Date(now + SUPERSEDED_GRACE_MS - 1000))).toEqual([]);
      // removed off the event loop: other work runs while the directories go (QA soak: 600 files held requests for 2 s)
      let turns = 0;
      const ticker = setInterval(() => turns++, 0);
      const removed = await pruneSnapshots(dir, 2, new Date(now + SUPERSEDED_GRACE_MS));
      clearInterval(ticker);
      expect(turns).toBeGreaterThan(0);
      expect(removed.sort()).toEqual(ids.slice(0, 2).sort());
      expect(readCurrent(dir)).toBe(ids[3]);
      expect(existsSync(join(dir, 'snapshots', ids[2]!))).toBe(true);
    } finally {
      cleanup();
    }
  });

  it('a snapshot being pruned leaves its name at once: a process killed while removing it leaves a .tmp- directory the next run sweeps, never a half-removed snapshot under its name (outside test)', async () => {
    const { dir, cleanup } = tempDir();
    try {
      const ids = [newRunId(new Date(Date.UTC(2026, 0, 1))), newRunId(new Date(Date.UTC(2026, 0, 2)))];
      await publishSnapshot(dir, ids[0]!, { asOf: new Date(), headlineModes: [] }, async (d) => {
        for (let i = 0; i < 3000; i++) writeFileSync(join(d, `part-${i}.parquet`), 'x'); // many files: removed over many turns
        return { tables: [] };
      });
      await new Promise((r) => setTimeout(r, 5));
      await publishSnapshot(dir, ids[1]!, { asOf: new Date(), headlineModes: [] }, async () => ({ tables: [] }));
      const named = join(dir, 'snapshots', ids[0]!);
      const now = Date.now();
      expect(await pruneSnapshots(dir, 1, new Date(now))).toEqual([]); // marks it superseded: its grace starts
      const seen: [boolean, boolean][] = [];
      const ticker = setInterval(() => seen.push([existsSync(named), existsSync(`${named}.tmp-pruned`)]), 0);
      expect(await pruneSnapshots(dir, 1, new Date(now + SUPERSEDED_GRACE_MS))).toEqual([ids[0]]);
      clearInterval(ticker);
      expect(seen.length).toBeGreaterThan(0);
      expect(seen.every(([byName]) => !byName)).toBe(true); // gone from its name before any other work ran
      expect(seen.some(([, aside]) => aside)).toBe(true); // removed under the .tmp- name
      expect(existsSync(`${named}.tmp-pruned`)).toBe(false);
      // such a leftover is swept by the next run
      mkdirSync(`${named}.tmp-pruned`);
      writeFileSync(join(`${named}.tmp-pruned`, 'manifest.json'), '{}');
      expect(removeAbandonedSnapshots(dir)).toEqual([`${ids[0]}.tmp-pruned`]);
      expect(readCurrent(dir)).toBe(ids[1]);
    } finally {
      cleanup();
    }
  });

  it('with keep 1, never deletes the snapshot a server may still serve: the one just replaced, nor the one before', async () => {
    const { dir, cleanup } = tempDir();
    try {
      const ids: string[] = [];
      const publishAndPrune = async (i: number) => {
        const id = newRunId(new Date(Date.UTC(2026, 4, 1 + i)));
        ids.push(id);
        await publishSnapshot(dir, id, { asOf: new Date(), headlineModes: [] }, async (d) => {
          writeFileSync(join(d, 'factor_health.parquet'), 'x');
          return { tables: ['factor_health'] };
        });
        await new Promise((r) => setTimeout(r, 5));
        return await pruneSnapshots(dir, 1);
      };
      // Three runs in a row, faster than any server re-reads CURRENT.
      for (let i = 0; i < 3; i++) expect(await publishAndPrune(i)).toEqual([]);
      for (const id of ids) expect(existsSync(join(dir, 'snapshots', id, 'factor_health.parquet')), id).toBe(true);
      // Marked when first found superseded; the published one carries no mark.
      expect(existsSync(join(dir, 'snapshots', ids[0]!, 'superseded_at'))).toBe(true);
      expect(existsSync(join(dir, 'snapshots', ids[2]!, 'superseded_at'))).toBe(false);
      expect((await pruneSnapshots(dir, 1, new Date(Date.now() + SUPERSEDED_GRACE_MS))).sort()).toEqual(ids.slice(0, 2).sort());
      expect(readCurrent(dir)).toBe(ids[2]);
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

  it('takes over a lock whose holder is a zombie: exited, but not reaped by a parent that does not reap (it answered signal 0 for 180 s)', async () => {
    const { dir, cleanup } = tempDir();
    // sh starts a short child, then becomes `sleep 30`, which never reaps it: the child stays a zombie
    const parent = spawn('sh', ['-c', 'sleep 0.05 & echo $!; exec sleep 30'], { stdio: ['ignore', 'pipe', 'ignore'] });
    try {
      const zombie = Number(await new Promise<string>((r) => parent.stdout.once('data', (b: Buffer) => r(b.toString()))));
      const stat = () => readFileSync(`/proc/${zombie}/stat`, 'utf8');
      for (let i = 0; i < 200 && !/\) Z/.test(stat()); i++) await new Promise((r) => setTimeout(r, 10));
      expect(stat()).toMatch(/\) Z/);
      expect(() => process.kill(zombie, 0)).not.toThrow(); // signal 0 alone calls it alive
      expect(processAlive(zombie)).toBe(false);
      expect(processAlive(parent.pid!)).toBe(true);
      writeFileSync(lockFile(dir), JSON.stringify({ pid: zombie, host: hostname(), started_at: '2026-01-01T00:00:00Z' }));
      const release = acquireRunLock(dir, 'r4z');
      expect(JSON.parse(readFileSync(lockFile(dir), 'utf8'))).toMatchObject({ pid: process.pid, run_id: 'r4z' });
      release();
    } finally {
      parent.kill('SIGKILL');
      cleanup();
    }
  });

  it("takes over a lock naming this very process that it does not hold (a container restarted with the same pid)", () => {
    const { dir, cleanup } = tempDir();
    try {
      writeFileSync(lockFile(dir), JSON.stringify({ pid: process.pid, host: hostname(), started_at: '2026-01-01T00:00:00Z' }));
      const release = acquireRunLock(dir, 'r5');
      const lock = JSON.parse(readFileSync(lockFile(dir), 'utf8'));
      expect(lock).toMatchObject({ pid: process.pid, run_id: 'r5' });
      expect(lock.started_at).not.toBe('2026-01-01T00:00:00Z');
      // ...while a lock this process does hold still excludes a second run in it (quorum start's scheduler).
      expect(() => acquireRunLock(dir, 'r6')).toThrow(RunLockedError);
      release();
    } finally {
      cleanup();
    }
  });

  it('a lock from another host stands while its heartbeat is fresh and is taken over once it stopped', () => {
    const { dir, cleanup } = tempDir();
    try {
      const file = lockFile(dir);
      writeFileSync(file, JSON.stringify({ pid: 1, host: 'old-container', started_at: '2026-01-01T00:00:00Z' }));
      const err = (() => {
        try {
          acquireRunLock(dir, 'r7');
        } catch (e) {
          return e;
        }
      })();
      expect(err).toBeInstanceOf(RunLockedError);
      expect((err as Error).message).toMatch(/pid 1 on host old-container.*last heartbeat \d+s ago, taken over after 180s without one/);
      // No heartbeat for longer than LOCK_STALE_MS: its holder is gone, wherever it ran.
      const old = new Date(Date.now() - LOCK_STALE_MS - 5_000);
      utimesSync(file, old, old);
      const release = acquireRunLock(dir, 'r8');
      expect(JSON.parse(readFileSync(file, 'utf8'))).toMatchObject({ pid: process.pid, host: hostname(), run_id: 'r8' });
      release();
      expect(existsSync(file)).toBe(false);
    } finally {
      cleanup();
    }
  });

  it('a lock written by a version before heartbeats (no token, never touched) stands while its holder on this host lives, however old (QA upgrade)', async () => {
    // Such a version (run.lock of the versions before 2026-11-26) writes {pid, host, started_at}
    // and never touches the file: during a rolling upgrade its run, still going after 3 minutes,
    // had its lock taken over by the new version, and the two ran at once.
    const { dir, cleanup } = tempDir();
    const holder = spawn('sleep', ['30'], { stdio: 'ignore' });
    try {
      const file = lockFile(dir);
      // (written once its holder runs, as that version wrote it: a lock older than the process its
      // pid names is a reused pid's, the next test)
      writeFileSync(file, JSON.stringify({ pid: holder.pid, host: hostname(), started_at: new Date().toISOString(), run_id: 'r-old' }));
      const old = new Date(Date.now() - LOCK_STALE_MS - 60_000);
      utimesSync(file, old, old);
      expect(() => acquireRunLock(dir, 'r-new')).toThrow(RunLockedError);
      expect(() => acquireRunLock(dir, 'r-new')).toThrow(/older version, which keeps no heartbeat: held while that process lives/);
      expect(JSON.parse(readFileSync(file, 'utf8'))).toMatchObject({ pid: holder.pid, run_id: 'r-old' });
      // its holder gone: taken over, as any dead holder's lock
      holder.kill('SIGKILL');
      await new Promise((r) => holder.once('exit', r));
      const release = acquireRunLock(dir, 'r-new');
      expect(JSON.parse(readFileSync(file, 'utf8'))).toMatchObject({ pid: process.pid, run_id: 'r-new' });
      release();
    } finally {
      holder.kill('SIGKILL');
      cleanup();
    }
  });

  it('a lock written by a version before heartbeats whose pid now names a process started after it (a container restarted, the pid reused) is taken over', () => {
    // The older version was killed mid-run and its container restarted with this version: same
    // hostname, no pid namespace recorded, and the pid it named belongs to another live process
    // of the new container. Its lock was held for good (no heartbeat to go stale, the pid alive).
    if (!existsSync('/proc/stat')) return; // start times are read from /proc (Linux)
    const { dir, cleanup } = tempDir();
    const other = spawn('sleep', ['30'], { stdio: 'ignore' });
    try {
      const file = lockFile(dir);
      const written = new Date(Date.now() - 10 * 60_000);
      writeFileSync(file, JSON.stringify({ pid: other.pid, host: hostname(), started_at: written.toISOString(), run_id: 'r-old' }));
      utimesSync(file, written, written);
      const release = acquireRunLock(dir, 'r-new');
      expect(JSON.parse(readFileSync(file, 'utf8'))).toMatchObject({ pid: process.pid, run_id: 'r-new' });
      release();
    } finally {
      other.kill('SIGKILL');
      cleanup();
    }
  });

  it("a lock naming this process's own pid from another pid namespace (a container restarted as PID 1) is taken over after three missed heartbeats, not 180 s (QA)", () => {
    const { dir, cleanup } = tempDir();
    try {
      const file = lockFile(dir);
      writeFileSync(file, JSON.stringify({ pid: process.pid, host: hostname(), pid_ns: 'pid:[1]', started_at: '2026-01-01T00:00:00Z' }));
      // Beating: possibly another live container on the host network.
      expect(() => acquireRunLock(dir, 'r10')).toThrow(RunLockedError);
      const old = new Date(Date.now() - SAME_PID_STALE_MS - 5_000);
      utimesSync(file, old, old);
      expect(Date.now() - old.getTime()).toBeLessThan(LOCK_STALE_MS);
      const release = acquireRunLock(dir, 'r11');
      expect(JSON.parse(readFileSync(file, 'utf8'))).toMatchObject({ pid: process.pid, run_id: 'r11' });
      release();
    } finally {
      cleanup();
    }
  });

  it('compares pids only within one pid namespace: a dead pid of another namespace is not proof', () => {
    const { dir, cleanup } = tempDir();
    try {
      const child = spawnSync(process.execPath, ['-e', 'process.stdout.write(String(process.pid))']);
      const deadPid = Number(child.stdout.toString());
      // Same hostname (a container on the host network), another pid namespace: its pids are not ours.
      writeFileSync(lockFile(dir), JSON.stringify({ pid: deadPid, host: hostname(), pid_ns: 'pid:[1]', started_at: '2026-01-01T00:00:00Z' }));
      expect(() => acquireRunLock(dir, 'r9')).toThrow(RunLockedError);
    } finally {
      cleanup();
    }
  });

  it('the holder keeps the lock fresh (heartbeat), and a holder whose lock was taken over leaves the new one alone', async () => {
    const { dir, cleanup } = tempDir();
    try {
      const file = lockFile(dir);
      const release = acquireRunLock(dir, 'r10', { heartbeatMs: 20 });
      const old = new Date(Date.now() - 60_000);
      utimesSync(file, old, old);
      await new Promise((r) => setTimeout(r, 200));
      expect(Date.now() - statSync(file).mtimeMs).toBeLessThan(5_000);
      expect(release.held()).toBe(true);

      // Stalled past the staleness limit: another process takes over; the stalled one must not delete its lock.
      writeFileSync(file, JSON.stringify({ pid: 1, host: 'other-host', started_at: new Date().toISOString(), token: 'theirs' }));
      await new Promise((r) => setTimeout(r, 100));
      expect(release.held()).toBe(false); // what a run checks before it publishes
      release();
      expect(JSON.parse(readFileSync(file, 'utf8')).token).toBe('theirs');
    } finally {
      cleanup();
    }
  });
});

describe('lock takeover', () => {
  it('leaves a lock written since the stale one was read in place: a process waiting for the lock cannot take it while it is moved aside (QA review: the live lock was lost at the first takeover)', async () => {
    const { dir, cleanup } = tempDir();
    const file = lockFile(dir);
    mkdirSync(dir, { recursive: true });
    const judged = JSON.stringify({ pid: 999_999, host: hostname(), started_at: '2026-01-01T00:00:00.000Z', token: 'stale' });
    const live = JSON.stringify({ pid: process.pid, host: hostname(), started_at: new Date().toISOString(), token: 'live' });
    writeFileSync(file, live); // another process took the stale lock over first
    // A third process waiting for the lock: it creates it whenever the path is free, for 3 s at most.
    const waiter = spawn(process.execPath, ['-e', `
      const fs = require('fs');
      process.stdout.write('ready\\n');
      const end = Date.now() + 3000;
      while (Date.now() < end) {
        try { fs.closeSync(fs.openSync(${JSON.stringify(file)}, 'wx')); break; } catch {}
      }
    `], { stdio: ['ignore', 'pipe', 'inherit'] });
    try {
      await new Promise<void>((resolve) => waiter.stdout!.once('data', () => resolve()));
      const end = Date.now() + 1_000;
      let held = live;
      while (Date.now() < end && held === live) {
        expect(takeOver(file, judged)).toBe(false);
        held = readFileSync(file, 'utf8');
      }
      expect(held).toBe(live);
    } finally {
      waiter.kill();
      cleanup();
    }
  });
});
