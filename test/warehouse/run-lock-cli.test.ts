/**
 * The run lock through the real CLI, as a restarted container meets it: a lock left by a killed
 * run that names the new process's own pid (exec keeps the shell's pid, as PID 1 is reused after a
 * container restart), and a lock written under another hostname (a recreated container), which
 * stands until its heartbeat is older than LOCK_STALE_MS. `quorum sync` with no venue and no
 * question file takes the same lock as `quorum run`, in seconds.
 */
import { afterAll, describe, expect, it } from 'vitest';
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, utimesSync, writeFileSync } from 'node:fs';
import { hostname } from 'node:os';
import { join } from 'node:path';
import { CLI, REPO, quorum } from '../helpers/cli.ts';
import { tempDir } from '../helpers/temp-dir.ts';
import { lockFile } from '../../pipeline/warehouse/layout.ts';
import { LOCK_STALE_MS, UNWRITTEN_LOCK_STALE_MS } from '../../pipeline/warehouse/lock.ts';

const tmp = tempDir('quorum-lock-cli-');
afterAll(() => tmp.cleanup());
let n = 0;

/** A fresh data dir and an empty questions dir: the sync asks nothing outside. */
function env(): Record<string, string> {
  const data = join(tmp.dir, `d${n++}`);
  const questions = join(tmp.dir, `q${n}`);
  mkdirSync(data, { recursive: true });
  mkdirSync(questions);
  return { QUORUM_DATA_DIR: data, QUORUM_QUESTIONS_DIR: questions, QUORUM_VENUES: 'none', LOG_LEVEL: 'warn' };
}

describe('the run lock, from the CLI', () => {
  it('a stale lock naming the process\'s own pid (same host) does not block it', () => {
    const e = env();
    // The shell writes its own pid into the lock, then exec's the CLI under that same pid.
    const script = `echo "{\\"pid\\":$$,\\"host\\":\\"$(hostname)\\",\\"started_at\\":\\"2026-01-01T00:00:00Z\\"}" > "$LOCK"; exec "$NODE" "$CLI" sync --json`;
    const r = spawnSync('bash', ['-c', script], {
      cwd: REPO,
      env: { ...process.env, ...e, LOCK: lockFile(e.QUORUM_DATA_DIR!), NODE: process.execPath, CLI },
      encoding: 'utf8',
      timeout: 120_000,
    });
    expect(r.stderr).not.toMatch(/another run is in progress/);
    expect(r.status, r.stderr).toBe(0);
    expect(JSON.parse(r.stdout.trim())).toMatchObject({ status: 'ok' });
    expect(existsSync(lockFile(e.QUORUM_DATA_DIR!)), 'released').toBe(false);
  });

  it("another host's lock: exit 75 naming the host while its heartbeat is fresh, taken over once it is stale", () => {
    const e = env();
    const file = lockFile(e.QUORUM_DATA_DIR!);
    writeFileSync(file, JSON.stringify({ pid: 1, host: `old-${hostname()}`, started_at: '2026-01-01T00:00:00Z' }));
    const held = quorum(['sync', '--json'], e, 120_000);
    expect(held.status, held.stderr).toBe(75);
    expect(held.stderr).toMatch(/another run is in progress \(pid 1 on host old-.*taken over after 180s without one\)/);

    const old = new Date(Date.now() - LOCK_STALE_MS - 60_000);
    utimesSync(file, old, old);
    const r = quorum(['sync', '--json'], e, 120_000);
    expect(r.status, r.stderr).toBe(0);
    expect(existsSync(file), 'released').toBe(false);
  });

  it('an empty lock (a run killed between creating the file and writing it) says so, and is taken over after a heartbeat, not 180 s (QA)', () => {
    const e = env();
    const file = lockFile(e.QUORUM_DATA_DIR!);
    writeFileSync(file, ''); // what a SIGKILL between open(O_EXCL) and the write leaves
    const held = quorum(['sync', '--json'], e, 120_000);
    expect(held.status, held.stderr).toBe(75);
    expect(held.stderr).toMatch(/the lock file is empty or unreadable/);
    expect(held.stderr).not.toMatch(/pid -1/);

    const old = new Date(Date.now() - UNWRITTEN_LOCK_STALE_MS - 5_000);
    utimesSync(file, old, old);
    const r = quorum(['sync', '--json'], e, 120_000);
    expect(r.status, r.stderr).toBe(0);
    expect(existsSync(file), 'released').toBe(false);
  });

  it('a run that fails writing its lock (a full disk) leaves no lock behind: the next run is not refused (QA review)', () => {
    const e = env();
    const file = lockFile(e.QUORUM_DATA_DIR!);
    writeFileSync(join(e.QUORUM_DATA_DIR!, 'FORMAT'), '{"format":1}\n'); // marked already: the lock is the first write
    // No byte may be written (RLIMIT_FSIZE 0, SIGXFSZ ignored): the lock's write fails with EFBIG, as ENOSPC on a full disk.
    const full = spawnSync('bash', ['-c', `trap '' XFSZ; ulimit -f 0; exec "$NODE" "$CLI" sync --json`], {
      cwd: REPO,
      env: { ...process.env, ...e, NODE: process.execPath, CLI },
      encoding: 'utf8',
      timeout: 120_000,
    });
    expect(full.status, full.stderr).toBe(1);
    expect(full.stderr).toMatch(/EFBIG/);
    expect(existsSync(file), 'no lock left behind').toBe(false);
    const r = quorum(['sync', '--json'], e, 120_000);
    expect(r.stderr).not.toMatch(/another run is in progress/);
    expect(r.status, r.stderr).toBe(0);
  });
});
