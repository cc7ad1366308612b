/**
 * The fleet at the edge (test/fleet/fleet.ts): HAProxy in front of two gateways and two cores run
 * from dist/, PostgreSQL through PgBouncer in transaction pooling, Redis with a replica and a
 * Sentinel, under a steady mixed load of every generation (test/fleet/mixed-load.ts) sent to the
 * balancer as clients send it.
 *
 * - Rolling restart: every gateway, then every core, one after another: SIGTERM, exit 0, a new
 *   start on the same port, /readyz 200, HAProxy's checks passing again. 0 failed requests.
 * - Redis failover: the primary SIGKILLed: writes answer their generation's 503 until the fleet
 *   has reached the promoted replica, then succeed by themselves; reads go on answering.
 *
 * After each: one trade and one withdrawal in the database for each one a client was told of and
 * none else, the ledger summing to 0 per currency, and the gateways' usage report counting
 * exactly the legacy requests they answered.
 *
 * A request **failed** when any attempt at it ended in:
 * - a connection error: refused, reset, or closed without an answer (also a write the client then
 *   sends again with the same Idempotency-Key, which is its right for writes only; each such
 *   attempt is counted as failed, and again in `retriedAfterConnectionError`);
 * - a 5xx, but for a write's 503 in its generation's envelope (v3 IDEMPOTENCY_UNAVAILABLE as
 *   cataloged, v2 IDEMPOTENCY_SERVICE_UNAVAILABLE) answered after the Redis primary was killed;
 * - a malformed answer: a body that is not its generation's envelope, or a record missing a field
 *   or holding one of the wrong type (the independent clients' readers);
 * - a wrong answer: a 4xx to a valid request, but for the 401 of a token signed in a second before
 *   the new primary's epoch marker, answered after the kill (the client signs again), and for a
 *   write's 409 IDEMPOTENCY_IN_FLIGHT answered after the kill (a lock whose release the outage
 *   lost lives out its lifetime: the client waits Retry-After and sends it again, as the
 *   contract says; its duplicate is what the money check would catch); or a 2xx
 *   that does not answer the request (other currencies or amounts, a trade of another quote,
 *   a withdrawal to another account).
 *
 * Every address is on 127.0.0.1.
 */
import BigNumber from 'bignumber.js';
import { request } from 'undici';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { NONCE_EPOCH_KEY } from '../../src/cli/store/redis-store.js';
import { legacyIdOf } from '../gateway/legacy/contract/legacy-client.js';
import { Fleet, type Restart } from './fleet.js';
import { type Effect, type Exchange, legacyRequestsAnswered, MixedLoad, tally } from './mixed-load.js';

const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));
const RESTART_ORDER = ['gateway-1', 'gateway-2', 'core-1', 'core-2'] as const;
/** Load before the first restart and after the last, so that each phase starts and ends in steady state. */
const SETTLE_MS = 1_000;
/** Writes of each kind that must succeed in a row after the failover before the load stops. */
const RECOVERED_IN_A_ROW = 5;

/** The org's money as the database holds it. */
interface Money {
  /** Legacy ids (`legacyIdOf`), sorted. */
  readonly trades: string[];
  readonly withdrawals: string[];
  /** The sum of every ledger entry per currency, as decimal text. */
  readonly ledgerSums: Record<string, string>;
  /** Ledger movements of the org per kind. */
  readonly movements: Record<string, number>;
}

function describeExchange(e: Exchange): string {
  return `${e.stream}: ${e.generation} ${e.operation} attempt ${e.attempt} -> ${e.status ?? 'no answer'} ${e.detail ?? ''}`;
}

