/**
 * Durable writes when the disk fills: a write that only partly lands must fail and leave the file
 * as it was (QA: on a nearly full disk `quorum keys create` exited 0 and renamed a keys file cut at
 * 4,096 bytes into place; every API key was then refused). A full disk is stood in for by the
 * file-size limit (`ulimit -f`): past it a write lands partly, then fails (EFBIG), as with ENOSPC.
 */
import { spawnSync } from 'node:child_process';
import { mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { createKey, keysFile, readKeys } from '../../api/auth/keys.ts';
import { tempDir } from '../../test/helpers/temp-dir.ts';
import { CLI, REPO } from '../../test/helpers/cli.ts';
import { writeFileAtomic, writeFileAtomicSync } from './durable.ts';

const cleanups: (() => void)[] = [];
afterEach(() => {
  for (const c of cleanups.splice(0)) c();
});

function dataDir(): string {
  const t = tempDir('quorum-durable-');
  cleanups.push(t.cleanup);
  return t.dir;
}

describe('durable writes on a full disk', () => {
  it('quorum keys create past the size limit fails, and the keys file stays whole (no temp file left)', () => {
    const dir = dataDir();
    for (let i = 0; i < 16; i++) createKey(dir, { name: `key ${i}`, plan: 'pro', scopes: [] });
    const file = keysFile(dir);
    const before = readFileSync(file);
    expect(before.length).toBeGreaterThan(4096); // the next write crosses the 4 KiB limit below
    const r = spawnSync('bash', ['-c', 'ulimit -f 4; exec "$0" "$@"', process.execPath, CLI, 'keys', 'create', '--plan', 'pro', '--name', 'one more'], {
      cwd: REPO,
      env: { ...process.env, QUORUM_DATA_DIR: dir, QUORUM_VENUES: 'none', QUORUM_FRED_API_KEY: '', LOG_LEVEL: 'silent' },
      encoding: 'utf8',
      timeout: 60_000,
    });
    expect(r.status, r.stderr).toBe(1);
    expect(r.stdout).not.toMatch(/qrm_/); // no key printed that was never stored
    expect(r.stderr).toMatch(/EFBIG|file too large/);
    expect(readFileSync(file).equals(before)).toBe(true);
    expect(readKeys(file)).toHaveLength(16);
    expect(readdirSync(join(dir, 'state')).filter((f) => f.endsWith('.tmp'))).toEqual([]);
  });

  it('a failed atomic write (sync or async) removes its temp file and leaves the target as it was', async () => {
    const dir = dataDir();
    const target = join(dir, 'state.json');
    writeFileSync(target, 'old');
    // a target that is a directory: the write lands, the rename fails
    const blocked = join(dir, 'blocked');
    mkdirSync(join(blocked, 'x'), { recursive: true });
    expect(() => writeFileAtomicSync(blocked, 'new')).toThrow();
    await expect(writeFileAtomic(blocked, 'new')).rejects.toThrow();
    expect(readdirSync(dir).filter((f) => f.endsWith('.tmp'))).toEqual([]);
    writeFileAtomicSync(target, 'new');
    expect(readFileSync(target, 'utf8')).toBe('new');
  });
});
