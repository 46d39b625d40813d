/**
 * The webhook delivery queue on a disk that fills while it records delivery attempts (the API
 * server's coalesced writes, flush(false)): the process keeps running, the failure is told to
 * `onWriteError` and the records stay buffered, and the journal is left with no torn line. QA: the
 * coalesced write threw from a setImmediate, an uncaught exception, and `quorum serve` died.
 * A full disk is stood in for by the file-size limit (`ulimit -f`: EFBIG), in a child process.
 */
import { afterAll, describe, expect, it } from 'vitest';
import { spawnSync } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { REPO } from '../helpers/cli.ts';
import { tempDir } from '../helpers/temp-dir.ts';

const tmp = tempDir('quorum-wh-full-');
afterAll(() => tmp.cleanup());

/** Queues one delivery, then records failed attempts as the dispatcher does, past the size limit. */
const SCRIPT = `
import { DeliveryQueue } from ${JSON.stringify(join(REPO, 'api', 'events', 'webhooks', 'queue.ts'))};
const failures = [];
const q = new DeliveryQueue(process.argv[2], { onWriteError: (err) => failures.push(err.code) });
q.enqueue({ id: 'msg_1', sub: 'wh_1', seq: 1, event_id: 'evt_1', type: 'run.completed', timestamp: '2026-01-01T00:00:00.000Z', data: { run_id: 'r1' } });
q.flush();
for (let i = 0; i < 400; i++) {
  q.attempt('msg_1', { at: new Date(Date.UTC(2026, 0, 1, 0, 0, i)).toISOString(), status: 500, error: 'HTTP 500 from the receiver', duration_ms: 3 }, Date.now() + 20);
  q.flush(false);
  await new Promise((r) => setTimeout(r, 1));
}
console.log(JSON.stringify({ alive: true, failures: failures.length, codes: [...new Set(failures)] }));
`;

describe('webhook delivery attempts on a full disk', () => {
  it('do not kill the process, are reported, and leave no torn line in the journal', () => {
    const script = join(tmp.dir, 'attempts.mts');
    writeFileSync(script, SCRIPT);
    const r = spawnSync('bash', ['-c', `ulimit -f 8 && exec "${process.execPath}" --import tsx "${script}" "${tmp.dir}"`], { cwd: REPO, encoding: 'utf8', timeout: 120_000 });
    expect(r.status, r.stderr).toBe(0);
    const out = JSON.parse(r.stdout) as { alive: boolean; failures: number; codes: string[] };
    expect(out.failures).toBeGreaterThan(0);
    expect(out.codes).toEqual(['EFBIG']);
    const lines = readFileSync(join(tmp.dir, 'webhooks', 'queue.jsonl'), 'utf8').split('\n');
    expect(lines.at(-1)).toBe('');
    for (const l of lines.slice(0, -1)) expect(() => JSON.parse(l), l.slice(0, 80)).not.toThrow();
  }, 180_000);
});
