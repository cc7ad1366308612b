/**
 * The admin listener: it answers the routes added to it and nothing else (a JSON 404), on its
 * own port; routes are added before it starts, each once; a failing route is a 500 that keeps
 * its error to the log. With a token, every route but one checking its own credential needs it,
 * and off loopback it does not listen without one. Bodies are read with the strict JSON parse.
 */
import { METHODS } from 'node:http';

import { Registry } from 'prom-client';
import { afterEach, describe, expect, it } from 'vitest';

import { AdminListener, type AdminListenerOptions } from '../../../src/lib/admin/admin-listener.js';
import { AdminTokenRequiredError } from '../../../src/lib/errors/internal-errors.js';
import { emptyRequest, expectAnswerThenClose, rawExchange } from '../../support/raw-http.js';

const listeners: AdminListener[] = [];

function listener(options: AdminListenerOptions = {}): AdminListener {
  const admin = new AdminListener({ logLevel: 'silent', ...options });
  listeners.push(admin);
  return admin;
}

afterEach(async () => {
  for (const admin of listeners.splice(0)) await admin.close();
});

describe('AdminListener', () => {
  it('answers its routes on its own port and nothing else', async () => {
    const admin = listener();
    admin.add({ method: 'GET', url: '/admin/things', handler: async () => ({ things: 2 }) });
    admin.add({
      method: 'GET',
      url: '/metrics',
      handler: async (_request, reply) => reply.type('text/plain').send('up 1\n'),
    });
    expect(admin.routeNames).toEqual(['GET /admin/things', 'GET /metrics']);
    const url = await admin.listen('127.0.0.1', 0);
    const things = await fetch(`${url}/admin/things`);
    expect([things.status, await things.json()]).toEqual([200, { things: 2 }]);
    expect(await (await fetch(`${url}/metrics`)).text()).toBe('up 1\n');
    for (const [method, path] of [
      ['GET', '/'],
      ['GET', '/healthz'],
      ['GET', '/admin'],
      ['POST', '/admin/things'],
      ['HEAD', '/admin/things'],
      ['GET', '/v3/fx/pairs'],
    ] as const) {
      const answer = await fetch(`${url}${path}`, { method });
      expect(answer.status, `${method} ${path}`).toBe(404);
      if (method !== 'HEAD') expect(await answer.json()).toMatchObject({ status: 404, error: 'not_found' });
    }
  });

  it('takes each route once, and none after it is built', async () => {
    const admin = listener();
    admin.add({ method: 'GET', url: '/a', handler: async () => ({}) });
    expect(() => admin.add({ method: 'GET', url: '/a', handler: async () => ({}) })).toThrow(/added twice/);
    await admin.build();
    expect(() => admin.add({ method: 'GET', url: '/b', handler: async () => ({}) })).toThrow(
      /after the admin listener was built/,
    );
  });

  it('answers a failing route with a 500 that does not show the error', async () => {
    const admin = listener();
    admin.add({
      method: 'GET',
      url: '/admin/broken',
      handler: async () => {
        throw new Error('password=hunter2');
      },
    });
    const app = await admin.build();
    const answer = await app.inject({ method: 'GET', url: '/admin/broken' });
    expect(answer.statusCode).toBe(500);
    expect(answer.body).not.toContain('hunter2');
    expect(answer.json()).toMatchObject({ status: 500, error: 'internal_error' });
  });
});

