/**
 * IP address arithmetic shared by the anonymous quota's buckets (api/limits/quota.ts) and the
 * webhook URL policy's embedded-IPv4 check (api/events/webhooks/url-policy.ts).
 */

/**
 * The eight 16-bit groups of a valid IPv6 address (`::` compression, a dotted IPv4 tail and a
 * `%zone` accepted: the forms isIP() accepts).
 */
export function ipv6Groups(address: string): number[] {
  let text = address.replace(/%.*$/, '');
  const dotted = /(\d+)\.(\d+)\.(\d+)\.(\d+)$/.exec(text);
  if (dotted) {
    const [a, b, c, d] = dotted.slice(1).map(Number) as [number, number, number, number];
    text = `${text.slice(0, dotted.index)}${((a << 8) | b).toString(16)}:${((c << 8) | d).toString(16)}`;
  }
  const groups = (part: string) => (part === '' ? [] : part.split(':').map((h) => parseInt(h, 16)));
  const [head, tail] = text.split('::') as [string, string | undefined];
  if (tail === undefined) return groups(head);
  const h = groups(head);
  const t = groups(tail);
  return [...h, ...Array<number>(8 - h.length - t.length).fill(0), ...t];
}

/** Two 16-bit groups as a dotted IPv4 address. */
export function ipv4Of(hi: number, lo: number): string {
  return `${hi >> 8}.${hi & 0xff}.${lo >> 8}.${lo & 0xff}`;
}
