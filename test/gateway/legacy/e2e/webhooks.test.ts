/**
 * Legacy webhooks end to end: the gateway in front of the real core (LegacyHarness), the core's
 * own v3 webhook worker delivering to the gateway's receiver, and a legacy integrator's receiver
 * (a node:http server) checking every body and its X-Webhook-Signature. Money moves through the
 * v3 sandbox endpoints, as an integrator's test would move it. Runs on PostgreSQL and Redis, and
 * again on PGlite and the in-process store (the `embedded` project), where the gateway's worker
 * leases its rows.
 *
 * Set FXGATE_PRINT_TIMINGS=1 to print how long each delivery took from the v3 call that caused it.
 */
import { createHmac, randomUUID } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import { hmac } from '@noble/hashes/hmac.js';
import { sha256 } from '@noble/hashes/sha2.js';
import { Pool } from 'undici';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';

import { addWebhook, type WebhookCommandDeps } from '../../../../src/cli/commands/webhooks.js';
import { WebhookDeliveryWorker } from '../../../../src/core/events/webhook-worker.js';
import { ProvisioningCredentials } from '../../../../src/gateway/upstream/signing-credentials.js';
import { V3Client } from '../../../../src/gateway/upstream/v3-client.js';
import { LegacyWebhooks } from '../../../../src/gateway/webhooks/legacy-webhooks.js';
import {
  LEGACY_WEBHOOK_PATH,
  registrationSecretBinding,
  WebhookRegistrar,
} from '../../../../src/gateway/webhooks/registrations.js';
import { addSubscription, removeSubscription } from '../../../../src/gateway/webhooks/subscriptions.js';
import type { Mode } from '../../../../src/lib/auth/credential-vocabulary.js';
import { idToLegacyUuid, newUuid } from '../../../../src/lib/ids.js';
import type { LoadedKey } from '../../../../src/lib/keys/key-file.js';
import { AllowedNetworks } from '../../../../src/lib/net/allowed-networks.js';
import { ExactDestinations, webhookPolicies } from '../../../../src/lib/net/destination-policy.js';
import type { SealingKeyring } from '../../../../src/lib/secrets/sealing-keyring.js';
import {
  signWebhook,
  verifyLegacyWebhook,
  type WebhookSignatureHeaders,
} from '../../../../src/lib/webhooks/signature.js';
import { FEDWIRE_ACCOUNT, postData, postEmpty } from '../../../support/book-fixtures.js';
import { LegacyHarness } from '../../../support/legacy-harness.js';
import { LegacyWebhookReceiver, type ReceivedWebhook } from '../../../support/legacy-webhook-receiver.js';
import { TEST_ISSUER } from '../../../support/v3-harness.js';

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;
const ALL_EVENTS = ['deposits', 'withdrawals', 'failed-deposits', 'failed-withdrawals'];
const timings: string[] = [];

let h: LegacyHarness;
let webhooks: LegacyWebhooks;
let coreWorker: WebhookDeliveryWorker;
let receiver: LegacyWebhookReceiver;
let keyring: SealingKeyring;

/** The gateway's own listener, which the core's webhooks may reach in both modes, as `fxgate all` allows it. */
const ownListener = new ExactDestinations();
/** The integrator's receiver is on this machine: allowed as an in-house network, so that live subscriptions reach it. */
const IN_HOUSE = AllowedNetworks.of(['127.0.0.1']);

beforeAll(async () => {
  h = await LegacyHarness.start({
    core: { outbound: { exact: ownListener } },
    webhooks: (core) =>
      (webhooks = new LegacyWebhooks({
        db: core.db,
        // One keyring for both parts, as `fxgate all` has.
        keyring: core.keyring,
        callbackBaseUrl: (port) => {
          const base = `http://127.0.0.1:${port}${LEGACY_WEBHOOK_PATH}`;
          ownListener.allow(base);
          return base;
        },
        outbound: { networks: IN_HOUSE },
        // Seconds rather than minutes, so that a retry happens within a test.
        worker: { pollIntervalMs: 50, requestTimeoutMs: 2_000, retry: { baseMs: 300, capMs: 1_000, maxAgeMs: 60_000 } },
        reconcileIntervalMs: 3_600_000,
      })),
  });
  coreWorker = new WebhookDeliveryWorker({
    db: h.core.db,
    keyring: h.core.keyring,
    options: { pollIntervalMs: 50, requestTimeoutMs: 5_000 },
    outbound: { exact: ownListener },
  });
  coreWorker.start();
  receiver = await LegacyWebhookReceiver.start();
  keyring = h.core.keyring;
});

afterEach(() => {
  receiver.answer = () => 200;
});

