/**
 * Answers requests Node's HTTP parser rejects before Express sees them (the server's
 * `clientError` event) with the same problem+json every other error gets.
 *
 * Node's own answer is a bare status line (`431` for a request line plus headers over
 * `maxHeaderSize`, `400` for anything unparsable, `408` for a request that did not arrive in
 * time) with no body and no content type, so a client that switches on `code` found none: the
 * API fuzzer met one with a long query string. The status mapping is Node's; the body is ours.
 */

import type { Duplex } from 'node:stream';
import { maxHeaderSize } from 'node:http';
import { ApiError, PROBLEM_CONTENT_TYPE } from '../errors/problem.ts';
import { API_VERSION } from './respond.ts';

interface ParserError extends Error {
  code?: string;
  /** The bytes the parser had when it gave up (may be absent or cut). */
  rawPacket?: Buffer;
}

/**
 * The `code` of the error the server passes for a CONNECT to a host and port (authority form, RFC
 * 9112 §3.2.3): a request for a tunnel, which only a proxy answers. Node hands CONNECT to
 * `connect` listeners alone, and with none it closed the connection without a byte (outside test).
 */
export const TUNNEL_REQUEST = 'ERR_TUNNEL_REQUEST';

/** The problem for one parser error code (Node's `_http_server` maps the same codes to the same statuses). */
export function problemForParserError(code: string | undefined): ApiError {
  if (code === 'HPE_HEADER_OVERFLOW') return ApiError.headersTooLarge(maxHeaderSize);
  if (code === 'ERR_HTTP_REQUEST_TIMEOUT') return ApiError.requestTimeout();
  if (code === 'HPE_CHUNK_EXTENSIONS_OVERFLOW') return ApiError.payloadTooLarge(maxHeaderSize);
  if (code === TUNNEL_REQUEST) return ApiError.malformedRequest('CONNECT asks for a tunnel to a host; this server is not a proxy: send requests for its paths.');
  return ApiError.malformedRequest();
}

/** The request path, when the parser got as far as a request line (for the problem's `instance`). */
function requestTarget(raw: Buffer | undefined): { method: string | null; path: string | undefined } {
  if (!raw) return { method: null, path: undefined };
  const line = raw.subarray(0, Math.min(raw.length, 2048)).toString('latin1');
  const m = /^([A-Z]{1,16}) (\/[^ ?\r\n]{0,1024})/.exec(line);
  return m ? { method: m[1]!, path: m[2] } : { method: /^(HEAD|CONNECT) /.exec(line)?.[1] ?? null, path: undefined };
}

/** What answerClientError answered: the status and code it wrote, and the request's method and path when the parser got that far. */
export interface ClientErrorAnswer {
  status: number;
  code: string;
  method: string | null;
  path: string | undefined;
}

/**
 * The `clientError` listener: writes the problem and closes the connection, and returns what it
 * answered (for the server's log and metrics). A socket already gone, or one whose current
 * response has started, is only destroyed (as Node does): null, nothing was answered.
 */
export function answerClientError(err: ParserError, socket: Duplex): ClientErrorAnswer | null {
  const current = (socket as { _httpMessage?: { headersSent?: boolean } })._httpMessage;
  if (err.code === 'ECONNRESET' || !socket.writable || current?.headersSent) {
    socket.destroy(err);
    return null;
  }
  const problem = problemForParserError(err.code);
  const { method, path } = requestTarget(err.rawPacket);
  const doc = problem.toProblem(path);
  const body = Buffer.from(JSON.stringify(doc), 'utf8');
  const head = [
    `HTTP/1.1 ${problem.status} ${doc.title}`,
    `Content-Type: ${PROBLEM_CONTENT_TYPE}`,
    `Content-Length: ${body.length}`,
    `API-Version: ${API_VERSION}`,
    'Cache-Control: no-store',
    ...Object.entries(problem.headers).map(([k, v]) => `${k}: ${v}`), // as the app's error handler sets them
    'Connection: close',
    '',
    '',
  ].join('\r\n');
  // A HEAD answer carries the headers of the GET answer and no body.
  socket.end(method === 'HEAD' ? head : Buffer.concat([Buffer.from(head, 'latin1'), body]));
  return { status: problem.status, code: problem.code, method, path };
}
