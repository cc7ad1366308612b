/**
 * GET /metrics of the admin listener: every part's registry served together after the
 * process's default metrics (collected once per process however many listeners there are, the
 * GC durations left out), a
 * registry whose names another already has refused when it is added, the text well formed and
 * prom-client's own; and a gauge read from the database at scrape time reports NaN when the
 * read is too slow or fails, rather than holding the scrape.
 */
import { Counter, Registry } from 'prom-client';
import { afterEach, describe, expect, it } from 'vitest';

import { AdminListener } from '../../../src/lib/admin/admin-listener.js';
import { MetricsExposition, processMetrics } from '../../../src/lib/metrics/exposition.js';
import { gaugeReadOnScrape, readWithin, STATUS_CLASSES, statusClassIndex } from '../../../src/lib/metrics/series.js';
import { parsePrometheusText, sampleValue } from '../../support/prometheus-text.js';

const listeners: AdminListener[] = [];
afterEach(async () => {
  for (const admin of listeners.splice(0)) await admin.close();
});

function part(name: string): { registry: Registry; counter: Counter } {
  const registry = new Registry();
  return {
    registry,
    counter: new Counter({ name, help: `${name} help`, labelNames: ['kind'], registers: [registry] }),
  };
}

describe('the metrics of the admin listener', () => {
  it('serves every part on one GET /metrics, the process metrics once', async () => {
    const one = part('fxgate_one_total');
    const two = part('fxgate_two_total');
    one.counter.labels('a').inc(2);
    two.counter.labels('b').inc();
    const admins = [new AdminListener({ logLevel: 'silent' }), new AdminListener({ logLevel: 'silent' })];
    listeners.push(...admins);
    admins[0]!.addMetrics(one.registry);
    admins[0]!.addMetrics(two.registry);
    admins[1]!.addMetrics(part('fxgate_three_total').registry);
    expect(admins[0]!.routeNames).toEqual(['GET /metrics']);
    const url = await admins[0]!.listen('127.0.0.1', 0);
    await admins[1]!.listen('127.0.0.1', 0);
    const response = await fetch(`${url}/metrics`);
    expect(response.headers.get('content-type')).toBe('text/plain; version=0.0.4; charset=utf-8');
    const families = parsePrometheusText(await response.text());
    expect(sampleValue(families, 'fxgate_one_total', { kind: 'a' })).toBe(2);
    expect(sampleValue(families, 'fxgate_two_total', { kind: 'b' })).toBe(1);
    expect(families.has('fxgate_three_total')).toBe(false);
    // prom-client's default metrics, but for the GC durations (their GC tracking costs every collection).
    for (const name of [
      'process_cpu_user_seconds_total',
      'process_resident_memory_bytes',
      'nodejs_eventloop_lag_p99_seconds',
      'nodejs_heap_space_size_used_bytes',
      'nodejs_version_info',
    ])
      expect(families.has(name), name).toBe(true);
    expect(families.has('nodejs_gc_duration_seconds')).toBe(false);
    // The same registry of process metrics for the whole process.
    expect(processMetrics()).toBe(processMetrics());
  });

  it('refuses a registry whose metric names are taken, and the same registry twice', () => {
    const exposition = new MetricsExposition();
    const one = part('fxgate_clash_total');
    exposition.add(one.registry);
    expect(() => exposition.add(one.registry)).toThrow(/exposed already/);
    expect(() => exposition.add(part('fxgate_clash_total').registry)).toThrow(/fxgate_clash_total/);
    expect(() => exposition.add(processMetrics())).toThrow(/exposed already/);
  });

  it('reads a gauge on scrape within its timeout, NaN past it or on failure', async () => {
    const registry = new Registry();
    let read: () => Promise<number> = async () => 7;
    gaugeReadOnScrape({ name: 'fxgate_backlog', help: 'h', registry, read: () => read(), timeoutMs: 50 });
    const value = async () => sampleValue(parsePrometheusText(await registry.metrics()), 'fxgate_backlog');
    expect(await value()).toBe(7);
    read = () => new Promise((resolve) => setTimeout(resolve, 500, 8));
    const started = performance.now();
    expect(await value()).toBeNaN();
    expect(performance.now() - started).toBeLessThan(400);
    read = () => Promise.reject(new Error('database away'));
    expect(await value()).toBeNaN();
    expect(await readWithin(async () => 'x', 50)).toBe('x');
  });

  it('gives a status its class', () => {
    expect(
      [100, 200, 204, 301, 404, 429, 500, 503, 599, 700].map((status) => STATUS_CLASSES[statusClassIndex(status)]),
    ).toEqual(['1xx', '2xx', '2xx', '3xx', '4xx', '4xx', '5xx', '5xx', '5xx', '5xx']);
  });
});
