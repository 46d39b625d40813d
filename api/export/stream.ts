/**
 * Writing a sliced export's body: each complete slice file is copied to the response with
 * backpressure, and JSON slices (JSON lines) are framed into one JSON array on the way.
 *
 * A sliced body has no Content-Length: it goes out with chunked transfer encoding, and only a
 * body that ends with the terminating zero-length chunk is complete. On any failure after the
 * headers the route destroys the socket without that chunk (never a clean end), which every HTTP
 * client reports as an error (curl: exit 18, "transfer closed with outstanding read data
 * remaining"; fetch: "terminated"). A complete body also carries the trailer X-Export-Rows.
 */
import { createReadStream } from 'node:fs';
import type { Response } from 'express';

/** Thrown when the response closed (client gone) while a slice was being written. */
export class ResponseClosed extends Error {
  constructor() {
    super('response closed');
    this.name = 'ResponseClosed';
  }
}

/** Writes `chunk`, waiting for 'drain' when the socket buffer is full; rejects if the response closes. */
export function writeChunk(res: Response, chunk: Buffer): Promise<void> {
  if (res.destroyed || res.writableEnded) return Promise.reject(new ResponseClosed());
  if (res.write(chunk)) return Promise.resolve();
  return new Promise((resolve, reject) => {
    const onDrain = (): void => {
      res.off('close', onClose);
      resolve();
    };
    const onClose = (): void => {
      res.off('drain', onDrain);
      reject(new ResponseClosed());
    };
    res.once('drain', onDrain);
    res.once('close', onClose);
  });
}

/**
 * Frames JSON lines (one object per line, as DuckDB's `FORMAT json` writes them; strings never
 * hold a raw newline) into one JSON array: `[\n{…},\n{…}\n]\n`. Stateful across chunks and slices:
 * `push` each chunk in order, then `end()` once.
 */
export class JsonArrayFramer {
  #started = false;
  /** An object (or its start) has been written. */
  #any = false;
  /** A newline ended the last object: the next one needs a comma first. */
  #afterNewline = false;

  push(chunk: Buffer): Buffer {
    const parts: Buffer[] = [];
    if (!this.#started) {
      this.#started = true;
      parts.push(Buffer.from('[\n'));
    }
    let at = 0;
    while (at < chunk.length) {
      const nl = chunk.indexOf(0x0a, at);
      const end = nl === -1 ? chunk.length : nl;
      if (end > at) {
        if (this.#afterNewline) parts.push(Buffer.from(',\n'));
        this.#afterNewline = false;
        this.#any = true;
        parts.push(chunk.subarray(at, end));
      }
      if (nl === -1) break;
      if (this.#any) this.#afterNewline = true;
      at = nl + 1;
    }
    return Buffer.concat(parts);
  }

  end(): Buffer {
    const open = this.#started ? '' : '[\n';
    this.#started = true;
    return Buffer.from(this.#any ? `${open}\n]\n` : `${open}]\n`);
  }
}

/** Copies `file` to `res` (the read size is the route's highWaterMark, 4 MiB by default), each chunk through `map` if given. */
export async function sendFile(res: Response, file: string, highWaterMark: number, map?: (chunk: Buffer) => Buffer): Promise<void> {
  const input = createReadStream(file, { highWaterMark });
  try {
    for await (const chunk of input) {
      const out = map ? map(chunk as Buffer) : (chunk as Buffer);
      if (out.length > 0) await writeChunk(res, out);
    }
  } finally {
    input.destroy();
  }
}
