/**
 * Waits until a freshly launched Chromium has finished starting.
 *
 * For about two seconds after `puppeteer.launch()` resolves, the browser's own processes (network
 * service, GPU and utility processes, the first renderer) keep both of the machine's cores busy:
 * a page measured then showed up to 0.5 s of the browser's start-up in its first render, and only
 * the first page measured did. A user's browser is already running, so the tests measure after
 * it: once the whole process tree has used under `idleShare` of one core for `quietWindows`
 * consecutive windows (read from /proc, Linux only; elsewhere it returns at once).
 */
import { readdirSync } from 'node:fs';
import { CLOCK_TICKS_PER_S, procStat } from '../helpers/proc-stat.ts';

/** CPU time (in clock ticks) used so far by `root` and every process below it. */
function treeTicks(root: number): number | null {
  let entries: string[];
  try {
    entries = readdirSync('/proc').filter((p) => /^\d+$/.test(p));
  } catch {
    return null;
  }
  const procs: { pid: number; ppid: number; ticks: number }[] = [];
  for (const p of entries) {
    const stat = procStat(p); // null: the process ended meanwhile
    if (stat) procs.push({ pid: Number(p), ...stat });
  }
  const tree = new Set([root]);
  for (let grew = true; grew; ) {
    grew = false;
    for (const x of procs) {
      if (!tree.has(x.pid) && tree.has(x.ppid)) {
        tree.add(x.pid);
        grew = true;
      }
    }
  }
  return procs.filter((x) => tree.has(x.pid)).reduce((s, x) => s + x.ticks, 0);
}

export async function waitForBrowserIdle(
  pid: number | undefined,
  { windowMs = 250, idleShare = 0.1, quietWindows = 3, maxMs = 15_000 } = {},
): Promise<{ waitedMs: number; idle: boolean }> {
  const started = Date.now();
  if (pid === undefined) return { waitedMs: 0, idle: false };
  let last = treeTicks(pid);
  if (last === null) return { waitedMs: 0, idle: false };
  const limit = (idleShare * CLOCK_TICKS_PER_S * windowMs) / 1000;
  let quiet = 0;
  while (Date.now() - started < maxMs) {
    await new Promise((r) => setTimeout(r, windowMs));
    const now = treeTicks(pid);
    if (now === null) break;
    quiet = now - last <= limit ? quiet + 1 : 0;
    last = now;
    if (quiet >= quietWindows) return { waitedMs: Date.now() - started, idle: true };
  }
  return { waitedMs: Date.now() - started, idle: false };
}
