/**
 * Orders rows by a known bucket order (e.g. CATEGORIES, HORIZON_BUCKETS); keys outside it follow,
 * alphabetically.
 */
export function orderByKnown<T>(rows: readonly T[], key: (row: T) => string, order: readonly string[]): T[] {
  const rank = new Map(order.map((k, i) => [k, i]));
  return [...rows].sort((a, b) => {
    const ka = key(a);
    const kb = key(b);
    const ra = rank.get(ka) ?? order.length;
    const rb = rank.get(kb) ?? order.length;
    if (ra !== rb) return ra - rb;
    return ka < kb ? -1 : ka > kb ? 1 : 0;
  });
}
