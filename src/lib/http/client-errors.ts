/**
 * Requests Node's HTTP server gives up on before any route runs: headers over the size limit,
 * framing it cannot parse (a negative Content-Length, a Transfer-Encoding other than chunked
 * last, a garbage request line) and requests that did not arrive whole in time. Node reports
 * them on the server's 'clientError' event with the socket, and fastify's `clientErrorHandler`
 * option replaces its own answer there (`{error, message, statusCode}`, no envelope of ours).
 *
 * The handler made here answers each with a cataloged code in the envelope of the request's
 * generation (the caller decides which), written to the socket as a raw HTTP/1.1 response with
 * `Connection: close`, and then closes the connection. What is known of the request comes from
 * the request Node parsed, when its headers were complete (a slow body), or else from the
 * request line at the start of the bytes Node could not parse (`error.rawPacket`).
 */
import { type IncomingMessage, type ServerResponse, STATUS_CODES } from 'node:http';
import type { Socket } from 'node:net';

import { ApiError } from '../errors/api-error.js';
import { newId } from '../ids.js';
import { randomHex } from '../random.js';
import { generateRequestId } from '../request-id.js';
import { MAX_HEADER_BYTES } from './server-timeouts.js';

/** The codes a client error is answered with. */
export type ClientErrorCode =
  'REQUEST_MALFORMED' | 'REQUEST_HEADERS_TOO_LARGE' | 'REQUEST_TIMEOUT' | 'VALIDATION_PAYLOAD_TOO_LARGE';

/** What Node hands the 'clientError' listener: a parser error (`HPE_*`, with the bytes it stopped in), a timeout, or a socket error. */
export interface ClientError extends Error {
  readonly code?: string;
  readonly rawPacket?: unknown;
}

/** What is known of the request a client error ended. */
export interface ClientErrorRequest {
  readonly code: ClientErrorCode;
  /** The request's method and path (without its query), from its parsed headers or its raw request line; undefined when neither says. */
  readonly method: string | undefined;
  readonly path: string | undefined;
  /** The client's X-Request-Id when its headers were parsed and it is well-formed, else a fresh one. */
  readonly requestId: string;
}

/** A complete answer: status, JSON body and headers besides Content-Type, Content-Length and Connection. */
export interface RawAnswer {
  readonly status: number;
  readonly body: string;
  readonly headers: Readonly<Record<string, string>>;
}

/** How long an answered connection still reads and drops what the client sends, so that closing it does not reset the answer away. */
export const LINGER_MS = 2_000;

/** The code a client error is answered with, or null for a socket failure (a reset, a broken pipe), which nothing can be answered to. */
export function clientErrorCode(error: ClientError): ClientErrorCode | null {
  switch (error.code) {
    case 'ERR_HTTP_REQUEST_TIMEOUT':
      return 'REQUEST_TIMEOUT';
    case 'HPE_HEADER_OVERFLOW':
      return 'REQUEST_HEADERS_TOO_LARGE';
    // More than 16 KB of chunk extensions: Node's own answer is 413, the body being too large.
    case 'HPE_CHUNK_EXTENSIONS_OVERFLOW':
      return 'VALIDATION_PAYLOAD_TOO_LARGE';
    default:
      return error.code?.startsWith('HPE_') === true || Buffer.isBuffer(error.rawPacket) ? 'REQUEST_MALFORMED' : null;
  }
}

/**
 * The method and target of the request line at the start of `raw`, read leniently (split on
 * spaces), so that a line Node refused still says where it was going. Null for empty input.
 */
export function requestLineOf(raw: Buffer): { readonly method: string; readonly target: string | undefined } | null {
  // A request line is part of the header limit, so nothing past it is one.
  const scanned = raw.subarray(0, MAX_HEADER_BYTES);
  const newline = scanned.indexOf(0x0a);
  const line = scanned
    .subarray(0, newline === -1 ? scanned.length : newline)
    .toString('latin1')
    .trim();
  if (line === '') return null;
  const [method, target] = line.split(/ +/);
  return { method: method!, target };
}

/** The path of a request target: up to its query. */
function pathOf(target: string | undefined): string | undefined {
  return target?.split('?', 1)[0];
}

/** Node's bookkeeping on a connection it serves (its own fallback answer reads the first). */
interface ServedSocket extends Socket {
  /** The response in flight, until it finishes. */
  readonly _httpMessage?: ServerResponse | null;
  /** The parser, with the request whose headers it parsed last. */
  readonly parser?: { readonly incoming?: IncomingMessage | null } | null;
}

