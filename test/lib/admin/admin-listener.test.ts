/**
 * The admin listener: it answers the routes added to it and nothing else (a JSON 404), on its
 * own port; routes are added before it starts, each once; a failing route is a 500 that keeps
 * its error to the log.
 */
import { afterEach, describe, expect, it } from 'vitest';

import { AdminListener } from '../../../src/lib/admin/admin-listener.js';

const listeners: AdminListener[] = [];

function listener(): AdminListener {
  const admin = new AdminListener({ logLevel: 'silent' });
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
