/**
 * The pieces of the HTTP server's own answers: which code each of Node's client errors gets,
 * the request line read from bytes Node refused, the v3 answer and the raw response bytes, and
 * the timeout settings every listener takes.
 */
import type { Socket } from 'node:net';

import { describe, expect, it, vi } from 'vitest';

import {
  type ClientError,
  clientErrorCode,
  createClientErrorHandler,
  renderRawResponse,
  requestLineOf,
  v3ClientErrorAnswer,
} from '../../../src/lib/http/client-errors.js';
import {
  connectionsCheckingIntervalMs,
  MAX_HEADER_BYTES,
  serverTimeoutOptions,
} from '../../../src/lib/http/server-timeouts.js';

function clientError(code: string | undefined, rawPacket?: Buffer): ClientError {
  return Object.assign(new Error('client error'), { code, rawPacket });
}

describe('clientErrorCode', () => {
  it.each([
    ['ERR_HTTP_REQUEST_TIMEOUT', 'REQUEST_TIMEOUT'],
    ['HPE_HEADER_OVERFLOW', 'REQUEST_HEADERS_TOO_LARGE'],
    ['HPE_CHUNK_EXTENSIONS_OVERFLOW', 'VALIDATION_PAYLOAD_TOO_LARGE'],
    ['HPE_INVALID_CONTENT_LENGTH', 'REQUEST_MALFORMED'],
    ['HPE_INVALID_TRANSFER_ENCODING', 'REQUEST_MALFORMED'],
    ['HPE_INVALID_METHOD', 'REQUEST_MALFORMED'],
    ['HPE_UNEXPECTED_CONTENT_LENGTH', 'REQUEST_MALFORMED'],
  ])('%s is %s', (code, expected) => {
    expect(clientErrorCode(clientError(code))).toBe(expected);
  });

  it('answers a parser error whatever its code, and no socket failure', () => {
    expect(clientErrorCode(clientError(undefined, Buffer.from('x')))).toBe('REQUEST_MALFORMED');
    for (const code of ['ECONNRESET', 'EPIPE', 'ETIMEDOUT', undefined])
      expect(clientErrorCode(clientError(code)), String(code)).toBeNull();
  });
});

describe('requestLineOf', () => {
  it.each([
    ['a request line', 'GET /v1/brokerage/o/balances HTTP/1.1\r\nHost: x\r\n\r\n', 'GET', '/v1/brokerage/o/balances'],
    ['a bad method', 'G@T /v2/x?page=1 HTTP/1.1\r\n', 'G@T', '/v2/x?page=1'],
    ['a bare LF', 'GET /v3/fx/pairs HTTP/9.9\n', 'GET', '/v3/fx/pairs'],
    ['two spaces', 'GET  /v1/double-space HTTP/1.1\r\n', 'GET', '/v1/double-space'],
    ['one word', 'HELLO\r\n', 'HELLO', undefined],
    [
      'a target longer than the header limit (read up to the limit)',
      `GET /v1/${'a'.repeat(40_000)}`,
      'GET',
      `/v1/${'a'.repeat(MAX_HEADER_BYTES - 8)}`,
    ],
  ])('%s', (_name, raw, method, target) => {
    expect(requestLineOf(Buffer.from(raw, 'latin1'))).toEqual({ method, target });
  });

  it('reads nothing from empty or blank bytes', () => {
    expect(requestLineOf(Buffer.alloc(0))).toBeNull();
    expect(requestLineOf(Buffer.from('\r\n'))).toBeNull();
  });
});

describe('the v3 answer and its bytes', () => {
  it('is the catalog envelope with the ids, and a whole response that closes', () => {
    const answer = v3ClientErrorAnswer({
      code: 'REQUEST_HEADERS_TOO_LARGE',
      method: 'GET',
      path: '/v3/fx/pairs',
      requestId: 'req_1',
    });
    expect(answer.status).toBe(431);
    expect(JSON.parse(answer.body)).toEqual({
      error: {
        code: 'REQUEST_HEADERS_TOO_LARGE',
        type: 'VALIDATION_ERROR',
        message: 'The request line and headers exceed 16 KB.',
        retryStrategy: 'FIX_AND_RESUBMIT',
        details: {},
      },
    });
    expect(answer.headers['x-request-id']).toBe('req_1');
    expect(answer.headers['x-trace-id']).toMatch(/^[0-9a-f]{32}$/);
    const bytes = renderRawResponse({ status: 408, body: '{"é":1}', headers: { 'x-request-id': 'req_2' } });
    expect(bytes).toBe(
      'HTTP/1.1 408 Request Timeout\r\ncontent-type: application/json; charset=utf-8\r\ncontent-length: 8\r\nconnection: close\r\nx-request-id: req_2\r\n\r\n{"é":1}',
    );
  });
});

