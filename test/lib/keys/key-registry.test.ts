import { generateKeyPairSync, randomUUID } from 'node:crypto';

import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import type { Database } from '../../../src/lib/db/database.js';
import { InvalidKeyRegistrationError } from '../../../src/lib/errors/internal-errors.js';
import { KeyRegistry } from '../../../src/lib/keys/key-registry.js';
import { createTestPostgres, type TestDatabase } from '../../support/databases.js';

const TTL_MS = 5_000;
const LOOK_UP = 'SELECT * FROM api_keys WHERE name';

/** The real database, with its key look-ups counted and, when a test asks, held or failed. */
class ObservedDatabase {
  lookUps = 0;
  /** Awaited before each look-up runs. */
  gate: Promise<void> = Promise.resolve();
  /** Awaited after each look-up ran, before its rows are handed back; `answerHeld` is called on arrival. */
  answerGate: Promise<void> = Promise.resolve();
  answerHeld: () => void = () => {};
  failing = false;
  private readonly running = new Set<Promise<unknown>>();

  constructor(private readonly inner: Database) {}

  /**
   * Resolves once no look-up is running (a background one included) and the registry has had a
   * few turns of the event loop to take its answer. Waiting on the queries themselves, not on a
   * number of turns: under the whole suite's load a real query can outlast any fixed count.
   */
  async idle(): Promise<void> {
    while (this.running.size > 0) await Promise.allSettled([...this.running]);
    for (let turn = 0; turn < 3; turn += 1) await new Promise((resolve) => setImmediate(resolve));
  }

  readonly db: Database = {
    driver: 'postgres',
    query: <Row>(sql: string, params?: readonly unknown[]) => {
      if (!sql.startsWith(LOOK_UP)) return this.inner.query<Row>(sql, params);
      this.lookUps += 1;
      const lookUp = (async () => {
        await this.gate;
        if (this.failing) throw new Error('the database is down');
        const result = await this.inner.query<Row>(sql, params);
        this.answerHeld();
        await this.answerGate;
        return result;
      })();
      this.running.add(lookUp);
      void lookUp.then(
        () => this.running.delete(lookUp),
        () => this.running.delete(lookUp),
      );
      return lookUp;
    },
    exec: (sql) => this.inner.exec(sql),
    transaction: (fn) => this.inner.transaction(fn),
    close: () => this.inner.close(),
  };
}

