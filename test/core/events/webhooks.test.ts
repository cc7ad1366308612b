/**
 * Webhooks end to end (docs/contract.md#webhooks): the endpoint API and its URL rules, and the
 * delivery worker against a real receiver (fastify on 127.0.0.1 that records every request and
 * can answer 500, hang, redirect, or be down). The workers resolve names with a test resolver,
 * never real DNS: a destination the policy refuses is shown to reach no socket at all. Events are
 * recorded with recordEvent in a transaction, as the state changes record them. Time moves
 * through an injected clock, never by sleeping.
 *
 * PostgreSQL runs the 'lock' claim mode (and the two-worker test runs 'lease' as well); the last
 * block runs PGlite, whose worker uses leases so a slow receiver cannot stall the API.
 */
import { randomUUID } from 'node:crypto';

import { hmac } from '@noble/hashes/hmac.js';
import { sha256 } from '@noble/hashes/sha2.js';
import Fastify, { type FastifyInstance } from 'fastify';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';

import { buildCoreApp } from '../../../src/core/app.js';
import { type EventInput, recordEvent } from '../../../src/core/events/outbox.js';
import {
  ENDPOINT_SECRET_COLUMN,
  endpointSecretBinding,
  MAX_ACTIVE_ENDPOINTS,
} from '../../../src/core/events/webhook-endpoints.js';
import {
  afterAttempt,
  DELIVERY_MAX_AGE_MS,
  retryCeilingMs,
  retryDelayMs,
} from '../../../src/core/events/webhook-schedule.js';
import { WebhookDeliveryWorker, type WebhookWorkerDependencies } from '../../../src/core/events/webhook-worker.js';
import type { Mode } from '../../../src/lib/auth/credential-vocabulary.js';
import type { Database } from '../../../src/lib/db/database.js';
import { SealedSecretError } from '../../../src/lib/errors/internal-errors.js';
import { livePollLoops } from '../../../src/lib/jobs/poll-loop.js';
import type { LoadedKey } from '../../../src/lib/keys/key-file.js';
import { ExactDestinations, type OutboundAllowance } from '../../../src/lib/net/destination-policy.js';
import { upgradeSealedRows } from '../../../src/lib/secrets/sealed-rows.js';
import { SealingKeyring } from '../../../src/lib/secrets/sealing-keyring.js';
import type { ClaimMode } from '../../../src/lib/webhooks/delivery-rounds.js';
import { verifyWebhookSignature } from '../../../src/lib/webhooks/signature.js';
import { openTestPostgres, testDatabaseUrl } from '../../support/databases.js';
import { recordConnections, testResolver } from '../../support/outbound.js';
import { expectV3Error, hasKeyDeep } from '../../support/v3-assertions.js';
import { V3Harness } from '../../support/v3-harness.js';

const ENDPOINTS = '/v3/fx/webhook-endpoints';
const HOUR = 60 * 60 * 1000;

// ---------------------------------------------------------------------------------------------
// The receiver

/** `redirect`: 307 to the same path on the port in `redirectTo`. */
type Answer = 'ok' | 'fail' | 'hang' | 'redirect';

interface Hit {
  /** Path and query the request was sent to. */
  readonly path: string;
  readonly headers: Record<string, string>;
  readonly rawBody: Buffer;
  readonly eventId: string;
  readonly answer: Answer;
}

class Receiver {
  readonly hits: Hit[] = [];
  /** Decides each request's answer; `ok` (200) unless set. */
  answer: (hit: Omit<Hit, 'answer'>, index: number) => Answer = () => 'ok';
  /** Where a `redirect` answer points. */
  redirectTo = 9;
  private readonly hanging = new Set<() => void>();

  private constructor(
    private readonly app: FastifyInstance,
    readonly port: number,
  ) {}

  static async start(port = 0): Promise<Receiver> {
    const app = Fastify({ logger: false, forceCloseConnections: true });
    app.removeAllContentTypeParsers();
    // The raw bytes, exactly as sent: the signature is over them.
    app.addContentTypeParser('*', { parseAs: 'buffer' }, (_request, body, done) => done(null, body));
    let receiver: Receiver | null = null; // set before the first request can arrive
    app.post('/hook', async (request, reply) => {
      const self = receiver!;
      const rawBody = request.body as Buffer;
      const headers = Object.fromEntries(Object.entries(request.headers).map(([name, value]) => [name, String(value)]));
      const partial = {
        path: request.url,
        headers,
        rawBody,
        eventId: (JSON.parse(rawBody.toString('utf8')) as { id: string }).id,
      };
      const answer = self.answer(partial, self.hits.length);
      self.hits.push({ ...partial, answer });
      if (answer === 'hang') {
        await new Promise<void>((resolve) => self.hanging.add(resolve));
        return reply.code(503).send();
      }
      if (answer === 'redirect')
        return reply.code(307).header('location', `http://127.0.0.1:${self.redirectTo}${request.url}`).send();
      return answer === 'ok'
        ? reply.code(200).send({ received: true })
        : reply.code(500).send({ error: 'receiver failure' });
    });
    const address = await app.listen({ host: '127.0.0.1', port });
    receiver = new Receiver(app, Number(new URL(address).port));
    return receiver;
  }

  get url(): string {
    return `http://127.0.0.1:${this.port}/hook`;
  }

  hitsFor(eventId: string): Hit[] {
    return this.hits.filter((hit) => hit.eventId === eventId);
  }

  async close(): Promise<void> {
    for (const release of this.hanging) release();
    this.hanging.clear();
    await this.app.close();
  }
}

// ---------------------------------------------------------------------------------------------
// Helpers

async function waitFor(check: () => boolean | Promise<boolean>, timeoutMs = 5000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error('condition not met in time');
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}

function independentHmac(secret: string, message: Buffer | string, encoding: 'hex' | 'base64'): string {
  const bytes = typeof message === 'string' ? new TextEncoder().encode(message) : new Uint8Array(message);
  return Buffer.from(hmac(sha256, new TextEncoder().encode(secret), bytes)).toString(encoding);
}

interface EndpointCreated {
  object: string;
  id: string;
  url: string;
  eventTypes: string[];
  status: string;
  createdAt: string;
  deletedAt: string | null;
  secret: string;
}

interface DeliveryRow {
  id: string;
  event_id: string;
  endpoint_id: string;
  status: string;
  attempts: number;
  next_attempt_at: Date;
  delivered_at: Date | null;
}

interface AttemptRow {
  delivery_id: string;
  attempted_at: Date;
  status_code: number | null;
  error: string | null;
  duration_ms: number;
}

/**
 * The names the suites' workers resolve (never real DNS): `receiver.test` is this machine, the
 * others point where a webhook must not go. Any other name does not resolve.
 */
const TEST_NAMES = {
  'receiver.test': ['127.0.0.1'],
  'rebind.example': ['10.0.0.1'],
  // An allowed address first: a guard that checked only the first would connect, and the receiver would count it.
  'mixed.example': ['127.0.0.1', '10.0.0.1'],
  'mapped.example': ['::ffff:10.0.0.1'],
} as const;

/**
 * The scaffolding of one suite: a harness, receivers, workers, and clean-up after each test. The
 * core and its workers share one outbound allowance: the test resolver, and exact destinations
 * a test may add (as `fxgate all` adds its own listener).
 */
