/**
 * src/lib/http/readiness.ts on a fastify app: every part asked at once, each bounded by the
 * timeout; an `unready` part down is 503 `unavailable`, a `degraded` one alone 200 `degraded`,
 * the body naming each part; each part down is logged with why; and from the stop signal on 503
 * `draining` without asking any part. The parts here are functions the test controls: what each
 * real part's outage does is tested on real servers in test/core/routes/health.test.ts and
 * test/gateway/health.test.ts.
 */
import { Writable } from 'node:stream';

import Fastify, { type FastifyInstance } from 'fastify';
import { afterEach, describe, expect, it } from 'vitest';

import { assessReadiness, type ReadinessParts, registerReadinessRoutes } from '../../../src/lib/http/readiness.js';

const up = async (): Promise<void> => {};
const down = async (): Promise<void> => {
  throw new Error('connection refused');
};
/** A part that never answers. */
const silent = (): Promise<void> => new Promise(() => {});

const TIMEOUT_MS = 200;
/** This much more than the timeout is the test machine's slack. */
const MARGIN_MS = 500;

describe('assessReadiness', () => {
  it('is ready, 200, when every part answers', async () => {
    const parts: ReadinessParts = {
      database: { check: up, whenDown: 'unready' },
      store: { check: up, whenDown: 'degraded' },
    };
    expect(await assessReadiness(parts, TIMEOUT_MS)).toEqual({
      statusCode: 200,
      report: { status: 'ready', checks: { database: 'up', store: 'up' } },
      failures: {},
    });
  });

  it('is degraded, 200, when only parts that degrade are down, naming them and why', async () => {
    const parts: ReadinessParts = {
      database: { check: up, whenDown: 'unready' },
      store: { check: down, whenDown: 'degraded' },
    };
    const answer = await assessReadiness(parts, TIMEOUT_MS);
    expect([answer.statusCode, answer.report]).toEqual([
      200,
      { status: 'degraded', checks: { database: 'up', store: 'down' } },
    ]);
    expect(answer.failures).toEqual({ store: new Error('connection refused') });
  });

  it('is unavailable, 503, when a part that makes it unready is down, whatever the others', async () => {
    for (const store of [up, down]) {
      const parts: ReadinessParts = {
        database: { check: down, whenDown: 'unready' },
        store: { check: store, whenDown: 'degraded' },
      };
      const answer = await assessReadiness(parts, TIMEOUT_MS);
      expect(answer.statusCode).toBe(503);
      expect(answer.report).toEqual({
        status: 'unavailable',
        checks: { database: 'down', store: store === up ? 'up' : 'down' },
      });
    }
  });

  it('asks every part at once and counts one that does not answer within the timeout as down', async () => {
    const parts: ReadinessParts = {
      upstream: { check: silent, whenDown: 'unready' },
      store: { check: silent, whenDown: 'degraded' },
      database: { check: up, whenDown: 'unready' },
    };
    const started = Date.now();
    const answer = await assessReadiness(parts, TIMEOUT_MS);
    // Two silent parts, asked at once: one timeout, not two.
    expect(Date.now() - started).toBeLessThan(TIMEOUT_MS + MARGIN_MS);
    expect(answer.report).toEqual({
      status: 'unavailable',
      checks: { upstream: 'down', store: 'down', database: 'up' },
    });
    expect(String(answer.failures.upstream)).toContain(`no answer within ${TIMEOUT_MS} ms`);
  });
});

describe('registerReadinessRoutes', () => {
  let app: FastifyInstance;
  afterEach(async () => app?.close());

  /** An app with the routes, logging at warn into `lines`. */
  function appWith(parts: ReadinessParts, draining: () => boolean, lines: Record<string, unknown>[]) {
    const stream = new Writable({
      write(chunk: Buffer, _encoding, done) {
        lines.push(JSON.parse(chunk.toString()) as Record<string, unknown>);
        done();
      },
    });
    app = Fastify({ logger: { level: 'warn', stream } });
    registerReadinessRoutes(app, parts, { timeoutMs: TIMEOUT_MS, draining });
    return app;
  }

  it('answers /readyz with the assessment, logs each part down, and keeps /healthz live', async () => {
    const lines: Record<string, unknown>[] = [];
    const served = appWith(
      { database: { check: up, whenDown: 'unready' }, store: { check: down, whenDown: 'degraded' } },
      () => false,
      lines,
    );
    const ready = await served.inject('/readyz');
    expect([ready.statusCode, ready.json()]).toEqual([
      200,
      { status: 'degraded', checks: { database: 'up', store: 'down' } },
    ]);
    expect(lines.map((line) => [line.level, line.part, line.msg, (line.err as { message?: string }).message])).toEqual([
      [40, 'store', 'dependency is down: serving degraded', 'connection refused'],
    ]);
    expect((await served.inject('/healthz')).json()).toEqual({ status: 'ok' });
  });

  it('answers 503 draining from the stop signal on without asking any part', async () => {
    let draining = false;
    let asked = 0;
    const counted = async (): Promise<void> => {
      asked++;
    };
    const served = appWith({ database: { check: counted, whenDown: 'unready' } }, () => draining, []);
    expect((await served.inject('/readyz')).statusCode).toBe(200);
    expect(asked).toBe(1);
    draining = true;
    const drained = await served.inject('/readyz');
    expect([drained.statusCode, drained.json()]).toEqual([503, { status: 'draining' }]);
    expect(asked).toBe(1);
    expect((await served.inject('/healthz')).statusCode).toBe(200);
  });
});
