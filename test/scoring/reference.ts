/**
 * Independent, straightforward TypeScript implementations of the issue-10 statistics, used by the
 * tests to check the SQL of sql/derive on small fixtures: the bootstrap is re-run here from the
 * published draws (bootstrap_groups, bootstrap_weights), the statistics are recomputed from the
 * per-question rows with plain loops.
 */
import type { DuckDBConnection } from '@duckdb/node-api';
import { rows } from './fixture.ts';

/** quantile_cont: linear interpolation between order statistics (R type 7). */
export function quantile(xs: number[], q: number): number {
  const s = [...xs].sort((a, b) => a - b);
  const h = (s.length - 1) * q;
  const lo = Math.floor(h);
  const hi = Math.min(lo + 1, s.length - 1);
  return s[lo]! + (h - lo) * (s[hi]! - s[lo]!);
}

export function mean(xs: number[]): number {
  return xs.reduce((a, b) => a + b, 0) / xs.length;
}

/** Replicate weights per question: weights[r].get(question_id) (0 when the group was not drawn). */
export interface Draws {
  replicates: number;
  weight: (replicate: number, questionId: string) => number;
}

export async function loadDraws(conn: DuckDBConnection): Promise<Draws> {
  const groups = new Map<string, number>();
  for (const r of await rows(conn, 'SELECT question_id, grp FROM bootstrap_groups')) {
    groups.set(String(r.question_id), Number(r.grp));
  }
  const w = new Map<string, number>();
  let replicates = 0;
  for (const r of await rows(conn, 'SELECT replicate, grp, w FROM bootstrap_weights')) {
    w.set(`${r.replicate}:${r.grp}`, Number(r.w));
    replicates = Math.max(replicates, Number(r.replicate) + 1);
  }
  return {
    replicates,
    weight: (rep, q) => w.get(`${rep}:${groups.get(q)}`) ?? 0,
  };
}

/** Weighted mean of the values per question under replicate rep (null when no weight). */
export function weightedMean(draws: Draws, rep: number, values: Map<string, number>): number | null {
  let num = 0;
  let den = 0;
  for (const [q, v] of values) {
    const w = draws.weight(rep, q);
    num += w * v;
    den += w;
  }
  return den === 0 ? null : num / den;
}

/** 95% percentile interval of a per-replicate statistic (replicates giving null are left out). */
export function interval(draws: Draws, stat: (rep: number) => number | null): [number, number] | null {
  const xs: number[] = [];
  for (let r = 0; r < draws.replicates; r++) {
    const v = stat(r);
    if (v !== null && Number.isFinite(v)) xs.push(v);
  }
  if (xs.length === 0) return null;
  return [quantile(xs, 0.025), quantile(xs, 0.975)];
}

/** Paired mean difference of a − b over the questions both have. */
export function pairedDiff(a: Map<string, number>, b: Map<string, number>): Map<string, number> {
  const d = new Map<string, number>();
  for (const [q, v] of a) if (b.has(q)) d.set(q, v - b.get(q)!);
  return d;
}

/** Average ranks (ties get the mean rank), 1-based. */
export function ranks(xs: number[]): number[] {
  const idx = xs.map((v, i) => [v, i] as const).sort((a, b) => a[0] - b[0]);
  const out = new Array<number>(xs.length);
  for (let i = 0; i < idx.length; ) {
    let j = i;
    while (j + 1 < idx.length && idx[j + 1]![0] === idx[i]![0]) j++;
    for (let k = i; k <= j; k++) out[idx[k]![1]] = (i + j) / 2 + 1;
    i = j + 1;
  }
  return out;
}

/** Pearson correlation (null when a side is constant). */
export function pearson(x: number[], y: number[]): number | null {
  const mx = mean(x);
  const my = mean(y);
  let sxy = 0;
  let sxx = 0;
  let syy = 0;
  for (let i = 0; i < x.length; i++) {
    sxy += (x[i]! - mx) * (y[i]! - my);
    sxx += (x[i]! - mx) ** 2;
    syy += (y[i]! - my) ** 2;
  }
  return sxx === 0 || syy === 0 ? null : sxy / Math.sqrt(sxx * syy);
}
