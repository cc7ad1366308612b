/**
 * The readiness report's storage and its admin route: blockers met tallied in memory and written
 * in batches (one statement a flush), a failed write kept for the next, two writers adding to the
 * same rows on PostgreSQL and PGlite, the report listing every operation of a known key with
 * its blockers (none where nothing would break), and `GET /admin/readiness` requiring its
 * generation and answering in the documented shape.
 */
import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import type { BlockerHit } from '../../../src/gateway/legacy/declarations/blockers.js';
import {
  parseReadinessQuery,
  readinessAdminRoute,
  ReadinessRecorder,
  type ReadinessReport,
  readReadiness,
} from '../../../src/gateway/usage/readiness-recorder.js';
import { UsageRecorder } from '../../../src/gateway/usage/usage-recorder.js';
import { AdminListener } from '../../../src/lib/admin/admin-listener.js';
import type { Queryable, QueryResult } from '../../../src/lib/db/database.js';
import { newUuid } from '../../../src/lib/ids.js';
import { DATABASE_DRIVERS, type TestDatabase } from '../../support/databases.js';

const NO_TIMER = { flushIntervalMs: 3_600_000 };
const T0 = Date.UTC(2026, 11, 1, 9);
const MINUTE = 60_000;
const ORG = newUuid();
const KEY = `org/${ORG}/apiKey/${newUuid()}`;
const OTHER_ORG = newUuid();
const OTHER_KEY = `org/${OTHER_ORG}/apiKey/${newUuid()}`;
const CALLER = { orgId: ORG, keyName: KEY };
const OTHER = { orgId: OTHER_ORG, keyName: OTHER_KEY };

const MISSING: BlockerHit = {
  kind: 'idempotency-key-missing',
  severity: 'blocker',
  example: 'POST /v1/brokerage/{orgId}/trade without Idempotency-Key',
};
const TOP_LEVEL: BlockerHit = {
  kind: 'trade-read-top-level',
  severity: 'warning',
  example: 'POST /v1/brokerage/{orgId}/trade',
};

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

describe('batching', () => {
  it('writes a thousand requests in one statement, nothing before the flush, and ignores events without hits', async () => {
    const db = new RecordingDatabase();
    let at = T0;
    const recorder = new ReadinessRecorder(db, { ...NO_TIMER, now: () => at });
    for (let n = 0; n < 1_000; n += 1) {
      at = T0 + n;
      recorder.met({
        generation: 'v1',
        operation: 'trade',
        caller: CALLER,
        hits: n % 4 === 0 ? [TOP_LEVEL] : [MISSING, TOP_LEVEL],
      });
      recorder.met({ generation: 'v1', operation: 'balances', caller: OTHER, hits: [] });
    }
    expect(db.queries).toHaveLength(0);
    await recorder.flush();
    expect(db.queries).toHaveLength(1);
    expect(db.queries[0]!.params).toEqual([
      [ORG, ORG],
      [KEY, KEY],
      ['v1', 'v1'],
      ['trade', 'trade'],
      ['idempotency-key-missing', 'trade-read-top-level'],
      ['blocker', 'warning'],
      [750, 1_000],
      [new Date(T0 + 1).toISOString(), new Date(T0).toISOString()],
      [new Date(T0 + 999).toISOString(), new Date(T0 + 999).toISOString()],
      [MISSING.example, TOP_LEVEL.example],
    ]);
    await recorder.close();
    expect(db.queries).toHaveLength(1);
  });

  it('keeps a batch it could not write and adds it to the next', async () => {
    const db = new RecordingDatabase();
    const failures: unknown[] = [];
    const recorder = new ReadinessRecorder(db, { ...NO_TIMER, now: () => T0, onFlushError: (e) => failures.push(e) });
    recorder.met({ generation: 'v1', operation: 'trade', caller: CALLER, hits: [MISSING] });
    db.failing = true;
    await recorder.flush();
    expect(failures).toHaveLength(1);
    db.failing = false;
    recorder.met({ generation: 'v1', operation: 'trade', caller: CALLER, hits: [MISSING] });
    await recorder.close();
    expect(db.queries).toHaveLength(1);
    expect(db.queries[0]!.params[6]).toEqual([2]);
  });
});

