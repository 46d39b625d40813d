/**
 * The keys CLI and the server agree on where keys live: the server records itself in
 * `<data dir>/server.json` while it listens (api/server-record.ts), and `quorum keys` says on
 * stderr which directory it used and warns when no running server has it open. Real CLI
 * processes, a real server (in this process and as `quorum serve`), loopback only.
 */
import { afterAll, describe, expect, it } from 'vitest';
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { hostname } from 'node:os';
import { join } from 'node:path';
import { CLI, quorumAsync, quorumProcess, REPO } from '../helpers/cli.ts';
import { tempDir } from '../helpers/temp-dir.ts';
import { startServer } from '../../api/server.ts';
import { silentLogger } from '../../api/logging/logger.ts';
import { findServer, serverRecordFile, type ServerRecord } from '../../api/server-record.ts';
import { parseLogLines, repeatedKeys } from './log-lines.ts';

const tmp = tempDir('quorum-keys-dir-');
afterAll(() => tmp.cleanup());

const NO_SERVER = /warning: no running server uses this directory/;

function created(stdout: string): { key: string; id: string } {
  const lines = stdout.split('\n').filter((l) => l.trim() !== '');
  expect(lines).toHaveLength(1); // the key alone on stdout: machine-readable
  return JSON.parse(lines[0]!) as { key: string; id: string };
}

describe('quorum keys says where keys live', () => {
  it('no server on the directory: the key on stdout, the directory and a warning on stderr', async () => {
    const dir = join(tmp.dir, 'alone');
    const r = await quorumAsync(['keys', 'create', '--plan', 'pro', '--name', 'alone'], { QUORUM_DATA_DIR: dir });
    expect(r.status, r.stderr).toBe(0);
    expect(created(r.stdout).key).toMatch(/^qrm_/);
    expect(r.stderr).toContain(`data directory ${dir} (QUORUM_DATA_DIR)`);
    expect(r.stderr).toMatch(NO_SERVER);
  });

  it('revoking a key, or changing a subscription, that does not exist makes nothing: a mistyped QUORUM_DATA_DIR is not created (QA: an empty data directory holding state/ was left)', async () => {
    const dir = join(tmp.dir, 'mistyped');
    const commands = [['keys', 'revoke', 'key_nope'], ['webhooks', 'delete', 'wh_nope'], ['webhooks', 'rotate-secret', 'wh_nope'], ['webhooks', 'enable', 'wh_nope']];
    const results = await Promise.all(commands.map((args) => quorumAsync(args, { QUORUM_DATA_DIR: dir })));
    for (const [i, args] of commands.entries()) {
      const r = results[i]!;
      expect(r.status, `${args.join(' ')}: ${r.stderr}`).toBe(1);
      expect(r.stderr).toMatch(/no key with id "key_nope"|no subscription wh_nope/);
    }
    expect(existsSync(dir), 'the data directory was made').toBe(false);
  });

  it("without QUORUM_DATA_DIR it names the default directory it used: the checkout's, from any directory", () => {
    const cwd = join(tmp.dir, 'cwd');
    mkdirSync(cwd);
    const env: Record<string, string | undefined> = { ...process.env, LOG_LEVEL: 'silent' };
    delete env.QUORUM_DATA_DIR;
    // list, not create: the checkout's own warehouse is not the test's to write
    const r = spawnSync(process.execPath, [CLI, 'keys', 'list', '--json'], { cwd, env, encoding: 'utf8', timeout: 60_000 });
    expect(r.status, r.stderr).toBe(0);
    expect(r.stderr).toContain(`data directory ${join(REPO, 'data', 'warehouse')} (the default; set QUORUM_DATA_DIR to use another)`);
    expect(r.stderr).toMatch(NO_SERVER);
    expect(existsSync(join(cwd, 'data'))).toBe(false);
  });

  it('a server on the directory: recorded while it listens, named by create/list/revoke, removed on close', async () => {
    const dir = join(tmp.dir, 'served');
    const server = await startServer({ port: 0, host: '127.0.0.1', dataDir: dir, logger: silentLogger(), pollMs: 0, schedule: null });
    try {
      const record = JSON.parse(readFileSync(serverRecordFile(dir), 'utf8')) as ServerRecord;
      expect(record).toMatchObject({ pid: process.pid, port: server.port, url: server.url, address: server.url, data_dir: dir });
      expect(findServer(dir).state).toBe('running');

      const env = { QUORUM_DATA_DIR: dir };
      const c = await quorumAsync(['keys', 'create', '--plan', 'api', '--name', 'served'], env);
      expect(c.status, c.stderr).toBe(0);
      const { key, id } = created(c.stdout);
      expect(c.stderr).toContain(`data directory ${dir}`);
      expect(c.stderr).toContain(`the server at ${server.url} (pid ${process.pid}) uses this directory`);
      expect(c.stderr).not.toMatch(/warning/);
      expect(c.stderr).not.toContain(key);

      const l = await quorumAsync(['keys', 'list', '--json'], env);
      expect(l.status, l.stderr).toBe(0);
      expect(JSON.parse(l.stdout)).toContainEqual(expect.objectContaining({ id }));
      expect(l.stderr).toContain(`data directory ${dir}`);
      expect(l.stderr).toContain(`the server at ${server.url}`);

      const v = await quorumAsync(['keys', 'revoke', id], env);
      expect(v.status, v.stderr).toBe(0);
      expect(JSON.parse(v.stdout).revoked_at).not.toBeNull();
      expect(v.stderr).toContain(`data directory ${dir}`);
    } finally {
      await server.close();
    }
    expect(existsSync(serverRecordFile(dir))).toBe(false);
    const after = await quorumAsync(['keys', 'list'], { QUORUM_DATA_DIR: dir });
    expect(after.stderr).toMatch(NO_SERVER);
  });

  it('a record left by a server that died counts as no server', async () => {
    const dir = join(tmp.dir, 'stale');
    mkdirSync(dir);
    const dead = spawnSync(process.execPath, ['-e', 'process.stdout.write(String(process.pid))'], { encoding: 'utf8' });
    const deadPid = Number(dead.stdout);
    const record: ServerRecord = { pid: deadPid, host: hostname(), port: 1, address: 'http://127.0.0.1:1', url: 'http://127.0.0.1:1', data_dir: dir, started_at: new Date().toISOString() };
    writeFileSync(serverRecordFile(dir), JSON.stringify(record));
    expect(findServer(dir).state).toBe('stale');
    const r = await quorumAsync(['keys', 'list', '--json'], { QUORUM_DATA_DIR: dir });
    expect(r.status, r.stderr).toBe(0);
    expect(JSON.parse(r.stdout)).toEqual([]);
    expect(r.stderr).toMatch(new RegExp(`${NO_SERVER.source} \\(the server recorded in it, pid ${deadPid}, has exited\\)`));
    // Garbage in the file is no server either.
    writeFileSync(serverRecordFile(dir), '{"pid":');
    expect(findServer(dir).state).toBe('none');
  });
});

