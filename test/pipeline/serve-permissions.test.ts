/**
 * `quorum serve` and the permissions of its data directory (api/state-paths.ts). The server only
 * reads the warehouse (raw/, snapshots/, CURRENT) but writes its state (state/, webhooks/,
 * server.json): QA found a directory it could not write refused with "EACCES: permission denied,
 * mkdir '<dir>/webhooks'" and no word of why.
 *
 * The CLI runs bound by file permissions: as root (CI) without CAP_DAC_OVERRIDE and
 * CAP_DAC_READ_SEARCH (setpriv), so a 0555 directory is read-only to it as it is to anyone else.
 */
import { afterAll, describe, expect, it } from 'vitest';
import { spawn, spawnSync } from 'node:child_process';
import { chmodSync, existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { createKey, keysFile } from '../../api/auth/keys.ts';
import { join } from 'node:path';
import { CLI, REPO, quorum, serveOutcome } from '../helpers/cli.ts';
import { tempDir } from '../helpers/temp-dir.ts';

const tmp = tempDir('quorum-serve-perm-');
afterAll(() => {
  chmodAll(tmp.dir, true);
  tmp.cleanup();
});

const DROP = ['setpriv', '--bounding-set=-dac_override,-dac_read_search'];
/** The command prefix that makes a child obey file permissions, or null if this machine cannot. */
const BOUND: string[] | null = (() => {
  if (process.getuid?.() !== 0) return [];
  const probe = spawnSync(DROP[0]!, [...DROP.slice(1), 'true'], { encoding: 'utf8' });
  return probe.status === 0 ? DROP : null;
})();

/** Starts the CLI bound by file permissions (see above). */
function boundQuorum(args: string[], env: Record<string, string>) {
  const [cmd, ...pre] = [...BOUND!, process.execPath, CLI, ...args];
  return spawn(cmd!, pre, { cwd: REPO, env: { ...process.env, LOG_LEVEL: 'info', ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
}

/** Sets the write bits of `dir` and everything in it (on) or clears them (off). */
function chmodAll(dir: string, writable: boolean): void {
  for (const name of readdirSync(dir)) {
    const p = join(dir, name);
    if (statSync(p).isDirectory()) chmodAll(p, writable);
    else chmodSync(p, writable ? 0o644 : 0o444);
  }
  chmodSync(dir, writable ? 0o755 : 0o555);
}

describe.skipIf(BOUND === null)('quorum serve and its data directory permissions', () => {
  it('a data directory the server cannot write is refused at start, naming what it writes there; nothing is made', async () => {
    const dir = join(tmp.dir, 'locked');
    const data = join(dir, 'data');
    chmodAll(tmp.dir, true);
    spawnSync('mkdir', ['-p', dir]);
    chmodSync(dir, 0o555);
    const r = await serveOutcome(boundQuorum(['serve'], { QUORUM_DATA_DIR: data, HOST: '127.0.0.1', PORT: '0' }));
    expect(r.status, r.stderr).toBe(1);
    expect(r.stderr).toContain(`the data directory ${data} is not writable by this process (EACCES on ${dir} (to make ${data}))`);
    expect(r.stderr).toMatch(/state\/.*webhooks\/.*server\.json/);
    expect(r.stderr).not.toContain('mkdir');
    expect(existsSync(data)).toBe(false);
    chmodSync(dir, 0o755);
  });

  it('run, sync and import refuse a data directory they cannot write (or make), naming QUORUM_DATA_DIR; nothing is written (QA: "EACCES: permission denied, mkdir" or "open \'<dir>/run.lock\'", naming no setting)', async () => {
    chmodAll(tmp.dir, true);
    const parent = join(tmp.dir, 'read-only');
    const existing = join(parent, 'data');
    spawnSync('mkdir', ['-p', existing]);
    chmodSync(existing, 0o555);
    chmodSync(parent, 0o555);
    const fresh = join(parent, 'fresh');
    const cbo = join(REPO, 'data', 'sample', 'cbo-budget-projections');
    try {
      for (const args of [['run', '--score-only'], ['sync'], ['import', 'claims', 'cbo', cbo]]) {
        for (const [data, on] of [[existing, existing], [fresh, `${parent} (to make ${fresh})`]] as const) {
          const r = await serveOutcome(boundQuorum(args, { QUORUM_DATA_DIR: data, QUORUM_VENUES: 'none', QUORUM_FRED_API_KEY: '' }));
          expect(r.status, `${args[0]}: ${r.stderr}`).toBe(1);
          expect(r.stderr).toContain(`invalid configuration:\n  QUORUM_DATA_DIR: ${data} is not writable by this process (EACCES on ${on}); nothing was written`);
        }
      }
      expect(readdirSync(existing)).toEqual([]);
      expect(readdirSync(parent)).toEqual(['data']);
    } finally {
      chmodSync(parent, 0o755);
      chmodSync(existing, 0o755);
    }
  });

  it('quorum keys on a data directory it may not write, or a key file it may not read, names QUORUM_DATA_DIR and the fix; nothing is changed (QA: "EACCES: permission denied, mkdir \'<dir>/state\'" or "open \'<dir>/state/keys.json\'", naming no setting, as run, sync, import and serve no longer do)', async () => {
    chmodAll(tmp.dir, true);
    const data = join(tmp.dir, 'keys-owned');
    createKey(data, { name: 'existing', plan: 'pro' });
    const file = keysFile(data);
    const before = readFileSync(file, 'utf8');
    chmodAll(data, false);
    try {
      const create = await serveOutcome(boundQuorum(['keys', 'create', '--plan', 'pro', '--name', 'new'], { QUORUM_DATA_DIR: data }));
      expect(create.status, create.stderr).toBe(1);
      expect(create.stderr).toContain(`quorum keys: QUORUM_DATA_DIR: ${data} is not writable by this process (EACCES on ${join(data, 'state')}): run the command as the user that owns the data directory (the server's), or give this one access; nothing was changed`);
      expect(create.stderr).not.toContain('permission denied');
      chmodSync(file, 0o000);
      const list = await serveOutcome(boundQuorum(['keys', 'list', '--json'], { QUORUM_DATA_DIR: data }));
      expect(list.status, list.stderr).toBe(1);
      expect(list.stderr).toContain(`quorum keys: QUORUM_DATA_DIR: ${data} is not readable by this process (EACCES on ${file}): run the command as the user that owns the data directory (the server's), or give this one access; nothing was changed`);
    } finally {
      chmodAll(data, true);
    }
    expect(readFileSync(file, 'utf8')).toBe(before);
  });

  it('the warehouse itself may be read-only: raw/, snapshots/ and CURRENT are only read', async () => {
    const data = join(tmp.dir, 'warehouse');
    const run = quorum(['run'], { QUORUM_DATA_DIR: data, QUORUM_VENUES: 'none', QUORUM_FRED_API_KEY: '' }, 180_000);
    expect(run.status, run.stderr).toBe(0);
    const key = quorum(['keys', 'create', '--plan', 'enterprise', '--name', 'reader'], { QUORUM_DATA_DIR: data });
    const token = (JSON.parse(key.stdout.split('\n')[0]!) as { key: string }).key;
    chmodAll(tmp.dir, true);
    for (const name of readdirSync(data)) {
      const p = join(data, name);
      if (name === 'state' || name === 'webhooks') continue;
      if (statSync(p).isDirectory()) chmodAll(p, false);
      else chmodSync(p, 0o444);
    }
    const child = boundQuorum(['serve'], { QUORUM_DATA_DIR: data, HOST: '127.0.0.1', PORT: '0' });
    try {
      const r = await serveOutcome(child);
      expect(r.url, r.stderr).not.toBeNull();
      const get = (path: string) => fetch(`${r.url}${path}`, { headers: { Authorization: `Bearer ${token}` } });
      const stats = await get('/api/events/service_stats/');
      expect(stats.status).toBe(200);
      expect(stats.headers.get('x-snapshot')).toMatch(/^r/);
      // The run's 12 forecasts, read from the read-only raw parts through a COPY to the OS's temp dir.
      const csv = await get('/api/export/forecasts/?output=csv');
      expect(csv.status).toBe(200);
      expect((await csv.text()).trim().split('\n')).toHaveLength(13);
      expect(existsSync(join(data, 'server.json'))).toBe(true);
    } finally {
      const closed = new Promise((resolve) => child.on('close', resolve));
      child.kill('SIGTERM');
      await closed;
    }
    expect(existsSync(join(data, 'server.json'))).toBe(false);
  });
});
