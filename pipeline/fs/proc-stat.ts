/**
 * A process's /proc/<pid>/stat (Linux): the one parser of its fields, for the locks (is a holder a
 * zombie, did its pid get reused) and the measurements of the benches and browser tests.
 */
import { readFileSync } from 'node:fs';

/** USER_HZ on Linux: the unit of the times in /proc/<pid>/stat. */
export const CLOCK_TICKS_PER_S = 100;

/**
 * The fields of /proc/<pid>/stat after the command name (which is in parentheses and may hold
 * spaces or ')'): [0] is the state (field 3 of proc(5)), [1] the parent pid, [11] and [12] utime
 * and stime, [19] the start time in clock ticks after boot. null where it cannot be read (no /proc,
 * or the process is gone).
 */
export function procStatFields(pid: number | string): string[] | null {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  } catch {
    return null;
  }
}