function webhookSuite(harnessFactory: (outbound: OutboundAllowance) => Promise<V3Harness>) {
  const outbound = { exact: new ExactDestinations(), resolver: testResolver(TEST_NAMES) };
  const state = {
    harness: null as V3Harness | null,
    receivers: [] as Receiver[],
    workers: [] as WebhookDeliveryWorker[],
    clock: new Date(),
  };

  beforeAll(async () => {
    state.harness = await harnessFactory(outbound);
  });
  afterEach(async () => {
    await Promise.all(state.workers.splice(0).map((worker) => worker.stop()));
    await Promise.all(state.receivers.splice(0).map((receiver) => receiver.close()));
    // Leftovers of one test must not be delivered by the next test's workers.
    await state.harness!.db.query("UPDATE webhook_deliveries SET status = 'GAVE_UP' WHERE status = 'PENDING'");
  });
  afterAll(async () => {
    await state.harness?.close();
  });

  const h = {
    outbound,
    get harness(): V3Harness {
      return state.harness!;
    },
    get db(): Database {
      return state.harness!.db;
    },
    get clock(): Date {
      return state.clock;
    },
    set clock(value: Date) {
      state.clock = value;
    },
    resetClock(): Date {
      state.clock = new Date(Math.floor(Date.now() / 1000) * 1000);
      return state.clock;
    },
    advance(ms: number): Date {
      state.clock = new Date(state.clock.getTime() + ms);
      return state.clock;
    },
    async receiver(port?: number): Promise<Receiver> {
      const receiver = await Receiver.start(port);
      state.receivers.push(receiver);
      return receiver;
    },
    worker(deps: Partial<WebhookWorkerDependencies> = {}): WebhookDeliveryWorker {
      const worker = new WebhookDeliveryWorker({
        db: state.harness!.db,
        keyring: state.harness!.keyring,
        now: () => state.clock,
        outbound,
        ...deps,
        options: { requestTimeoutMs: 3000, batchSize: 100, ...deps.options },
      });
      state.workers.push(worker);
      return worker;
    },
    async key(mode: Mode = 'sandbox', orgId?: string): Promise<LoadedKey> {
      return state.harness!.createKey({ mode, orgId });
    },
    createEndpoint(key: LoadedKey, body: Record<string, unknown>, idempotencyKey: string = randomUUID()) {
      return state.harness!.signed({
        key,
        method: 'POST',
        path: ENDPOINTS,
        body: JSON.stringify(body),
        idempotencyKey,
      });
    },
    async endpoint(key: LoadedKey, url: string, eventTypes?: string[]): Promise<EndpointCreated> {
      const response = await h.createEndpoint(key, eventTypes ? { url, eventTypes } : { url });
      expect(response.status, response.text).toBe(200);
      return response.json<{ data: EndpointCreated }>().data;
    },
    /** Records an event the way a state change does: in a transaction, through the outbox. */
    async event(
      key: LoadedKey,
      eventType: string,
      data: Record<string, unknown> = {},
      at: Date = state.clock,
    ): Promise<string> {
      const input: EventInput = {
        orgId: key.file.orgId,
        environment: key.file.mode,
        type: eventType.startsWith('deposit') ? 'deposits' : 'withdrawals',
        eventType,
        data: { amount: '10.50', currency: 'USD', ...data },
        at,
      };
      return state.harness!.db.transaction((tx) => recordEvent(tx, input));
    },
    async deliveries(eventIds: readonly string[]): Promise<DeliveryRow[]> {
      const { rows } = await state.harness!.db.query<DeliveryRow>(
        'SELECT id::text AS id, event_id, endpoint_id, status, attempts, next_attempt_at, delivered_at FROM webhook_deliveries WHERE event_id = ANY($1::text[]) ORDER BY id',
        [eventIds],
      );
      return rows;
    },
    async attempts(deliveryId: string): Promise<AttemptRow[]> {
      const { rows } = await state.harness!.db.query<AttemptRow>(
        'SELECT delivery_id::text AS delivery_id, attempted_at, status_code, error, duration_ms FROM webhook_delivery_attempts WHERE delivery_id = $1 ORDER BY id',
        [deliveryId],
      );
      return rows;
    },
    async pending(eventIds: readonly string[]): Promise<number> {
      return (await h.deliveries(eventIds)).filter((row) => row.status === 'PENDING').length;
    },
  };
  return h;
}

// ---------------------------------------------------------------------------------------------
// The retry schedule

describe('retry schedule', () => {
  it('doubles from 5 min to a 24 h cap, waiting between half the ceiling and the ceiling', () => {
    expect([1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 50].map(retryCeilingMs)).toEqual([
      300_000,
      600_000,
      1_200_000,
      2_400_000,
      4_800_000,
      9_600_000,
      19_200_000,
      38_400_000,
      76_800_000,
      24 * HOUR,
      24 * HOUR,
      24 * HOUR,
      24 * HOUR,
      24 * HOUR,
    ]);
    expect(retryDelayMs(1, () => 0)).toBe(150_000);
    expect(retryDelayMs(1, () => 0.5)).toBe(225_000);
    expect(retryDelayMs(20, () => 0.999_999)).toBeLessThan(24 * HOUR);
    for (let i = 0; i < 200; i += 1) {
      const failures = 1 + (i % 15);
      const delay = retryDelayMs(failures);
      expect(delay).toBeGreaterThanOrEqual(retryCeilingMs(failures) / 2);
      expect(delay).toBeLessThan(retryCeilingMs(failures));
    }
  });

  it('retries until 72 h after the event, the last retry at the mark, then gives up', () => {
    const created = new Date('2030-01-01T00:00:00.000Z');
    const deadline = created.getTime() + DELIVERY_MAX_AGE_MS;
    expect(DELIVERY_MAX_AGE_MS).toBe(72 * HOUR);
    expect(
      afterAttempt({
        succeeded: true,
        failures: 1,
        now: new Date(deadline + HOUR),
        eventCreatedAt: created,
        maxAgeMs: DELIVERY_MAX_AGE_MS,
      }),
    ).toEqual({ status: 'DELIVERED' });
    expect(
      afterAttempt({
        succeeded: false,
        failures: 3,
        now: new Date(deadline),
        eventCreatedAt: created,
        maxAgeMs: DELIVERY_MAX_AGE_MS,
      }),
    ).toEqual({ status: 'GAVE_UP' });
    const clamped = afterAttempt({
      succeeded: false,
      failures: 12,
      now: new Date(deadline - 1000),
      eventCreatedAt: created,
      maxAgeMs: DELIVERY_MAX_AGE_MS,
      random: () => 0.9,
    });
    expect(clamped).toEqual({ status: 'PENDING', nextAttemptAt: new Date(deadline) });
  });
});

// ---------------------------------------------------------------------------------------------
// PostgreSQL

