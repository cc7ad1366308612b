/**
 * The webhook workers' shared rounds: the lease of a round, writes one after another, attempts in
 * lanes that stop on the signal, the rounds a stop interrupts, and whether a receiver took a
 * delivery; and DeliveryWorkerCore's round over a worker's outbox: what it sends and what it writes.
 */
import { describe, expect, it } from 'vitest';

import type { Database, Queryable } from '../../../src/lib/db/database.js';
import { createPollLoop } from '../../../src/lib/jobs/poll-loop.js';
import type { SealingKeyring } from '../../../src/lib/secrets/sealing-keyring.js';
import type { WebhookRequest } from '../../../src/lib/webhooks/delivery-attempt.js';
import {
  attemptInLanes,
  type AttemptOutcome,
  type ClaimedRow,
  type DeliveryOutcomeName,
  DeliveryRounds,
  DeliveryWorkerCore,
  oneAfterAnother,
  receiverAccepted,
  roundLeaseUntil,
  type SignedDelivery,
  type WorkerCoreDependencies,
} from '../../../src/lib/webhooks/delivery-rounds.js';
import type { DeliveryOutcome } from '../../../src/lib/webhooks/retry-schedule.js';

describe('delivery rounds', () => {
  it('lease a round for its waves of attempts, one more than the batch needs', () => {
    const now = new Date('2026-01-01T00:00:00Z');
    expect(roundLeaseUntil(now, { batchSize: 10, concurrency: 4, requestTimeoutMs: 1000 })).toEqual(
      new Date('2026-01-01T00:00:04Z'),
    );
  });

  it('write one after another, a failed write failing its own call only', async () => {
    const order: string[] = [];
    let release!: () => void;
    const write = oneAfterAnother(async (name: string) => {
      order.push(`start ${name}`);
      if (name === 'a') await new Promise<void>((resolve) => (release = resolve));
      if (name === 'b') throw new Error('b failed');
      order.push(`end ${name}`);
    });
    const a = write('a');
    const b = write('b');
    const c = write('c');
    await Promise.resolve();
    expect(order).toEqual(['start a']);
    release();
    await a;
    await expect(b).rejects.toThrow('b failed');
    await c;
    expect(order).toEqual(['start a', 'end a', 'start b', 'start c', 'end c']);
  });

  it('attempt in lanes of `concurrency`, record each, and stop taking rows once the signal aborts', async () => {
    const rows = ['1', '2', '3', '4', '5'].map((id) => ({ id }));
    const controller = new AbortController();
    let inFlight = 0;
    let most = 0;
    const recorded: string[] = [];
    const reached = await attemptInLanes(rows, {
      concurrency: 2,
      signal: controller.signal,
      now: () => new Date(0),
      attempt: async (row) => {
        inFlight += 1;
        most = Math.max(most, inFlight);
        await Promise.resolve();
        inFlight -= 1;
        return row.id === '2' ? null : `sent ${row.id}`;
      },
      record: async (row, result) => {
        recorded.push(`${row.id}: ${result ?? 'nothing sent'}`);
        if (row.id === '3') controller.abort();
      },
    });
    expect(most).toBe(2);
    expect([...reached].sort()).toEqual(['1', '2', '3', '4']);
    expect(recorded.sort()).toEqual(['1: sent 1', '2: nothing sent', '3: sent 3', '4: sent 4']);
  });

  it('interrupt the rounds in progress on stop, and refuse rounds once stopped', async () => {
    const rounds = new DeliveryRounds('test worker');
    const loop = createPollLoop({ name: 'test worker', tick: async () => 'wait', intervalMs: 1000, onError: () => {} });
    let closed = false;
    const round = rounds.run(
      (signal) =>
        new Promise<string>((resolve) => signal.addEventListener('abort', () => resolve(String(signal.reason)))),
    );
    const stopped = rounds.stop(loop, async () => {
      closed = true;
    });
    expect(rounds.stop(loop, async () => {})).toBe(stopped);
    await stopped;
    expect(await round).toBe('Error: test worker stopping');
    expect(closed).toBe(true);
    expect(rounds.closed).toBe(true);
    await expect(rounds.run(async () => 1)).rejects.toThrow('the test worker is stopped');
  });

  it('count a delivery taken only on a 2xx answer', () => {
    expect(receiverAccepted({ kind: 'answered', statusCode: 204, durationMs: 5 })).toBe(true);
    expect(receiverAccepted({ kind: 'answered', statusCode: 199, durationMs: 5 })).toBe(false);
    expect(receiverAccepted({ kind: 'answered', statusCode: 300, durationMs: 5 })).toBe(false);
    expect(receiverAccepted({ kind: 'failed', error: 'refused: private', durationMs: 0 })).toBe(false);
  });
});

