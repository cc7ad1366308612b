/**
 * The usage report's storage and its admin route: counts tallied in memory and written in
 * batches (one statement a flush, however many requests), a failed write kept for the next,
 * several writers adding to the same rows (unattributed ones included) on PostgreSQL and PGlite,
 * and `GET /admin/usage` reading `generation` and `since`, refusing what it cannot read with a
 * message that says what to send.
 */
import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';

import {
  NO_OPERATION,
  parseUsageQuery,
  readUsage,
  usageAdminRoute,
  UsageRecorder,
} from '../../../src/gateway/usage/usage-recorder.js';
import { AdminListener } from '../../../src/lib/admin/admin-listener.js';
import type { Queryable, QueryResult } from '../../../src/lib/db/database.js';
import { newUuid } from '../../../src/lib/ids.js';
import { createTestPostgres, DATABASE_DRIVERS, type TestDatabase } from '../../support/databases.js';

const NO_TIMER = { flushIntervalMs: 3_600_000 };
const T0 = Date.UTC(2026, 11, 1, 9);
const MINUTE = 60_000;
const ORG = newUuid();
const KEY = `org/${ORG}/apiKey/${newUuid()}`;
const CALLER = { orgId: ORG, keyName: KEY };

/** A database that records what it is asked, and fails while told to. */
class RecordingDatabase implements Queryable {
  readonly queries: { sql: string; params: readonly unknown[] }[] = [];
  failing = false;

  async query<Row>(sql: string, params: readonly unknown[] = []): Promise<QueryResult<Row>> {
    if (this.failing) throw new Error('database down');
    this.queries.push({ sql, params });
    return { rows: [], rowCount: 0 };
  }

  async exec(): Promise<void> {}
}

/** A clock the test moves. */
function clock(start = T0): { now: () => number; set: (at: number) => void } {
  let at = start;
  return { now: () => at, set: (next) => (at = next) };
}

describe('batching', () => {
  it('writes a thousand requests in one statement, and nothing before the flush', async () => {
    const db = new RecordingDatabase();
    const time = clock();
    const recorder = new UsageRecorder(db, { ...NO_TIMER, now: time.now });
    for (let n = 0; n < 1_000; n += 1) {
      time.set(T0 + n);
      recorder.seen({
        generation: 'v1',
        operation: 'trades',
        caller: CALLER,
        address: `10.0.0.${n % 7}`,
        ...(n % 10 === 0 ? { refused: 'brownout' as const } : n % 25 === 1 ? { refused: 'rate_limit' as const } : {}),
      });
    }
    recorder.seen({ generation: 'v2', operation: 'balances', caller: null, address: '10.0.0.9', refused: 'sunset' });
    expect(db.queries).toHaveLength(0);
    await recorder.flush();
    expect(db.queries).toHaveLength(1);
    const params = db.queries[0]!.params;
    // In the order of their identity: the unattributed row ('' org) first.
    expect(params.slice(0, 8)).toEqual([
      [null, ORG],
      [null, KEY],
      ['v2', 'v1'],
      ['balances', 'trades'],
      [1, 1_000],
      [0, 100],
      [1, 0],
      [0, 40],
    ]);
    expect(params.slice(8)).toEqual([
      [new Date(T0 + 999).toISOString(), new Date(T0).toISOString()],
      [new Date(T0 + 999).toISOString(), new Date(T0 + 999).toISOString()],
      ['10.0.0.9', `10.0.0.${999 % 7}`],
    ]);
    await recorder.flush();
    expect(db.queries).toHaveLength(1);
    await recorder.close();
  });

  it('keeps a batch it could not write and adds it to the next, the latest address last', async () => {
    const db = new RecordingDatabase();
    const time = clock();
    const failures: unknown[] = [];
    const recorder = new UsageRecorder(db, {
      ...NO_TIMER,
      now: time.now,
      onFlushError: (error) => failures.push(error),
    });
    recorder.seen({ generation: 'v1', operation: 'trades', caller: CALLER, address: '10.0.0.1' });
    db.failing = true;
    await recorder.flush();
    expect(failures).toHaveLength(1);
    db.failing = false;
    time.set(T0 + MINUTE);
    recorder.seen({ generation: 'v1', operation: 'trades', caller: CALLER, address: '10.0.0.2', refused: 'brownout' });
    await recorder.close();
    expect(db.queries).toHaveLength(1);
    expect(db.queries[0]!.params).toEqual([
      [ORG],
      [KEY],
      ['v1'],
      ['trades'],
      [2],
      [1],
      [0],
      [0],
      [new Date(T0).toISOString()],
      [new Date(T0 + MINUTE).toISOString()],
      ['10.0.0.2'],
    ]);
  });

  it('writes by itself every flush interval', async () => {
    // Its interval timer is faked: the test moves time on instead of waiting for it.
    vi.useFakeTimers({ toFake: ['setInterval', 'clearInterval'] });
    try {
      const db = new RecordingDatabase();
      const recorder = new UsageRecorder(db, { flushIntervalMs: 20 });
      recorder.seen({ generation: 'v1', operation: 'trades', caller: null, address: '::1' });
      await vi.advanceTimersByTimeAsync(19);
      expect(db.queries).toHaveLength(0);
      await vi.advanceTimersByTimeAsync(1);
      expect(db.queries).toHaveLength(1);
      // Nothing new since: the later intervals write nothing.
      await vi.advanceTimersByTimeAsync(100);
      expect(db.queries).toHaveLength(1);
      await recorder.close();
    } finally {
      vi.useRealTimers();
    }
  });
});

