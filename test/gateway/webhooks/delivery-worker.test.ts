/**
 * The gateway's legacy delivery worker on both databases (PostgreSQL locks its rows, PGlite
 * leases them), with a fetcher that records what it is sent and an injected clock, so retries
 * are checked by moving time instead of waiting: the signed body, every attempt recorded, the
 * backoff schedule and the deadline, a removed subscription, two workers never making the same
 * attempt, a stop during an attempt, and a dead process's leases released at start-up. Where it
 * sends, it is real: undici through its own pools to a receiver on loopback, names resolved by a
 * test resolver, refused destinations never reaching a socket.
 */
import { randomBytes } from 'node:crypto';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';

import { LegacyDeliveryWorker } from '../../../src/gateway/webhooks/delivery-worker.js';
import { addSubscription } from '../../../src/gateway/webhooks/subscriptions.js';
import type { Mode } from '../../../src/lib/auth/credential-vocabulary.js';
import type { Database } from '../../../src/lib/db/database.js';
import { newUuid } from '../../../src/lib/ids.js';
import { webhookPolicies } from '../../../src/lib/net/destination-policy.js';
import { SealingKeyring } from '../../../src/lib/secrets/sealing-keyring.js';
import type { WebhookFetcher, WebhookRequest } from '../../../src/lib/webhooks/delivery-attempt.js';
import { DEFAULT_RETRY_POLICY, retryDelayFor } from '../../../src/lib/webhooks/retry-schedule.js';
import { verifyLegacyWebhook } from '../../../src/lib/webhooks/signature.js';
import { DATABASE_DRIVERS, type TestDatabase } from '../../support/databases.js';
import { recordConnections, testResolver } from '../../support/outbound.js';

const HOUR = 3_600_000;

