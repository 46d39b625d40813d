/**
 * Money is published without binary noise: the spend a key's budget is checked against (and the
 * day's spend file) and a request's cost are sums of call costs, which carried it
 * (QA: `cost_usd` 0.031170000000000003, `spent_usd` 0.4953400000000001). The real store, on disk.
 */
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
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