describe('quorum serve says once where it listens', () => {
  it('one start-up line with the bound address (port 0 → the real port), logs on stderr, the record written and removed', async () => {
    const dir = join(tmp.dir, 'serve');
    const child = quorumProcess(['serve'], { QUORUM_DATA_DIR: dir, PORT: '0', HOST: '127.0.0.1', LOG_LEVEL: 'info' });
    let stdout = '';
    let stderr = '';
    child.stdout!.on('data', (d) => (stdout += d));
    child.stderr!.on('data', (d) => (stderr += d));
    const exited = new Promise<number | null>((resolve) => child.on('exit', resolve));
    const deadline = Date.now() + 60_000;
    while (!/listening/.test(stderr) && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50));
    try {
      const listening = parseLogLines(stderr).filter((l) => /listening/i.test(String(l.msg)));
      expect(listening, stderr).toHaveLength(1);
      const line = listening[0]!;
      expect(String(line.address)).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
      const port = Number(new URL(String(line.address)).port);
      expect(port).toBeGreaterThan(0);
      expect(line.msg).toBe(`api listening on ${line.address}`);
      const record = JSON.parse(readFileSync(serverRecordFile(dir), 'utf8')) as ServerRecord;
      expect(record).toMatchObject({ pid: child.pid, port, address: line.address });
      const health = await fetch(`${line.address}/healthz`);
      expect(health.status).toBe(200);
    } finally {
      child.kill('SIGTERM');
    }
    expect(await exited).toBe(0);
    expect(stdout).toBe(''); // logs never share stdout
    for (const l of stderr.split('\n').filter((x) => x.trim())) expect(repeatedKeys(l), l).toEqual([]);
    expect(parseLogLines(stderr).filter((l) => /listening/i.test(String(l.msg)))).toHaveLength(1);
    expect(existsSync(serverRecordFile(dir))).toBe(false);
  });
});