describe.each(DATABASE_DRIVERS)('the report on $driver', ({ create }) => {
  let database: TestDatabase;
  beforeAll(async () => {
    database = await create();
  });
  afterAll(async () => database?.drop());

  it('reads back what two writers added, the unattributed on one row per operation, filtered by generation and since', async () => {
    expect(await readUsage(database.db)).toEqual({ since: null, rows: [] });
    const first = clock(T0);
    const second = clock(T0 + 10 * MINUTE);
    const one = new UsageRecorder(database.db, { ...NO_TIMER, now: first.now });
    const other = new UsageRecorder(database.db, { ...NO_TIMER, now: second.now });
    one.seen({ generation: 'v1', operation: 'trades', caller: CALLER, address: '10.0.0.1' });
    one.seen({ generation: 'v1', operation: 'trades', caller: null, address: '10.0.0.66' });
    one.seen({
      generation: 'v2',
      operation: 'balances',
      caller: { orgId: ORG.toUpperCase(), keyName: KEY },
      address: '10.0.0.1',
    });
    await one.flush();
    other.seen({ generation: 'v1', operation: 'trades', caller: CALLER, address: '10.0.0.2', refused: 'brownout' });
    other.seen({ generation: 'v1', operation: 'trades', caller: null, address: '10.0.0.67' });
    other.seen({ generation: 'v1', operation: NO_OPERATION, caller: null, address: '10.0.0.67' });
    await other.close();
    // An older batch arriving late keeps the newer last sight and address.
    first.set(T0 + 5 * MINUTE);
    one.seen({ generation: 'v1', operation: 'trades', caller: CALLER, address: '10.0.0.3', refused: 'sunset' });
    one.seen({ generation: 'v1', operation: 'trades', caller: CALLER, address: '10.0.0.3', refused: 'rate_limit' });
    one.seen({ generation: 'v1', operation: 'trades', caller: null, address: '10.0.0.3', refused: 'rate_limit' });
    await one.close();

    const report = await readUsage(database.db);
    expect(report.rows).toEqual([
      {
        orgId: ORG,
        keyName: KEY,
        generation: 'v1',
        operation: 'trades',
        count: 4,
        refusedInBrownout: 1,
        refusedAfterSunset: 1,
        rateLimited: 1,
        firstSeen: new Date(T0).toISOString(),
        lastSeen: new Date(T0 + 10 * MINUTE).toISOString(),
        lastAddress: '10.0.0.2',
      },
      {
        orgId: null,
        keyName: null,
        generation: 'v1',
        operation: NO_OPERATION,
        count: 1,
        refusedInBrownout: 0,
        refusedAfterSunset: 0,
        rateLimited: 0,
        firstSeen: new Date(T0 + 10 * MINUTE).toISOString(),
        lastSeen: new Date(T0 + 10 * MINUTE).toISOString(),
        lastAddress: '10.0.0.67',
      },
      {
        orgId: null,
        keyName: null,
        generation: 'v1',
        operation: 'trades',
        count: 3,
        refusedInBrownout: 0,
        refusedAfterSunset: 0,
        rateLimited: 1,
        firstSeen: new Date(T0).toISOString(),
        lastSeen: new Date(T0 + 10 * MINUTE).toISOString(),
        lastAddress: '10.0.0.67',
      },
      {
        orgId: ORG,
        keyName: KEY,
        generation: 'v2',
        operation: 'balances',
        count: 1,
        refusedInBrownout: 0,
        refusedAfterSunset: 0,
        rateLimited: 0,
        firstSeen: new Date(T0).toISOString(),
        lastSeen: new Date(T0).toISOString(),
        lastAddress: '10.0.0.1',
      },
    ]);
    expect((await readUsage(database.db, { generation: 'v2' })).rows.map((row) => row.operation)).toEqual(['balances']);
    const recent = await readUsage(database.db, { since: T0 + MINUTE });
    expect(recent.since).toBe(new Date(T0 + MINUTE).toISOString());
    expect(recent.rows.map((row) => `${row.generation} ${row.orgId ?? '-'} ${row.operation}`)).toEqual([
      `v1 ${ORG} trades`,
      `v1 - ${NO_OPERATION}`,
      'v1 - trades',
    ]);
  });
});

