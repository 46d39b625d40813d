/**
 * The published lifecycle (sql/derive/86_lifecycle.sql) on hand-built lifecycle events: ordered by
 * time, and ending on the question's terminal state when the market resolved before its scheduled
 * close (the later `closed` event is no change of state).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { DuckDBConnection } from '@duckdb/node-api';
import { derive, insert, openDb, question, rows, ts } from '../scoring/fixture.ts';

describe('lifecycle', () => {
  let conn: DuckDBConnection;
  let close: () => void;

  beforeAll(async () => {
    ({ conn, close } = await openDb());
    await insert(conn, 'questions', ['EARLY', 'NORMAL', 'VOID', 'FILE', 'FUTURE', 'PUBLISHED'].map((id) => question(id)));
    await insert(conn, 'lifecycle_events', [
      // resolved early (2025-03-01), then its scheduled close (2025-04-01)
      { question_id: 'EARLY', state: 'active', at: ts('2025-01-01'), reason: 'listed' },
      { question_id: 'EARLY', state: 'resolved', at: ts('2025-03-01'), reason: 'resolved YES' },
      { question_id: 'EARLY', state: 'closed', at: ts('2025-04-01'), reason: 'market closed' },
      // closed, then resolved: both kept
      { question_id: 'NORMAL', state: 'active', at: ts('2025-01-01'), reason: 'listed' },
      { question_id: 'NORMAL', state: 'closed', at: ts('2025-02-01'), reason: 'market closed' },
      { question_id: 'NORMAL', state: 'resolved', at: ts('2025-03-01'), reason: 'resolved NO' },
      // annulled, then its scheduled close
      { question_id: 'VOID', state: 'active', at: ts('2025-01-01'), reason: 'listed' },
      { question_id: 'VOID', state: 'annulled', at: ts('2025-02-15'), reason: 'cancelled' },
      { question_id: 'VOID', state: 'closed', at: ts('2025-03-01'), reason: 'market closed' },
      // a question file's question opened in the past: proposed at the import time (after it
      // resolved), as pipeline/questions/question-file.ts records it
      { question_id: 'FILE', state: 'proposed', at: ts('2025-06-01'), reason: 'imported from question file q.yaml' },
      { question_id: 'FILE', state: 'active', at: ts('2025-01-01'), reason: 'opened (question file q.yaml)' },
      { question_id: 'FILE', state: 'closed', at: ts('2025-02-01'), reason: 'close_time reached (question file q.yaml)' },
      { question_id: 'FILE', state: 'resolved', at: ts('2025-03-01'), reason: 'resolved YES from FRED' },
      // imported before it opens: proposed, then active
      { question_id: 'FUTURE', state: 'proposed', at: ts('2025-01-01'), reason: 'imported from question file q.yaml' },
      { question_id: 'FUTURE', state: 'active', at: ts('2025-02-01'), reason: 'opened (question file q.yaml)' },
      // a question file's entry added after FRED had published its data (created_at left to the
      // import time): the sync that imports it resolves it at once, dated the first-release day,
      // before the proposed and active events that import records at its own time
      { question_id: 'PUBLISHED', state: 'proposed', at: ts('2025-05-01'), reason: 'imported from question file q.yaml' },
      { question_id: 'PUBLISHED', state: 'active', at: ts('2025-05-01'), reason: 'opened (question file q.yaml)' },
      { question_id: 'PUBLISHED', state: 'resolved', at: ts('2025-04-10'), reason: 'resolved YES from FRED CPIAUCSL' },
    ]);
    await derive(conn);
  });
  afterAll(() => close());

  it('a closed event after the question resolved or was annulled is left out; the last state is terminal', async () => {
    const r = await rows(conn, 'SELECT question_id, seq, state FROM lifecycle ORDER BY question_id, seq');
    const states = (id: string) => r.filter((x) => x.question_id === id).map((x) => `${String(x.seq)}:${String(x.state)}`);
    expect(states('EARLY')).toEqual(['1:active', '2:resolved']);
    expect(states('NORMAL')).toEqual(['1:active', '2:closed', '3:resolved']);
    expect(states('VOID')).toEqual(['1:active', '2:annulled']);
  });

  it('a proposed event after the question opened (a question file imported late) is left out; the last state is the status', async () => {
    const r = await rows(conn, 'SELECT question_id, seq, state FROM lifecycle ORDER BY question_id, seq');
    const states = (id: string) => r.filter((x) => x.question_id === id).map((x) => `${String(x.seq)}:${String(x.state)}`);
    expect(states('FILE')).toEqual(['1:active', '2:closed', '3:resolved']);
    expect(states('FUTURE')).toEqual(['1:proposed', '2:active']);
  });

  it('a proposed or active event after the question resolved (data published before the question was added) is left out; the last state is terminal', async () => {
    const r = await rows(conn, 'SELECT question_id, seq, state FROM lifecycle ORDER BY question_id, seq');
    const states = (id: string) => r.filter((x) => x.question_id === id).map((x) => `${String(x.seq)}:${String(x.state)}`);
    // it read resolved, proposed, active: its last state "active" for a resolved question
    expect(states('PUBLISHED')).toEqual(['1:resolved']);
  });
});
