/**
 * The durable delivery queue (api/events/webhooks/queue.ts) on its own: memory stays bounded by
 * the last KEEP_FINISHED finished deliveries of each subscription while running, the journal stays
 * bounded too (compacted while running), the journal restores the same state after a restart, and
 * pre-serialized data journals exactly as `data`.
 */
import { describe, expect, it } from 'vitest';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { DeliveryQueue, KEEP_FINISHED } from '../../api/events/webhooks/queue.ts';
import { tempDir } from '../helpers/temp-dir.ts';

const attempt = (n: number) => ({ at: new Date(Date.UTC(2026, 0, 1, 0, 0, n)).toISOString(), status: 200, error: null, duration_ms: 3 });
/** A published event as the dispatcher hands it to enqueueEvent (data pre-serialized, body rendered). */
const event = (seq: number, type: string, data: Record<string, unknown>, body = '{}') => ({
  seq, event_id: `evt_${seq}`, type, timestamp: '2026-01-01T00:00:00.000Z', data, dataJson: JSON.stringify(data), body,
});
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

  it("an event's deliveries are journaled as one record, the data once, and restored as if queued one by one", () => {
    const side = tempDir('quorum-queue-');
    try {
      const q = new DeliveryQueue(side.dir);
      const one = input('a', 1);
      q.enqueue(one);
      const e = event(2, 'edge.opened', { seq: 2, note: 'a "quoted" value, ünïcode' }, 'not journaled');
      // msg_a_1 is already queued: skipped, the others queued once each.
      expect(q.enqueueEvent(e, [['msg_x_2', 'x'], ['msg_y_2', 'y'], ['msg_a_1', 'a']])).toBe(2);
      expect(q.enqueueEvent(e, [['msg_x_2', 'x']])).toBe(0);
      expect(q.headOf('x')!.body).toBe('not journaled');
      q.close();
      const lines = readFileSync(join(side.dir, 'webhooks', 'queue.jsonl'), 'utf8').trim().split('\n').map((l) => JSON.parse(l));
      expect(lines.filter((l) => l.op === 'enqs').length).toBe(1);
      expect(JSON.stringify(lines)).not.toContain('not journaled');
      const reopened = new DeliveryQueue(side.dir);
      for (const [sub, id] of [['x', 'msg_x_2'], ['y', 'msg_y_2']] as const) {
        const d = reopened.headOf(sub)!;
        expect({ id: d.id, seq: d.seq, event_id: d.event_id, type: d.type, timestamp: d.timestamp, data: d.data, outcome: d.outcome }).toEqual({
          id, seq: 2, event_id: 'evt_2', type: 'edge.opened', timestamp: e.timestamp, data: e.data, outcome: null,
        });
        expect(d.body).toBeUndefined(); // built again from data at delivery
      }
      expect(reopened.pendingOf('a').map((d) => d.data)).toEqual([one.data]);
      reopened.close();
    } finally {
      side.cleanup();
    }
  });

  it('compacts the journal while running: its size stays bounded, every pending delivery and attempt survives a restart', () => {
    const side = tempDir('quorum-queue-');
    try {
      const min = 200;
      const q = new DeliveryQueue(side.dir, { compactMinRecords: min });
      const file = join(side.dir, 'webhooks', 'queue.jsonl');
      const journal = () => readFileSync(file, 'utf8').trim().split('\n').map((l) => JSON.parse(l));
      const lineCount = () => readFileSync(file, 'utf8').split('\n').length - 1;
      const subs = ['a', 'b', 'c'];
      let largest = 0;
      const events = 2000;
      for (let seq = 1; seq <= events; seq++) {
        q.enqueueEvent(event(seq, 'consensus.updated', { seq, note: 'ünïcode "quoted"' }), subs.map((sub) => [`msg_${sub}_${seq}`, sub]));
        q.setCursor(seq);
        q.flush();
        // a and b deliver everything at once; c keeps its last 10 pending, the last one attempted
        for (const sub of ['a', 'b']) q.complete(`msg_${sub}_${seq}`, attempt(seq % 60), 'delivered');
        if (seq <= events - 10) q.complete(`msg_c_${seq}`, attempt(seq % 60), 'delivered');
        q.flush();
        largest = Math.max(largest, lineCount());
      }
      q.attempt(`msg_c_${events}`, { ...attempt(7), status: 503 }, Date.UTC(2026, 0, 2));
      q.flush();
      // About 10,000 records were appended (an event, a cursor and up to three outcomes each);
      // compaction kept the file within three times the live state (3 × KEEP_FINISHED finished and
      // 10 pending deliveries, their attempts and outcomes, one record per event: about 720 lines).
      expect(largest).toBeLessThan(2_500);
      const lines = journal();
      const enqs = lines.filter((l) => l.op === 'enqs');
      expect(new Set(enqs.map((l) => l.e.event_id)).size).toBe(enqs.length); // each event once, its data once
      expect(lines.filter((l) => l.op === 'enq')).toEqual([]);
      const before = subs.map((sub) => q.ofSubscription(sub).map((d) => [d.id, d.outcome, d.attempts.length, d.next_at]));
      q.close();

      const again = new DeliveryQueue(side.dir, { compactMinRecords: min });
      expect(subs.map((sub) => again.ofSubscription(sub).map((d) => [d.id, d.outcome, d.attempts.length, d.next_at]))).toEqual(before);
      expect(again.pendingOf('c').map((d) => d.seq)).toEqual(Array.from({ length: 10 }, (_, i) => events - 9 + i));
      expect(again.get(`msg_c_${events}`)!.attempts).toEqual([{ ...attempt(7), status: 503 }]);
      expect(again.get(`msg_c_${events}`)!.data).toEqual({ seq: events, note: 'ünïcode "quoted"' });
      expect(again.cursor).toBe(events);
      again.close();
    } finally {
      side.cleanup();
    }
  });

  it('compacts a journal of 150,000 attempted pending deliveries (one array of lines: no stack overflow)', () => {
    const side = tempDir('quorum-queue-');
    try {
      const q = new DeliveryQueue(side.dir);
      const subs = Array.from({ length: 1000 }, (_, i) => `s${i}`);
      for (let seq = 1; seq <= 150; seq++) {
        q.enqueueEvent(event(seq, 'run.completed', { seq }), subs.map((sub) => [`msg_${sub}_${seq}`, sub]));
      }
      q.flush();
      for (let seq = 1; seq <= 150; seq++) for (const sub of subs) q.attempt(`msg_${sub}_${seq}`, { ...attempt(1), status: 500 }, Date.UTC(2026, 0, 2));
      q.flush(); // 150,150 records appended: compacted here
      const lines = readFileSync(join(side.dir, 'webhooks', 'queue.jsonl'), 'utf8').trim().split('\n');
      expect(lines.length).toBe(1 + 150 + 150_000); // the cursor, one record per event, one per attempt
      q.close();
      const again = new DeliveryQueue(side.dir);
      expect(again.pending().length).toBe(150_000);
      expect(again.headOf('s999')!.attempts).toHaveLength(1);
      again.close();
    } finally {
      side.cleanup();
    }
  });
});
