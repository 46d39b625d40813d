/**
 * Per-snapshot cache of rendered JSON bodies: key = (snapshot id, route id, normalized request),
 * bounded LRU (entries and total bytes). Entries of an older snapshot are never served (the id is
 * part of the key): they are dropped when the next snapshot is loaded (retainOnly), instead of
 * holding up to the whole byte bound until the LRU pushes them out. Strong ETag = `"` + base64url(SHA-256(body))[0..27] + `"`.
 */
import { createHash } from 'node:crypto';
import { gzipSync } from 'node:zlib';

/** A body as it goes out (http/registry.ts sendBody): its strong ETag and its gzip coding. */
export interface EncodedBody {
  body: Buffer;
  etag: string;
  /** The gzip coding of `body`, made on the first request that accepts it (gzipped). */
  gzip?: Buffer;
}

/** A rendered answer of a snapshot. */
export interface CachedBody extends EncodedBody {
  snapshotId: string;
}

/** Bodies smaller than this go out as they are: gzip would save a few bytes for its CPU. */
export const GZIP_MIN_BYTES = 1024;

/** The strong ETag of a body's gzip coding: another representation, so another tag (RFC 9110 §8.8.3). */
export function gzipEtag(etag: string): string {
  return `${etag.slice(0, -1)}-gzip"`;
}

/** `entry.body` gzipped, made once (level 6: a 140 kB page in a few ms, about a tenth of its size). */
export function gzipped(entry: EncodedBody): Buffer {
  return (entry.gzip ??= gzipSync(entry.body, { level: 6 }));
}

export class ResponseCache {
  readonly #maxEntries: number;
  readonly #maxBytes: number;
  #bytes = 0;
  readonly #map = new Map<string, CachedBody>();
  hits = 0;
  misses = 0;

  constructor(opts: { maxEntries?: number; maxBytes?: number } = {}) {
    this.#maxEntries = opts.maxEntries ?? 1000;
    this.#maxBytes = opts.maxBytes ?? 64 * 1024 * 1024;
  }

  static key(snapshotId: string, routeId: string, request: string): string {
    return `${snapshotId}\u0000${routeId}\u0000${request}`;
  }

  get(key: string): CachedBody | undefined {
    const hit = this.#map.get(key);
    if (hit === undefined) {
      this.misses++;
      return undefined;
    }
    this.hits++;
    // LRU: move to the end
    this.#map.delete(key);
    this.#map.set(key, hit);
    return hit;
  }

  set(key: string, snapshotId: string, body: Buffer): CachedBody {
    const entry: CachedBody = { body, etag: etagOf(body), snapshotId };
    if (body.length > this.#maxBytes) return entry; // too big to keep
    const old = this.#map.get(key);
    if (old) {
      this.#bytes -= old.body.length;
      this.#map.delete(key);
    }
    this.#map.set(key, entry);
    this.#bytes += body.length;
    while (this.#map.size > this.#maxEntries || this.#bytes > this.#maxBytes) {
      const first = this.#map.keys().next();
      if (first.done) break;
      const e = this.#map.get(first.value)!;
      this.#bytes -= e.body.length;
      this.#map.delete(first.value);
    }
    return entry;
  }

  /**
   * Drops every entry of a snapshot other than `snapshotId` (called when a snapshot is loaded: an
   * older snapshot's answers are never served again). QA soak: after load and a publish the server
   * kept 150-350 MB above a fresh start, the old snapshot's bodies and their gzip codings among it.
   */
  retainOnly(snapshotId: string): number {
    let dropped = 0;
    for (const [key, e] of this.#map) {
      if (e.snapshotId === snapshotId) continue;
      this.#bytes -= e.body.length;
      this.#map.delete(key);
      dropped++;
    }
    return dropped;
  }

  /** Bytes of the bodies held (the bound's measure). */
  get bytes(): number {
    return this.#bytes;
  }

  get size(): number {
    return this.#map.size;
  }
}

export function etagOf(body: Buffer): string {
  return `"${createHash('sha256').update(body).digest('base64url').slice(0, 27)}"`;
}

/** RFC 9110 If-None-Match (weak comparison): true when `etag` matches the header's list or `*`. */
export function ifNoneMatch(header: string | undefined, etag: string): boolean {
  if (header === undefined) return false;
  const h = header.trim();
  if (h === '*') return true;
  const opaque = etag.startsWith('W/') ? etag.slice(2) : etag;
  for (const part of h.split(',')) {
    const t = part.trim();
    if ((t.startsWith('W/') ? t.slice(2) : t) === opaque) return true;
  }
  return false;
}