afterAll(async () => {
  await coreWorker?.stop();
  await h?.close();
  await receiver?.close();
  if (process.env.FXGATE_PRINT_TIMINGS === '1')
    process.stdout.write(`legacy webhook delivery timings:\n${timings.join('\n')}\n`);
});

/** The webhooks commands as the CLI runs them, in process, registering through the running gateway's registrar. */
function commandDeps(): WebhookCommandDeps {
  return {
    db: h.core.db,
    keyring,
    events: { names: webhooks.builder.eventNames, defaults: webhooks.builder.defaultEvents },
    registration: { registrar: webhooks.registrar, base: webhooks.callbackBase! },
    outbound: { networks: IN_HOUSE },
  };
}

interface Book {
  readonly key: LoadedKey;
  readonly orgId: string;
  readonly secret: string;
  readonly subscriptionId: string;
}

/** A new org with a sandbox v3 key and one subscription of `events` to the receiver at `path`. */
async function book(
  events: string[] = ALL_EVENTS,
  path = `/hooks/${randomUUID()}`,
  mode: Mode = 'sandbox',
): Promise<Book> {
  const key = await h.core.createKey({ mode });
  const added = await addWebhook(commandDeps(), { org: key.file.orgId, mode, url: receiver.url(path), events });
  expect(added.note.state, JSON.stringify(added.note)).toBe('registered');
  return { key, orgId: key.file.orgId, secret: added.secret, subscriptionId: added.subscription.id };
}

function hitsAt(path: string): ReceivedWebhook[] {
  return receiver.received.filter((hit) => hit.path === path);
}

async function subscriptionPath(id: string): Promise<string> {
  const { rows } = await h.core.db.query<{ url: string }>(
    'SELECT url FROM legacy_webhook_subscriptions WHERE id = $1',
    [id],
  );
  return new URL(rows[0]!.url).pathname;
}

/** Waits for the legacy event made from this v3 resource at the subscription's URL, and returns it. */
async function delivered(
  subscriptionId: string,
  match: (hit: ReceivedWebhook) => boolean,
  timeoutMs = 15_000,
): Promise<ReceivedWebhook> {
  const path = await subscriptionPath(subscriptionId);
  await receiver.waitFor(() => hitsAt(path).some(match), timeoutMs);
  return hitsAt(path).find(match)!;
}

/**
 * The barrier before asserting that something did not arrive: the core has no delivery of these v3 events left to
 * make to the gateway (it writes them with the event, so an event the gateway did not ask for has none), and the
 * subscription's outbox has nothing left to send. Every request the gateway will ever make for them has then
 * reached the receiver (it records a request before answering it), so no sleep is needed.
 */
async function settled(subscriptionId: string, v3EventIds: readonly string[] = []): Promise<void> {
  await expect
    .poll(
      async () => {
        const { rows } = await h.core.db.query<{ n: number }>(
          `SELECT ((SELECT count(*) FROM webhook_deliveries WHERE event_id = ANY($1::text[]) AND status = 'PENDING')
                 + (SELECT count(*) FROM legacy_webhook_deliveries WHERE subscription_id = $2 AND status = 'PENDING'))::int AS n`,
          [v3EventIds, subscriptionId],
        );
        return rows[0]!.n;
      },
      { timeout: 15_000, interval: 25, message: 'the v3 deliveries and the legacy outbox did not settle' },
    )
    .toBe(0);
}

const isRecord = (id: string, message: string) => (hit: ReceivedWebhook) =>
  hit.body.data[0]?.id === id && hit.body.message === message;

function independentBase64Hmac(secret: string, body: Buffer): string {
  return Buffer.from(hmac(sha256, new TextEncoder().encode(secret), new Uint8Array(body))).toString('base64');
}

/** What every legacy delivery is: one signature header, the envelope's keys in order, a verifiable body. */
function expectLegacyDelivery(hit: ReceivedWebhook, secret: string): void {
  expect(hit.headers['content-type']).toBe('application/json');
  expect(hit.headers['x-webhook-signature']).toBe(independentBase64Hmac(secret, hit.rawBody));
  expect(verifyLegacyWebhook(hit.rawBody, hit.headers['x-webhook-signature'], secret)).toEqual({ ok: true });
  expect(verifyLegacyWebhook(hit.rawBody, hit.headers['x-webhook-signature'], 'whsec_another')).toEqual({
    ok: false,
    reason: 'SIGNATURE_MISMATCH',
  });
  // One signature, the legacy one: no v3 headers leak through.
  expect(Object.keys(hit.headers).filter((name) => name.startsWith('x-service'))).toEqual([]);
  expect(Object.keys(hit.body)).toEqual(['eventId', 'type', 'message', 'timestamp', 'data']);
  expect(hit.body.eventId).toMatch(UUID);
  expect(hit.body.data).toHaveLength(1);
}