describe('AdminListener with FXGATE_ADMIN_TOKEN', () => {
  const TOKEN = 'r4Qm8sT1vW0xY2zA5bC7dE9fG3hJ6kL8nP0q';

  /** A listener with the routes the servers add (stand-ins for their handlers), one of them checking its own credential. */
  async function withRoutes(): Promise<string> {
    const admin = listener({ token: TOKEN });
    admin.addMetrics(new Registry());
    admin.add({ method: 'GET', url: '/admin/usage', handler: async () => ({ since: null, rows: [] }) });
    admin.add({ method: 'GET', url: '/admin/shadow/report', handler: async () => ({ since: null, operations: [] }) });
    admin.add({
      method: 'POST',
      url: '/admin/cli/keys/list',
      ownCredential: true,
      handler: async (request, reply) =>
        request.headers.authorization === 'Bearer own-token' ? { own: true } : reply.code(401).send({ own: false }),
    });
    return admin.listen('127.0.0.1', 0);
  }

  it.each(['GET /metrics', 'GET /admin/usage', 'GET /admin/shadow/report', 'GET /admin/nothing', 'POST /metrics'])(
    '%s: 401 with WWW-Authenticate and a JSON body without the token or with a wrong one; served with the right one',
    async (route) => {
      const url = await withRoutes();
      const [method, path] = route.split(' ') as [string, string];
      for (const authorization of [undefined, 'Bearer wrong', `Bearer ${TOKEN}x`, TOKEN, `Basic ${TOKEN}`]) {
        const refused = await fetch(`${url}${path}`, {
          method,
          headers: authorization === undefined ? {} : { authorization },
        });
        expect([refused.status, refused.headers.get('www-authenticate')], String(authorization)).toEqual([
          401,
          'Bearer',
        ]);
        expect(refused.headers.get('content-type')).toMatch(/^application\/json/);
        const body = (await refused.json()) as Record<string, unknown>;
        expect(body).toEqual({ status: 401, error: 'unauthorized', message: expect.stringMatching(/Bearer/) });
        expect(JSON.stringify(body)).not.toContain(TOKEN);
      }
      const served = await fetch(`${url}${path}`, { method, headers: { authorization: `Bearer ${TOKEN}` } });
      const known = !path.endsWith('nothing') && method === 'GET';
      expect(served.status).toBe(known ? 200 : 404);
      await served.arrayBuffer();
    },
  );

  it('leaves a route that checks its own credential to it: the admin token is neither asked for nor taken there', async () => {
    const url = await withRoutes();
    const own = await fetch(`${url}/admin/cli/keys/list`, {
      method: 'POST',
      headers: { authorization: 'Bearer own-token' },
    });
    expect([own.status, await own.json()]).toEqual([200, { own: true }]);
    const admin = await fetch(`${url}/admin/cli/keys/list`, {
      method: 'POST',
      headers: { authorization: `Bearer ${TOKEN}` },
    });
    expect([admin.status, await admin.json()]).toEqual([401, { own: false }]);
  });

  it('listens on loopback without a token, and refuses any other address without one before it listens', async () => {
    const open = listener();
    open.add({ method: 'GET', url: '/admin/usage', handler: async () => ({ rows: [] }) });
    expect((await fetch(`${await open.listen('127.0.0.1', 0)}/admin/usage`)).status).toBe(200);
    for (const host of ['0.0.0.0', '::', '192.0.2.1']) {
      const exposed = listener();
      await expect(exposed.listen(host, 0)).rejects.toBeInstanceOf(AdminTokenRequiredError);
      // Refused before it was even built: nothing listens.
      expect((await exposed.build()).server.listening).toBe(false);
    }
  });

  it('reads JSON bodies strictly: a repeated key is a 400 naming it', async () => {
    const admin = listener();
    admin.add({ method: 'POST', url: '/admin/echo', handler: async (request) => request.body });
    const url = await admin.listen('127.0.0.1', 0);
    const post = (body: string) =>
      fetch(`${url}/admin/echo`, { method: 'POST', headers: { 'content-type': 'application/json' }, body });
    const once = await post('{"org":"a"}');
    expect([once.status, await once.json()]).toEqual([200, { org: 'a' }]);
    const twice = await post('{"org":"a","org":"a"}');
    expect(twice.status).toBe(400);
    expect(((await twice.json()) as { message: string }).message).toMatch(/^org: the key "org" appears more than once/);
  });
});

describe('AdminListener and every method Node accepts', () => {
  it('answers a method no route has with its JSON 404, CONNECT included, and the connection ends', async () => {
    const admin = listener();
    admin.add({ method: 'GET', url: '/admin/things', handler: async () => ({ things: 2 }) });
    const url = await admin.listen('127.0.0.1', 0);
    for (const method of METHODS.filter((m) => m !== 'GET')) {
      for (const path of ['/admin/things', '/nowhere']) {
        const { response, body } = expectAnswerThenClose(
          // Text: an empty JSON body is a 400 of its own.
          await rawExchange(url, { steps: [emptyRequest(method, path, 'text/plain')] }),
          { head: method === 'HEAD' },
        );
        expect([method, path, response.status]).toEqual([method, path, 404]);
        if (method !== 'HEAD')
          expect(body).toEqual({
            status: 404,
            error: 'not_found',
            message: `The admin listener has no route ${method} ${path}`,
          });
      }
    }
  });

  it('asks a CONNECT for the token first, when it has one', async () => {
    const token = 'c3Vw5Xy7Za9Bc1De3Fg5Hi7Jk9Lm1No3';
    const admin = listener({ token });
    const url = await admin.listen('127.0.0.1', 0);
    const connect = (authorization: string) =>
      rawExchange(url, {
        steps: [`CONNECT /metrics HTTP/1.1\r\nHost: fxgate\r\n${authorization}\r\n`],
      });
    const refused = expectAnswerThenClose(await connect(''));
    expect([refused.response.status, refused.response.headers['www-authenticate']]).toEqual([401, 'Bearer']);
    expect(refused.body).toMatchObject({ status: 401, error: 'unauthorized' });
    const known = expectAnswerThenClose(await connect(`Authorization: Bearer ${token}\r\n`));
    expect([known.response.status, known.body]).toEqual([
      404,
      { status: 404, error: 'not_found', message: 'The admin listener has no route CONNECT /metrics' },
    ]);
  });
});
