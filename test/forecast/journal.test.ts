/** The journal: appended per finished call, torn last lines ignored on read and cut before appending. */
import { describe, expect, it } from 'vitest';
import { appendFileSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { JournalWriter, readJournal } from '../../pipeline/forecast/journal.ts';
import type { ModelCallRow } from '../../pipeline/models/runner.ts';
import { scratch } from './helpers.ts';

const call = (q: string): ModelCallRow => ({
  run_id: 'r1', question_id: q, model: 'm', mode: 'blind', started_at: new Date('2025-10-16T00:00:01Z'), latency_ms: 12.5,
  status: 'ok', error_kind: null, error_message: null, attempts: 1, tokens_in: 10, tokens_out: 5, cost_usd: 0.001, provider: 'simulated', condition: null,
});

describe('journal', () => {
  it('round-trips rows with their Dates, ignores a torn last line, and cuts it before appending', () => {
    const path = join(scratch('quorum-journal-'), 'journal', 'r1.jsonl');
    const w = JournalWriter.open(path, { fsyncMs: 50 });
    w.append({ t: 'run', v: 1, run_id: 'r1', as_of: '2025-10-16T00:00:00.000Z', created_at: 'x', modes: ['blind'], langs: ['en'], models: ['m'] });
    w.append({ t: 'evidence', question_id: 'q0', items: [{ evidence_id: 'ev-1', question_id: 'q0', retrieved_at: new Date(), title: 't', url: null, published_at: new Date('2025-10-01T00:00:00Z'), snippet: null, source_slug: 'local' }] });
    w.append({ t: 'call', call: call('q1'), forecasts: [] });
    w.close();
    appendFileSync(path, '{"t":"call","call":{"run_id":"r1","question_id":"q2"'); // killed mid-write
    const j = readJournal(path);
    expect(j.header?.run_id).toBe('r1');
    expect(j.torn).toBe(1);
    expect(j.calls).toHaveLength(1);
    expect(j.calls[0]!.call).toEqual(call('q1'));
    expect(j.evidence[0]!.items[0]!.published_at).toEqual(new Date('2025-10-01T00:00:00Z'));
    // a resumed session appends after cutting the torn tail: no glued line
    const w2 = JournalWriter.open(path, { fsyncMs: 0 });
    w2.append({ t: 'call', call: call('q3'), forecasts: [] });
    w2.close();
    const j2 = readJournal(path);
    expect(j2.torn).toBe(0);
    expect(j2.calls.map((c) => c.call.question_id)).toEqual(['q1', 'q3']);
    expect(readFileSync(path, 'utf8').endsWith('\n')).toBe(true);
    JournalWriter.open(path, { fsyncMs: 0 }).remove();
    expect(readJournal(path)).toEqual({ header: null, evidence: [], calls: [], torn: 0 });
  });
});
