/**
 * The answer families of lib/metrics/series.ts: the two families a server keeps of its answers,
 * named by its prefix and registered first, counted by status class only when the registry is
 * read, and a route's onResponse hook counting into the series it was given.
 */
import Fastify from 'fastify';
import { Registry } from 'prom-client';
import { afterEach, describe, expect, it } from 'vitest';

import { AnswerFamilies, answerHook, appendOnResponse } from '../../../src/lib/metrics/series.js';
import { parsePrometheusText, sampleValue } from '../../support/prometheus-text.js';

const apps: ReturnType<typeof Fastify>[] = [];
afterEach(async () => {
  for (const app of apps.splice(0)) await app.close();
});

function families(): { registry: Registry; answers: AnswerFamilies } {
  const registry = new Registry();
  const answers = new AnswerFamilies({
    registry,
    prefix: 'fxgate_test_',
    labelNames: ['operation'],
    requestsHelp: 'Requests answered, by operation and status class.',
  });
  return { registry, answers };
}

describe('the answer families', () => {
  it('registers the requests counter and the duration histogram by the prefix, in that order', async () => {
    const { registry } = families();
    const metrics = await registry.getMetricsAsJSON();
    expect(metrics.map((metric) => [metric.name, metric.type])).toEqual([
      ['fxgate_test_requests_total', 'counter'],
      ['fxgate_test_request_duration_seconds', 'histogram'],
    ]);
    expect(metrics[0]!.help).toBe('Requests answered, by operation and status class.');
    expect(metrics[1]!.help).toBe('Time from routing a request to the last byte of its answer, in seconds.');
  });

  it("counts a series' answers by status class when the registry is read, each flush once", async () => {
    const { registry, answers } = families();
    const series = answers.seriesFor(['GET /v3/fx/pairs']);
    series.requests.inc(200);
    series.requests.inc(204);
    series.requests.inc(429);
    series.duration.observe(0.002);
    const first = parsePrometheusText(await registry.metrics());
    const labels = (statusClass: string) => ({ operation: 'GET /v3/fx/pairs', status_class: statusClass });
    expect(sampleValue(first, 'fxgate_test_requests_total', labels('2xx'))).toBe(2);
    expect(sampleValue(first, 'fxgate_test_requests_total', labels('4xx'))).toBe(1);
    expect(sampleValue(first, 'fxgate_test_request_duration_seconds_count', { operation: 'GET /v3/fx/pairs' })).toBe(1);
    series.requests.inc(500);
    const second = parsePrometheusText(await registry.metrics());
    expect(sampleValue(second, 'fxgate_test_requests_total', labels('2xx'))).toBe(2);
    expect(sampleValue(second, 'fxgate_test_requests_total', labels('5xx'))).toBe(1);
  });

  it('counts every answer of a route in the series its hook was given', async () => {
    const { registry, answers } = families();
    const app = Fastify();
    apps.push(app);
    app.addHook('onRoute', (route) => appendOnResponse(route, answerHook(answers.seriesFor([route.url]))));
    app.get('/ok', async () => ({ ok: true }));
    app.get('/gone', async (_request, reply) => reply.code(410).send({ gone: true }));
    await app.inject({ method: 'GET', url: '/ok' });
    await app.inject({ method: 'GET', url: '/ok' });
    await app.inject({ method: 'GET', url: '/gone' });
    const text = parsePrometheusText(await registry.metrics());
    expect(sampleValue(text, 'fxgate_test_requests_total', { operation: '/ok', status_class: '2xx' })).toBe(2);
    expect(sampleValue(text, 'fxgate_test_requests_total', { operation: '/gone', status_class: '4xx' })).toBe(1);
    expect(sampleValue(text, 'fxgate_test_request_duration_seconds_count', { operation: '/ok' })).toBe(2);
  });
});