describe('server timeouts', () => {
  it('bounds headers and the whole request by the timeout, checked every tenth of it and at least every second', () => {
    expect(serverTimeoutOptions(10_000)).toEqual({
      requestTimeout: 10_000,
      http: {
        requestTimeout: 10_000,
        headersTimeout: 10_000,
        connectionsCheckingInterval: 1_000,
        maxHeaderSize: 16_384,
      },
    });
    expect(connectionsCheckingIntervalMs(1_500)).toBe(150);
    expect(connectionsCheckingIntervalMs(600_000)).toBe(1_000);
    expect(connectionsCheckingIntervalMs(50)).toBe(10);
  });

  it.each([0, -1, 1.5, Number.NaN, Number.POSITIVE_INFINITY])('refuses %s', (value) => {
    expect(() => serverTimeoutOptions(value)).toThrow(RangeError);
  });
});

describe('the handler on connections that cannot take an answer', () => {
  /** A socket as Node hands it over, with what the handler reads of its bookkeeping. */
  function fakeSocket(
    state: {
      response?: { headersSent: boolean; req: { complete: boolean; method: string; url: string; headers: object } };
      incoming?: { complete: boolean };
    } = {},
  ) {
    return {
      writable: true,
      end: vi.fn(),
      destroy: vi.fn(),
      once: vi.fn(),
      _httpMessage: state.response ?? null,
      parser: { incoming: state.incoming ?? null },
    };
  }
  const log = { info: vi.fn(), error: vi.fn() };
  const timeout = clientError('ERR_HTTP_REQUEST_TIMEOUT');

  it.each([
    [
      'a response has started',
      { response: { headersSent: true, req: { complete: false, method: 'GET', url: '/', headers: {} } } },
    ],
    [
      'the in-flight response is for an earlier, whole request',
      { response: { headersSent: false, req: { complete: true, method: 'GET', url: '/', headers: {} } } },
    ],
    ["the request's own answer has gone already", { incoming: { complete: false } }],
  ])('closes without an answer when %s', (_name, state) => {
    const answer = vi.fn(v3ClientErrorAnswer);
    const socket = fakeSocket(state);
    createClientErrorHandler(answer).call({ log }, timeout, socket as unknown as Socket);
    expect(answer).not.toHaveBeenCalled();
    expect(socket.end).not.toHaveBeenCalled();
    expect(socket.destroy).toHaveBeenCalledOnce();
  });

  it('answers a request whose headers were parsed from them, once per connection', () => {
    const answer = vi.fn(v3ClientErrorAnswer);
    const socket = fakeSocket({
      response: {
        headersSent: false,
        req: { complete: false, method: 'POST', url: '/v1/x?y=1', headers: { 'x-request-id': 'mine-1' } },
      },
    });
    const handle = createClientErrorHandler(answer);
    handle.call({ log }, timeout, socket as unknown as Socket);
    handle.call({ log }, clientError('HPE_INVALID_METHOD', Buffer.from('x')), socket as unknown as Socket);
    expect(answer.mock.calls).toEqual([
      [{ code: 'REQUEST_TIMEOUT', method: 'POST', path: '/v1/x', requestId: 'mine-1' }],
    ]);
    expect(socket.end).toHaveBeenCalledOnce();
    expect(String(socket.end.mock.calls[0]![0])).toMatch(/^HTTP\/1\.1 408 Request Timeout\r\n/);
  });

  it('never throws out of the listener: a failing answer closes the connection and is logged', () => {
    const socket = fakeSocket();
    const handle = createClientErrorHandler(() => {
      throw new Error('boom');
    });
    expect(() =>
      handle.call(
        { log },
        clientError('HPE_INVALID_METHOD', Buffer.from('G@T / HTTP/1.1\r\n')),
        socket as unknown as Socket,
      ),
    ).not.toThrow();
    expect(socket.destroy).toHaveBeenCalledOnce();
    expect(log.error).toHaveBeenCalledOnce();
  });
});
