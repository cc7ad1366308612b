/**
 * A raw TCP client for what no HTTP client library will send: oversized or malformed request
 * heads, broken framing, and requests written a byte at a time. It writes the given bytes, then
 * optionally keeps trickling, and records what the server sends back and when it closes its side.
 */
import { STATUS_CODES } from 'node:http';
import { connect } from 'node:net';

import { expect } from 'vitest';

import { ERROR_CATALOG, type ErrorCode } from '../../src/lib/errors/v3-error-catalog.js';

/** A step of what the client writes: bytes, or a pause. */
export type RawStep = string | Buffer | { readonly pauseMs: number };

export interface RawExchangeOptions {
  /** Written in order as soon as the connection is up. */
  readonly steps: readonly RawStep[];
  /** After the steps, write `chunk` every `everyMs` until the server answers or closes. */
  readonly trickle?: { readonly chunk: string; readonly everyMs: number };
  /** Give up (and fail) after this long without the server closing its side. */
  readonly failAfterMs?: number;
}

export interface RawResponse {
  readonly statusLine: string;
  readonly status: number;
  /** Lower-cased names; a repeated header keeps its last value. */
  readonly headers: Readonly<Record<string, string>>;
  readonly body: string;
}

export interface RawExchange {
  /** Every byte the server sent. */
  readonly received: Buffer;
  /** The first response in `received`, or null when the server sent none. */
  readonly response: RawResponse | null;
  /** ms from connecting to the first byte of the answer (null if none came). */
  readonly answeredAfterMs: number | null;
  /** ms from connecting to the server's FIN (or reset). */
  readonly closedAfterMs: number;
  /** Whether the server closed with a FIN rather than a reset. */
  readonly endedCleanly: boolean;
  /** How many trickled chunks were written before the answer. */
  readonly trickled: number;
}

/** Parses the first HTTP/1.1 response in `bytes` (its body by Content-Length), or null. */
export function parseRawResponse(bytes: Buffer): RawResponse | null {
  const headEnd = bytes.indexOf('\r\n\r\n');
  if (headEnd === -1) return null;
  const [statusLine, ...lines] = bytes.subarray(0, headEnd).toString('latin1').split('\r\n');
  const status = Number(/^HTTP\/1\.[01] (\d{3})/.exec(statusLine!)?.[1]);
  const headers: Record<string, string> = {};
  for (const line of lines) {
    const colon = line.indexOf(':');
    headers[line.slice(0, colon).trim().toLowerCase()] = line.slice(colon + 1).trim();
  }
  const length =
    headers['content-length'] === undefined ? bytes.length - headEnd - 4 : Number(headers['content-length']);
  return {
    statusLine: statusLine!,
    status,
    headers,
    body: bytes.subarray(headEnd + 4, headEnd + 4 + length).toString('utf8'),
  };
}

/** Connects to `baseUrl` (http://host:port), plays the steps and collects the answer until the server closes its side. */
export function rawExchange(baseUrl: string, options: RawExchangeOptions): Promise<RawExchange> {
  const { hostname, port } = new URL(baseUrl);
  return new Promise((resolve, reject) => {
    const started = performance.now();
    const chunks: Buffer[] = [];
    let answeredAfterMs: number | null = null;
    let trickled = 0;
    let trickleTimer: NodeJS.Timeout | undefined;
    let settled = false;
    // allowHalfOpen: the server's FIN is seen as 'end' before this side closes.
    const socket = connect({ host: hostname, port: Number(port), allowHalfOpen: true });
    const failTimer = setTimeout(
      () => finish(new Error(`the server did not close the connection within ${options.failAfterMs ?? 10_000} ms`)),
      options.failAfterMs ?? 10_000,
    );

    const finish = (error: Error | null, endedCleanly = false): void => {
      if (settled) return;
      settled = true;
      clearTimeout(failTimer);
      clearInterval(trickleTimer);
      const closedAfterMs = performance.now() - started;
      socket.destroy();
      if (error !== null) {
        reject(error);
        return;
      }
      const received = Buffer.concat(chunks);
      resolve({
        received,
        response: parseRawResponse(received),
        answeredAfterMs,
        closedAfterMs,
        endedCleanly,
        trickled,
      });
    };

    socket.on('data', (chunk: Buffer) => {
      answeredAfterMs ??= performance.now() - started;
      chunks.push(chunk);
    });
    socket.on('end', () => finish(null, true));
    // A reset after the answer still tells the test what it got; before any answer, it fails.
    socket.on('error', (error) => finish(chunks.length > 0 ? null : error));
    socket.on('close', () => finish(null));

    socket.once('connect', () => {
      void (async () => {
        for (const step of options.steps) {
          if (settled) return;
          if (typeof step === 'object' && !Buffer.isBuffer(step))
            await new Promise((wait) => setTimeout(wait, step.pauseMs));
          else if (!socket.destroyed && !socket.writableEnded) socket.write(step);
        }
        const trickle = options.trickle;
        if (trickle === undefined || settled) return;
        trickleTimer = setInterval(() => {
          if (answeredAfterMs !== null || socket.destroyed) return;
          socket.write(trickle.chunk);
          trickled += 1;
        }, trickle.everyMs);
      })();
    });
  });
}

