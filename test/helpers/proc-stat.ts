/**
 * A process's CPU time from /proc/<pid>/stat (Linux; null elsewhere or once the process is gone),
 * for the measurements that must count a child's CPU too (benches, the browser tests).
 */
import { procStatFields } from '../../pipeline/fs/proc-stat.ts';

export { CLOCK_TICKS_PER_S } from '../../pipeline/fs/proc-stat.ts';

/** The parent pid and the CPU time used so far (utime + stime, in clock ticks) of `pid`. */
export function procStat(pid: number | string): { ppid: number; ticks: number } | null {
  const f = procStatFields(pid);
  return f === null ? null : { ppid: Number(f[1]), ticks: Number(f[11]) + Number(f[12]) };
}
