/**
 * `quorum sync`'s outcome as functions: the status from the per-source reports, the exit code, the
 * output format choice, and the terminal table (pipeline/cli/sync-output.ts, pipeline/sync.ts).
 */
import { describe, expect, it } from 'vitest';
import { renderSyncTable, syncExitCode, syncOutputFormat } from '../../pipeline/cli/sync-output.ts';
import { fredOutcome, syncStatus, type SourceReport, type SyncReport } from '../../pipeline/sync.ts';

function src(source: string, over: Partial<SourceReport> = {}): SourceReport {
  return { source, ok: true, error: null, written: {}, markets: null, skipped: 0, skipped_examples: [], skipped_reasons: [], warnings: [], ...over };
}
const failed = (source: string, error = 'HTTP 500') => src(source, { ok: false, error });
const REMOTE = new Set(['venue:manifold', 'venue:kalshi', 'fred']);

describe('syncStatus', () => {
  it('ok when every step succeeded (also with nothing remote configured)', () => {
    expect(syncStatus([src('registry'), src('question-files'), src('venue:manifold'), src('venue:kalshi')], REMOTE)).toBe('ok');
    expect(syncStatus([src('registry'), src('question-files')], new Set())).toBe('ok');
  });

  it('partial when some failed and something came from outside', () => {
    expect(syncStatus([src('registry'), src('venue:manifold'), failed('venue:kalshi')], REMOTE)).toBe('partial');
    // A rejected question file is a failure, the venues still worked.
    expect(syncStatus([src('registry'), failed('question-files'), src('venue:manifold')], REMOTE)).toBe('partial');
    // No remote configured: a local failure is partial, not "all failed".
    expect(syncStatus([src('registry'), failed('question-files')], new Set())).toBe('partial');
  });

  it('failed when every remote step failed, or every step did', () => {
    expect(syncStatus([src('registry'), src('question-files'), failed('venue:manifold'), failed('venue:kalshi')], REMOTE)).toBe('failed');
    expect(syncStatus([src('registry'), failed('venue:kalshi'), failed('fred')], REMOTE)).toBe('failed');
    expect(syncStatus([failed('registry')], new Set())).toBe('failed');
  });
});

describe('fredOutcome', () => {
  const fail = (series_id: string) => ({ series_id, reason: `FRED ${series_id}: request failed: client_error: HTTP 400` });
  it('failed when every request failed; a warning when some did; nothing when none did or none was made', () => {
    expect(fredOutcome({ requests: 2, failed_requests: [fail('A'), fail('B')] })).toEqual({
      error: 'every FRED request failed (2 of 2): FRED A: request failed: client_error: HTTP 400',
      warnings: [],
    });
    expect(fredOutcome({ requests: 3, failed_requests: [fail('B')] })).toEqual({
      error: null,
      warnings: ['1 of 3 FRED requests failed (B): FRED B: request failed: client_error: HTTP 400'],
    });
    expect(fredOutcome({ requests: 3, failed_requests: [] })).toEqual({ error: null, warnings: [] });
    expect(fredOutcome({ requests: 0, failed_requests: [] })).toEqual({ error: null, warnings: [] });
  });
});

describe('exit code and format', () => {
  it('maps ok/partial/failed to 0/3/1', () => {
    expect([syncExitCode('ok'), syncExitCode('partial'), syncExitCode('failed')]).toEqual([0, 3, 1]);
  });

  it('prints the table only on a terminal without --json', () => {
    expect(syncOutputFormat({}, true)).toBe('table');
    expect(syncOutputFormat({ json: true }, true)).toBe('json');
    expect(syncOutputFormat({}, false)).toBe('json');
    expect(syncOutputFormat({ json: true }, false)).toBe('json');
  });
});

describe('renderSyncTable', () => {
  const report: SyncReport = {
    at: '2026-11-23T00:00:00.000Z',
    status: 'partial',
    failed: ['venue:kalshi'],
    sources: [
      src('registry', { written: { sources: 15 } }),
      src('venue:manifold', {
        markets: 3,
        written: { questions: 2, market_prices: 2, lifecycle_events: 2 },
        skipped: 4,
        skipped_reasons: [
          { reason: 'not a binary market', count: 2 },
          { reason: 'no close time', count: 1 },
        ],
      }),
      failed('venue:kalshi', 'kalshi sync failed: HTTP 500 server_error\nafter 2 attempts'),
    ],
  };

  it('has one row per source with the counts, the error on one line, skip reasons, and the status with its exit code', () => {
    const text = renderSyncTable(report);
    const lines = text.split('\n');
    expect(lines[0]).toMatch(/^source\s+markets\s+new\s+priced\s+resolved\s+skipped\s+error$/);
    const row = (name: string) => lines.find((l) => l.startsWith(`${name} `))!.trim().split(/\s{2,}/);
    expect(row('registry')).toEqual(['registry', '-', '0', '0', '0', '0']);
    expect(row('venue:manifold')).toEqual(['venue:manifold', '3', '2', '2', '0', '4']);
    expect(row('venue:kalshi')).toEqual(['venue:kalshi', '-', '0', '0', '0', '0', 'kalshi sync failed: HTTP 500 server_error after 2 attempts']);
    expect(text).toContain('venue:manifold: skipped 2× not a binary market; 1× no close time; 1 more');
    expect(text).toContain('registry: also written 15 sources');
    expect(text).not.toContain('lifecycle_events');
    expect(text.trimEnd().split('\n').pop()).toBe('sync partial: 1 of 3 failed (venue:kalshi); the rest is written (exit 3)');
    // Columns line up: every row's counts end where the header's do.
    const end = lines[0]!.indexOf('skipped') + 'skipped'.length;
    for (const name of ['registry', 'venue:manifold', 'venue:kalshi']) expect(lines.find((l) => l.startsWith(name))!.slice(end - 1, end)).toMatch(/\d/);
  });

  it("lists a source's warnings under the table, also when it is ok", () => {
    const text = renderSyncTable({
      at: report.at,
      status: 'ok',
      failed: [],
      sources: [
        src('venue:kalshi', { markets: 1000, warnings: ['discovery stopped at the page cap (1 page, QUORUM_VENUE_MAX_PAGES): Kalshi has more markets than were read'] }),
        src('fred', { warnings: ['1 of 2 FRED requests failed (NOSUCH): FRED NOSUCH: request failed: client_error: HTTP 400'] }),
      ],
    });
    expect(text).toContain('venue:kalshi: warning: discovery stopped at the page cap (1 page, QUORUM_VENUE_MAX_PAGES)');
    expect(text).toContain('fred: warning: 1 of 2 FRED requests failed (NOSUCH)');
    expect(text.trimEnd().split('\n').pop()).toBe('sync ok: 2 venues and sources (exit 0)');
  });

  it('clips a long error and says failed / ok in the last line', () => {
    const long = renderSyncTable({ ...report, status: 'failed', failed: ['venue:kalshi'], sources: [failed('venue:kalshi', 'x'.repeat(500))] });
    expect(long).toContain(`${'x'.repeat(71)}…`);
    expect(long).not.toContain('x'.repeat(73));
    expect(long.trimEnd().split('\n').pop()).toBe('sync failed: venue:kalshi (exit 1)');
    const ok = renderSyncTable({ at: report.at, status: 'ok', failed: [], sources: [src('registry')] });
    expect(ok.trimEnd().split('\n').pop()).toBe('sync ok: 1 venues and sources (exit 0)');
  });
});
