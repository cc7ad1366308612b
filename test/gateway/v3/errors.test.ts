import Fastify, { type FastifyInstance } from 'fastify';
import { Client, request } from 'undici';
import { afterEach, describe, expect, it } from 'vitest';

import { handleGatewayError } from '../../../src/gateway/v3/errors.js';

type LogLine = { level: number; msg: string; err?: { message?: string } };

/** A fastify server with the gateway's error handler and two routes that fail. */
async function serverWithHandler(lines: LogLine[]): Promise<{ app: FastifyInstance; url: string }> {
  const app = Fastify({
    logger: { level: 'info', stream: { write: (line: string) => void lines.push(JSON.parse(line) as LogLine) } },
  });
  app.setErrorHandler(handleGatewayError);
  app.get('/fails', async () => {
    throw new Error('boom');
  });
  app.post('/echo', async (req) => req.body);
  app.setNotFoundHandler(async () => {
    throw new Error('the routes above answer; a 404 here means the error handler ran first');
  });
  // Fails only once its client has gone, as a proxied stream aborted by the client's hang-up does.
  app.get('/fails-after-hang-up', async (req) => {
    await new Promise((resolve) => req.raw.socket.once('close', resolve));
    throw new Error('aborted with the client');
  });
  return { app, url: await app.listen({ host: '127.0.0.1', port: 0 }) };
}

describe('the gateway error handler', () => {
  let server: { app: FastifyInstance } | undefined;
  afterEach(async () => {
    await server?.app.close();
  });

  it('answers an unhandled error with the v3 INTERNAL_ERROR envelope and logs it as an error', async () => {
    const lines: LogLine[] = [];
    const started = await serverWithHandler(lines);
    server = started;
    const response = await request(`${started.url}/fails`);
    expect(response.statusCode).toBe(500);
    expect(await response.body.json()).toMatchObject({
      error: { code: 'INTERNAL_ERROR', retryStrategy: 'RETRY_WITH_BACKOFF' },
    });
    expect(lines.filter((line) => line.level === 50).map((line) => [line.msg, line.err?.message])).toEqual([
      ['gateway request failed', 'boom'],
    ]);
  });

  it('logs a failure after the client hung up at info, and sends nothing', async () => {
    const lines: LogLine[] = [];
    const started = await serverWithHandler(lines);
    server = started;
    const client = new Client(started.url);
    const abort = new AbortController();
    const pending = client.request({ method: 'GET', path: '/fails-after-hang-up', signal: abort.signal });
    await expect.poll(() => lines.some((line) => line.msg === 'incoming request')).toBe(true);
    abort.abort();
    await expect(pending).rejects.toThrow();
    await client.destroy();
    await expect
      .poll(() => lines.some((line) => line.msg === 'client closed the connection before the answer'))
      .toBe(true);
    const hungUp = lines.find((line) => line.msg === 'client closed the connection before the answer')!;
    expect([hungUp.level, hungUp.err?.message]).toEqual([30, 'aborted with the client']);
    expect(lines.filter((line) => line.level >= 50)).toEqual([]);
  });

  it.each([
    [
      'a Content-Type it cannot parse, on a path with no route',
      'POST',
      '/nowhere',
      { 'content-type': 'application/json, text/plain' },
      '{}',
      404,
      'ROUTE_NOT_FOUND',
    ],
    [
      'malformed JSON, on a path with no route',
      'DELETE',
      '/',
      { 'content-type': 'application/json' },
      '{',
      404,
      'ROUTE_NOT_FOUND',
    ],
    [
      'a Content-Type it cannot parse, on a route',
      'POST',
      '/echo',
      { 'content-type': 'application/json, text/plain' },
      '{}',
      400,
      'VALIDATION_CONTENT_TYPE',
    ],
    [
      'malformed JSON, on a route',
      'POST',
      '/echo',
      { 'content-type': 'application/json' },
      '{',
      400,
      'VALIDATION_BODY_FAILED',
    ],
    [
      'a body over the limit, on a route',
      'POST',
      '/echo',
      { 'content-type': 'application/json' },
      `"${'x'.repeat(1_100_000)}"`,
      413,
      'VALIDATION_PAYLOAD_TOO_LARGE',
    ],
  ] as const)(
    "answers what fastify refused before a handler ran (%s) as the client's error, never a 500",
    async (_name, method, path, headers, body, status, code) => {
      const lines: LogLine[] = [];
      const started = await serverWithHandler(lines);
      server = started;
      const response = await request(`${started.url}${path}`, { method, headers, body });
      expect(response.statusCode).toBe(status);
      expect(await response.body.json()).toMatchObject({ error: { code } });
      expect(lines.filter((line) => line.level >= 50)).toEqual([]);
    },
  );
});
