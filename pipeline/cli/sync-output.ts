/**
 * What `quorum sync` prints and how it exits (README, "The CLI").
 *
 *   exit 0  every configured venue and source succeeded
 *   exit 3  some failed; what the others brought is written
 *   exit 1  every venue and remote source failed (nothing came from outside), or every step did
 *
 * Output: on a terminal (stdout is a TTY) a short table, one row per venue and source; with
 * `--json`, or when stdout is not a terminal (pipes, scripts, tests), the report as one JSON line,
 * as before. Logs never share stdout: the CLI logs to stderr (pipeline/log.ts).
 */
import type { SyncReport, SyncStatus } from '../sync.ts';

/** The exit code of a sync with this status. */
export function syncExitCode(status: SyncStatus): 0 | 1 | 3 {
  return status === 'ok' ? 0 : status === 'partial' ? 3 : 1;
}

/** `--json` wins; otherwise a terminal gets the table and anything else the JSON report. */
export function syncOutputFormat(opts: { json?: boolean }, stdoutIsTty: boolean): 'json' | 'table' {
  return opts.json || !stdoutIsTty ? 'json' : 'table';
}

const COLUMNS = ['source', 'markets', 'new', 'priced', 'resolved', 'skipped', 'error'] as const;
/**
 * Tables whose new rows have their own column, or none (lifecycle events only accompany new
 * questions and resolutions); others (the sources registry) are listed as "also written".
 */
const NOT_LISTED = new Set(['questions', 'market_prices', 'resolutions', 'lifecycle_events']);
const MAX_ERROR = 72;

function clip(text: string, max: number): string {
  const flat = text.replace(/\s+/g, ' ').trim();
  return flat.length <= max ? flat : `${flat.slice(0, max - 1)}…`;
}

/**
 * The report as a plain-text table (no colour, no box drawing: it is read in any terminal and
 * pasted into issues), then what else was written, the warnings and the skip reasons, then one
 * status line.
 */
export function renderSyncTable(report: SyncReport): string {
  const rows = report.sources.map((s) => [
    s.source,
    s.markets === null ? '-' : String(s.markets),
    String(s.written.questions ?? 0),
    String(s.written.market_prices ?? 0),
    String(s.written.resolutions ?? 0),
    String(s.skipped),
    s.ok ? '' : clip(s.error ?? 'failed', MAX_ERROR),
  ]);
  const widths = COLUMNS.map((c, i) => Math.max(c.length, ...rows.map((r) => r[i]!.length)));
  // Text columns left-aligned, counts right-aligned; the last column is not padded.
  const line = (cells: readonly string[]) =>
    cells
      .map((cell, i) => (i === cells.length - 1 ? cell : i === 0 ? cell.padEnd(widths[i]!) : cell.padStart(widths[i]!)))
      .join('  ')
      .trimEnd();
  const out = [line(COLUMNS), line(widths.map((w, i) => (i === COLUMNS.length - 1 ? '-----' : '-'.repeat(w)))), ...rows.map(line)];

  const notes: string[] = [];
  for (const s of report.sources) {
    const other = Object.entries(s.written).filter(([table, n]) => !NOT_LISTED.has(table) && n > 0);
    if (other.length > 0) notes.push(`${s.source}: also written ${other.map(([t, n]) => `${n} ${t}`).join(', ')}`);
    for (const w of s.warnings ?? []) notes.push(`${s.source}: warning: ${clip(w, 160)}`);
    if (s.skipped > 0) {
      const listed = s.skipped_reasons.reduce((n, r) => n + r.count, 0);
      const reasons = s.skipped_reasons.map((r) => `${r.count}× ${clip(r.reason, 100)}`);
      if (listed < s.skipped) reasons.push(`${s.skipped - listed} more`);
      notes.push(`${s.source}: skipped ${reasons.join('; ')}`);
    }
  }
  if (notes.length > 0) out.push('', ...notes);

  const failed = report.failed.length;
  const verdict =
    report.status === 'ok'
      ? `sync ok: ${report.sources.length} venues and sources`
      : report.status === 'partial'
        ? `sync partial: ${failed} of ${report.sources.length} failed (${report.failed.join(', ')}); the rest is written`
        : `sync failed: ${report.failed.join(', ')}`;
  out.push('', `${verdict} (exit ${syncExitCode(report.status)})`);
  return `${out.join('\n')}\n`;
}