describe.each(DATABASE_DRIVERS)('the report on $driver', ({ create }) => {
  let database: TestDatabase;
  beforeAll(async () => {
    database = await create();
  });
  afterAll(async () => database?.drop());

  it('lists every operation of each known key with what two writers counted, blockers first; since drops what was not seen', async () => {
    const one = new ReadinessRecorder(database.db, { ...NO_TIMER, now: () => T0 });
    const other = new ReadinessRecorder(database.db, { ...NO_TIMER, now: () => T0 + 10 * MINUTE });
    let usageAt = T0;
    const usage = new UsageRecorder(database.db, { ...NO_TIMER, now: () => usageAt });
    for (let n = 0; n < 3; n += 1) {
      usage.seen({ generation: 'v1', operation: 'trade', caller: CALLER, address: '10.0.0.1' });
      one.met({ generation: 'v1', operation: 'trade', caller: CALLER, hits: [TOP_LEVEL, MISSING] });
    }
    usage.seen({ generation: 'v1', operation: 'balances', caller: CALLER, address: '10.0.0.1' });
    usage.seen({ generation: 'v1', operation: 'balances', caller: null, address: '10.0.0.9' });
    usage.seen({ generation: 'v2', operation: 'trade', caller: OTHER, address: '10.0.0.2' });
    one.met({
      generation: 'v2',
      operation: 'trade',
      caller: OTHER,
      hits: [
        { kind: 'scope-missing', severity: 'blocker', example: 'POST /v2/brokerage/{orgId}/trade: key scopes trade' },
      ],
    });
    await Promise.all([one.flush(), usage.flush()]);
    usageAt = T0 + 10 * MINUTE;
    usage.seen({ generation: 'v1', operation: 'trade', caller: CALLER, address: '10.0.0.1' });
    other.met({
      generation: 'v1',
      operation: 'trade',
      caller: { orgId: ORG.toUpperCase(), keyName: KEY },
      hits: [TOP_LEVEL],
    });
    await Promise.all([other.close(), one.close(), usage.close()]);

    const report = await readReadiness(database.db, { generation: 'v1' });
    expect(report).toEqual<ReadinessReport>({
      since: null,
      generation: 'v1',
      target: 'v2',
      rows: [
        {
          orgId: ORG,
          keyName: KEY,
          operation: 'balances',
          count: 1,
          lastSeen: new Date(T0).toISOString(),
          blockers: [],
        },
        {
          orgId: ORG,
          keyName: KEY,
          operation: 'trade',
          count: 4,
          lastSeen: new Date(T0 + 10 * MINUTE).toISOString(),
          blockers: [
            {
              kind: 'idempotency-key-missing',
              severity: 'blocker',
              count: 3,
              example: MISSING.example,
              guide: '/docs/migrate/v1-to-v2#trade',
              lastSeen: new Date(T0).toISOString(),
            },
            {
              kind: 'trade-read-top-level',
              severity: 'warning',
              count: 4,
              example: TOP_LEVEL.example,
              guide: '/docs/migrate/v1-to-v2#trade',
              lastSeen: new Date(T0 + 10 * MINUTE).toISOString(),
            },
          ],
        },
      ],
    });
    const v2 = await readReadiness(database.db, { generation: 'v2' });
    expect(v2.target).toBe('v3');
    expect(v2.rows.map((row) => [row.orgId, row.blockers.map((b) => `${b.kind} ${b.count} ${b.guide}`)])).toEqual([
      [OTHER_ORG, ['scope-missing 1 /docs/migrate/v2-to-v3#trade']],
    ]);
    // Since a minute after T0: the blocker last met at T0 is gone; the one met again stays.
    const recent = await readReadiness(database.db, { generation: 'v1', since: T0 + MINUTE });
    expect(recent.since).toBe(new Date(T0 + MINUTE).toISOString());
    expect(recent.rows.map((row) => [row.operation, row.blockers.map((blocker) => blocker.kind)])).toEqual([
      ['trade', ['trade-read-top-level']],
    ]);
  });
});

describe('GET /admin/readiness', () => {
  const NOW = Date.UTC(2026, 11, 20, 12);
  let database: TestDatabase;
  let admin: AdminListener;
  let app: FastifyInstance;

  beforeAll(async () => {
    database = await DATABASE_DRIVERS[1].create();
    const usage = new UsageRecorder(database.db, { ...NO_TIMER, now: () => NOW - 60_000 });
    const readiness = new ReadinessRecorder(database.db, { ...NO_TIMER, now: () => NOW - 60_000 });
    usage.seen({ generation: 'v1', operation: 'trade', caller: CALLER, address: '10.0.0.1' });
    readiness.met({ generation: 'v1', operation: 'trade', caller: CALLER, hits: [MISSING] });
    admin = new AdminListener({ logLevel: 'silent' });
    // Unflushed counts of this process (usage and readiness) are written before the route reads.
    admin.add(readinessAdminRoute(database.db, { usage, readiness }, () => NOW));
    app = await admin.build();
  });
  afterAll(async () => {
    await admin?.close();
    await database?.drop();
  });

  const get = async (query: string) => {
    const response = await app.inject({ method: 'GET', url: `/admin/readiness${query}` });
    return { status: response.statusCode, body: response.json<ReadinessReport & { message?: string }>() };
  };

  it('answers {since, generation, target, rows} with the counts this process has not written yet', async () => {
    const answer = await get('?generation=v1&since=7d');
    expect(answer.status).toBe(200);
    expect(answer.body).toEqual({
      since: new Date(NOW - 7 * 24 * 3_600_000).toISOString(),
      generation: 'v1',
      target: 'v2',
      rows: [
        {
          orgId: ORG,
          keyName: KEY,
          operation: 'trade',
          count: 1,
          lastSeen: new Date(NOW - 60_000).toISOString(),
          blockers: [
            {
              kind: 'idempotency-key-missing',
              severity: 'blocker',
              count: 1,
              example: MISSING.example,
              guide: '/docs/migrate/v1-to-v2#trade',
              lastSeen: new Date(NOW - 60_000).toISOString(),
            },
          ],
        },
      ],
    });
    expect((await get('?generation=v2')).body).toEqual({ since: null, generation: 'v2', target: 'v3', rows: [] });
  });

  it.each([
    ['', /^generation is required: v1 \(its clients move to v2\) or v2 \(its clients move to v3\)$/],
    ['?generation=v3', /^generation must be v1 \(its clients move to v2\) or v2 \(its clients move to v3\), got "v3"$/],
    ['?generation=v1&since=soon', /^since: "soon" is not a time to count from/],
    ['?generation=v1&target=v3', /^unknown parameter "target"/],
    ['?generation=v1&generation=v2', /^generation is given more than once; give it once$/],
  ])('refuses %j with a 400 that says how to fix it', async (query, message) => {
    const answer = await get(query);
    expect(answer.status).toBe(400);
    expect(answer.body).toMatchObject({ status: 400, error: 'bad_request', message: expect.stringMatching(message) });
  });

  it('reads the same query the CLI passes', () => {
    expect(parseReadinessQuery({ generation: 'v2', since: '1d' }, NOW)).toEqual({
      generation: 'v2',
      since: NOW - 24 * 3_600_000,
    });
  });
});
