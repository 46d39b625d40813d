/**
 * The event feed's check for new parts (api/events/feed.ts partsSignature): every committed part
 * below raw/events, sorted, read off the event loop (it runs every QUORUM_EVENTS_POLL_MS in the
 * server, over a tree that grows by a directory per run).
 */
import { describe, expect, it } from 'vitest';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { partsSignature } from '../../api/events/feed.ts';
import { EVENT_DATA } from '../../api/events/payloads.ts';
import { tempDir } from '../helpers/temp-dir.ts';

describe('partsSignature', () => {
  it('lists every committed part in order, a part being written left out, without holding the event loop (QA soak: a year of runs blocked it 17-30 ms a poll)', async () => {
    const { dir, cleanup } = tempDir('quorum-feed-');
    try {
      const expected: string[] = [];
      for (let day = 0; day < 60; day++) {
        for (let run = 0; run < 6; run++) {
          const d = join(dir, `run_date=2026-01-${String((day % 28) + 1).padStart(2, '0')}`, `run_id=r${day}-${run}`);
          mkdirSync(d, { recursive: true });
          writeFileSync(join(d, 'part-0.parquet'), '');
          writeFileSync(join(d, 'part-1.parquet.tmp'), ''); // not committed yet
          expected.push(join(d, 'part-0.parquet'));
        }
      }
      let turns = 0;
      const ticker = setInterval(() => turns++, 0);
      const sig = await partsSignature(dir);
      clearInterval(ticker);
      expect(sig.split('\n')).toEqual(expected.sort());
      expect(turns).toBeGreaterThan(0);
      expect(await partsSignature(join(dir, 'nothing-here'))).toBe('');
    } finally {
      cleanup();
    }
  });
});

describe('question.resolved payloads written before amendments were announced', () => {
  it('still match the documented schema (previous_outcome absent), as a replay can send them (QA review)', () => {
    const old = {
      question_id: 'manifold:q1', title: 'Will it?', category: 'tech', venue: 'manifold', status: 'resolved', outcome: 1,
      resolved_at: '2026-01-02T00:00:00.000Z', annulled_reason: null, method: 'manifold:resolution',
      source: { slug: 'manifold', name: 'Manifold', kind: 'market', url: 'https://manifold.markets/x', evidence_excerpt: 'YES' },
      previous_status: 'active',
    };
    expect(EVENT_DATA['question.resolved'].safeParse(old).success).toBe(true);
    expect(EVENT_DATA['question.resolved'].safeParse({ ...old, previous_outcome: 0 }).success).toBe(true);
    expect(EVENT_DATA['question.resolved'].safeParse({ ...old, previous_outcome: 'yes' }).success).toBe(false);
  });
});

describe('consensus.updated payloads written before previous_mode was announced', () => {
  it('still match the documented schema (previous_mode absent), as the stream and a webhook replay send them after an upgrade (QA upgrade pass)', () => {
    // An event seq 46 written by e97a4a7 in a data directory then served by this version (/api/stream/?since=0).
    const old = {
      question_id: 'infer:1432', title: 'Will another Chinese military base in an African country (excluding Djibouti) be under construction or established by 1 January 2027?',
      category: 'world', mode: 'augmented', consensus: 0.12675, previous: 0.193, change: -0.06625, n_models: 4,
      disagreement_sd: 0.028604, market_probability: 0.1442, run_id: 'r20260306T000000Z-isv14dqw', previous_run_id: 'r20251016T000000Z-r1oor5fl',
    };
    expect(EVENT_DATA['consensus.updated'].safeParse(old).success).toBe(true);
    expect(EVENT_DATA['consensus.updated'].safeParse({ ...old, previous_mode: 'informed' }).success).toBe(true);
    expect(EVENT_DATA['consensus.updated'].safeParse({ ...old, previous_mode: 'other' }).success).toBe(false);
  });
});
