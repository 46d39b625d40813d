/**
 * A process's CPU time from /proc/<pid>/stat (Linux; null elsewhere or once the process is gone),
 * for the measurements that must count a child's CPU too (benches, the browser tests).
 */
import { readFileSync } from 'node:fs';

/** USER_HZ on Linux: the unit of the CPU times in /proc/<pid>/stat. */
export const CLOCK_TICKS_PER_S = 100;

/** The parent pid and the CPU time used so far (utime + stime, in clock ticks) of `pid`. */
export function procStat(pid: number | string): { ppid: number; ticks: number } | null {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    // The fields after the command name, which is in parentheses and may hold spaces or ')'.
    const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return { ppid: Number(f[1]), ticks: Number(f[11]) + Number(f[12]) };
  } catch {
    return null;
  }
}
