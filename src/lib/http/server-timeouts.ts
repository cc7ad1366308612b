/**
 * How long a client may take to send a request, the same on the core's and the gateway's
 * listeners: the whole request, headers and body, must arrive within the request timeout of its
 * first byte (and a new connection's first request within it of connecting). Node's HTTP server
 * enforces it (`requestTimeout`, `headersTimeout`) and answers through the 'clientError' path,
 * where client-errors.ts writes the 408. A request that has arrived whole is never cut: a slow
 * handler or a slow answer is not the client's doing.
 */
import type { ServerOptions } from 'node:http';

/** FXGATE_REQUEST_TIMEOUT_MS unless configured, and the apps' own default. */
export const DEFAULT_REQUEST_TIMEOUT_MS = 10_000;

/** The limit of a request line and headers together: Node's default, fixed here because REQUEST_HEADERS_TOO_LARGE names it. */
export const MAX_HEADER_BYTES = 16 * 1024;

/** Node looks for requests past their deadline only this often; its default of 30 s let a deadline slip by as much. */
export function connectionsCheckingIntervalMs(requestTimeoutMs: number): number {
  return Math.min(1_000, Math.max(10, Math.ceil(requestTimeoutMs / 10)));
}

/** The fastify options (`requestTimeout`, and Node's own in `http`) of a listener bounding requests by requestTimeoutMs. */
export function serverTimeoutOptions(requestTimeoutMs: number): {
  readonly requestTimeout: number;
  readonly http: ServerOptions;
} {
  if (!Number.isSafeInteger(requestTimeoutMs) || requestTimeoutMs < 1) {
    throw new RangeError(`the request timeout must be a positive whole number of ms, got ${requestTimeoutMs}`);
  }
  return {
    // fastify sets server.requestTimeout from its own option after creating the server, so both say it.
    requestTimeout: requestTimeoutMs,
    http: {
      requestTimeout: requestTimeoutMs,
      headersTimeout: requestTimeoutMs,
      connectionsCheckingInterval: connectionsCheckingIntervalMs(requestTimeoutMs),
      maxHeaderSize: MAX_HEADER_BYTES,
    },
  };
}
