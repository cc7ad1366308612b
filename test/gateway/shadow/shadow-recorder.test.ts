/**
 * The shadow report's storage: counts tallied in memory and written in batches (one statement a
 * flush, however many comparisons), a failed write kept for the next, examples masked before
 * they are kept and capped at the newest few, several writers adding to one report, and the
 * report read back the same on PostgreSQL and PGlite.
 */
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';

import type { FieldDifference } from '../../../src/gateway/compare/answer-diff.js';
import { readShadowReport, ShadowRecorder } from '../../../src/gateway/shadow/shadow-recorder.js';
import type { Queryable, QueryResult } from '../../../src/lib/db/database.js';
import { DATABASE_DRIVERS, type TestDatabase } from '../../support/databases.js';

const TRADES = { generation: 'v1', name: 'trades' };
const BALANCES = { generation: 'v2', name: 'balances' };
const NO_TIMER = { flushIntervalMs: 3_600_000, examplesPerField: 5 };

function difference(path: string, legacy: string, gateway: string, at = path): FieldDifference {
  return { path, at, legacy, gateway };
}

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

describe('batching', () => {
  it('writes a thousand comparisons in one statement, and nothing before the flush', async () => {
    const db = new RecordingDatabase();
    const recorder = new ShadowRecorder(db, NO_TIMER);
    for (let n = 0; n < 1_000; n += 1)
      recorder.compared(TRADES, n % 10 === 0 ? [difference('data[].amount', '1', '2')] : [], []);
    recorder.notCompared(TRADES);
    recorder.dropped(BALANCES);
    expect(db.queries).toHaveLength(0);
    await recorder.flush();
    expect(db.queries).toHaveLength(1);
    const params = db.queries[0]!.params;
    expect(params.slice(0, 6)).toEqual([
      ['v1', 'v2'],
      ['trades', 'balances'],
      [1_000, 0],
      [100, 0],
      [1, 0],
      [0, 1],
    ]);
    expect(params[6]).toEqual([expect.stringMatching(/Z$/), expect.stringMatching(/Z$/)]);
    expect(params.slice(7, 12)).toEqual([['v1'], ['trades'], ['difference'], ['data[].amount'], [100]]);
    await recorder.flush();
    expect(db.queries).toHaveLength(1);
    await recorder.close();
  });

  it('keeps a batch it could not write and adds it to the next', async () => {
    const db = new RecordingDatabase();
    const failures: unknown[] = [];
    const recorder = new ShadowRecorder(db, { ...NO_TIMER, onFlushError: (error) => failures.push(error) });
    recorder.compared(TRADES, [difference('data[].amount', '1', '2')], ['data[].updatedAt']);
    db.failing = true;
    await recorder.flush();
    expect(failures).toHaveLength(1);
    db.failing = false;
    recorder.compared(TRADES, [difference('data[].amount', '1', '3')], ['data[].updatedAt']);
    await recorder.close();
    expect(db.queries).toHaveLength(1);
    const params = db.queries[0]!.params;
    expect(params[2]).toEqual([2]);
    expect(params.slice(9, 12)).toEqual([
      ['difference', 'noise'],
      ['data[].amount', 'data[].updatedAt'],
      [2, 2],
    ]);
    expect(JSON.parse((params[12] as string[])[0]!).map((example: { gateway: string }) => example.gateway)).toEqual([
      '3',
      '2',
    ]);
  });

  it('writes by itself every flush interval', async () => {
    // Its interval timer is faked: the test moves time on instead of waiting for it.
    vi.useFakeTimers({ toFake: ['setInterval', 'clearInterval'] });
    try {
      const db = new RecordingDatabase();
      const recorder = new ShadowRecorder(db, { flushIntervalMs: 20, examplesPerField: 5 });
      recorder.compared(TRADES, [], []);
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

  it('reads back what two writers added, masked, with the newest five examples first', async () => {
    const empty = await readShadowReport(database.db);
    expect(empty).toEqual({ since: null, operations: [] });
    const one = new ShadowRecorder(database.db, NO_TIMER);
    const other = new ShadowRecorder(database.db, NO_TIMER);
    for (let n = 1; n <= 4; n += 1)
      one.compared(
        BALANCES,
        [difference('data[].accountNumber', `"00012345678${n}"`, '"000123456789"', `data[id=${n}].accountNumber`)],
        ['netBalanceInUSD'],
      );
    one.compared(BALANCES, [], []);
    one.notCompared(BALANCES);
    await one.flush();
    for (let n = 5; n <= 7; n += 1)
      other.compared(
        BALANCES,
        [difference('data[].accountNumber', `"00012345678${n}"`, '"000123456789"', `data[id=${n}].accountNumber`)],
        [],
      );
    other.dropped(TRADES);
    await other.close();
    await one.close();

    const report = await readShadowReport(database.db);
    expect(report.since).toMatch(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/);
    expect(report.operations.map((operation) => `${operation.generation} ${operation.operation}`)).toEqual([
      'v1 trades',
      'v2 balances',
    ]);
    expect(report.operations[0]).toEqual({
      generation: 'v1',
      operation: 'trades',
      compared: 0,
      differing: 0,
      notCompared: 0,
      dropped: 1,
      fields: [],
      noise: [],
    });
    const balances = report.operations[1]!;
    expect(balances).toMatchObject({
      compared: 8,
      differing: 7,
      notCompared: 1,
      dropped: 0,
      noise: [{ path: 'netBalanceInUSD', count: 4 }],
    });
    expect(balances.fields).toHaveLength(1);
    const [field] = balances.fields;
    expect(field).toMatchObject({ path: 'data[].accountNumber', count: 7 });
    expect(field!.examples.map((example) => example.at)).toEqual(
      [7, 6, 5, 4, 3].map((n) => `data[id=${n}].accountNumber`),
    );
    expect(field!.example).toEqual(field!.examples[0]);
    expect(field!.example).toMatchObject({
      legacy: '"********6787"',
      gateway: '"********6789"',
      seenAt: expect.stringMatching(/Z$/),
    });
    expect(JSON.stringify(report)).not.toContain('00012345678');
    // Since the first comparison was counted, not since its batch was written.
    expect(report.since! <= field!.examples.at(-1)!.seenAt).toBe(true);
  });
});