describe.each(DATABASE_DRIVERS)('the legacy delivery worker on $driver', ({ driver, create }) => {
  let database: TestDatabase;
  let db: Database;
  const keyring = SealingKeyring.of([randomBytes(32)]);
  let clock = new Date();
  const workers: LegacyDeliveryWorker[] = [];

  beforeAll(async () => {
    database = await create();
    db = database.db;
  });
  afterEach(async () => {
    await Promise.all(workers.splice(0).map((worker) => worker.stop()));
    await db.query(`UPDATE legacy_webhook_deliveries SET status = 'GAVE_UP' WHERE status = 'PENDING'`);
  });
  afterAll(async () => database?.drop());

  /** Answers each request with the status `answer` gives, after `delayMs`; records it. */
  function fetcher(answer: (request: WebhookRequest) => number | Error = () => 200, delayMs = 0) {
    const sent: WebhookRequest[] = [];
    const fetch: WebhookFetcher = async (request) => {
      sent.push(request);
      if (delayMs > 0) {
        await new Promise<void>((resolve, reject) => {
          const timer = setTimeout(resolve, delayMs);
          request.signal.addEventListener('abort', () => {
            clearTimeout(timer);
            reject(new Error('aborted'));
          });
        });
      }
      const outcome = answer(request);
      if (outcome instanceof Error) throw outcome;
      return { statusCode: outcome };
    };
    return { sent, fetch };
  }

  function worker(fetch: WebhookFetcher, random: () => number = () => 0): LegacyDeliveryWorker {
    const made = new LegacyDeliveryWorker({
      db,
      keyring,
      fetcher: fetch,
      now: () => clock,
      random,
      options: { requestTimeoutMs: 2_000 },
    });
    workers.push(made);
    return made;
  }

  /** A subscription (of `target`) with `count` events waiting for it; returns its secret and delivery ids. */
  async function pending(
    count = 1,
    at: Date = clock,
    target: { readonly mode: Mode; readonly url: string } = { mode: 'sandbox', url: 'https://receiver.example/hooks' },
  ): Promise<{ subscriptionId: string; secret: string; deliveryIds: string[]; bodies: string[] }> {
    const { subscription, secret } = await addSubscription(
      db,
      keyring,
      { orgId: newUuid(), mode: target.mode, url: target.url, events: ['deposits'], at },
      webhookPolicies(),
    );
    const deliveryIds: string[] = [];
    const bodies: string[] = [];
    for (let index = 0; index < count; index += 1) {
      const eventId = newUuid();
      const body = `{"eventId":"${eventId}","type":"deposits","message":"Completed Deposits","timestamp":"${at.toISOString()}","data":[{"amount":1${index}.50}]}`;
      await db.query(
        `INSERT INTO legacy_webhook_events (id, v3_event_id, org_id, mode, v3_event_type, legacy_event, body, created_at, received_at)
         VALUES ($1, $2, $3, $6, 'deposit.completed', 'deposits', $4, $5, $5)`,
        [eventId, `evt_${eventId.replaceAll('-', '')}`, subscription.orgId, body, at, target.mode],
      );
      const { rows } = await db.query<{ id: string }>(
        `INSERT INTO legacy_webhook_deliveries (event_id, subscription_id, status, next_attempt_at, created_at) VALUES ($1, $2, 'PENDING', $3, $3) RETURNING id::text AS id`,
        [eventId, subscription.id, at],
      );
      deliveryIds.push(rows[0]!.id);
      bodies.push(body);
    }
    return { subscriptionId: subscription.id, secret, deliveryIds, bodies };
  }

  async function delivery(id: string) {
    const { rows } = await db.query<{
      status: string;
      attempts: number;
      next_attempt_at: Date;
      delivered_at: Date | null;
      leased_until: Date | null;
    }>(
      'SELECT status, attempts, next_attempt_at, delivered_at, leased_until FROM legacy_webhook_deliveries WHERE id = $1',
      [id],
    );
    return rows[0]!;
  }

  async function attempts(id: string) {
    const { rows } = await db.query<{
      attempted_at: Date;
      status_code: number | null;
      error: string | null;
      duration_ms: number;
    }>(
      'SELECT attempted_at, status_code, error, duration_ms FROM legacy_webhook_delivery_attempts WHERE delivery_id = $1 ORDER BY id',
      [id],
    );
    return rows;
  }

  it(`claims ${driver === 'postgres' ? 'with row locks' : 'with leases'}`, () => {
    expect(worker(fetcher().fetch).options.claim).toBe(driver === 'postgres' ? 'lock' : 'lease');
  });

  it('POSTs the stored body with X-Webhook-Signature alone; a 2xx is DELIVERED, the attempt recorded', async () => {
    clock = new Date();
    const { secret, deliveryIds, bodies } = await pending();
    const { sent, fetch } = fetcher(() => 204);
    expect(await worker(fetch).runOnce()).toBe(1);
    expect(sent).toHaveLength(1);
    expect(sent[0]!.url).toBe('https://receiver.example/hooks');
    expect(sent[0]!.body.toString('utf8')).toBe(bodies[0]);
    expect(Object.keys(sent[0]!.headers).sort()).toEqual(['content-type', 'user-agent', 'x-webhook-signature']);
    expect(verifyLegacyWebhook(sent[0]!.body, sent[0]!.headers['x-webhook-signature'], secret)).toEqual({ ok: true });
    expect(await delivery(deliveryIds[0]!)).toMatchObject({
      status: 'DELIVERED',
      attempts: 1,
      delivered_at: clock,
      leased_until: null,
    });
    expect(await attempts(deliveryIds[0]!)).toEqual([
      { attempted_at: clock, status_code: 204, error: null, duration_ms: expect.any(Number) },
    ]);
  });

  it('retries on the backoff schedule until it succeeds; refusals and errors recorded', async () => {
    const start = new Date(Math.floor(Date.now() / 1000) * 1000);
    clock = start;
    const { deliveryIds } = await pending();
    const answers: (number | Error)[] = [500, 301, new Error('connect ECONNREFUSED 127.0.0.1:9'), 200];
    const { fetch } = fetcher(() => answers.shift()!);
    const runner = worker(fetch, () => 0.5);
    let expectedNext = start.getTime();
    for (let failures = 1; failures <= 3; failures += 1) {
      clock = new Date(expectedNext);
      expect(await runner.runOnce()).toBe(1);
      expectedNext = clock.getTime() + retryDelayFor(DEFAULT_RETRY_POLICY, failures, () => 0.5);
      expect(await delivery(deliveryIds[0]!)).toMatchObject({
        status: 'PENDING',
        attempts: failures,
        next_attempt_at: new Date(expectedNext),
      });
      // Not due a millisecond before its time.
      clock = new Date(expectedNext - 1);
      expect(await runner.runOnce()).toBe(0);
    }
    clock = new Date(expectedNext);
    expect(await runner.runOnce()).toBe(1);
    expect(await delivery(deliveryIds[0]!)).toMatchObject({ status: 'DELIVERED', attempts: 4 });
    expect((await attempts(deliveryIds[0]!)).map((attempt) => [attempt.status_code, attempt.error])).toEqual([
      [500, null],
      [301, null],
      [null, 'connect ECONNREFUSED 127.0.0.1:9'],
      [200, null],
    ]);
    // 5 min, 10 min and 20 min ceilings, three quarters of each with this jitter.
    expect(expectedNext - start.getTime()).toBe((225 + 450 + 900) * 1000);
  });

  it('gives up a delivery whose attempt at or after the deadline (72 h from receipt) fails', async () => {
    const start = new Date();
    clock = start;
    const { deliveryIds } = await pending();
    const { fetch } = fetcher(() => 503);
    await db.query('UPDATE legacy_webhook_deliveries SET next_attempt_at = $2 WHERE id = $1', [
      deliveryIds[0],
      new Date(start.getTime() + 72 * HOUR - 1000),
    ]);
    clock = new Date(start.getTime() + 72 * HOUR - 1000);
    await worker(fetch).runOnce();
    expect(await delivery(deliveryIds[0]!)).toMatchObject({
      status: 'PENDING',
      next_attempt_at: new Date(start.getTime() + 72 * HOUR),
    });
    clock = new Date(start.getTime() + 72 * HOUR);
    await worker(fetch).runOnce();
    expect(await delivery(deliveryIds[0]!)).toMatchObject({ status: 'GAVE_UP', attempts: 2 });
  });

  it('tells each outcome once it is written: retrying, delivered, gave up (the deadline, a removed subscription)', async () => {
    const start = new Date();
    clock = start;
    const outcomes: string[] = [];
    const told = (fetch: WebhookFetcher) => {
      const made = new LegacyDeliveryWorker({
        db,
        keyring,
        fetcher: fetch,
        now: () => clock,
        random: () => 0,
        options: { requestTimeoutMs: 2_000 },
        onOutcome: (outcome) => outcomes.push(outcome),
      });
      workers.push(made);
      return made;
    };
    const answers = [500, 200];
    const retried = await pending();
    const runner = told(fetcher(() => answers.shift()!).fetch);
    await runner.runOnce();
    clock = (await delivery(retried.deliveryIds[0]!)).next_attempt_at;
    await runner.runOnce();
    expect(outcomes).toEqual(['retrying', 'delivered']);
    const late = await pending(1, start);
    clock = new Date(start.getTime() + 72 * HOUR);
    await told(fetcher(() => 503).fetch).runOnce();
    const removed = await pending(1, clock);
    await db.query(`UPDATE legacy_webhook_subscriptions SET status = 'REMOVED', removed_at = now() WHERE id = $1`, [
      removed.subscriptionId,
    ]);
    await told(fetcher().fetch).runOnce();
    expect(outcomes).toEqual(['retrying', 'delivered', 'gave_up', 'gave_up']);
    expect(await delivery(late.deliveryIds[0]!)).toMatchObject({ status: 'GAVE_UP' });
  });

  it('gives up, without sending, a delivery of a subscription removed after it was written', async () => {
    clock = new Date();
    const { subscriptionId, deliveryIds } = await pending();
    await db.query(`UPDATE legacy_webhook_subscriptions SET status = 'REMOVED', removed_at = now() WHERE id = $1`, [
      subscriptionId,
    ]);
    const { sent, fetch } = fetcher();
    await worker(fetch).runOnce();
    expect(sent).toEqual([]);
    expect(await delivery(deliveryIds[0]!)).toMatchObject({ status: 'GAVE_UP', attempts: 0 });
  });

  it('records a secret that does not open as a failed attempt and delivers the rest of the round', async () => {
    clock = new Date();
    const broken = await pending();
    const fine = await pending();
    await db.query('UPDATE legacy_webhook_subscriptions SET secret = $2 WHERE id = $1', [
      broken.subscriptionId,
      keyring.seal('whsec_x', 'another row'),
    ]);
    const { sent, fetch } = fetcher();
    expect(await worker(fetch).runOnce()).toBe(2);
    expect(sent).toHaveLength(1);
    expect(await delivery(fine.deliveryIds[0]!)).toMatchObject({ status: 'DELIVERED' });
    expect(await delivery(broken.deliveryIds[0]!)).toMatchObject({ status: 'PENDING', attempts: 1 });
    expect((await attempts(broken.deliveryIds[0]!))[0]!.error).toMatch(/^the subscription's secret does not open/);
  });

  it('two workers at once never make the same attempt', async () => {
    clock = new Date();
    const { deliveryIds } = await pending(20);
    const { sent, fetch } = fetcher(() => 200, 20);
    const [a, b] = [worker(fetch), worker(fetch)];
    const claimed = await Promise.all([a.runOnce(), b.runOnce(), a.runOnce(), b.runOnce()]);
    expect(claimed.reduce((sum, n) => sum + n, 0)).toBe(20);
    expect(sent).toHaveLength(20);
    expect(new Set(sent.map((request) => request.body.toString('utf8'))).size).toBe(20);
    for (const id of deliveryIds) expect(await delivery(id)).toMatchObject({ status: 'DELIVERED', attempts: 1 });
  });

  it("a stop during an attempt is not the receiver's failure: nothing counted, due again at once", async () => {
    clock = new Date();
    const { deliveryIds } = await pending();
    const { sent, fetch } = fetcher(() => 200, 10_000);
    const runner = worker(fetch);
    const round = runner.runOnce();
    await expect.poll(() => sent.length).toBe(1);
    await runner.stop();
    await round;
    expect(await delivery(deliveryIds[0]!)).toMatchObject({ status: 'PENDING', attempts: 0, leased_until: null });
    expect((await attempts(deliveryIds[0]!)).map((attempt) => attempt.error)).toEqual([
      'interrupted: the worker stopped during the attempt',
    ]);
    await worker(fetcher().fetch).runOnce();
    expect(await delivery(deliveryIds[0]!)).toMatchObject({ status: 'DELIVERED', attempts: 1 });
  });

  describe('where it sends (the destination policy)', () => {
    const REQUIREMENT =
      'sandbox webhooks must reach a public or loopback address (for an in-house receiver, add its network to FXGATE_WEBHOOK_ALLOWED_NETWORKS)';
    let receiver: Server;
    let port: number;
    const hits: string[] = [];

    beforeAll(async () => {
      receiver = createServer((request, response) => {
        hits.push(`${request.headers.host} ${request.url}`);
        request.resume();
        request.on('end', () => response.end('ok'));
      });
      await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve));
      port = (receiver.address() as AddressInfo).port;
    });
    afterEach(() => {
      hits.length = 0;
    });
    afterAll(async () => {
      receiver.closeAllConnections();
      await new Promise((resolve) => receiver.close(resolve));
    });

    it('sends nothing to a name that resolves to a refused address; the attempt names the reason', async () => {
      clock = new Date();
      const at = (name: string) => ({ mode: 'sandbox' as const, url: `http://${name}:${port}/hooks` });
      const allowed = await pending(1, clock, at('receiver.test'));
      const refused = {
        rebind: await pending(1, clock, at('rebind.example')),
        mixed: await pending(1, clock, at('mixed.example')),
        mapped: await pending(1, clock, at('mapped.example')),
      };
      // Through undici and its own pools, as in production; names from the test resolver.
      const real = new LegacyDeliveryWorker({
        db,
        keyring,
        now: () => clock,
        options: { requestTimeoutMs: 2_000 },
        outbound: {
          resolver: testResolver({
            'receiver.test': ['127.0.0.1'],
            'rebind.example': ['10.0.0.1'],
            'mixed.example': ['127.0.0.1', '10.0.0.1'],
            'mapped.example': ['::ffff:10.0.0.1'],
          }),
        },
      });
      workers.push(real);
      const connections = recordConnections();
      try {
        expect(await real.runOnce()).toBe(4);
      } finally {
        connections.restore();
      }
      expect(hits).toEqual([`receiver.test:${port} /hooks`]);
      expect(connections.hosts()).toEqual(['127.0.0.1']);
      expect(await delivery(allowed.deliveryIds[0]!)).toMatchObject({ status: 'DELIVERED', attempts: 1 });
      const reasons = {
        rebind: `refused: rebind.example resolved to 10.0.0.1, a private address; ${REQUIREMENT}`,
        mixed: `refused: mixed.example resolved to 10.0.0.1, a private address; ${REQUIREMENT}`,
        mapped: `refused: mapped.example resolved to ::ffff:a00:1, 10.0.0.1 (IPv4-mapped), a private address; ${REQUIREMENT}`,
      };
      for (const [name, reason] of Object.entries(reasons)) {
        const id = refused[name as keyof typeof reasons].deliveryIds[0]!;
        expect(await delivery(id), name).toMatchObject({ status: 'PENDING', attempts: 1 });
        expect((await attempts(id)).map((attempt) => [attempt.status_code, attempt.error])).toEqual([[null, reason]]);
      }
    });

    it('sends nothing, at any attempt, to a subscription stored before the rule, and gives it up at the deadline', async () => {
      const start = new Date();
      clock = start;
      const { subscriptionId, deliveryIds } = await pending(1, start, {
        mode: 'live',
        url: 'https://receiver.example/hooks',
      });
      // As a row written before the destination policy.
      await db.query('UPDATE legacy_webhook_subscriptions SET url = $2 WHERE id = $1', [
        subscriptionId,
        `http://0x7f000001:${port}/metrics`,
      ]);
      const { sent, fetch } = fetcher();
      const runner = worker(fetch);
      await runner.runOnce();
      clock = new Date(start.getTime() + 72 * HOUR);
      await db.query('UPDATE legacy_webhook_deliveries SET next_attempt_at = $2 WHERE id = $1', [
        deliveryIds[0],
        clock,
      ]);
      await runner.runOnce();
      expect(sent).toEqual([]);
      expect(hits).toEqual([]);
      expect(await delivery(deliveryIds[0]!)).toMatchObject({ status: 'GAVE_UP', attempts: 2 });
      expect((await attempts(deliveryIds[0]!)).map((attempt) => attempt.error)).toEqual(
        Array(2).fill(
          'refused: 127.0.0.1 is a loopback address; live webhooks must reach a public address (for an in-house receiver, add its network to FXGATE_WEBHOOK_ALLOWED_NETWORKS)',
        ),
      );
    });
  });

  it.runIf(driver === 'pglite')(
    'releases at start-up the leases a dead process left (PGlite serves one process)',
    async () => {
      clock = new Date();
      const { deliveryIds } = await pending();
      await db.query('UPDATE legacy_webhook_deliveries SET leased_until = $2 WHERE id = $1', [
        deliveryIds[0],
        new Date(clock.getTime() + HOUR),
      ]);
      const { fetch } = fetcher();
      expect(await worker(fetch).runOnce()).toBe(0);
      const restarted = worker(fetch);
      await restarted.start();
      await expect.poll(async () => (await delivery(deliveryIds[0]!)).status).toBe('DELIVERED');
    },
  );

  it('a nudge runs a round at once rather than at the next poll', async () => {
    clock = new Date();
    const { sent, fetch } = fetcher();
    const runner = new LegacyDeliveryWorker({
      db,
      keyring,
      fetcher: fetch,
      now: () => clock,
      options: { pollIntervalMs: 3_600_000 },
    });
    workers.push(runner);
    await runner.start();
    await expect.poll(() => sent.length).toBe(0);
    await new Promise((resolve) => setTimeout(resolve, 100));
    await pending();
    runner.nudge();
    await expect.poll(() => sent.length, { timeout: 2_000 }).toBe(1);
  });
});