describe('DeliveryWorkerCore', () => {
  interface Row extends ClaimedRow {
    readonly url: string;
  }

  /** A worker of the legacy outbox's shape whose row 2 cannot be signed; a failure is retried a minute later. */
  class TestWorker extends DeliveryWorkerCore<Row> {
    constructor(deps: WorkerCoreDependencies) {
      super(deps, {
        names: { rounds: 'test worker', loop: 'test worker', failed: 'test round failed' },
        kind: 'legacy',
        outbox: {
          deliveries: 'legacy_webhook_deliveries',
          lease: 'leased_until',
          carried: ['event_id', 'subscription_id'],
          columns: 's.url, s.status AS target_status',
          joins: 'JOIN legacy_webhook_subscriptions s ON s.id = c.subscription_id',
        },
        defaults: { pollIntervalMs: 1000, batchSize: 10, concurrency: 2, requestTimeoutMs: 1000 },
        audience: 'operator',
      });
    }

    protected sign(row: Row): SignedDelivery {
      if (row.id === '2') return { notSent: 'the secret does not open' };
      return { mode: 'sandbox', post: { url: row.url, headers: { 'x-row': row.id }, body: Buffer.from(row.id) } };
    }

    protected schedule(_row: Row, attempt: AttemptOutcome): DeliveryOutcome {
      return attempt.succeeded
        ? { status: 'DELIVERED' }
        : { status: 'PENDING', nextAttemptAt: new Date(attempt.now.getTime() + 60_000) };
    }
  }

  it('claims, sends what it signed where its mode allows, and writes each attempt and outcome guarded by the claimed count', async () => {
    const claimed: Row[] = [
      { id: '1', attempts: 0, target_status: 'ACTIVE', url: 'https://receiver.example/hook' },
      { id: '2', attempts: 3, target_status: 'ACTIVE', url: 'https://receiver.example/hook' },
      { id: '3', attempts: 1, target_status: 'REMOVED', url: 'https://receiver.example/hook' },
      { id: '4', attempts: 0, target_status: 'ACTIVE', url: 'https://10.0.0.1/hook' },
    ];
    const writes: { sql: string; params: readonly unknown[] }[] = [];
    const queryable: Queryable = {
      query: async <R>(sql: string, params: readonly unknown[] = []) => {
        if (sql.startsWith('WITH c AS (UPDATE legacy_webhook_deliveries SET leased_until = $3')) {
          return { rows: claimed as R[], rowCount: claimed.length };
        }
        writes.push({ sql: sql.replace(/\s+/g, ' '), params });
        return { rows: [] as R[], rowCount: 1 };
      },
      exec: async () => {},
    };
    const db: Database = {
      ...queryable,
      driver: 'pglite',
      transaction: (fn) => fn(queryable),
      close: async () => {},
    };
    const sent: WebhookRequest[] = [];
    const outcomes: DeliveryOutcomeName[] = [];
    const at = new Date('2026-01-01T00:00:00Z');
    const worker = new TestWorker({
      db,
      now: () => at,
      keyring: {} as SealingKeyring,
      fetcher: async (request) => {
        sent.push(request);
        return { statusCode: 204 };
      },
      onOutcome: (outcome) => outcomes.push(outcome),
    });
    expect(worker.options.claim).toBe('lease');
    expect(await worker.runOnce()).toBe(4);
    await worker.stop();

    expect(sent.map((request) => [request.url, request.headers['x-row'], request.body.toString()])).toEqual([
      ['https://receiver.example/hook', '1', '1'],
    ]);
    expect(outcomes.sort()).toEqual(['delivered', 'gave_up', 'retrying', 'retrying']);
    const attempts = writes
      .filter((write) => write.sql.startsWith('INSERT INTO legacy_webhook_delivery_attempts'))
      .map((write) => [write.params[0], write.params[2], String(write.params[3]).split(':')[0]]);
    expect(attempts.sort()).toEqual([
      ['1', 204, 'null'],
      ['2', null, 'the secret does not open'],
      ['4', null, 'refused'],
    ]);
    const updates = writes.filter((write) => write.sql.startsWith('UPDATE legacy_webhook_deliveries'));
    expect(updates.map((write) => [write.params[0], write.params[1], write.params[2] ?? null]).sort()).toEqual([
      ['1', 0, 'DELIVERED'],
      ['2', 3, 'PENDING'],
      ['3', 1, null],
      ['4', 0, 'PENDING'],
    ]);
    for (const update of updates) {
      expect(update.sql).toContain('leased_until = NULL');
      expect(update.sql).toContain("WHERE id = $1 AND status = 'PENDING' AND attempts = $2");
    }
    expect(updates.find((write) => write.params[0] === '3')!.sql).toContain("status = 'GAVE_UP'");
  });
});
