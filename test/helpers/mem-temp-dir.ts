import { mkdtempSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { tempDir } from './temp-dir.ts';

/** Where memTempDir makes its directories when the host has it: a tmpfs on Linux. */
export const MEM_TMP = '/dev/shm';

/**
 * A fresh temporary directory in memory (under /dev/shm, a tmpfs) where the host has one, else on
 * disk as tempDir makes it; removed by the returned cleanup function.
 *
 * For test files whose state is written durably again and again (the key file, the webhook
 * subscriptions and delivery queue, the usage file: temp file, fsync, rename, fsync of the
 * directory, pipeline/fs/durable.ts). The same calls run in memory, where an fsync returns at
 * once; on the disk of a busy machine each one waited ~20 ms (test/events/webhooks.test.ts: 7 s of
 * its main thread blocked in fsync, by a CPU profile). Nothing these files test is about the disk.
 */
export function memTempDir(prefix = 'quorum-test-'): { dir: string; cleanup: () => void } {
  let dir: string;
  try {
    dir = mkdtempSync(join(MEM_TMP, prefix));
  } catch {
    return tempDir(prefix);
  }
  return { dir, cleanup: () => rmSync(dir, { recursive: true, force: true }) };
}
