/**
 * Money is published without binary noise: the spend a key's budget is checked against (and the
 * day's spend file) and a request's cost are sums of call costs, which carried it
 * (QA: `cost_usd` 0.031170000000000003, `spent_usd` 0.4953400000000001). The real store, on disk.
 */
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { ProbabilityStore } from '../../api/probability/store.ts';

const dir = mkdtempSync(join(tmpdir(), 'quorum-probability-spend-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('a key\'s spend', () => {
  it('adds up to the decimal sum of its costs, in memory and in the day\'s spend file', async () => {
    const store = new ProbabilityStore(dir);
    for (const usd of [0.1, 0.2, 0.00117]) store.addSpend('key-1', usd);
    expect(store.spentToday('key-1')).toBe(0.30117);
    await store.flush();
    const spendDir = join(store.dir, 'spend');
    const [file] = readdirSync(spendDir);
    expect(JSON.parse(readFileSync(join(spendDir, file!), 'utf8'))).toEqual({ 'key-1': 0.30117 });
  });
});

describe('a key\'s spend at midnight UTC', () => {
  // QA: spend is written at most every 200 ms; a request of the new day that came first (its budget
  // check rolls the store over to the new day) dropped the old day's unwritten spend, so the day's
  // spend file lacked the cost of its last answers.
  it('what the day spent in its last moments is in that day\'s spend file, the new day starts at zero', async () => {
    const d = mkdtempSync(join(tmpdir(), 'quorum-probability-midnight-'));
    try {
      let now = Date.parse('2026-03-01T23:59:59.900Z');
      const store = new ProbabilityStore(d, () => now);
      store.addSpend('key-1', 0.25);
      await store.flush();
      store.addSpend('key-1', 0.5); // not written yet when the day ends
      now = Date.parse('2026-03-02T00:00:00.050Z');
      expect(store.spentToday('key-1')).toBe(0);
      store.addSpend('key-2', 0.125);
      await store.flush();
      const read = (day: string) => JSON.parse(readFileSync(join(store.dir, 'spend', `${day}.json`), 'utf8'));
      expect(read('2026-03-01')).toEqual({ 'key-1': 0.75 });
      expect(read('2026-03-02')).toEqual({ 'key-2': 0.125 });
    } finally {
      rmSync(d, { recursive: true, force: true });
    }
  });
});

describe('a stored answer from before failed calls carried their cost', () => {
  it('reads with cost_usd null in each failed entry (the OpenAPI document marks it required), the rest as stored', async () => {
    const d = mkdtempSync(join(tmpdir(), 'quorum-probability-old-answer-'));
    try {
      const store = new ProbabilityStore(d);
      const id = `prq_${'a'.repeat(32)}`;
      mkdirSync(join(store.dir, 'requests'), { recursive: true });
      const old = { request_id: id, key_id: 'k', created_at: '2026-11-28T00:00:00.000Z', idempotency_key: null, body_hash: 'h', request: {}, status: 200,
        body: { request_id: id, cost_usd: 0.015, failed: [{ model: 'm', error_kind: 'invalid_json', latency_ms: 12 }, { model: 'n', error_kind: 'timeout', latency_ms: 30_000, cost_usd: 0.002 }] } };
      writeFileSync(join(store.dir, 'requests', `${id}.json`), JSON.stringify(old));
      const got = await store.getRequest(id);
      expect((got!.body as { failed: unknown[] }).failed).toEqual([
        { model: 'm', error_kind: 'invalid_json', latency_ms: 12, cost_usd: null },
        { model: 'n', error_kind: 'timeout', latency_ms: 30_000, cost_usd: 0.002 },
      ]);
      expect((got!.body as { cost_usd: number }).cost_usd).toBe(0.015);
    } finally {
      rmSync(d, { recursive: true, force: true });
    }
  });
});
