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

/**
 * Writes `chunk`, waiting for 'drain' when the socket buffer is full; rejects if the response
 * closes. `onFlushed(n)` is called once the socket has taken the chunk's `n` bytes (the write's
 * callback: the kernel accepted them), not when they were merely queued.
 */
export function writeChunk(res: Response, chunk: Buffer, onFlushed?: (bytes: number) => void): Promise<void> {
  if (res.destroyed || res.writableEnded) return Promise.reject(new ResponseClosed());
  const flushed = onFlushed && ((err?: Error | null) => err || onFlushed(chunk.length));
  if (res.write(chunk, flushed)) return Promise.resolve();
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
 * Ends `res` (unless sendFile already did) and waits until it has finished (every byte flushed);
 * rejects if it closes first.
 */
export function endResponse(res: Response): Promise<void> {
  if (res.writableFinished) return Promise.resolve();
  if (res.destroyed) return Promise.reject(new ResponseClosed());
  return new Promise((resolve, reject) => {
    const onFinish = (): void => {
      res.off('close', onClose);
      resolve();
    };
    const onClose = (): void => {
      res.off('finish', onFinish);
      if (res.writableFinished) resolve();
      else reject(new ResponseClosed());
    };
    res.once('finish', onFinish);
    res.once('close', onClose);
    if (!res.writableEnded) res.end();
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

/**
 * Copies `file` to `res` (the read size is the route's highWaterMark, 4 MiB by default), each chunk
 * through `map` if given; `onFlushed` as for writeChunk.
 *
 * `length` (the whole file's size, its Content-Length): the response is ended together with the
 * chunk that holds the file's last byte, not after the read stream has reported its end. A client
 * that has its Content-Length closes at once, and that close could come before the extra read:
 * the response then closed unfinished and a complete download was logged and counted `aborted`
 * (QA: 13 of 15 curl downloads of a 470 kB export). Await endResponse afterwards for the finish.
 */
export async function sendFile(
  res: Response,
  file: string,
  highWaterMark: number,
  map?: (chunk: Buffer) => Buffer,
  onFlushed?: (bytes: number) => void,
  length?: number,
): Promise<void> {
  const input = createReadStream(file, { highWaterMark });
  let read = 0;
  try {
    for await (const chunk of input) {
      read += (chunk as Buffer).length;
      const out = map ? map(chunk as Buffer) : (chunk as Buffer);
      if (length !== undefined && read >= length) {
        // The last chunk: written and ended in one go (no wait for 'drain', which an ended
        // response does not emit); endResponse waits for the finish.
        if (res.destroyed || res.writableEnded) throw new ResponseClosed();
        const flushed = onFlushed && ((err?: Error | null) => err || onFlushed(out.length));
        if (out.length > 0) res.write(out, flushed);
        res.end();
        return;
      }
      if (out.length > 0) await writeChunk(res, out, onFlushed);
    }
  } finally {
    input.destroy();
  }
}

/**
 * Bytes of `res` still waiting to reach the client, and a counter that moves whenever the socket
 * takes bytes. `writableLength` alone only moves when a whole write completes (a read of up to
 * 4 MiB), so libuv's own write queue (`writeQueueSize` of the socket's handle: the bytes of the
 * current write the kernel has not taken yet) is read too, where the handle has one; it shrinks
 * each time the kernel's send buffer makes room, i.e. as the client reads.
 */
function sendState(res: Response): { waiting: number; mark: string } {
  const socket = res.socket;
  if (!socket || socket.destroyed) return { waiting: 0, mark: '' };
  const queue = (socket as unknown as { _handle?: { writeQueueSize?: number } | null })._handle?.writeQueueSize ?? 0;
  const waiting = socket.writableLength + queue;
  return { waiting, mark: `${socket.bytesWritten}:${socket.writableLength}:${queue}` };
}

/**
 * Calls `onStall` (once) when `res` has had bytes waiting for the client for `idleMs` while the
 * socket took none of them: the client stopped reading, or reads so slowly that the kernel's send
 * buffer never frees. Time spent with nothing waiting (DuckDB still COPYing, the next slice not
 * ready) never counts: only the client can stall an export. Nor does time the event loop itself was
 * blocked (a check that comes late could not have seen the progress made meanwhile). Checks every
 * `idleMs / 4` (at most every second); returns the function that stops watching.
 */
export function watchSendProgress(res: Response, idleMs: number, onStall: () => void): () => void {
  const period = Math.max(10, Math.min(1000, Math.floor(idleMs / 4)));
  let last = sendState(res);
  let since = Date.now();
  let tick = since;
  const timer = setInterval(() => {
    const at = Date.now();
    const late = at - tick - period;
    tick = at;
    if (late > period) since += late;
    const now = sendState(res);
    if (now.waiting === 0 || now.mark !== last.mark) {
      last = now;
      since = at;
      return;
    }
    if (at - since >= idleMs) {
      clearInterval(timer);
      onStall();
    }
  }, period);
  timer.unref();
  return () => clearInterval(timer);
}