/**
 * The request a client error ended, when it got as far as a request (null: its headers never
 * parsed), or 'answered' when there is nothing left to answer: a response has started on the
 * connection, the request's own answer has gone already (a route that did not wait for the
 * body), or the response in flight is an earlier pipelined request's, which an answer now would
 * read as.
 */
function endedRequest(socket: ServedSocket): IncomingMessage | null | 'answered' {
  const response = socket._httpMessage ?? null;
  if (response !== null) return response.headersSent || response.req.complete ? 'answered' : response.req;
  const incoming = socket.parser?.incoming ?? null;
  return incoming !== null && !incoming.complete ? 'answered' : null;
}

function describeRequest(
  code: ClientErrorCode,
  request: IncomingMessage | null,
  error: ClientError,
): ClientErrorRequest {
  if (request !== null) {
    return { code, method: request.method, path: pathOf(request.url), requestId: generateRequestId(request) };
  }
  const line = Buffer.isBuffer(error.rawPacket) ? requestLineOf(error.rawPacket) : null;
  return { code, method: line?.method, path: pathOf(line?.target), requestId: newId('request') };
}

/** v3 counts GET and HEAD as reads; everything else, an unknown method included, is a write. */
function isWrite(method: string | undefined): boolean {
  return method !== 'GET' && method !== 'HEAD';
}

/** The v3 answer: the catalog's envelope and the ids every v3 answer carries. */
export function v3ClientErrorAnswer(request: ClientErrorRequest): RawAnswer {
  return v3RawAnswer(new ApiError(request.code), request.method, request.requestId);
}

/** An ApiError as a raw v3 answer: its envelope, its own headers (`Allow`) and the ids every v3 answer carries. */
export function v3RawAnswer(error: ApiError, method: string | undefined, requestId: string): RawAnswer {
  return {
    status: error.statusCode,
    body: JSON.stringify(error.toEnvelope(isWrite(method))),
    headers: {
      ...error.headers,
      'x-request-id': requestId,
      'x-trace-id': randomHex(16),
      'x-request-timestamp': new Date().toISOString(),
    },
  };
}

/** The bytes of a whole HTTP/1.1 response that closes its connection. */
export function renderRawResponse(answer: RawAnswer): string {
  const lines = [
    `HTTP/1.1 ${answer.status} ${STATUS_CODES[answer.status] ?? 'Error'}`,
    'content-type: application/json; charset=utf-8',
    `content-length: ${Buffer.byteLength(answer.body)}`,
    'connection: close',
    ...Object.entries(answer.headers).map(([name, value]) => `${name}: ${value}`),
  ];
  return `${lines.join('\r\n')}\r\n\r\n${answer.body}`;
}

/** Sends the last bytes and half-closes; the socket goes when the client closes its side or after LINGER_MS. */
export function answerAndClose(socket: Socket, bytes: string): void {
  socket.end(bytes);
  const linger = setTimeout(() => socket.destroy(), LINGER_MS);
  linger.unref();
  socket.once('close', () => clearTimeout(linger));
  socket.once('end', () => socket.destroy());
}

export interface ClientErrorLog {
  info(object: Record<string, unknown>, message: string): void;
  error(object: Record<string, unknown>, message: string): void;
}

/**
 * A fastify `clientErrorHandler` answering with `answer`'s envelope. fastify calls it with
 * itself as `this`, whose logger records each answer (never the raw bytes: they may hold a
 * token). A connection is answered once; the parser reports every later chunk too.
 */
export function createClientErrorHandler(
  answer: (request: ClientErrorRequest) => RawAnswer,
): (this: { readonly log: ClientErrorLog } | undefined, error: ClientError, socket: Socket) => void {
  const seen = new WeakSet<Socket>();
  return function handleClientError(error, socket) {
    if (seen.has(socket)) return;
    seen.add(socket);
    const code = clientErrorCode(error);
    const ended = endedRequest(socket);
    if (code === null || !socket.writable || ended === 'answered') {
      socket.destroy();
      return;
    }
    try {
      const request = describeRequest(code, ended, error);
      const answered = answer(request);
      this?.log.info(
        {
          clientError: error.code,
          code,
          status: answered.status,
          method: request.method?.slice(0, 16),
          path: request.path?.slice(0, 200),
          reqId: request.requestId,
        },
        'request refused before routing',
      );
      answerAndClose(socket, renderRawResponse(answered));
    } catch (failure) {
      // An event listener that throws takes the process down; this connection is not worth it.
      this?.log.error({ err: failure, clientError: error.code }, 'answering a request refused before routing failed');
      socket.destroy();
    }
  };
}