describe('webhooks on PostgreSQL', () => {
  const h = webhookSuite((outbound) =>
    V3Harness.start({
      driver: 'postgres',
      storeKind: 'redis',
      core: { rateLimits: { reads: 100_000, writes: 100_000 }, outbound },
    }),
  );

  describe('endpoint API', () => {
    it('creates an endpoint and shows its secret in that response only', async () => {
      const key = await h.key();
      const idempotencyKey = randomUUID();
      const body = { url: 'http://127.0.0.1:9/hook' };
      const created = await h.createEndpoint(key, body, idempotencyKey);
      expect(created.status, created.text).toBe(200);
      const record = created.json<{ data: EndpointCreated }>().data;
      expect(Object.keys(record).sort()).toEqual([
        'createdAt',
        'deletedAt',
        'eventTypes',
        'id',
        'object',
        'secret',
        'status',
        'url',
      ]);
      expect(record).toMatchObject({
        object: 'webhook_endpoint',
        url: 'http://127.0.0.1:9/hook',
        eventTypes: [],
        status: 'ACTIVE',
        deletedAt: null,
      });
      expect(record.id).toMatch(/^whe_[0-9a-f]{32}$/);
      expect(record.secret).toMatch(/^whsec_[A-Za-z0-9_-]{43}$/);
      expect(Buffer.from(record.secret.slice(6), 'base64url')).toHaveLength(32);
      expect(new Date(record.createdAt).toISOString()).toBe(record.createdAt);

      // Read back: the same record, without the secret, in the list and on its own.
      const { secret, ...shown } = record;
      const one = await h.harness.signed({ key, path: `${ENDPOINTS}/${record.id}` });
      expect(one.status).toBe(200);
      expect(one.json()).toEqual({ data: shown });
      const list = await h.harness.signed({ key, path: ENDPOINTS });
      expect(list.json()).toEqual({ data: [shown] });
      expect(hasKeyDeep(one.json(), 'secret') || hasKeyDeep(list.json(), 'secret')).toBe(false);
      expect(one.text.includes(secret) || list.text.includes(secret)).toBe(false);

      // A retry with the same key replays the response (the pipeline's store): still one endpoint.
      const replay = await h.createEndpoint(key, body, idempotencyKey);
      expect(replay.headers['idempotency-replayed']).toBe('true');
      expect(replay.text).toBe(created.text);
      const { rows } = await h.db.query<{ id: string; secret: string }>(
        'SELECT id, secret FROM webhook_endpoints WHERE org_id = $1',
        [key.file.orgId],
      );
      expect(rows).toHaveLength(1);
      // Stored sealed, bound to its endpoint: the row alone gives nothing away.
      const stored = rows[0]!.secret;
      const keyring = h.harness.keyring;
      expect(stored).toMatch(
        new RegExp(`^v2\\.${keyring.sealingKeyId}\\.[A-Za-z0-9_-]{16}\\.[A-Za-z0-9_-]+\\.[A-Za-z0-9_-]{22}$`),
      );
      expect(stored.includes(secret.slice(6))).toBe(false);
      expect(keyring.open(stored, endpointSecretBinding(rows[0]!.id))).toBe(secret);
      expect(() => keyring.open(stored, endpointSecretBinding(`whe_${'0'.repeat(32)}`))).toThrow(SealedSecretError);
    });

    it('keeps event types sorted and unique, and refuses unknown ones and bad bodies', async () => {
      const key = await h.key();
      const record = await h.endpoint(key, 'http://127.0.0.1:9/hook', [
        'withdrawal.completed',
        'deposit.failed',
        'withdrawal.completed',
      ]);
      expect(record.eventTypes).toEqual(['deposit.failed', 'withdrawal.completed']);
      for (const body of [
        { url: 'http://127.0.0.1:9/hook', eventTypes: ['trade.executed'] },
        { url: 'http://127.0.0.1:9/hook', eventTypes: 'deposit.failed' },
        {},
        { url: 'http://127.0.0.1:9/hook', extra: 1 },
      ]) {
        expectV3Error(await h.createEndpoint(key, body), 'VALIDATION_BODY_FAILED');
      }
    });

    it('accepts only https in live, http too in the sandbox; loopback in the sandbox only', async () => {
      const live = await h.key('live');
      const sandbox = await h.key('sandbox');
      const refused = await h.createEndpoint(live, { url: 'http://example.com/hook' });
      expectV3Error(refused, 'WEBHOOK_URL_INVALID', {
        details: { url: 'http://example.com/hook', reason: 'live endpoints must use https' },
      });
      // A name is accepted as it is; what it resolves to is checked at every delivery.
      expect((await h.endpoint(live, 'https://example.com/hook')).url).toBe('https://example.com/hook');
      const loopback: Array<[string, string]> = [
        ['http://127.0.0.1:8080/hook', '127.0.0.1 is a loopback address'],
        ['http://localhost:8080/hook', 'localhost is a loopback name (localhost)'],
        ['http://[::1]:8080/hook', '::1 is a loopback address'],
        ['http://127.10.0.1/hook', '127.10.0.1 is a loopback address'],
      ];
      for (const [url, reason] of loopback) {
        expectV3Error(await h.createEndpoint(live, { url }), 'WEBHOOK_URL_INVALID', {
          details: { url, reason: `${reason}; live webhooks must reach a public address` },
        });
        expect((await h.endpoint(sandbox, url)).url).toBe(url);
      }
      expect((await h.endpoint(sandbox, 'http://example.com/hook')).url).toBe('http://example.com/hook');
      // Normalised as WHATWG URL does.
      expect((await h.endpoint(sandbox, 'HTTPS://Example.COM')).url).toBe('https://example.com/');

      const bad: Array<[string, string]> = [
        ['not a url', 'not an absolute URL'],
        ['/relative/hook', 'not an absolute URL'],
        ['ftp://example.com/hook', 'the scheme must be https (or http in the sandbox)'],
        ['javascript:alert(1)', 'the scheme must be https (or http in the sandbox)'],
        ['https://user:pw@example.com/hook', 'the URL must not contain credentials'],
        ['https://example.com/hook#part', 'the URL must not contain a fragment'],
        [`https://example.com/${'a'.repeat(2048)}`, 'longer than 2048 characters'],
      ];
      for (const [url, reason] of bad) {
        for (const key of [live, sandbox])
          expectV3Error(await h.createEndpoint(key, { url }), 'WEBHOOK_URL_INVALID', { details: { url, reason } });
      }
      // Each book sees its own endpoints.
      const urls = async (key: LoadedKey) =>
        (await h.harness.signed({ key, path: ENDPOINTS }))
          .json<{ data: EndpointCreated[] }>()
          .data.map((endpoint) => endpoint.url)
          .sort();
      expect(await urls(live)).toEqual(['https://example.com/hook']);
      expect(await urls(sandbox)).toEqual([
        'http://127.0.0.1:8080/hook',
        'http://127.10.0.1/hook',
        'http://[::1]:8080/hook',
        'http://example.com/hook',
        'http://localhost:8080/hook',
        'https://example.com/',
      ]);
    });

    it('deletes an endpoint: 404 afterwards, pending deliveries given up, no new ones', async () => {
      const key = await h.key();
      const stranger = await h.key();
      const endpoint = await h.endpoint(key, 'http://127.0.0.1:9/hook');
      const kept = await h.endpoint(key, 'http://127.0.0.1:9/other');
      const before = [await h.event(key, 'deposit.completed'), await h.event(key, 'withdrawal.completed')];
      expect((await h.deliveries(before)).map((row) => row.status)).toEqual([
        'PENDING',
        'PENDING',
        'PENDING',
        'PENDING',
      ]);

      // Another org cannot see or delete it.
      expectV3Error(
        await h.harness.signed({ key: stranger, method: 'DELETE', path: `${ENDPOINTS}/${endpoint.id}` }),
        'WEBHOOK_ENDPOINT_NOT_FOUND',
        { details: { webhookEndpointId: endpoint.id } },
      );
      expectV3Error(
        await h.harness.signed({ key: stranger, path: `${ENDPOINTS}/${endpoint.id}` }),
        'WEBHOOK_ENDPOINT_NOT_FOUND',
      );

      const deleted = await h.harness.signed({ key, method: 'DELETE', path: `${ENDPOINTS}/${endpoint.id}` });
      expect(deleted.status, deleted.text).toBe(200);
      const record = deleted.json<{ data: EndpointCreated }>().data;
      expect(record).toMatchObject({ id: endpoint.id, status: 'DELETED' });
      expect(record.deletedAt).toMatch(/Z$/);
      expect(hasKeyDeep(deleted.json(), 'secret')).toBe(false);

      const rows = await h.deliveries(before);
      expect(rows.filter((row) => row.endpoint_id === endpoint.id).map((row) => row.status)).toEqual([
        'GAVE_UP',
        'GAVE_UP',
      ]);
      expect(rows.filter((row) => row.endpoint_id === kept.id).map((row) => row.status)).toEqual([
        'PENDING',
        'PENDING',
      ]);
      expectV3Error(
        await h.harness.signed({ key, path: `${ENDPOINTS}/${endpoint.id}` }),
        'WEBHOOK_ENDPOINT_NOT_FOUND',
        { details: { webhookEndpointId: endpoint.id } },
      );
      expectV3Error(
        await h.harness.signed({ key, method: 'DELETE', path: `${ENDPOINTS}/${endpoint.id}` }),
        'WEBHOOK_ENDPOINT_NOT_FOUND',
      );
      expectV3Error(
        await h.harness.signed({ key, method: 'DELETE', path: `${ENDPOINTS}/whe_${'0'.repeat(32)}` }),
        'WEBHOOK_ENDPOINT_NOT_FOUND',
      );
      const list = (await h.harness.signed({ key, path: ENDPOINTS })).json<{ data: EndpointCreated[] }>().data;
      expect(list.map((item) => item.id)).toEqual([kept.id]);

      const after = await h.event(key, 'deposit.completed');
      expect((await h.deliveries([after])).map((row) => row.endpoint_id)).toEqual([kept.id]);
    });

    it('needs the webhooks scope', async () => {
      const key = await h.harness.createKey({ scopes: ['view', 'trade', 'withdraw'] });
      expectV3Error(await h.createEndpoint(key, { url: 'http://127.0.0.1:9/hook' }), 'AUTH_INSUFFICIENT_SCOPE', {
        details: { requiredScope: 'webhooks' },
      });
      expectV3Error(await h.harness.signed({ key, path: ENDPOINTS }), 'AUTH_INSUFFICIENT_SCOPE');
    });

    it(`caps a book at ${MAX_ACTIVE_ENDPOINTS} active endpoints, so the list is complete`, async () => {
      const key = await h.key();
      const created = await Promise.all(
        Array.from({ length: MAX_ACTIVE_ENDPOINTS + 3 }, (_, i) =>
          h.createEndpoint(key, { url: `http://127.0.0.1:9/hook/${i}` }),
        ),
      );
      expect(created.filter((response) => response.status === 200)).toHaveLength(MAX_ACTIVE_ENDPOINTS);
      for (const response of created.filter((item) => item.status !== 200))
        expectV3Error(response, 'WEBHOOK_URL_INVALID');
      const list = (await h.harness.signed({ key, path: ENDPOINTS })).json<{ data: EndpointCreated[] }>().data;
      expect(list).toHaveLength(MAX_ACTIVE_ENDPOINTS);
      expect((await h.harness.signed({ key, method: 'DELETE', path: `${ENDPOINTS}/${list[0]!.id}` })).status).toBe(200);
      await h.endpoint(key, 'http://127.0.0.1:9/hook/again');
    });
  });

  describe('delivery', () => {
    it('delivers a recorded event once, signed over the exact bytes sent', async () => {
      const clock = h.resetClock();
      const receiver = await h.receiver();
      const key = await h.key();
      const endpoint = await h.endpoint(key, receiver.url);
      const eventId = await h.event(key, 'withdrawal.completed', { id: 'wtd_0', amount: '1234.56' });
      // A transaction that rolls back leaves no event and nothing to deliver.
      await expect(
        h.db.transaction(async (tx) => {
          await recordEvent(tx, {
            orgId: key.file.orgId,
            environment: 'sandbox',
            type: 'deposits',
            eventType: 'deposit.completed',
            data: {},
            at: clock,
          });
          throw new Error('rolled back');
        }),
      ).rejects.toThrow('rolled back');

      const worker = h.worker();
      expect(await worker.runOnce()).toBe(1);
      expect(await worker.runOnce()).toBe(0);
      expect(receiver.hits).toHaveLength(1);
      const hit = receiver.hits[0]!;

      expect(JSON.parse(hit.rawBody.toString('utf8'))).toEqual({
        id: eventId,
        type: 'withdrawals',
        eventType: 'withdrawal.completed',
        createdAt: clock.toISOString(),
        data: { id: 'wtd_0', amount: '1234.56', currency: 'USD' },
      });
      expect(Object.keys(JSON.parse(hit.rawBody.toString('utf8')) as object)).toEqual([
        'id',
        'type',
        'eventType',
        'createdAt',
        'data',
      ]);
      expect(hit.headers['content-type']).toBe('application/json');
      expect(hit.headers['x-service-webhook-version']).toBe('v3');

      // Our verifier, and the HMAC recomputed here with another implementation.
      const t = Math.floor(clock.getTime() / 1000);
      expect(
        verifyWebhookSignature({
          secret: endpoint.secret,
          rawBody: hit.rawBody,
          header: hit.headers['x-service-signature'],
          nowSeconds: t,
        }),
      ).toEqual({ ok: true });
      expect(hit.headers['x-service-signature']).toBe(
        `t=${t},v1=${independentHmac(endpoint.secret, Buffer.concat([Buffer.from(`${t}.`), hit.rawBody]), 'hex')}`,
      );
      expect(hit.headers['x-webhook-signature']).toBe(independentHmac(endpoint.secret, hit.rawBody, 'base64'));
      expect(
        verifyWebhookSignature({
          secret: 'whsec_wrong',
          rawBody: hit.rawBody,
          header: hit.headers['x-service-signature'],
          nowSeconds: t,
        }),
      ).toEqual({ ok: false, reason: 'SIGNATURE_MISMATCH' });

      const [delivery] = await h.deliveries([eventId]);
      expect(delivery).toMatchObject({ status: 'DELIVERED', attempts: 1, delivered_at: clock });
      const attempts = await h.attempts(delivery!.id);
      expect(attempts).toHaveLength(1);
      expect(attempts[0]).toMatchObject({ attempted_at: clock, status_code: 200, error: null });
      expect(attempts[0]!.duration_ms).toBeGreaterThanOrEqual(0);
    });

    it('signs with a secret an earlier version stored as it is, and seals it at the next start', async () => {
      const clock = h.resetClock();
      const receiver = await h.receiver();
      const key = await h.key();
      const endpoint = await h.endpoint(key, receiver.url);
      // The row as a process of the earlier version wrote it (during a rolling upgrade, say).
      await h.db.query('UPDATE webhook_endpoints SET secret = $2 WHERE id = $1', [endpoint.id, endpoint.secret]);
      await h.event(key, 'deposit.completed');
      expect(await h.worker().runOnce()).toBe(1);
      /** Whether the receiver's n-th delivery verifies with the secret the create answer showed. */
      const signedWithTheSecret = (n: number) =>
        verifyWebhookSignature({
          secret: endpoint.secret,
          rawBody: receiver.hits[n]!.rawBody,
          header: receiver.hits[n]!.headers['x-service-signature'],
          nowSeconds: Math.floor(clock.getTime() / 1000),
        });
      expect(signedWithTheSecret(0)).toEqual({ ok: true });

      // What every start runs (the upgrade): the plaintext row is sealed, and deliveries sign as before.
      const keyring = h.harness.keyring;
      expect((await upgradeSealedRows(h.db, keyring, [ENDPOINT_SECRET_COLUMN])).sealed).toBe(1);
      const { rows } = await h.db.query<{ secret: string }>('SELECT secret FROM webhook_endpoints WHERE id = $1', [
        endpoint.id,
      ]);
      expect(rows[0]!.secret.startsWith(`v2.${keyring.sealingKeyId}.`)).toBe(true);
      expect(keyring.open(rows[0]!.secret, endpointSecretBinding(endpoint.id))).toBe(endpoint.secret);
      await h.event(key, 'deposit.completed');
      expect(await h.worker().runOnce()).toBe(1);
      expect(signedWithTheSecret(1)).toEqual({ ok: true });
    });

    it('sends nothing when a secret does not open (another key, or copied from another endpoint); retries later', async () => {
      h.resetClock();
      const receiver = await h.receiver();
      const key = await h.key();
      const endpoint = await h.endpoint(key, receiver.url);
      const other = await h.endpoint(key, `${receiver.url}/other`);
      const eventId = await h.event(key, 'deposit.completed');

      // A worker not given the key the rows were sealed under.
      expect(await h.worker({ keyring: SealingKeyring.of([Buffer.alloc(32, 7)]) }).runOnce()).toBe(2);
      expect(receiver.hits).toHaveLength(0);
      for (const delivery of await h.deliveries([eventId])) {
        expect(delivery).toMatchObject({ status: 'PENDING', attempts: 1 });
        const [attempt] = await h.attempts(delivery.id);
        expect(attempt).toMatchObject({ status_code: null });
        expect(attempt!.error).toMatch(
          /^not sent: the secret for webhook_endpoint:whe_\w+ is sealed under key [0-9a-f]{16}, which this process was not given$/,
        );
      }

      // A sealed value copied onto another endpoint's row does not open there either.
      await h.db.query(
        'UPDATE webhook_endpoints SET secret = (SELECT secret FROM webhook_endpoints WHERE id = $1) WHERE id = $2',
        [endpoint.id, other.id],
      );
      h.advance(24 * HOUR);
      expect(await h.worker().runOnce()).toBe(2);
      expect(receiver.hits.map((hit) => hit.path)).toEqual(['/hook']);
      const byEndpoint = new Map((await h.deliveries([eventId])).map((row) => [row.endpoint_id, row]));
      expect(byEndpoint.get(endpoint.id)).toMatchObject({ status: 'DELIVERED', attempts: 2 });
      expect(byEndpoint.get(other.id)).toMatchObject({ status: 'PENDING', attempts: 2 });
    });

    it('sends each endpoint the event types it asked for, in its own book only', async () => {
      h.resetClock();
      const receiver = await h.receiver();
      const key = await h.key('sandbox');
      const live = await h.key('live', key.file.orgId);
      const stranger = await h.key();
      const url = (name: string) => `${receiver.url}?to=${name}`;
      // The live book's receiver is on loopback: allowed exactly, as `fxgate all` allows its own listener.
      h.outbound.exact.allow(receiver.url);
      await h.endpoint(key, url('completed'), ['withdrawal.completed']);
      await h.endpoint(key, url('all'));
      await h.endpoint(key, url('deposits'), ['deposit.pending', 'deposit.completed', 'deposit.failed']);
      await h.endpoint(live, url('live'));
      await h.endpoint(stranger, url('stranger'));
      const events = [
        await h.event(key, 'deposit.completed'),
        await h.event(key, 'withdrawal.completed'),
        await h.event(key, 'withdrawal.failed'),
      ];
      expect(await h.worker().runOnce()).toBe(5);
      const received = (to: string) =>
        receiver.hits
          .filter((hit) => hit.path === `/hook?to=${to}`)
          .map((hit) => hit.eventId)
          .sort();
      expect(received('completed')).toEqual([events[1]]);
      expect(received('all')).toEqual([...events].sort());
      expect(received('deposits')).toEqual([events[0]]);
      expect(received('live')).toEqual([]);
      expect(received('stranger')).toEqual([]);
    });

    it('sends nothing to a name that resolves to a refused address: the attempt names the reason', async () => {
      h.resetClock();
      const receiver = await h.receiver();
      const key = await h.key('sandbox');
      const at = (name: string) => `http://${name}:${receiver.port}/hook`;
      const endpoints = {
        allowed: await h.endpoint(key, at('receiver.test')),
        rebind: await h.endpoint(key, at('rebind.example')),
        mixed: await h.endpoint(key, at('mixed.example')),
        mapped: await h.endpoint(key, at('mapped.example')),
      };
      const eventId = await h.event(key, 'deposit.completed');
      const connections = recordConnections();
      try {
        expect(await h.worker().runOnce()).toBe(4);
      } finally {
        connections.restore();
      }
      // The allowed name is delivered to at the address checked; no other socket was asked for.
      expect(receiver.hits.map((hit) => hit.headers.host)).toEqual([`receiver.test:${receiver.port}`]);
      expect(connections.hosts()).toEqual(['127.0.0.1']);
      const byEndpoint = new Map((await h.deliveries([eventId])).map((row) => [row.endpoint_id, row]));
      expect(byEndpoint.get(endpoints.allowed.id)).toMatchObject({ status: 'DELIVERED', attempts: 1 });
      const requirement = 'sandbox webhooks must reach a public or loopback address';
      const reasons = {
        rebind: `refused: rebind.example resolved to 10.0.0.1, a private address; ${requirement}`,
        mixed: `refused: mixed.example resolved to 10.0.0.1, a private address; ${requirement}`,
        mapped: `refused: mapped.example resolved to ::ffff:a00:1, 10.0.0.1 (IPv4-mapped), a private address; ${requirement}`,
      };
      for (const [name, reason] of Object.entries(reasons)) {
        const delivery = byEndpoint.get(endpoints[name as keyof typeof reasons].id)!;
        expect(delivery, name).toMatchObject({ status: 'PENDING', attempts: 1 });
        expect((await h.attempts(delivery.id)).map((attempt) => [attempt.status_code, attempt.error])).toEqual([
          [null, reason],
        ]);
      }
    });

    it('retries a refused name on the schedule, and delivers once its answer is an allowed address', async () => {
      h.resetClock();
      const receiver = await h.receiver();
      const key = await h.key('sandbox');
      h.outbound.resolver.set('flip.test', ['10.0.0.1']);
      await h.endpoint(key, `http://flip.test:${receiver.port}/hook`);
      const eventId = await h.event(key, 'withdrawal.completed');
      const worker = h.worker();
      expect(await worker.runOnce()).toBe(1);
      const [refused] = await h.deliveries([eventId]);
      expect(refused).toMatchObject({ status: 'PENDING', attempts: 1 });
      expect(receiver.hits).toEqual([]);
      h.outbound.resolver.set('flip.test', ['127.0.0.1']);
      h.clock = refused!.next_attempt_at;
      expect(await worker.runOnce()).toBe(1);
      expect((await h.deliveries([eventId]))[0]).toMatchObject({ status: 'DELIVERED', attempts: 2 });
      expect(receiver.hits.map((hit) => hit.eventId)).toEqual([eventId]);
    });

    it('sends nothing, at any attempt, to an endpoint stored before the rule, and gives it up at the deadline', async () => {
      h.resetClock();
      const live = await h.key('live');
      const endpoint = await h.endpoint(live, 'https://example.com/hook');
      // As a row written before the destination policy, or by a process with another allowance.
      await h.db.query('UPDATE webhook_endpoints SET url = $2 WHERE id = $1', [
        endpoint.id,
        'http://169.254.169.254/latest/meta-data/',
      ]);
      const eventId = await h.event(live, 'withdrawal.completed');
      const worker = h.worker();
      const connections = recordConnections();
      try {
        for (;;) {
          expect(await worker.runOnce()).toBe(1);
          const [delivery] = await h.deliveries([eventId]);
          if (delivery!.status !== 'PENDING') break;
          h.clock = delivery!.next_attempt_at;
        }
      } finally {
        connections.restore();
      }
      expect(connections.hosts()).toEqual([]);
      const [delivery] = await h.deliveries([eventId]);
      expect(delivery!.status).toBe('GAVE_UP');
      const attempts = await h.attempts(delivery!.id);
      expect(attempts.length).toBeGreaterThan(10);
      for (const attempt of attempts)
        expect(attempt).toMatchObject({
          status_code: null,
          duration_ms: 0,
          error:
            'refused: 169.254.169.254 is a link-local address (cloud metadata); live webhooks must reach a public address',
        });
    });

    it('never follows a redirect: it is the answer, a failed attempt', async () => {
      h.resetClock();
      const receiver = await h.receiver();
      const target = await h.receiver();
      receiver.answer = () => 'redirect';
      receiver.redirectTo = target.port;
      const key = await h.key('sandbox');
      await h.endpoint(key, receiver.url);
      const eventId = await h.event(key, 'deposit.completed');
      expect(await h.worker().runOnce()).toBe(1);
      expect(receiver.hits).toHaveLength(1);
      expect(target.hits).toEqual([]);
      const [delivery] = await h.deliveries([eventId]);
      expect(delivery).toMatchObject({ status: 'PENDING', attempts: 1 });
      expect((await h.attempts(delivery!.id)).map((attempt) => attempt.status_code)).toEqual([307]);
    });

    it('retries after 500s with backoff, then delivers; every attempt recorded', async () => {
      const start = h.resetClock();
      const receiver = await h.receiver();
      receiver.answer = (_hit, index) => (index < 2 ? 'fail' : 'ok');
      const key = await h.key();
      const endpoint = await h.endpoint(key, receiver.url);
      const eventId = await h.event(key, 'deposit.completed');
      const worker = h.worker({ random: () => 0.5 });

      expect(await worker.runOnce()).toBe(1);
      let [delivery] = await h.deliveries([eventId]);
      expect(delivery).toMatchObject({
        status: 'PENDING',
        attempts: 1,
        next_attempt_at: new Date(start.getTime() + 225_000),
      });
      expect(await worker.runOnce()).toBe(0); // not due yet
      h.advance(225_000);
      expect(await worker.runOnce()).toBe(1);
      [delivery] = await h.deliveries([eventId]);
      expect(delivery).toMatchObject({
        status: 'PENDING',
        attempts: 2,
        next_attempt_at: new Date(start.getTime() + 225_000 + 450_000),
      });
      h.advance(449_999);
      expect(await worker.runOnce()).toBe(0);
      h.advance(1);
      expect(await worker.runOnce()).toBe(1);
      [delivery] = await h.deliveries([eventId]);
      expect(delivery).toMatchObject({ status: 'DELIVERED', attempts: 3, delivered_at: h.clock });

      const attempts = await h.attempts(delivery!.id);
      expect(attempts.map((attempt) => attempt.status_code)).toEqual([500, 500, 200]);
      expect(attempts.map((attempt) => attempt.attempted_at.getTime() - start.getTime())).toEqual([
        0, 225_000, 675_000,
      ]);
      // Each attempt is signed at its own time, and every one verifies.
      expect(receiver.hits.map((hit) => hit.headers['x-service-signature']!.split(',')[0])).toEqual(
        [0, 225, 675].map((s) => `t=${start.getTime() / 1000 + s}`),
      );
      receiver.hits.forEach((hit, i) => {
        const nowSeconds = start.getTime() / 1000 + [0, 225, 675][i]!;
        expect(
          verifyWebhookSignature({
            secret: endpoint.secret,
            rawBody: hit.rawBody,
            header: hit.headers['x-service-signature'],
            nowSeconds,
          }),
        ).toEqual({ ok: true });
      });
    });

    it('counts a timeout as a failed attempt', async () => {
      h.resetClock();
      const receiver = await h.receiver();
      receiver.answer = (_hit, index) => (index === 0 ? 'hang' : 'ok');
      const key = await h.key();
      await h.endpoint(key, receiver.url);
      const eventId = await h.event(key, 'withdrawal.pending');
      const worker = h.worker({ options: { requestTimeoutMs: 300 } });
      const started = Date.now();
      expect(await worker.runOnce()).toBe(1);
      expect(Date.now() - started).toBeLessThan(2500);
      const [delivery] = await h.deliveries([eventId]);
      expect(delivery).toMatchObject({ status: 'PENDING', attempts: 1 });
      const [attempt] = await h.attempts(delivery!.id);
      expect(attempt).toMatchObject({ status_code: null, error: 'timeout: no complete answer within 300 ms' });
      expect(attempt!.duration_ms).toBeGreaterThanOrEqual(250);
      h.advance(300_000); // past the first retry's ceiling
      expect(await worker.runOnce()).toBe(1);
      expect((await h.deliveries([eventId]))[0]).toMatchObject({ status: 'DELIVERED', attempts: 2 });
    });

    it('gives up 72 h after the event, after retries never more than 24 h apart', async () => {
      const start = h.resetClock();
      const receiver = await h.receiver();
      receiver.answer = () => 'fail';
      const key = await h.key();
      await h.endpoint(key, receiver.url);
      const eventId = await h.event(key, 'withdrawal.failed');
      const worker = h.worker();
      for (let round = 0; round < 100; round += 1) {
        expect(await worker.runOnce()).toBe(1);
        const [delivery] = await h.deliveries([eventId]);
        if (delivery!.status !== 'PENDING') break;
        h.clock = delivery!.next_attempt_at;
      }
      const [delivery] = await h.deliveries([eventId]);
      expect(delivery!.status).toBe('GAVE_UP');
      const attempts = await h.attempts(delivery!.id);
      expect(delivery!.attempts).toBe(attempts.length);
      expect(receiver.hits).toHaveLength(attempts.length);
      // docs/contract.md#webhooks-retries: 11 tries if every wait drew its maximum, 13 at most.
      expect(attempts.length).toBeGreaterThanOrEqual(11);
      expect(attempts.length).toBeLessThanOrEqual(14);
      const times = attempts.map((attempt) => attempt.attempted_at.getTime());
      expect(times.at(-1)).toBe(start.getTime() + 72 * HOUR);
      for (let i = 1; i < times.length; i += 1) {
        const gap = times[i]! - times[i - 1]!;
        expect(gap).toBeGreaterThanOrEqual(i === times.length - 1 ? 0 : retryCeilingMs(i) / 2);
        expect(gap).toBeLessThanOrEqual(retryCeilingMs(i));
      }
      expect(attempts.every((attempt) => attempt.status_code === 500)).toBe(true);
      expect(await worker.runOnce()).toBe(0);
    });

    it('still tries once an event found older than 72 h (a worker that was down for days)', async () => {
      h.resetClock();
      const receiver = await h.receiver();
      const key = await h.key();
      await h.endpoint(key, receiver.url);
      const [delivered, gaveUp] = [await h.event(key, 'deposit.completed'), await h.event(key, 'deposit.failed')];
      receiver.answer = (hit) => (hit.eventId === delivered ? 'ok' : 'fail');
      h.advance(100 * HOUR);
      expect(await h.worker().runOnce()).toBe(2);
      const rows = await h.deliveries([delivered, gaveUp]);
      expect(rows.map((row) => [row.event_id, row.status, row.attempts])).toEqual([
        [delivered, 'DELIVERED', 1],
        [gaveUp, 'GAVE_UP', 1],
      ]);
    });

    it('gives up, without sending, a delivery whose endpoint was deleted while a worker held it', async () => {
      h.resetClock();
      const receiver = await h.receiver();
      receiver.answer = (_hit, index) => (index === 0 ? 'hang' : 'ok');
      const key = await h.key();
      const endpoint = await h.endpoint(key, receiver.url);
      const eventId = await h.event(key, 'deposit.pending');
      const worker = h.worker({ options: { requestTimeoutMs: 1500 } });
      const round = worker.runOnce();
      await waitFor(() => receiver.hits.length === 1);
      // The DELETE does not wait for the held row (the receiver may take the whole timeout).
      const started = Date.now();
      expect((await h.harness.signed({ key, method: 'DELETE', path: `${ENDPOINTS}/${endpoint.id}` })).status).toBe(200);
      expect(Date.now() - started).toBeLessThan(1000);
      expect(await round).toBe(1);
      expect((await h.deliveries([eventId]))[0]).toMatchObject({ status: 'PENDING', attempts: 1 });
      h.advance(HOUR);
      expect(await worker.runOnce()).toBe(1);
      expect((await h.deliveries([eventId]))[0]).toMatchObject({ status: 'GAVE_UP', attempts: 1 });
      expect(receiver.hits).toHaveLength(1);
    });

    it('delivers everything once a receiver that was down comes back', async () => {
      h.resetClock();
      const first = await Receiver.start();
      const port = first.port;
      const key = await h.key();
      await h.endpoint(key, first.url);
      await first.close(); // down: connections refused
      const events = await Promise.all(
        Array.from({ length: 5 }, (_, i) => h.event(key, 'withdrawal.completed', { n: i })),
      );
      const worker = h.worker();
      expect(await worker.runOnce()).toBe(5);
      h.advance(HOUR);
      expect(await worker.runOnce()).toBe(5);
      const rows = await h.deliveries(events);
      expect(rows.every((row) => row.status === 'PENDING' && row.attempts === 2)).toBe(true);
      const [attempt] = await h.attempts(rows[0]!.id);
      expect(attempt!.status_code).toBeNull();
      expect(attempt!.error).toMatch(/ECONNREFUSED/);

      const back = await h.receiver(port);
      h.advance(HOUR);
      expect(await worker.runOnce()).toBe(5);
      expect((await h.deliveries(events)).map((row) => row.status)).toEqual(Array(5).fill('DELIVERED'));
      expect(back.hits.map((hit) => hit.eventId).sort()).toEqual([...events].sort());
    });

    describe.each<ClaimMode>(['lock', 'lease'])('two workers at once (%s)', (claim) => {
      it('deliver 50 events, each exactly once per successful attempt', async () => {
        h.resetClock();
        const receiver = await h.receiver();
        // The first request of every third event fails, so some events take two attempts.
        receiver.answer = (hit) => {
          const n = (JSON.parse(hit.rawBody.toString()) as { data: { n: number } }).data.n;
          return n % 3 === 0 && receiver.hitsFor(hit.eventId).length === 0 ? 'fail' : 'ok';
        };
        const key = await h.key();
        await h.endpoint(key, receiver.url);
        const events: string[] = [];
        for (let n = 0; n < 50; n += 1) events.push(await h.event(key, 'deposit.completed', { n }));

        const otherPool = openTestPostgres(await databaseUrl(h.db, 'webhook_worker_b'), { maxConnections: 4 });
        try {
          const options = { batchSize: 7, concurrency: 3, claim };
          const a = h.worker({ options });
          const b = h.worker({ db: otherPool, options });
          const claimed = { a: 0, b: 0 };
          for (let round = 0; round < 20 && (await h.pending(events)) > 0; round += 1) {
            const [fromA, fromB] = await Promise.all([drain(a), drain(b)]);
            claimed.a += fromA;
            claimed.b += fromB;
            h.advance(HOUR);
          }
          expect(await h.pending(events)).toBe(0);
          expect(claimed.a).toBeGreaterThan(0);
          expect(claimed.b).toBeGreaterThan(0);

          const rows = await h.deliveries(events);
          expect(rows.every((row) => row.status === 'DELIVERED')).toBe(true);
          let attemptsTotal = 0;
          for (const row of rows) {
            const hits = receiver.hitsFor(row.event_id);
            const attempts = await h.attempts(row.id);
            attemptsTotal += attempts.length;
            // One request per recorded attempt, and exactly one successful one.
            expect(hits.map((hit) => hit.answer)).toEqual(
              attempts.map((attempt) => (attempt.status_code === 200 ? 'ok' : 'fail')),
            );
            expect(hits.filter((hit) => hit.answer === 'ok')).toHaveLength(1);
            expect(row.attempts).toBe(attempts.length);
          }
          expect(attemptsTotal).toBe(50 + 17);
          expect(claimed.a + claimed.b).toBe(attemptsTotal);
          expect(receiver.hits).toHaveLength(attemptsTotal);
        } finally {
          await otherPool.close();
        }
      });
    });

    it('a worker killed mid-delivery loses nothing: another delivers every event', async () => {
      h.resetClock();
      const receiver = await h.receiver();
      receiver.answer = (_hit, index) => (index < 5 ? 'hang' : 'ok');
      const key = await h.key();
      const endpoint = await h.endpoint(key, receiver.url);
      const events = await Promise.all(
        Array.from({ length: 5 }, (_, i) => h.event(key, 'withdrawal.processing', { n: i })),
      );

      // Worker A on its own connection, found by its application_name.
      const poolA = openTestPostgres(await databaseUrl(h.db, 'webhook_worker_a'), { maxConnections: 2 });
      const a = h.worker({ db: poolA, options: { requestTimeoutMs: 20_000, concurrency: 8 } });
      const roundA = a.runOnce();
      roundA.catch(() => {}); // its failure is asserted below
      await waitFor(() => receiver.hits.length === 5);

      // A "crashes": its connection dies with its transaction open, as when a process is killed.
      const killed = await h.db.query<{ killed: boolean }>(
        "SELECT pg_terminate_backend(pid) AS killed FROM pg_stat_activity WHERE datname = current_database() AND application_name = 'webhook_worker_a'",
      );
      expect(killed.rows.length).toBeGreaterThan(0);
      // PostgreSQL rolled A's transaction back: the rows are unlocked and still PENDING.
      await waitFor(
        async () =>
          (
            await h.db.query(
              "SELECT 1 FROM webhook_deliveries WHERE event_id = ANY($1::text[]) AND status = 'PENDING' FOR UPDATE SKIP LOCKED",
              [events],
            )
          ).rowCount === 5,
      );

      const b = h.worker();
      expect(await b.runOnce()).toBe(5);
      const rows = await h.deliveries(events);
      expect(rows.map((row) => [row.status, row.attempts])).toEqual(Array(5).fill(['DELIVERED', 1]));
      for (const eventId of events) {
        const hits = receiver.hitsFor(eventId);
        expect(hits.map((hit) => hit.answer)).toEqual(['hang', 'ok']); // at least once
        const t = Number(/^t=([0-9]+)/.exec(hits[1]!.headers['x-service-signature']!)![1]);
        expect(
          verifyWebhookSignature({
            secret: endpoint.secret,
            rawBody: hits[1]!.rawBody,
            header: hits[1]!.headers['x-service-signature'],
            nowSeconds: t,
          }),
        ).toEqual({ ok: true });
      }

      // A itself, once stopped, cannot record anything: its transaction is gone.
      await a.stop();
      await expect(roundA).rejects.toThrow();
      await poolA.close();
      for (const row of rows) expect((await h.attempts(row.id)).map((attempt) => attempt.status_code)).toEqual([200]);
    });

    it('stop() interrupts a hanging attempt promptly; the delivery is due again at once', async () => {
      h.resetClock();
      const receiver = await h.receiver();
      receiver.answer = (_hit, index) => (index === 0 ? 'hang' : 'ok');
      const key = await h.key();
      await h.endpoint(key, receiver.url);
      const eventId = await h.event(key, 'deposit.completed');
      const worker = new WebhookDeliveryWorker({
        db: h.db,
        keyring: h.harness.keyring,
        now: () => h.clock,
        options: { pollIntervalMs: 20, requestTimeoutMs: 20_000 },
      });
      worker.start();
      await waitFor(() => receiver.hits.length === 1);
      const started = Date.now();
      await worker.stop();
      expect(Date.now() - started).toBeLessThan(1000);
      await expect(worker.runOnce()).rejects.toThrow('stopped');
      const [delivery] = await h.deliveries([eventId]);
      expect(delivery).toMatchObject({ status: 'PENDING', attempts: 0 });
      expect(delivery!.next_attempt_at.getTime()).toBeLessThanOrEqual(h.clock.getTime());
      expect((await h.attempts(delivery!.id))[0]!.error).toMatch(/^interrupted/);
      expect(await h.worker().runOnce()).toBe(1);
      expect((await h.deliveries([eventId]))[0]).toMatchObject({ status: 'DELIVERED', attempts: 1 });
    });

    it('buildCoreApp runs the worker (unless turned off) and stops it on close', async () => {
      const receiver = await h.receiver();
      const key = await h.key();
      await h.endpoint(key, receiver.url);
      const deps = { db: h.db, store: h.harness.store, registry: h.harness.registry, keyring: h.harness.keyring };
      const quiet = {
        logLevel: 'silent',
        depositCompleter: { enabled: false },
        withdrawalProcessor: { enabled: false },
      } as const;

      const off = await buildCoreApp(deps, { ...quiet, webhookWorker: { enabled: false, pollIntervalMs: 20 } });
      const first = await h.event(key, 'deposit.completed', {}, new Date());
      // Turned off: the app started no worker loop, so nothing can deliver the event.
      expect(livePollLoops()).not.toContain('webhook worker');
      expect(receiver.hits).toHaveLength(0);
      await off.close();

      const app = await buildCoreApp(deps, { ...quiet, webhookWorker: { pollIntervalMs: 20 } });
      await waitFor(() => receiver.hits.length === 1);
      expect(receiver.hits[0]!.eventId).toBe(first);
      const second = await h.event(key, 'deposit.completed', {}, new Date());
      await waitFor(() => receiver.hits.length === 2);
      expect(receiver.hits[1]!.eventId).toBe(second);
      await app.close();
      await h.event(key, 'deposit.completed', {}, new Date());
      // Closed: the worker's loop ended with its last round, so nothing delivers the new event.
      expect(livePollLoops()).not.toContain('webhook worker');
      expect(receiver.hits).toHaveLength(2);
    });
  });
});

