/**
 * The durable delivery queue (api/events/webhooks/queue.ts) on its own: memory stays bounded by
 * the last KEEP_FINISHED finished deliveries of each subscription while running, the journal
 * restores the same state after a restart, and pre-serialized data journals exactly as `data`.
 */
import { describe, expect, it } from 'vitest';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { DeliveryQueue, KEEP_FINISHED } from '../../api/events/webhooks/queue.ts';
import { tempDir } from '../helpers/temp-dir.ts';

const attempt = (n: number) => ({ at: new Date(Date.UTC(2026, 0, 1, 0, 0, n)).toISOString(), status: 200, error: null, duration_ms: 3 });
const input = (sub: string, seq: number) => ({
  id: `msg_${sub}_${seq}`, sub, seq, event_id: `evt_${seq}`, type: 'consensus.updated', timestamp: '2026-01-01T00:00:00.000Z', data: { seq, note: 'a "quoted" value' },
});

describe('delivery queue', () => {
  it('keeps only the last KEEP_FINISHED finished deliveries per subscription, and every pending one', () => {
    const side = tempDir('quorum-queue-');
    try {
      const q = new DeliveryQueue(side.dir);
      const n = KEEP_FINISHED * 3 + 7;
      for (let seq = 1; seq <= n; seq++) q.enqueue(input('a', seq));
      for (let seq = 1; seq <= 5; seq++) q.enqueue(input('b', seq));
      q.flush();
      for (let seq = 1; seq <= n - 4; seq++) q.complete(`msg_a_${seq}`, attempt(seq), 'delivered');
      q.flush();
      const listed = q.ofSubscription('a');
      expect(listed.filter((d) => d.outcome === null).map((d) => d.seq)).toEqual([n, n - 1, n - 2, n - 3]);
      const finished = listed.filter((d) => d.outcome !== null);
      expect(finished.length).toBe(KEEP_FINISHED);
      expect(finished[0]!.seq).toBe(n - 4);
      expect(finished.at(-1)!.seq).toBe(n - 4 - KEEP_FINISHED + 1);
      expect(finished[0]!.attempts).toEqual([attempt(n - 4)]);
      // Forgotten in memory (the journal still has them until the next start compacts it).
      expect(q.has('msg_a_1')).toBe(false);
      expect(q.ofSubscription('b').length).toBe(5);
      q.close();

      const again = new DeliveryQueue(side.dir);
      expect(again.ofSubscription('a').map((d) => [d.seq, d.outcome])).toEqual(listed.map((d) => [d.seq, d.outcome]));
      expect(again.headOf('a')!.seq).toBe(n - 3);
      // A replay of a forgotten delivery queues it again, pending, under the same id.
      expect(again.enqueue(input('a', 1), true)).toBe(true);
      expect(again.pendingOf('a').map((d) => d.seq)).toEqual([1, n - 3, n - 2, n - 1, n]);
      again.close();
    } finally {
      side.cleanup();
    }
  });

  it('a delivery queued with pre-serialized data journals the same record as one serialized here', () => {
    const side = tempDir('quorum-queue-');
    try {
      const q = new DeliveryQueue(side.dir);
      const one = input('a', 1);
      const two = { ...input('a', 2) };
      q.enqueue(one);
      q.enqueue({ ...two, dataJson: JSON.stringify(two.data), body: 'ignored by the journal' });
      q.close();
      const lines = readFileSync(join(side.dir, 'webhooks', 'queue.jsonl'), 'utf8').trim().split('\n').map((l) => JSON.parse(l));
      const enq = lines.filter((l) => l.op === 'enq').map((l) => l.d);
      expect(enq.length).toBe(2);
      for (const [d, src] of [[enq[0], one], [enq[1], two]] as const) {
        const { enqueued_at, ...rest } = d;
        expect(rest).toEqual(src);
        expect(Number.isNaN(Date.parse(enqueued_at))).toBe(false);
      }
      expect(JSON.stringify(lines)).not.toContain('ignored by the journal');
      const reopened = new DeliveryQueue(side.dir);
      expect(reopened.pendingOf('a').map((d) => d.data)).toEqual([one.data, two.data]);
      reopened.close();
    } finally {
      side.cleanup();
    }
  });
});