describe('several processes flushing at once on PostgreSQL', () => {
  let database: TestDatabase;
  beforeAll(async () => {
    database = await createTestPostgres();
  });
  afterAll(async () => database?.drop());

  it('add exactly, however their batches overlap', async () => {
    const operations = ['trades', 'balances', 'deposits', 'withdrawals', 'trade/{id}'];
    const recorders = Array.from({ length: 6 }, () => new UsageRecorder(database.db, NO_TIMER));
    for (let round = 0; round < 20; round += 1) {
      recorders.forEach((recorder, index) => {
        // Each writer sees the operations in another order, so their rows meet in every order.
        for (const operation of index % 2 === 0 ? operations : [...operations].reverse()) {
          recorder.seen({ generation: 'v1', operation, caller: CALLER, address: `10.0.0.${index}` });
          recorder.seen({ generation: 'v1', operation, caller: null, address: `10.0.0.${index}` });
        }
      });
      await Promise.all(recorders.map((recorder) => recorder.flush()));
    }
    await Promise.all(recorders.map((recorder) => recorder.close()));
    const { rows } = await readUsage(database.db);
    expect(rows).toHaveLength(operations.length * 2);
    for (const row of rows) expect(row.count, `${row.orgId} ${row.operation}`).toBe(20 * 6);
  });
});

describe('GET /admin/usage', () => {
  const NOW = Date.UTC(2026, 11, 20, 12);
  let database: TestDatabase;
  let admin: AdminListener;
  let app: FastifyInstance;

  beforeAll(async () => {
    database = await DATABASE_DRIVERS[1].create();
    const recorder = new UsageRecorder(database.db, { ...NO_TIMER, now: () => NOW - 2 * 24 * 3_600_000 });
    recorder.seen({ generation: 'v1', operation: 'trades', caller: CALLER, address: '10.0.0.1' });
    recorder.seen({ generation: 'v2', operation: 'trades', caller: CALLER, address: '10.0.0.1' });
    admin = new AdminListener({ logLevel: 'silent' });
    // Unflushed counts of this process are written before the route reads.
    admin.add(usageAdminRoute(database.db, recorder, () => NOW));
    app = await admin.build();
  });
  afterAll(async () => {
    await admin?.close();
    await database?.drop();
  });

  const get = async (query: string) => {
    const response = await app.inject({ method: 'GET', url: `/admin/usage${query}` });
    return {
      status: response.statusCode,
      body: response.json<{ since: string | null; rows: { generation: string }[]; message?: string }>(),
    };
  };

  it('answers every row without a query, and the counts this process has not written yet', async () => {
    const answer = await get('');
    expect(answer.status).toBe(200);
    expect(answer.body.since).toBeNull();
    expect(answer.body.rows.map((row) => row.generation)).toEqual(['v1', 'v2']);
  });

  it.each([
    ['?generation=v1&since=7d', new Date(NOW - 7 * 24 * 3_600_000).toISOString(), ['v1']],
    ['?since=24h', new Date(NOW - 24 * 3_600_000).toISOString(), []],
    ['?since=30m&generation=v2', new Date(NOW - 30 * 60_000).toISOString(), []],
    ['?since=3d', new Date(NOW - 3 * 24 * 3_600_000).toISOString(), ['v1', 'v2']],
    ['?since=2026-12-01T00:00:00Z', '2026-12-01T00:00:00.000Z', ['v1', 'v2']],
    ['?since=2026-12-18T00:00:00%2B01:00', '2026-12-17T23:00:00.000Z', ['v1', 'v2']],
    ['?since=2026-12-19', '2026-12-19T00:00:00.000Z', []],
  ])('reads %s', async (query, since, generations) => {
    const answer = await get(query);
    expect(answer.status).toBe(200);
    expect(answer.body.since).toBe(since);
    expect(answer.body.rows.map((row) => row.generation)).toEqual(generations);
  });

  it.each([
    ['?since=abc', /^since: "abc" is not a time to count from: write a duration back from now such as 7d, 24h or 30m/],
    ['?since=7', /^since: "7" is not a time to count from/],
    ['?since=7y', /^since: "7y" is not a time to count from/],
    ['?since=2026-12-01T00:00:00', /^since: .*add its zone, Z for UTC or an offset/],
    ['?since=2026-02-30', /^since: "2026-02-30" names no real date/],
    ['?since=', /^since: "" is not a time to count from/],
    ['?since=7d&since=1d', /^since is given more than once; give it once$/],
    ['?generation=v3', /^generation must be v1 or v2, got "v3"; leave it out for both$/],
    ['?gen=v1', /^unknown parameter "gen"; the report takes generation \(v1 or v2\) and since \(such as 7d\)$/],
  ])('refuses %s with a 400 that says how to fix it', async (query, message) => {
    const answer = await get(query);
    expect(answer.status).toBe(400);
    expect(answer.body).toMatchObject({ status: 400, error: 'bad_request', message: expect.stringMatching(message) });
  });

  it('reads the same query the CLI passes', () => {
    expect(parseUsageQuery({ generation: 'v1', since: '7d' }, NOW)).toEqual({
      generation: 'v1',
      since: NOW - 7 * 24 * 3_600_000,
    });
    expect(parseUsageQuery({}, NOW)).toEqual({});
  });
});
