/**
 * CONNECT asks a proxy for a tunnel, which no fxgate listener is. Node never routes it: it hands
 * the request and its raw socket to the server's 'connect' event, and with no listener there it
 * drops the connection without a word. Each listener answers it here instead, as it answers any
 * method its target does not serve (the caller builds the answer in its generation's envelope:
 * 405 with `Allow` where routes serve other methods, its 404 where none does), then closes the
 * connection: nothing that follows on it is read as HTTP. Part of lib's HTTP edge.
 */
import type { IncomingMessage, Server } from 'node:http';
import type { Socket } from 'node:net';
import type { Duplex } from 'node:stream';

import { generateRequestId } from '../request-id.js';
import { answerAndClose, type ClientErrorLog, type RawAnswer, renderRawResponse } from './client-errors.js';

/** What is known of a CONNECT request. */
export interface ConnectRequest {
  /** The request target as sent: `host:port` for a tunnel, or a path a client put there. */
  readonly target: string;
  /** The target's path, without its query, when it is one (starts with `/`); undefined for `host:port`. */
  readonly path: string | undefined;
  /** The client's X-Request-Id when well-formed, else a fresh one. */
  readonly requestId: string;
  /** The request's headers (Authorization, for a listener that asks for a token). */
  readonly headers: IncomingMessage['headers'];
}

/** The path of a request target that is one. */
export function connectPathOf(target: string): string | undefined {
  return target.startsWith('/') ? target.split('?', 1)[0] : undefined;
}

/** Answers every CONNECT request on `server` with `answer`'s envelope, then closes its connection. */
export function answerConnectRequests(
  server: Server,
  answer: (request: ConnectRequest) => RawAnswer,
  log: ClientErrorLog,
): void {
  server.on('connect', (request: IncomingMessage, socket: Duplex) => {
    try {
      const target = request.url ?? '';
      const connect: ConnectRequest = {
        target,
        path: connectPathOf(target),
        requestId: generateRequestId(request),
        headers: request.headers,
      };
      const answered = answer(connect);
      log.info(
        { method: 'CONNECT', target: target.slice(0, 200), status: answered.status, reqId: connect.requestId },
        'CONNECT refused: no listener here is a proxy',
      );
      answerAndClose(socket as Socket, renderRawResponse(answered));
    } catch (failure) {
      // An event listener that throws takes the process down; this connection is not worth it.
      log.error({ err: failure }, 'answering a CONNECT request failed');
      socket.destroy();
    }
  });
}