describe('KeyRegistry key cache', () => {
  let database: TestDatabase;
  let keyName: string;
  let observed: ObservedDatabase;
  let clock: number;
  let registry: KeyRegistry;

  beforeAll(async () => {
    database = await createTestPostgres();
    keyName = (await new KeyRegistry(database.db).createKey({ orgId: randomUUID(), scopes: ['view'], mode: 'sandbox' }))
      .name;
  });
  afterAll(async () => {
    await database?.drop();
  });

  const fresh = (ttlMs = TTL_MS) => {
    observed = new ObservedDatabase(database.db);
    clock = 0;
    registry = new KeyRegistry(observed.db, { cacheTtlMs: ttlMs, now: () => clock });
  };
  const setRevoked = (revoked: boolean) =>
    database.db.query(`UPDATE api_keys SET revoked_at = ${revoked ? 'now()' : 'NULL'} WHERE name = $1`, [keyName]);

  it('runs one look-up for callers that miss together', async () => {
    fresh();
    const keys = await Promise.all(Array.from({ length: 20 }, () => registry.findActive(keyName)));
    expect(observed.lookUps).toBe(1);
    expect(new Set(keys).size).toBe(1);
    expect(keys[0]?.record.name).toBe(keyName);
  });

  it('answers from the cache, and near the end of the TTL looks the key up again in the background', async () => {
    fresh();
    await registry.findActive(keyName);
    clock = TTL_MS * 0.8 - 1;
    await registry.findActive(keyName);
    expect(observed.lookUps).toBe(1);

    let release!: () => void;
    observed.gate = new Promise((resolve) => (release = resolve));
    clock = TTL_MS * 0.8;
    // Answered at once from the cache while the look-up is held.
    expect((await registry.findActive(keyName))?.record.name).toBe(keyName);
    expect((await registry.findActive(keyName))?.record.name).toBe(keyName);
    expect(observed.lookUps).toBe(2);
    release();
    await observed.idle();

    // The refreshed entry counts from when its look-up began.
    clock = TTL_MS * 1.5;
    await registry.findActive(keyName);
    expect(observed.lookUps).toBe(2);
  });

  it('never serves a key revoked elsewhere for longer than the TTL after the look-up that read it', async () => {
    fresh();
    try {
      expect(await registry.findActive(keyName)).not.toBeNull();
      await setRevoked(true);
      clock = TTL_MS - 1;
      // Inside the documented window the cached key still stands; its background look-up reads the revocation.
      expect(await registry.findActive(keyName)).not.toBeNull();
      await observed.idle();
      clock = TTL_MS - 1;
      expect(await registry.findActive(keyName)).toBeNull();

      // Without any earlier refresh, the first call after the TTL reads the database.
      fresh();
      await setRevoked(false);
      expect(await registry.findActive(keyName)).not.toBeNull();
      await setRevoked(true);
      clock = TTL_MS;
      expect(await registry.findActive(keyName)).toBeNull();
    } finally {
      await setRevoked(false);
    }
  });

  it('keeps an entry whose background look-up failed until it expires, then fails the miss', async () => {
    fresh();
    await registry.findActive(keyName);
    observed.failing = true;
    clock = TTL_MS * 0.9;
    expect(await registry.findActive(keyName)).not.toBeNull();
    await observed.idle();
    expect(observed.lookUps).toBe(2);
    expect(await registry.findActive(keyName)).not.toBeNull();
    clock = TTL_MS;
    await expect(registry.findActive(keyName)).rejects.toThrow('the database is down');
    observed.failing = false;
    expect(await registry.findActive(keyName)).not.toBeNull();
  });

  it('does not let a look-up that began before revoke() put the key back', async () => {
    fresh(60_000);
    let release!: () => void;
    observed.answerGate = new Promise((resolve) => (release = resolve));
    const held = new Promise<void>((resolve) => (observed.answerHeld = resolve));
    const before = registry.findActive(keyName);
    try {
      await held;
      expect(await registry.revoke(keyName)).toBe(true);
      release();
      // The look-up read the key before the revocation; what it read is not cached.
      expect(await before).not.toBeNull();
      expect(await registry.findActive(keyName)).toBeNull();
      expect(observed.lookUps).toBe(2);
    } finally {
      await setRevoked(false);
    }
  });

  it('caches an unknown name as a miss', async () => {
    fresh();
    const unknown = `org/${randomUUID()}/apiKey/${randomUUID()}`;
    expect(await registry.findActive(unknown)).toBeNull();
    expect(await registry.findActive(unknown)).toBeNull();
    expect(observed.lookUps).toBe(1);
    // A name that is not a key name never reaches the database.
    expect(await registry.findActive('not a key name')).toBeNull();
    expect(observed.lookUps).toBe(1);
  });
});

describe('KeyRegistry.registerKey', () => {
  let database: TestDatabase;
  beforeAll(async () => {
    database = await createTestPostgres();
  });
  afterAll(async () => {
    await database?.drop();
  });

  const p256 = () =>
    generateKeyPairSync('ec', { namedCurve: 'P-256' }).publicKey.export({ type: 'spki', format: 'pem' }).toString();

  it('registers the public half of a pair made elsewhere, with its org, and the key is found', async () => {
    const registry = new KeyRegistry(database.db);
    const orgId = randomUUID();
    const name = `org/${orgId}/apiKey/${randomUUID()}`;
    await registry.registerKey({
      name,
      orgId,
      publicKey: p256(),
      scopes: ['view'],
      mode: 'live',
      ipAllowlist: ['203.0.113.7'],
      label: 'cli',
    });
    expect(await registry.list(orgId)).toMatchObject([
      { name, orgId, scopes: ['view'], mode: 'live', ipAllowlist: ['203.0.113.7/32'], label: 'cli', revokedAt: null },
    ]);
    expect((await registry.findActive(name))?.record.name).toBe(name);
    expect((await database.db.query('SELECT 1 FROM org_environments WHERE org_id = $1', [orgId])).rowCount).toBe(2);
  });

  it("refuses another org's name, and a key that is not P-256", async () => {
    const registry = new KeyRegistry(database.db);
    const orgId = randomUUID();
    const otherOrgName = `org/${randomUUID()}/apiKey/${randomUUID()}`;
    await expect(
      registry.registerKey({ name: otherOrgName, orgId, publicKey: p256(), scopes: ['view'], mode: 'live' }),
    ).rejects.toBeInstanceOf(InvalidKeyRegistrationError);
    const rsa = generateKeyPairSync('rsa', { modulusLength: 2048 })
      .publicKey.export({ type: 'spki', format: 'pem' })
      .toString();
    for (const publicKey of [rsa, 'not a key']) {
      await expect(
        registry.registerKey({
          name: `org/${orgId}/apiKey/${randomUUID()}`,
          orgId,
          publicKey,
          scopes: ['view'],
          mode: 'live',
        }),
      ).rejects.toThrow('is not an EC P-256 key in SPKI PEM');
    }
    expect(await registry.list(orgId)).toEqual([]);
  });
});