async function v3EventOf(
  resourceId: string,
  eventType: string,
): Promise<{ id: string; created_at: Date; data: Record<string, unknown> }> {
  const { rows } = await h.core.db.query<{ id: string; created_at: Date; data: Record<string, unknown> }>(
    `SELECT id, created_at, data FROM events WHERE event_type = $1 AND data->>'id' = $2`,
    [eventType, resourceId],
  );
  expect(rows).toHaveLength(1);
  return rows[0]!;
}

async function legacyEventCount(): Promise<number> {
  const { rows } = await h.core.db.query<{ n: number }>('SELECT count(*)::int AS n FROM legacy_webhook_events');
  return rows[0]!.n;
}

/** The secret of the gateway's v3 endpoint for the org, as the gateway keeps it. */
async function endpointSecret(orgId: string, mode: Mode = 'sandbox'): Promise<string> {
  const { rows } = await h.core.db.query<{ id: string; secret: string }>(
    `SELECT id, secret FROM legacy_webhook_registrations WHERE org_id = $1 AND mode = $2 AND status = 'ACTIVE'`,
    [orgId, mode],
  );
  return keyring.open(rows[0]!.secret, registrationSecretBinding(rows[0]!.id));
}

/** POSTs a v3 delivery to the gateway's receiver as v3 would, or as a forger would. */
function sendToReceiver(
  orgId: string,
  body: string,
  headers: Readonly<Record<string, string>> | WebhookSignatureHeaders,
  mode: Mode = 'sandbox',
) {
  return h.send({
    method: 'POST',
    path: `${LEGACY_WEBHOOK_PATH}/${orgId}/${mode}`,
    body,
    headers: { 'content-type': 'application/json', ...headers },
  });
}

function v3Body(
  event: { id: string; created_at: Date; data: Record<string, unknown> },
  eventType: string,
  data: Record<string, unknown> = event.data,
): string {
  return JSON.stringify({
    id: event.id,
    type: eventType.startsWith('deposit') ? 'deposits' : 'withdrawals',
    eventType,
    createdAt: event.created_at.toISOString(),
    data,
  });
}

async function sandboxWithdrawal(key: LoadedKey, amount: string): Promise<{ accountId: string; withdrawalId: string }> {
  const account = await postData(h.core, key, '/v3/fx/withdrawal-accounts', FEDWIRE_ACCOUNT);
  await postEmpty(h.core, key, `/v3/fx/sandbox/withdrawal-accounts/${account.id}/verify`);
  const withdrawal = await postData(h.core, key, '/v3/fx/withdrawals', {
    withdrawalAccountId: account.id,
    withdrawalAmount: amount,
    currency: 'USD',
    comments: 'payout 7',
  });
  return { accountId: account.id!, withdrawalId: withdrawal.id! };
}

