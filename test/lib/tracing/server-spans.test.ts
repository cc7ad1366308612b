/**
 * traceServerRequests on a bare fastify app, exporting over http/json to a receiver on
 * 127.0.0.1: a request's span continues the client's traceparent and tracestate and is named by
 * its route template, a 5xx is an error typed by its status, a request no route took is named by
 * its method alone, and a request without traceparent starts a trace. Nothing of the path is kept.
 */
import Fastify, { type FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { generateRequestId } from '../../../src/lib/request-id.js';
import { traceServerRequests } from '../../../src/lib/tracing/server-spans.js';
import { TRACERS } from '../../../src/lib/tracing/spans.js';
import { SPAN_KIND, traceToReceiver } from '../../support/otlp-receiver.js';

const TRACE_ID = '4bf92f3577b34da6a3ce929d0e0e4736';
const PARENT_ID = '00f067aa0ba902b7';

const traced = traceToReceiver('gateway');
let app: FastifyInstance;

beforeAll(async () => {
  app = Fastify({ genReqId: generateRequestId });
  traceServerRequests(app, TRACERS.gateway, (request) =>
    request.routeOptions.url === undefined
      ? { operation: 'unknown' }
      : { generation: 'v3', operation: `op ${request.routeOptions.url}`, route: request.routeOptions.url },
  );
  app.get('/things/:id', async () => ({ ok: true }));
  app.get('/boom', async () => {
    throw new Error('at 10.1.2.3: it broke');
  });
  await app.ready();
});
afterAll(async () => {
  await app?.close();
});

describe('traceServerRequests', () => {
  it("continues the client's trace, named by the route template, with the request's names and status", async () => {
    const response = await app.inject({
      url: '/things/secret-42?amount=98765.4321',
      headers: {
        traceparent: `00-${TRACE_ID}-${PARENT_ID}-01`,
        tracestate: 'vendor=opaque',
        'x-request-id': 'req-abc',
      },
    });
    expect(response.statusCode).toBe(200);
    await traced.flush();
    const [span] = traced.receiver.trace(TRACE_ID);
    expect(span).toMatchObject({
      parentSpanId: PARENT_ID,
      traceState: 'vendor=opaque',
      kind: SPAN_KIND.server,
      name: 'GET /things/:id',
      scope: 'fxgate.gateway',
      statusCode: 0,
      attributes: {
        'http.request.method': 'GET',
        'http.route': '/things/:id',
        'http.response.status_code': 200,
        'fxgate.api.generation': 'v3',
        'fxgate.operation': 'op /things/:id',
        'fxgate.request_id': 'req-abc',
      },
    });
    // The path's id and the query (an amount) appear nowhere; the amount's text has a dot, which no id or time has.
    expect(JSON.stringify(span)).not.toMatch(/secret-42|amount|98765\.4321/);
  });

  it('marks a 5xx an error by its status, never its message', async () => {
    const traceId = 'a'.repeat(32);
    const response = await app.inject({ url: '/boom', headers: { traceparent: `00-${traceId}-${PARENT_ID}-01` } });
    expect(response.statusCode).toBe(500);
    await traced.flush();
    const [span] = traced.receiver.trace(traceId);
    expect(span).toMatchObject({
      name: 'GET /boom',
      statusCode: 2,
      attributes: { 'http.response.status_code': 500, 'error.type': '500' },
    });
    expect(JSON.stringify(span)).not.toContain('10.1.2.3');
  });

  it('names a request no route took by its method, and starts a trace without a traceparent', async () => {
    const before = new Set(traced.receiver.spans.map((span) => span.traceId));
    const response = await app.inject({ url: '/v3/orgs/org-123/nothing' });
    expect(response.statusCode).toBe(404);
    await traced.flush();
    const span = traced.receiver.spans.find((candidate) => !before.has(candidate.traceId));
    expect(span).toMatchObject({
      name: 'GET',
      parentSpanId: '',
      attributes: { 'fxgate.operation': 'unknown', 'http.response.status_code': 404 },
    });
    expect(span!.attributes).not.toHaveProperty(['http.route']);
    expect(JSON.stringify(span)).not.toContain('org-123');
  });
});
