/**
 * pipeline/fs/file-lock.ts: the lock beside keys.json and webhooks.json that the CLI and the server
 * take for each read-modify-write. Its wait is synchronous (Atomics.wait): in the server it holds the
 * event loop, so a lock whose holder is gone must not be waited for.
 */
import { describe, expect, it } from 'vitest';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { spawn, spawnSync } from 'node:child_process';
import { hostname } from 'node:os';
import { withFileLock } from '../../pipeline/fs/file-lock.ts';
import { takeOver } from '../../pipeline/warehouse/lock.ts';
import { SubscriptionStore } from '../../api/events/webhooks/store.ts';
import { tempDir } from '../helpers/temp-dir.ts';

/** The pid of a process that has exited (and been reaped). */
function deadPid(): number {
  const r = spawnSync('sh', ['-c', 'echo $$']);
  return Number(String(r.stdout).trim());
}

describe('withFileLock', () => {
  it('writes its holder into the lock, and removes the lock after', () => {
    const { dir, cleanup } = tempDir();
    try {
      const file = join(dir, 'state', 'x.json');
      const seen = withFileLock(file, () => readFileSync(`${file}.lock`, 'utf8'));
      expect(seen).toMatch(new RegExp(`^${process.pid} ${hostname()} [0-9a-f]{16}\\n$`));
      expect(() => readFileSync(`${file}.lock`)).toThrow();
    } finally {
      cleanup();
    }
  });

  it('takes over at once a lock whose holder on this host has exited (QA review: a `quorum webhooks` killed holding it made the server block its event loop 10 s per webhook change, then answer 500, for 30 s)', () => {
    const { dir, cleanup } = tempDir();
    try {
      const store = new SubscriptionStore(dir);
      mkdirSync(join(store.file, '..'), { recursive: true });
      writeFileSync(`${store.file}.lock`, `${deadPid()} ${hostname()}\n`);
      const t0 = Date.now();
      const sub = store.create({ keyId: 'key_0123456789ab', url: 'https://93.184.216.34/hook', types: null, description: null });
      expect(Date.now() - t0).toBeLessThan(1_000);
      expect(new SubscriptionStore(dir).get(sub.id)?.url).toBe('https://93.184.216.34/hook');
    } finally {
      cleanup();
    }
  });

  it('a takeover removes only the lock it judged stale: one written since (its holder released, a third process took it) stays (CI under load: a key and two webhooks lost)', () => {
    const { dir, cleanup } = tempDir();
    try {
      const lock = join(dir, 'x.json.lock');
      const judged = `${deadPid()} ${hostname()}\n`;
      const live = `${process.pid} ${hostname()} 0123456789abcdef\n`;
      writeFileSync(lock, live);
      expect(takeOver(lock, judged)).toBe(false);
      expect(readFileSync(lock, 'utf8')).toBe(live);
      writeFileSync(lock, judged);
      expect(takeOver(lock, judged)).toBe(true);
      expect(() => readFileSync(lock)).toThrow();
    } finally {
      cleanup();
    }
  });

  it('a takeover leaves a lock written since in place: another process waiting for the lock cannot take it while it is moved aside (QA review: the live lock was lost at the first takeover)', async () => {
    const { dir, cleanup } = tempDir();
    // A process waiting for the lock: it creates the lock whenever the path is free, for 3 s at most.
    const lock = join(dir, 'z.json.lock');
    const judged = `${deadPid()} ${hostname()}\n`;
    const live = `${process.pid} ${hostname()} 0123456789abcdef\n`;
    writeFileSync(lock, live); // another holder's, written since the lock `judged` was read
    const waiter = spawn(process.execPath, ['-e', `
      const fs = require('fs');
      process.stdout.write('ready\\n');
      const end = Date.now() + 3000;
      while (Date.now() < end) {
        try { fs.closeSync(fs.openSync(${JSON.stringify(lock)}, 'wx')); process.stdout.write('took\\n'); break; } catch {}
      }
    `], { stdio: ['ignore', 'pipe', 'inherit'] });
    try {
      await new Promise<void>((resolve) => waiter.stdout.once('data', () => resolve()));
      const end = Date.now() + 1_000;
      let held = live;
      while (Date.now() < end && held === live) {
        expect(takeOver(lock, judged)).toBe(false);
        held = readFileSync(lock, 'utf8');
      }
      expect(held).toBe(live);
    } finally {
      waiter.kill();
      cleanup();
    }
  });

  it('the release removes only its own lock: a holder whose lock was taken over as stale leaves the new holder\'s', () => {
    const { dir, cleanup } = tempDir();
    try {
      const file = join(dir, 'y.json');
      const other = `${process.pid} ${hostname()} fedcba9876543210\n`;
      withFileLock(file, () => writeFileSync(`${file}.lock`, other)); // taken over meanwhile
      expect(readFileSync(`${file}.lock`, 'utf8')).toBe(other);
    } finally {
      cleanup();
    }
  });

});