describe('a fleet behind HAProxy, on PgBouncer and a Redis that fails over', () => {
  let fleet: Fleet;
  let load: MixedLoad;

  beforeAll(async () => {
    fleet = await Fleet.start();
    load = new MixedLoad({ baseUrl: fleet.baseUrl, key: fleet.book.key, book: fleet.book });
  }, 180_000);
  afterAll(async () => {
    await fleet?.stop();
  });

  /** What the database holds of the org's money: every trade and withdrawal (as legacy ids), the ledger's sums and movements. */
  async function readMoney(): Promise<Money> {
    const { db } = fleet.database;
    const orgId = fleet.book.orgId;
    const ids = async (table: 'trades' | 'withdrawals') =>
      (await db.query<{ id: string }>(`SELECT id FROM ${table} WHERE org_id = $1`, [orgId])).rows
        .map((row) => legacyIdOf(row.id))
        .sort();
    const sums = await db.query<{ currency: string; sum: string }>(
      'SELECT currency, sum(amount)::text AS sum FROM ledger_entries GROUP BY currency ORDER BY currency',
    );
    const movements = await db.query<{ kind: string; count: string }>(
      'SELECT kind, count(*)::text AS count FROM ledger_transactions WHERE org_id = $1 GROUP BY kind',
      [orgId],
    );
    return {
      trades: await ids('trades'),
      withdrawals: await ids('withdrawals'),
      ledgerSums: Object.fromEntries(sums.rows.map((row) => [row.currency, row.sum])),
      movements: Object.fromEntries(movements.rows.map((row) => [row.kind, Number(row.count)])),
    };
  }

  /** What the clients were told of, by kind, as legacy ids. */
  function told(kind: Effect['kind']): string[] {
    return load.effects
      .filter((effect) => effect.kind === kind)
      .map((effect) => effect.legacyId)
      .sort();
  }

  /** Trades and withdrawals in the database that no client was told of: a write made twice, or made and never answered. */
  function duplicates(money: Money): number {
    const known = new Set(load.effects.map((effect) => effect.legacyId));
    return [...money.trades, ...money.withdrawals].filter((id) => !known.has(id)).length;
  }

  /** The database holds exactly the trades and withdrawals the clients were told of, once each, and the ledger balances. */
  function expectMoneyMovedOnce(money: Money): void {
    // One answer per Idempotency-Key on the clients' side.
    expect(new Set(load.effects.map((effect) => effect.idempotencyKey)).size).toBe(load.effects.length);
    expect(money.trades).toEqual(told('trade'));
    expect(money.withdrawals).toEqual(told('withdrawal'));
    expect(Object.keys(money.ledgerSums).length).toBeGreaterThan(0);
    for (const [currency, sum] of Object.entries(money.ledgerSums))
      expect(new BigNumber(sum).isZero(), `the ledger's sum of ${currency}: ${sum}`).toBe(true);
    expect(money.movements.trade ?? 0).toBe(money.trades.length);
    expect(money.movements.withdrawal_hold ?? 0).toBe(money.withdrawals.length);
  }

  /** The gateways' usage report, summed per generation and operation, equals the legacy requests they answered. */
  async function expectUsageCounted(): Promise<void> {
    const adminUrl = fleet.process('gateway-1').adminUrl!;
    const counted = async (): Promise<Record<string, number>> => {
      const response = await request(`${adminUrl}/admin/usage`);
      const body = (await response.body.json()) as { rows: { generation: string; operation: string; count: number }[] };
      const sums: Record<string, number> = {};
      for (const row of body.rows) {
        const name = `${row.generation} ${row.operation}`;
        sums[name] = (sums[name] ?? 0) + row.count;
      }
      return sums;
    };
    // gateway-1 writes its own counts before answering; gateway-2's reach the database within a second.
    await expect.poll(counted, { timeout: 10_000, interval: 500 }).toEqual(legacyRequestsAnswered(load.exchanges));
  }

  it(
    'restarts every gateway and every core one after another under load: 0 failed requests, money moved once',
    { timeout: 120_000 },
    async () => {
      let running = true;
      const started = performance.now();
      const loop = load.run(() => running);
      const restarts: Restart[] = [];
      try {
        await sleep(SETTLE_MS);
        for (const name of RESTART_ORDER) restarts.push(await fleet.restart(name));
        await sleep(SETTLE_MS);
      } finally {
        running = false;
        await loop;
      }
      const wallMs = performance.now() - started;
      const counts = tally(load.exchanges);
      const money = await readMoney();
      process.stdout.write(
        `Fleet rolling restart (${RESTART_ORDER.join(', ')}) in ${(wallMs / 1000).toFixed(1)} s: ` +
          `${counts.requests} requests (${counts.attempts} attempts), ${counts.failed} failed, ` +
          `${counts.retriedAfterConnectionError} writes sent again after a connection error, ` +
          `${money.trades.length} trades and ${money.withdrawals.length} withdrawals, ${duplicates(money)} duplicates\n` +
          restarts
            .map(
              (r) =>
                `  ${r.name}: out of HAProxy ${r.outMs} ms after SIGTERM, exited at ${r.stopMs} ms, ` +
                `ready ${r.startMs} ms after its start, back in HAProxy ${r.backInMs} ms later`,
            )
            .join('\n') +
          '\n',
      );

      expect(load.exchanges.filter((e) => e.outcome !== 'ok').map(describeExchange)).toEqual([]);
      expect(load.abandoned).toEqual([]);
      expectMoneyMovedOnce(money);
      // Through each restart, from SIGTERM to the new process back in HAProxy, reads and writes were answered.
      for (const restart of restarts) {
        const answered = load.exchanges.filter(
          (e) => e.answeredAt >= restart.from && e.answeredAt <= restart.to && e.outcome === 'ok',
        );
        expect([answered.some((e) => e.write), answered.some((e) => !e.write)], restart.name).toEqual([true, true]);
      }
      // Every kind of request was sent while the processes restarted.
      expect([...new Set(load.exchanges.map((e) => `${e.generation} ${e.operation}`))].sort()).toEqual([
        'v1 balances',
        'v1 trades',
        'v2 balances',
        'v2 fiat_withdrawal',
        'v2 generate_quote',
        'v2 trade',
        'v3 GET /v3/fx/balances',
        'v3 GET /v3/fx/trades',
        'v3 POST /v3/fx/quotes',
        'v3 POST /v3/fx/trades',
        'v3 POST /v3/fx/withdrawals',
      ]);
      // Each process stopped within its grace, with nothing to say.
      for (const process of fleet.processes) {
        expect(
          process.exits.map((exit) => [exit.code, exit.stderr]),
          process.name,
        ).toEqual([[0, '']]);
      }
      await expectUsageCounted();
    },
  );

  it(
    'the Redis primary SIGKILLed under load: writes answer their 503 until the failover, then succeed by themselves; reads go on',
    { timeout: 120_000 },
    async () => {
      const from = load.exchanges.length;
      let running = true;
      const loop = load.run(() => running);
      let killedAt = 0;
      let promotedPort = 0;
      try {
        await sleep(SETTLE_MS);
        load.storeOutageSince = Date.now();
        const formerPort = await fleet.redis.killPrimary();
        killedAt = Date.now();
        promotedPort = await fleet.redis.waitForPromotion(formerPort);
        // Until every kind of write has succeeded a few times in a row, each signed after the kill.
        const writeKinds = ['v3 POST /v3/fx/quotes', 'v3 POST /v3/fx/trades', 'v3 POST /v3/fx/withdrawals'].concat(
          ['generate_quote', 'trade', 'fiat_withdrawal'].map((operation) => `v2 ${operation}`),
        );
        const deadline = Date.now() + 60_000;
        for (;;) {
          const recovered = writeKinds.every((kind) => {
            const recent = load.exchanges
              .slice(from)
              .filter((e) => `${e.generation} ${e.operation}` === kind)
              .slice(-RECOVERED_IN_A_ROW);
            return (
              recent.length === RECOVERED_IN_A_ROW && recent.every((e) => e.signedAt > killedAt && e.outcome === 'ok')
            );
          });
          if (recovered) break;
          if (Date.now() > deadline) throw new Error('the writes did not all recover within 60 s of the kill');
          await sleep(100);
        }
        await sleep(SETTLE_MS);
      } finally {
        running = false;
        await loop;
      }
      const phase = load.exchanges.slice(from);
      const counts = tally(phase);
      const marker = Number(await fleet.redis.onNode(promotedPort, (client) => client.get(NONCE_EPOCH_KEY)));
      const refusedWrites = phase.filter((e) => e.outcome === 'unavailable');
      const lastRefusal = Math.max(...refusedWrites.map((e) => e.answeredAt));
      const firstAfter = (test: (e: Exchange) => boolean) =>
        Math.min(...phase.filter((e) => e.signedAt > killedAt && test(e)).map((e) => e.answeredAt));
      const window = {
        firstRefusal: (Math.min(...refusedWrites.map((e) => e.answeredAt)) - killedAt) / 1000,
        lastRefusal: (lastRefusal - killedAt) / 1000,
        firstWriteOk: (firstAfter((e) => e.write && e.outcome === 'ok') - killedAt) / 1000,
      };
      const money = await readMoney();
      process.stdout.write(
        `Fleet Redis failover: ${counts.requests} requests (${counts.attempts} attempts), ${counts.failed} failed, ` +
          `${counts.unavailable} write attempts answered 503 from ${window.firstRefusal.toFixed(1)} s to ` +
          `${window.lastRefusal.toFixed(1)} s after the SIGKILL (first write succeeded at ${window.firstWriteOk.toFixed(1)} s), ` +
          `${counts.reSigned} signed again after the new epoch marker, ${counts.waitedInFlight} waited out an in-flight lock; ${money.trades.length} trades and ${money.withdrawals.length} withdrawals in all, ${duplicates(money)} duplicates\n`,
      );

      expect(phase.filter((e) => e.outcome === 'failed').map(describeExchange)).toEqual([]);
      expect(load.abandoned).toEqual([]);
      expectMoneyMovedOnce(money);
      // Writes were refused in their envelope for the failover, and only writes.
      expect(refusedWrites.length).toBeGreaterThan(0);
      expect(refusedWrites.every((e) => e.write && e.status === 503)).toBe(true);
      // Reads answered throughout: no read failed, and reads were answered while writes were refused.
      const reads = phase.filter((e) => !e.write);
      expect(
        reads.filter((e) => e.answeredAt > killedAt && e.answeredAt < lastRefusal && e.outcome === 'ok').length,
      ).toBeGreaterThan(0);
      // A 401 only for a token signed in a second before the new primary's marker.
      expect(marker).toBeGreaterThanOrEqual(killedAt);
      for (const e of phase.filter((e) => e.outcome === 're-sign'))
        expect(Math.floor(e.signedAt / 1000), describeExchange(e)).toBeLessThan(Math.floor(marker / 1000));
      await expectUsageCounted();
    },
  );
});