// ---------------------------------------------------------------------------------------------
// PGlite: leases instead of held locks

describe('webhooks on PGlite (lease claims)', () => {
  const h = webhookSuite((outbound) =>
    V3Harness.start({
      driver: 'pglite',
      storeKind: 'memory',
      core: { rateLimits: { reads: 100_000, writes: 100_000 }, outbound },
    }),
  );

  it('delivers signed, and a hanging receiver does not stall the database', async () => {
    const clock = h.resetClock();
    const receiver = await h.receiver();
    receiver.answer = (_hit, index) => (index === 0 ? 'hang' : 'ok');
    const key = await h.key();
    const endpoint = await h.endpoint(key, receiver.url);
    const eventId = await h.event(key, 'withdrawal.completed');
    const worker = h.worker({ options: { requestTimeoutMs: 1500 } });
    expect(worker.options.claim).toBe('lease');
    const round = worker.runOnce();
    await waitFor(() => receiver.hits.length === 1);
    const started = Date.now();
    await h.db.query('SELECT 1');
    expect((await h.harness.signed({ key, path: ENDPOINTS })).status).toBe(200);
    expect(Date.now() - started).toBeLessThan(1000);
    expect(await round).toBe(1);

    const [delivery] = await h.deliveries([eventId]);
    expect(delivery).toMatchObject({ status: 'PENDING', attempts: 1 });
    h.advance(HOUR);
    expect(await worker.runOnce()).toBe(1);
    expect((await h.deliveries([eventId]))[0]).toMatchObject({ status: 'DELIVERED', attempts: 2 });
    const hit = receiver.hits[1]!;
    expect(
      verifyWebhookSignature({
        secret: endpoint.secret,
        rawBody: hit.rawBody,
        header: hit.headers['x-service-signature'],
        nowSeconds: h.clock.getTime() / 1000,
      }),
    ).toEqual({ ok: true });
    expect(JSON.parse(hit.rawBody.toString())).toMatchObject({ id: eventId, createdAt: clock.toISOString() });
  });

  it('a worker that never comes back loses nothing: its lease runs out and another delivers', async () => {
    h.resetClock();
    const receiver = await h.receiver();
    receiver.answer = (_hit, index) => (index === 0 ? 'hang' : 'ok');
    const key = await h.key();
    await h.endpoint(key, receiver.url);
    const eventId = await h.event(key, 'deposit.completed');
    const stuck = h.worker({ options: { requestTimeoutMs: 20_000, batchSize: 10, concurrency: 5 } });
    const stuckRound = stuck.runOnce();
    await waitFor(() => receiver.hits.length === 1);

    const other = h.worker();
    expect(await other.runOnce()).toBe(0); // leased
    h.advance(3 * 20_000 + 1); // (batch / concurrency + 1) timeouts
    expect(await other.runOnce()).toBe(1);
    expect((await h.deliveries([eventId]))[0]).toMatchObject({ status: 'DELIVERED', attempts: 1 });

    // The stuck worker's late outcome changes nothing (its attempt is still on record).
    await stuck.stop();
    expect(await stuckRound).toBe(1);
    const [delivery] = await h.deliveries([eventId]);
    expect(delivery).toMatchObject({ status: 'DELIVERED', attempts: 1 });
    expect(
      (await h.attempts(delivery!.id)).map((attempt) => attempt.status_code ?? attempt.error!.split(':')[0]),
    ).toEqual([200, 'interrupted']);
  });
});

// ---------------------------------------------------------------------------------------------

/** Rounds until one finds nothing due; returns the deliveries claimed. */
async function drain(worker: WebhookDeliveryWorker): Promise<number> {
  let total = 0;
  for (;;) {
    const claimed = await worker.runOnce();
    total += claimed;
    if (claimed === 0) return total;
  }
}

/** The test database's URL, for a second pool whose connections carry this application_name. */
async function databaseUrl(db: Database, applicationName: string): Promise<string> {
  const { rows } = await db.query<{ name: string }>('SELECT current_database() AS name');
  const url = new URL(testDatabaseUrl(rows[0]!.name));
  url.searchParams.set('application_name', applicationName);
  return url.toString();
}
