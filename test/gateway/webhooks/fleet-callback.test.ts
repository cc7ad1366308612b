/**
 * The fleet's one callback base, on both databases: gateways advertising one base agree on it;
 * gateways advertising different ones keep the first while any gateway advertising it runs (no
 * flapping, however often they decide), and it moves once, to the newest base, when the last of
 * them withdraws or stops renewing; two gateways deciding at once on a fresh database decide one
 * base. Each test starts from an empty table and a database clock, nothing mocked.
 */
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';

import {
  type CallbackDecision,
  FleetCallback,
  fleetCallbackBase,
  normaliseBase,
} from '../../../src/gateway/webhooks/fleet-callback.js';
import type { Database } from '../../../src/lib/db/database.js';
import { DATABASE_DRIVERS, type TestDatabase } from '../../support/databases.js';

const A = 'https://gw-a.example.com/_fxgate/webhooks/v3';
const B = 'https://gw-b.example.com/_fxgate/webhooks/v3';
const C = 'https://gw-c.example.com/_fxgate/webhooks/v3';
const LEASE_MS = 60_000;

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

describe('normaliseBase', () => {
  it('writes a base as v3 will be given it: no trailing slash, the URL normalised', () => {
    expect(normaliseBase('HTTPS://GW.example.com:443/hooks/')).toBe('https://gw.example.com/hooks');
    expect(normaliseBase('https://gw.example.com')).toBe('https://gw.example.com');
    expect(normaliseBase('http://127.0.0.1:8080/_fxgate/webhooks/v3///')).toBe(
      'http://127.0.0.1:8080/_fxgate/webhooks/v3',
    );
  });
});

describe.each(DATABASE_DRIVERS)('the fleet callback on $driver', ({ create }) => {
  let database: TestDatabase;
  let db: Database;

  beforeAll(async () => {
    database = await create();
    db = database.db;
  });
  beforeEach(async () => {
    await db.query('DELETE FROM legacy_webhook_gateways');
    await db.query('UPDATE legacy_webhook_callback SET base_url = NULL, decided_at = NULL');
  });
  afterAll(async () => database?.drop());

  const gateway = (base: string | null, leaseMs = LEASE_MS) => new FleetCallback({ db, base, leaseMs });

  it('gateways advertising one base (written two ways) agree on it, and nothing moves', async () => {
    const first = gateway(A);
    const second = gateway(`${A}/`);
    const decisions: CallbackDecision[] = [];
    for (let round = 0; round < 3; round += 1) decisions.push(await first.decide(), await second.decide());
    for (const decision of decisions) expect(decision).toMatchObject({ base: A, own: A, movedFrom: null });
    // From the second gateway's first decision on, both are counted under the one base.
    for (const decision of decisions.slice(1))
      expect(decision.advertised).toEqual([{ base: A, gateways: 2, since: expect.any(Date) }]);
    expect(await fleetCallbackBase(db)).toBe(A);
  });

  it('a gateway advertising another base follows the one held, however often either decides', async () => {
    const holder = gateway(A);
    expect(await holder.decide()).toMatchObject({ base: A, movedFrom: null });
    const newcomer = gateway(B);
    for (let round = 0; round < 5; round += 1) {
      const theirs = await newcomer.decide();
      expect(theirs).toMatchObject({ base: A, own: B, movedFrom: null });
      expect(theirs.advertised.map((entry) => entry.base)).toEqual([B, A]);
      expect(await holder.decide()).toMatchObject({ base: A, own: A, movedFrom: null });
    }
    expect(await fleetCallbackBase(db)).toBe(A);
  });

  it('moves once, to the other base, when the last gateway of the held one withdraws', async () => {
    const old1 = gateway(A);
    const old2 = gateway(A);
    await old1.decide();
    await old2.decide();
    const renewed = gateway(B);
    expect((await renewed.decide()).base).toBe(A);
    await old1.withdraw();
    // One of the old base's gateways still runs: nothing moves.
    expect(await renewed.decide()).toMatchObject({ base: A, movedFrom: null });
    await old2.withdraw();
    expect(await renewed.decide()).toMatchObject({ base: B, movedFrom: A });
    // Decided: the next decisions keep it, and a gateway of the old base back again follows it.
    expect(await renewed.decide()).toMatchObject({ base: B, movedFrom: null });
    expect(await gateway(A).decide()).toMatchObject({ base: B, own: A, movedFrom: null });
    expect(await fleetCallbackBase(db)).toBe(B);
  });

  it("moves when the holder's lease runs out without a renewal (a gateway that died)", async () => {
    const dying = gateway(A, 400);
    await dying.decide();
    const survivor = gateway(B);
    expect((await survivor.decide()).base).toBe(A);
    await sleep(600);
    const decision = await survivor.decide();
    expect(decision).toMatchObject({ base: B, movedFrom: A });
    expect(decision.advertised.map((entry) => entry.base)).toEqual([B]);
    // Its rows are gone with the lease.
    const { rows } = await db.query<{ n: number }>(
      'SELECT count(*)::int AS n FROM legacy_webhook_gateways WHERE base_url = $1',
      [A],
    );
    expect(rows[0]!.n).toBe(0);
  });

  it('a renewal in time keeps the lease, however short', async () => {
    const holder = gateway(A, 1_000);
    await holder.decide();
    const other = gateway(B);
    // Longer in all than the lease: only the renewals keep it.
    for (let round = 0; round < 4; round += 1) {
      await sleep(400);
      await holder.decide();
      expect((await other.decide()).base).toBe(A);
    }
  });

  it('the newest configuration wins when the held base is gone and several others run', async () => {
    const old = gateway(A);
    await old.decide();
    await sleep(20);
    const middle = gateway(B);
    await middle.decide();
    await sleep(20);
    const newest = gateway(C);
    await newest.decide();
    // B started again later: what counts is when a base's earliest running gateway started.
    await sleep(20);
    await gateway(B).decide();
    await old.withdraw();
    expect(await middle.decide()).toMatchObject({ base: C, movedFrom: A });
  });

  it('a gateway that advertises nothing follows the fleet and holds nothing', async () => {
    const follower = gateway(null);
    expect(await follower.decide()).toEqual({ base: null, own: null, movedFrom: null, advertised: [] });
    await gateway(A).decide();
    expect(await follower.decide()).toMatchObject({ base: A, own: null, movedFrom: null });
    const { rows } = await db.query<{ n: number }>('SELECT count(*)::int AS n FROM legacy_webhook_gateways');
    expect(rows[0]!.n).toBe(1);
  });

  it('two gateways deciding at once on a fresh database decide one base', async () => {
    const gateways = [gateway(A), gateway(B), gateway(A), gateway(B)];
    const decisions = await Promise.all(gateways.map((each) => each.decide()));
    const decided = await fleetCallbackBase(db);
    expect([A, B]).toContain(decided);
    expect(decisions.map((decision) => decision.base)).toEqual([decided, decided, decided, decided]);
    expect(decisions.filter((decision) => decision.movedFrom !== null)).toEqual([]);
  });

  it("forgetOthers drops every other gateway's lease (a database one process opens)", async () => {
    await gateway(A).decide();
    const restarted = gateway(B);
    await restarted.forgetOthers();
    expect(await restarted.decide()).toMatchObject({ base: B, movedFrom: A });
  });
});