describe('legacy webhooks from the real core', () => {
  it('a completed sandbox deposit reaches the receiver in the legacy shape, signed with the subscription secret', async () => {
    const { key, orgId, secret, subscriptionId } = await book();
    const started = Date.now();
    const deposit = await postData(h.core, key, '/v3/fx/sandbox/deposits', {
      currency: 'USD',
      amount: '1234.50',
      referenceId: 'INV-77',
      comments: 'first funding',
    });
    const hit = await delivered(
      subscriptionId,
      isRecord(idToLegacyUuid('deposit', deposit.id!)!, 'Completed Deposits'),
    );
    timings.push(`deposit completed: ${hit.at - started} ms from POST /v3/fx/sandbox/deposits to the receiver`);

    expectLegacyDelivery(hit, secret);
    const event = await v3EventOf(deposit.id!, 'deposit.completed');
    expect(hit.body).toEqual({
      eventId: idToLegacyUuid('event', event.id),
      type: 'deposits',
      message: 'Completed Deposits',
      timestamp: event.created_at.toISOString(),
      data: [
        {
          id: idToLegacyUuid('deposit', deposit.id!),
          orgId,
          amount: 1234.5,
          currency: 'USD',
          status: 'COMPLETED',
          network: 'FIAT',
          referenceId: 'INV-77',
          comments: 'first funding',
          transactionHash: null,
          completedAt: deposit.completedAt,
        },
      ],
    });
    // The amount is a JSON number with exactly the v3 digits, trailing zero included.
    expect(hit.rawBody.toString('utf8')).toContain('"amount":1234.50,');
    expect(Object.keys(hit.body.data[0]!)).toEqual([
      'id',
      'orgId',
      'amount',
      'currency',
      'status',
      'network',
      'referenceId',
      'comments',
      'transactionHash',
      'completedAt',
    ]);
    // The pending event of the same deposit is no legacy event: once the gateway has taken it, nothing is queued.
    const pending = await v3EventOf(deposit.id!, 'deposit.pending');
    await settled(subscriptionId, [pending.id, event.id]);
    const { rows } = await h.core.db.query('SELECT 1 FROM legacy_webhook_events WHERE v3_event_id = $1', [pending.id]);
    expect(rows).toEqual([]);
    expect(hitsAt(await subscriptionPath(subscriptionId))).toHaveLength(1);
  });

  it('a deposit v3 failed reaches a subscription naming failed-deposits as Failed Deposits, status ERROR', async () => {
    const { key, secret, subscriptionId } = await book();
    const deposit = await postData(h.core, key, '/v3/fx/sandbox/deposits', {
      currency: 'USD',
      amount: '5.00',
      outcome: 'FAILED',
    });
    const hit = await delivered(subscriptionId, isRecord(idToLegacyUuid('deposit', deposit.id!)!, 'Failed Deposits'));
    expectLegacyDelivery(hit, secret);
    expect(hit.body).toMatchObject({ type: 'deposits', message: 'Failed Deposits' });
    expect(hit.body.data[0]).toMatchObject({ status: 'ERROR', amount: 5, completedAt: null });
  });

  it('a stablecoin deposit names its chain and its transaction, with six decimals', async () => {
    const { key, secret, subscriptionId } = await book();
    const deposit = await postData(h.core, key, '/v3/fx/sandbox/deposits', { currency: 'USDC', amount: '0.000100' });
    const hit = await delivered(
      subscriptionId,
      isRecord(idToLegacyUuid('deposit', deposit.id!)!, 'Completed Deposits'),
    );
    expectLegacyDelivery(hit, secret);
    expect(hit.body.data[0]).toMatchObject({
      currency: 'USDC',
      network: 'ETHEREUM',
      transactionHash: deposit.transactionHash,
      referenceId: null,
      comments: null,
    });
    expect(hit.rawBody.toString('utf8')).toContain('"amount":0.000100,');
  });

  it('withdrawals: completed and failed, each in its legacy shape; a default subscription gets only the completed one', async () => {
    const { key, orgId, secret, subscriptionId } = await book();
    const defaults = await addWebhook(commandDeps(), {
      org: orgId,
      mode: 'sandbox',
      url: receiver.url(`/hooks/defaults-${randomUUID()}`),
    });
    expect(defaults.subscription.events).toEqual(['deposits', 'withdrawals']);
    await postData(h.core, key, '/v3/fx/sandbox/deposits', { currency: 'USD', amount: '500.00' });

    const paid = await sandboxWithdrawal(key, '120.25');
    let started = Date.now();
    const completed = await postEmpty(h.core, key, `/v3/fx/sandbox/withdrawals/${paid.withdrawalId}/complete`);
    const paidHit = await delivered(
      subscriptionId,
      isRecord(idToLegacyUuid('withdrawal', paid.withdrawalId)!, 'Completed Withdrawals'),
    );
    timings.push(
      `withdrawal completed: ${paidHit.at - started} ms from POST /v3/fx/sandbox/withdrawals/{id}/complete to the receiver`,
    );
    expectLegacyDelivery(paidHit, secret);
    const paymentDetails = completed.paymentDetails as unknown as { FEDWIRE: { imad: string } };
    expect(paidHit.body).toMatchObject({ type: 'withdrawals', message: 'Completed Withdrawals' });
    expect(paidHit.body.data[0]).toEqual({
      id: idToLegacyUuid('withdrawal', paid.withdrawalId),
      orgId,
      amount: 120.25,
      currency: 'USD',
      status: 'COMPLETED',
      network: 'FIAT',
      actorEmail: `${key.file.name.split('/')[3]}@api-keys.fxgate.invalid`,
      referenceId: paymentDetails.FEDWIRE.imad,
      comments: 'payout 7',
      transactionHash: null,
      completedAt: completed.completedAt,
    });
    expect(Object.keys(paidHit.body.data[0]!)).toEqual([
      'id',
      'orgId',
      'amount',
      'currency',
      'status',
      'network',
      'actorEmail',
      'referenceId',
      'comments',
      'transactionHash',
      'completedAt',
    ]);

    const refused = await sandboxWithdrawal(key, '80.00');
    started = Date.now();
    await postData(h.core, key, `/v3/fx/sandbox/withdrawals/${refused.withdrawalId}/fail`, {
      failureReason: 'beneficiary bank closed',
    });
    const failedHit = await delivered(
      subscriptionId,
      isRecord(idToLegacyUuid('withdrawal', refused.withdrawalId)!, 'Failed Withdrawals'),
    );
    timings.push(
      `withdrawal failed: ${failedHit.at - started} ms from POST /v3/fx/sandbox/withdrawals/{id}/fail to the receiver`,
    );
    expectLegacyDelivery(failedHit, secret);
    expect(failedHit.body).toMatchObject({ type: 'withdrawals', message: 'Failed Withdrawals' });
    expect(failedHit.body.data[0]).toMatchObject({
      status: 'FAILED',
      amount: 80,
      completedAt: null,
      referenceId: null,
    });
    expect(failedHit.rawBody.toString('utf8')).toContain('"amount":80.00,');

    // The default subscription has its own secret, gets the completed withdrawal and never the failed one.
    const defaultPath = await subscriptionPath(defaults.subscription.id);
    await receiver.waitFor(() => hitsAt(defaultPath).some((hit) => hit.body.message === 'Completed Withdrawals'));
    await settled(defaults.subscription.id, [(await v3EventOf(refused.withdrawalId, 'withdrawal.failed')).id]);
    expect(
      hitsAt(defaultPath)
        .map((hit) => hit.body.message)
        .sort(),
    ).toEqual(['Completed Deposits', 'Completed Withdrawals']);
    for (const hit of hitsAt(defaultPath)) expectLegacyDelivery(hit, defaults.secret);
  });

  it('a receiver that is down and then up gets the event once it is back, every attempt recorded', async () => {
    const down = await LegacyWebhookReceiver.start();
    const port = down.port;
    await down.down();
    const { key, orgId } = await book(['deposits']);
    const other = await addWebhook(commandDeps(), {
      org: orgId,
      mode: 'sandbox',
      url: `http://127.0.0.1:${port}/hooks/down`,
      events: ['deposits'],
    });
    // And one that answers 503 three times before it takes the event.
    let refusals = 0;
    receiver.answer = (hit) => (hit.path === '/hooks/flaky' && refusals++ < 3 ? 503 : 200);
    const flaky = await addWebhook(commandDeps(), {
      org: orgId,
      mode: 'sandbox',
      url: receiver.url('/hooks/flaky'),
      events: ['deposits'],
    });

    const started = Date.now();
    const deposit = await postData(h.core, key, '/v3/fx/sandbox/deposits', { currency: 'EUR', amount: '75.00' });
    const legacyId = idToLegacyUuid('deposit', deposit.id!)!;
    const attemptsOf = async (subscriptionId: string) =>
      (
        await h.core.db.query<{
          status_code: number | null;
          error: string | null;
          duration_ms: number;
          status: string;
          attempts: number;
        }>(
          `SELECT a.status_code, a.error, a.duration_ms, d.status, d.attempts FROM legacy_webhook_delivery_attempts a JOIN legacy_webhook_deliveries d ON d.id = a.delivery_id
            WHERE d.subscription_id = $1 ORDER BY a.id`,
          [subscriptionId],
        )
      ).rows;
    // Refused connections, recorded, while the receiver is down.
    await expect
      .poll(async () => (await attemptsOf(other.subscription.id)).length, { timeout: 10_000 })
      .toBeGreaterThanOrEqual(2);
    for (const attempt of await attemptsOf(other.subscription.id)) {
      expect(attempt.status_code).toBeNull();
      expect(attempt.error).toMatch(/ECONNREFUSED/);
      expect(attempt.duration_ms).toBeGreaterThanOrEqual(0);
    }
    const back = Date.now();
    await down.up();
    try {
      await down.waitFor(() => down.received.some((hit) => hit.body.data[0]?.id === legacyId));
      timings.push(
        `receiver down, then up: delivered ${Date.now() - back} ms after it came back (${back - started} ms after the deposit)`,
      );
      await expect
        .poll(async () => (await attemptsOf(other.subscription.id)).at(-1)?.status, { timeout: 5_000 })
        .toBe('DELIVERED');
      const attempts = await attemptsOf(other.subscription.id);
      expect(attempts.at(-1)).toMatchObject({
        status_code: 200,
        error: null,
        status: 'DELIVERED',
        attempts: attempts.length,
      });
      expectLegacyDelivery(
        down.received.find((hit) => hit.body.data[0]?.id === legacyId)!,
        other.secret,
      );
    } finally {
      await down.close();
    }

    const flakyHit = await delivered(flaky.subscription.id, (hit) => hit.body.data[0]?.id === legacyId);
    expectLegacyDelivery(flakyHit, flaky.secret);
    await expect
      .poll(async () => (await attemptsOf(flaky.subscription.id)).map((attempt) => attempt.status_code), {
        timeout: 5_000,
      })
      .toEqual([503, 503, 503, 200]);
  });

  it('refuses a forged or stale v3 delivery and stores nothing; a duplicate is stored once', async () => {
    const { key, orgId, subscriptionId } = await book(['deposits', 'failed-deposits']);
    const deposit = await postData(h.core, key, '/v3/fx/sandbox/deposits', { currency: 'USD', amount: '10.00' });
    const legacyId = idToLegacyUuid('deposit', deposit.id!)!;
    await delivered(subscriptionId, (hit) => hit.body.data[0]?.id === legacyId);
    const event = await v3EventOf(deposit.id!, 'deposit.completed');
    const secret = await endpointSecret(orgId);
    const before = await legacyEventCount();
    const now = Math.floor(Date.now() / 1000);

    // A new event id, so that only the refusal stands between it and the outbox.
    const fresh = { ...event, id: `evt_${newUuid().replaceAll('-', '')}` };
    const body = v3Body(fresh, 'deposit.completed');
    const forged = await sendToReceiver(orgId, body, signWebhook('whsec_forged', body, now));
    expect(forged.status).toBe(401);
    expect(forged.json()).toMatchObject({
      error: { code: 'AUTH_TOKEN_INVALID_CONFIG', details: { reason: 'SIGNATURE_INVALID' } },
    });
    const unsigned = await sendToReceiver(orgId, body, {});
    expect(unsigned.status).toBe(401);
    expect(unsigned.json()).toMatchObject({ error: { details: { reason: 'SIGNATURE_MISSING' } } });
    const garbled = await sendToReceiver(orgId, body, {
      'x-service-signature': 'v1=not-hex',
      'x-service-webhook-version': 'v3',
    });
    expect(garbled.json()).toMatchObject({ error: { details: { reason: 'SIGNATURE_MALFORMED' } } });
    // Signed, but not for this gateway's reading: another delivery version.
    const version = await sendToReceiver(orgId, body, {
      ...signWebhook(secret, body, now),
      'x-service-webhook-version': 'v4',
    });
    expect(version.status).toBe(400);
    expect(version.json()).toMatchObject({
      error: { code: 'VALIDATION_HEADER_FAILED', details: { header: 'x-service-webhook-version' } },
    });
    // Genuine, but not a v3 event: v3 is told (400) and keeps it, nothing is stored.
    const notAnEvent = JSON.stringify({ hello: 'world' });
    const broken = await sendToReceiver(orgId, notAnEvent, signWebhook(secret, notAnEvent, now));
    expect(broken.status).toBe(400);
    expect(broken.json()).toMatchObject({ error: { code: 'VALIDATION_BODY_FAILED' } });
    // Nothing of a mode with no registration verifies.
    expect((await sendToReceiver(orgId, body, signWebhook(secret, body, now), 'live')).status).toBe(401);
    expect((await sendToReceiver('not-an-org', body, signWebhook(secret, body, now))).status).toBe(404);
    const tampered = await sendToReceiver(orgId, body.replace('"10.00"', '"10000.00"'), signWebhook(secret, body, now));
    expect(tampered.status).toBe(401);
    const stale = await sendToReceiver(orgId, body, signWebhook(secret, body, now - 301));
    expect(stale.status).toBe(400);
    expect(stale.json()).toMatchObject({
      error: { code: 'VALIDATION_HEADER_FAILED', details: { header: 'x-service-signature' } },
    });
    // Another org's path: its secret is not this one.
    const elsewhere = await book(['deposits']);
    expect((await sendToReceiver(elsewhere.orgId, body, signWebhook(secret, body, now))).status).toBe(401);
    expect(await legacyEventCount()).toBe(before);

    // The v3 event already delivered, sent again (a v3 retry): answered, stored once, not delivered again.
    const again = v3Body(event, 'deposit.completed');
    const duplicates = await Promise.all(
      [0, 1, 2].map(() => sendToReceiver(orgId, again, signWebhook(secret, again, now))),
    );
    for (const duplicate of duplicates) {
      expect(duplicate.status).toBe(200);
      expect(duplicate.json()).toMatchObject({
        received: true,
        outcome: 'duplicate',
        eventId: idToLegacyUuid('event', event.id),
      });
    }
    // The same new event three times at once: one stored, the others duplicates.
    const signed = signWebhook(secret, body, now);
    const answers = await Promise.all([0, 1, 2].map(() => sendToReceiver(orgId, body, signed)));
    expect(answers.map((answer) => answer.status)).toEqual([200, 200, 200]);
    expect(answers.map((answer) => answer.json<{ outcome: string }>().outcome).sort()).toEqual([
      'duplicate',
      'duplicate',
      'stored',
    ]);
    const { rows } = await h.core.db.query<{ n: number }>(
      'SELECT count(*)::int AS n FROM legacy_webhook_events WHERE v3_event_id = ANY($1::text[])',
      [[event.id, fresh.id]],
    );
    expect(rows[0]!.n).toBe(2);
    await settled(subscriptionId);
    const path = await subscriptionPath(subscriptionId);
    expect(hitsAt(path).filter((hit) => hit.body.eventId === idToLegacyUuid('event', event.id))).toHaveLength(1);
    expect(hitsAt(path).filter((hit) => hit.body.eventId === idToLegacyUuid('event', fresh.id))).toHaveLength(1);
  });

  it('a failed deposit (from any v3 that reports one) is "Failed Deposits" with the legacy status ERROR', async () => {
    // The core never fails a deposit, so the v3 delivery is made here, signed as v3 signs it.
    const { key, orgId, secret, subscriptionId } = await book(['failed-deposits']);
    const deposit = await postData(h.core, key, '/v3/fx/sandbox/deposits', {
      currency: 'USD',
      amount: '42.10',
      referenceId: 'R-1',
    });
    const event = await v3EventOf(deposit.id!, 'deposit.completed');
    const failed = { ...event, id: `evt_${newUuid().replaceAll('-', '')}` };
    const body = v3Body(failed, 'deposit.failed', { ...event.data, status: 'FAILED', completedAt: null });
    const stored = await sendToReceiver(
      orgId,
      body,
      signWebhook(await endpointSecret(orgId), body, Math.floor(Date.now() / 1000)),
    );
    expect(stored.json()).toMatchObject({ outcome: 'stored', deliveries: 1 });
    const hit = await delivered(subscriptionId, (candidate) => candidate.body.message === 'Failed Deposits');
    expectLegacyDelivery(hit, secret);
    expect(hit.body).toMatchObject({ eventId: idToLegacyUuid('event', failed.id), type: 'deposits' });
    expect(hit.body.data[0]).toMatchObject({
      id: idToLegacyUuid('deposit', deposit.id!),
      status: 'ERROR',
      completedAt: null,
      referenceId: 'R-1',
      amount: 42.1,
    });
    // The completed deposit itself was not asked for.
    expect(hitsAt(await subscriptionPath(subscriptionId)).map((candidate) => candidate.body.message)).toEqual([
      'Failed Deposits',
    ]);
  });

  it('registration is idempotent, one v3 endpoint per org and mode; removing the last subscription deletes it', async () => {
    const first = await book(['deposits']);
    const live = await addWebhook(commandDeps(), {
      org: first.orgId,
      mode: 'live',
      url: receiver.url('/hooks/live'),
      events: ['withdrawals'],
    });
    expect(live.note.state, JSON.stringify(live.note)).toBe('registered');
    const second = await addWebhook(commandDeps(), {
      org: first.orgId,
      mode: 'sandbox',
      url: receiver.url('/hooks/second'),
    });
    // Reconciling again, and two registrars at once, change nothing.
    await Promise.all([
      webhooks.reconcile(),
      webhooks.registrar.ensure(first.orgId, 'sandbox', webhooks.callbackBase!),
      webhooks.registrar.ensure(first.orgId, 'sandbox', webhooks.callbackBase!),
    ]);
    const endpoints = async () =>
      (
        await h.core.db.query<{ environment: string; url: string; status: string; event_types: string[] }>(
          `SELECT environment, url, status, event_types FROM webhook_endpoints WHERE org_id = $1 ORDER BY environment, created_at`,
          [first.orgId],
        )
      ).rows;
    expect(await endpoints()).toEqual([
      {
        environment: 'live',
        url: `${webhooks.callbackBase}/${first.orgId}/live`,
        status: 'ACTIVE',
        event_types: ['deposit.completed', 'deposit.failed', 'withdrawal.completed', 'withdrawal.failed'],
      },
      {
        environment: 'sandbox',
        url: `${webhooks.callbackBase}/${first.orgId}/sandbox`,
        status: 'ACTIVE',
        event_types: ['deposit.completed', 'deposit.failed', 'withdrawal.completed', 'withdrawal.failed'],
      },
    ]);

    // Not the last one: the endpoint stays.
    const kept = await removeSubscription(h.core.db, second.subscription.id, new Date());
    expect(kept).not.toBeNull();
    expect(await webhooks.registrar.releaseIfUnused(first.orgId, 'sandbox')).toEqual([]);
    // The last one: the reconciliation deletes it on v3 and forgets it.
    await removeSubscription(h.core.db, first.subscriptionId, new Date());
    const report = await webhooks.reconcile();
    expect(report?.failed).toEqual([]);
    expect((await endpoints()).map((endpoint) => [endpoint.environment, endpoint.status])).toEqual([
      ['live', 'ACTIVE'],
      ['sandbox', 'DELETED'],
    ]);
    const { rows } = await h.core.db.query<{ mode: string; status: string }>(
      'SELECT mode, status FROM legacy_webhook_registrations WHERE org_id = $1',
      [first.orgId],
    );
    expect(rows).toEqual([{ mode: 'live', status: 'ACTIVE' }]);
    // Added again: a new endpoint.
    const again = await addWebhook(commandDeps(), {
      org: first.orgId,
      mode: 'sandbox',
      url: receiver.url('/hooks/again'),
    });
    expect(again.note.state).toBe('registered');
    expect((await endpoints()).filter((endpoint) => endpoint.status === 'ACTIVE')).toHaveLength(2);
    await removeSubscription(h.core.db, live.subscription.id, new Date());
    await removeSubscription(h.core.db, again.subscription.id, new Date());
    await webhooks.reconcile();
    expect((await endpoints()).filter((endpoint) => endpoint.status === 'ACTIVE')).toEqual([]);
  });

  it('two processes registering one org and mode at once make one v3 endpoint', async () => {
    const key = await h.core.createKey({ mode: 'sandbox' });
    await addSubscription(
      h.core.db,
      keyring,
      {
        orgId: key.file.orgId,
        mode: 'sandbox',
        url: receiver.url('/hooks/race'),
        events: ['deposits'],
        at: new Date(),
      },
      webhookPolicies({ networks: IN_HOUSE }),
    );
    // A second gateway process: its own pool and its own provisioned credential, the same database.
    const keysDir = await mkdtemp(join(tmpdir(), 'fxgate-webhook-race-'));
    const pool = new Pool(h.core.baseUrl);
    try {
      const client = new V3Client({
        dispatcher: pool,
        credentials: new ProvisioningCredentials({ registry: h.core.registry, dir: keysDir, issuer: TEST_ISSUER }),
      });
      const other = new WebhookRegistrar({
        db: h.core.db,
        client,
        keyring,
        v3EventTypes: webhooks.builder.v3EventTypes,
      });
      const [mine, theirs] = await Promise.all([
        webhooks.registrar.ensure(key.file.orgId, 'sandbox', webhooks.callbackBase!),
        other.ensure(key.file.orgId, 'sandbox', webhooks.callbackBase!),
      ]);
      expect(theirs.endpointId).toBe(mine.endpointId);
      const { rows } = await h.core.db.query<{ id: string }>(
        `SELECT id FROM webhook_endpoints WHERE org_id = $1 AND status = 'ACTIVE'`,
        [key.file.orgId],
      );
      expect(rows).toEqual([{ id: mine.endpointId }]);
    } finally {
      await pool.close();
      await rm(keysDir, { recursive: true, force: true });
    }
  });

  it('a delivery held for a removed subscription is given up, not sent', async () => {
    const { key, subscriptionId } = await book(['deposits']);
    receiver.answer = () => 500;
    const deposit = await postData(h.core, key, '/v3/fx/sandbox/deposits', { currency: 'USD', amount: '5.00' });
    const legacyId = idToLegacyUuid('deposit', deposit.id!)!;
    await delivered(subscriptionId, (hit) => hit.body.data[0]?.id === legacyId);
    await removeSubscription(h.core.db, subscriptionId, new Date());
    const count = hitsAt(await subscriptionPath(subscriptionId)).length;
    // Given up is final: no attempt follows it, and the one under way when it was decided has reached the receiver.
    await expect
      .poll(
        async () => {
          const { rows } = await h.core.db.query<{ status: string }>(
            'SELECT status FROM legacy_webhook_deliveries WHERE subscription_id = $1',
            [subscriptionId],
          );
          return rows;
        },
        { timeout: 15_000, interval: 25 },
      )
      .toEqual([{ status: 'GAVE_UP' }]);
    // An attempt already under way when it was removed may still land; none is made after.
    expect(hitsAt(await subscriptionPath(subscriptionId)).length - count).toBeLessThanOrEqual(1);
  });

  it("the v3 signature and the legacy one are different keys: an integrator's secret never signs a v3 delivery", async () => {
    const { orgId, secret } = await book(['deposits']);
    expect(await endpointSecret(orgId)).not.toBe(secret);
    // The stored subscription secret is sealed, never the secret itself.
    const { rows } = await h.core.db.query<{ secret: string }>(
      'SELECT secret FROM legacy_webhook_subscriptions WHERE org_id = $1',
      [orgId],
    );
    expect(rows[0]!.secret).not.toContain(secret);
    expect(rows[0]!.secret.startsWith(`v2.${keyring.sealingKeyId}.`)).toBe(true);
    expect(createHmac('sha256', secret).update('x').digest('base64')).not.toBe(
      createHmac('sha256', await endpointSecret(orgId))
        .update('x')
        .digest('base64'),
    );
  });
});