/** How an answer is checked: a HEAD request's answer has the headers of the JSON body but no body. */
export interface RawAnswerOptions {
  readonly head?: boolean;
}

/**
 * Asserts the server answered once and closed: a whole response with Content-Type JSON, a
 * Content-Length matching the body, `Connection: close`, nothing after the body, then a FIN.
 * Returns the response and its parsed body (undefined for a HEAD request's answer).
 */
export function expectAnswerThenClose(
  exchange: RawExchange,
  options: RawAnswerOptions = {},
): {
  readonly response: RawResponse;
  readonly body: unknown;
} {
  const { response } = exchange;
  expect(
    response,
    `a response (received: ${JSON.stringify(exchange.received.toString('latin1').slice(0, 200))})`,
  ).not.toBeNull();
  expect(response!.statusLine).toBe(`HTTP/1.1 ${response!.status} ${STATUS_CODES[response!.status]}`);
  expect(response!.headers['content-type']).toBe('application/json; charset=utf-8');
  if (options.head === true) expect(response!.body, 'no body for HEAD').toBe('');
  else expect(response!.headers['content-length']).toBe(String(Buffer.byteLength(response!.body)));
  expect(response!.headers.connection).toBe('close');
  expect(exchange.received.toString('utf8').endsWith(`\r\n\r\n${response!.body}`), 'nothing after the body').toBe(true);
  expect(exchange.endedCleanly, 'the server closed its side').toBe(true);
  expect(exchange.closedAfterMs - exchange.answeredAfterMs!, 'closed right after the answer').toBeLessThan(1_000);
  return { response: response!, body: options.head === true ? undefined : (JSON.parse(response!.body) as unknown) };
}

/** A request of any method with an empty body (of `contentType`, which QUERY must have), asking the server to close after its answer. */
export function emptyRequest(method: string, target: string, contentType = 'application/json'): string {
  return `${method} ${target} HTTP/1.1\r\nHost: fxgate\r\nContent-Type: ${contentType}\r\nContent-Length: 0\r\nConnection: close\r\n\r\n`;
}

/** Asserts a raw answer is the v3 error `code` with `details`, as the catalog has it, without legacy headers, and that the connection closed. */
export function expectRawV3Answer(
  exchange: RawExchange,
  code: ErrorCode,
  details: unknown,
  options: RawAnswerOptions = {},
): RawResponse {
  const { response, body } = expectAnswerThenClose(exchange, options);
  const row = ERROR_CATALOG[code];
  expect(response.status).toBe(row.status);
  if (options.head !== true)
    expect(body).toEqual({
      error: { code, type: row.type, message: row.message, retryStrategy: expect.any(String), details },
    });
  // The ids, where the answer has them (the gateway's own 404 before routing has none).
  if (response.headers['x-request-id'] !== undefined)
    expect(response.headers['x-request-id']).toMatch(/^[A-Za-z0-9._:-]{1,128}$/);
  if (response.headers['x-trace-id'] !== undefined) expect(response.headers['x-trace-id']).toMatch(/^[0-9a-f]{32}$/);
  expect(response.headers.deprecation).toBeUndefined();
  return response;
}

/** Asserts a raw answer is exactly the v3 error `code` as the catalog has it, with its ids, and that the connection closed. */
export function expectRawV3Error(exchange: RawExchange, code: ErrorCode): void {
  const { response, body } = expectAnswerThenClose(exchange);
  const row = ERROR_CATALOG[code];
  expect(response.status).toBe(row.status);
  expect(typeof row.retryStrategy).toBe('string');
  expect(body).toEqual({
    error: { code, type: row.type, message: row.message, retryStrategy: row.retryStrategy, details: {} },
  });
  expect(response.headers['x-request-id']).toMatch(/^[A-Za-z0-9._:-]{1,128}$/);
  expect(response.headers['x-trace-id']).toMatch(/^[0-9a-f]{32}$/);
  expect(new Date(response.headers['x-request-timestamp']!).toISOString()).toBe(
    response.headers['x-request-timestamp'],
  );
}

/** Asserts a raw answer is exactly the legacy `{status: 'error', message}` under `status`, with v1's deprecation headers on v1 only, and that the connection closed. */
export function expectRawLegacyError(
  exchange: RawExchange,
  generation: 'v1' | 'v2',
  status: number,
  message: string,
  options: RawAnswerOptions = {},
): void {
  const { response, body } = expectAnswerThenClose(exchange, options);
  expect(response.status).toBe(status);
  if (options.head !== true) expect(body).toEqual({ status: 'error', message });
  expect(response.headers['x-request-id']).toMatch(/^[A-Za-z0-9._:-]{1,128}$/);
  expect(response.headers['x-trace-id']).toMatch(/^[0-9a-f]{32}$/);
  if (generation === 'v1') {
    expect(response.headers.deprecation).toBe('@1767225600');
    expect(response.headers.sunset).toBe('Thu, 31 Dec 2026 23:59:59 GMT');
    expect(response.headers.link).toContain('rel="sunset"');
  } else {
    expect(response.headers.deprecation).toBeUndefined();
    expect(response.headers.sunset).toBeUndefined();
  }
}
