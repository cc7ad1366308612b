/**
 * The sealed columns as a whole, on both drivers: rows counted by the key id they name, the
 * upgrade from the keys earlier versions kept in the database (all or nothing, once when
 * processes start together), and re-sealing under the keyring's sealing key.
 */
import { randomBytes } from 'node:crypto';

import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';

import { ENDPOINT_SECRET_COLUMN } from '../../../src/core/events/webhook-endpoints.js';
import { LEGACY_SEALED_COLUMNS } from '../../../src/gateway/webhooks/legacy-webhooks.js';
import type { Database } from '../../../src/lib/db/database.js';
import { FailpointError } from '../../../src/lib/errors/internal-errors.js';
import { armFailpoint, disarmAllFailpoints } from '../../../src/lib/failpoints.js';
import {
  countSealedRows,
  resealRows,
  rowsByKeyId,
  rowsIn,
  UPGRADE_FAILPOINT,
  upgradeSealedRows,
} from '../../../src/lib/secrets/sealed-rows.js';
import { keyIdOf, sealedKeyId, SealingKeyring } from '../../../src/lib/secrets/sealing-keyring.js';
import { DATABASE_DRIVERS, type TestDatabase } from '../../support/databases.js';
import { FORMER_KEY_NAMES } from '../../support/former-sealing.js';
import { everySealedValue, formerRows, sealedRows, storedSecret } from '../../support/sealed-fixtures.js';

const ALL = [ENDPOINT_SECRET_COLUMN, ...LEGACY_SEALED_COLUMNS];

describe.each(DATABASE_DRIVERS)('sealed rows on $driver', ({ driver, create }) => {
  let database: TestDatabase;
  let db: Database;
  const [a, b] = [randomBytes(32), randomBytes(32)];
  const [keyringA, keyringB, keyringBA] = [SealingKeyring.of([a]), SealingKeyring.of([b]), SealingKeyring.of([b, a])];

  beforeAll(async () => {
    database = await create();
    db = database.db;
  });
  afterEach(async () => {
    disarmAllFailpoints();
    // Each test starts from empty columns and no former keys.
    await db.query('DELETE FROM legacy_webhook_registrations');
    await db.query('DELETE FROM legacy_webhook_subscriptions');
    await db.query('DELETE FROM webhook_endpoints');
    await db.query("DELETE FROM service_secrets WHERE name <> 'cursor-hmac'");
  });
  afterAll(async () => database?.drop());

  const formerKeyRows = async () =>
    (
      await db.query<{ name: string }>('SELECT name FROM service_secrets WHERE name = ANY($1::text[]) ORDER BY name', [
        Object.values(FORMER_KEY_NAMES),
      ])
    ).rows.map((row) => row.name);

  it('counts the rows of each column by the key id they name, and what is not sealed under a key', async () => {
    await sealedRows(db, keyringA);
    await sealedRows(db, keyringB);
    await formerRows(db);
    await db.query(
      "INSERT INTO legacy_webhook_registrations (id, org_id, mode, url, status, idempotency_key, created_at, updated_at) VALUES ($1, $1, 'live', 'u', 'REGISTERING', 'k', now(), now())",
      ['0190c5a8-7d2e-7c1a-9f3b-2a4d6e8f0b1c'],
    );
    const [someEndpoint] = (await db.query<{ id: string }>('SELECT id FROM webhook_endpoints LIMIT 1')).rows;
    await db.query("UPDATE webhook_endpoints SET secret = 'garbage' WHERE id = $1", [someEndpoint!.id]);
    const counts = await countSealedRows(db, ALL);
    const byKey = rowsByKeyId(counts);
    // One of the six sealed rows was made garbage: an endpoint, under one key or the other.
    expect(byKey.get(keyIdOf(a))! + byKey.get(keyIdOf(b))!).toBe(5);
    expect([...byKey.keys()].sort()).toEqual([keyIdOf(a), keyIdOf(b)].sort());
    expect(rowsIn(counts, 'former')).toBe(3);
    expect(rowsIn(counts, 'plaintext')).toBe(1);
    expect(rowsIn(counts, 'unreadable')).toBe(1);
    // The registration waiting for its secret (NULL) is no row to open.
    expect(counts.reduce((sum, count) => sum + count.rows, 0)).toBe(10);
    expect(new Set(counts.map((count) => count.table))).toEqual(
      new Set(['webhook_endpoints', 'legacy_webhook_subscriptions', 'legacy_webhook_registrations']),
    );
  });

  it('upgrades: the former rows and the plaintext one sealed under the keyring, the in-database keys deleted', async () => {
    const rows = await formerRows(db);
    const current = await sealedRows(db, keyringA);
    expect(await formerKeyRows()).toEqual(Object.values(FORMER_KEY_NAMES).sort());
    const report = await upgradeSealedRows(db, keyringB, ALL);
    expect(report).toEqual({
      resealed: 3,
      sealed: 1,
      stranded: 0,
      deletedKeys: Object.values(FORMER_KEY_NAMES).sort(),
    });
    for (const row of rows) {
      const stored = await storedSecret(db, row);
      expect(sealedKeyId(stored)).toBe(keyringB.sealingKeyId);
      expect(keyringB.open(stored, row.binding)).toBe(row.secret);
    }
    // Rows already under a key are the reseal's business, not the upgrade's.
    for (const row of current) expect(sealedKeyId(await storedSecret(db, row))).toBe(keyringA.sealingKeyId);
    expect(await formerKeyRows()).toEqual([]);
    expect(await upgradeSealedRows(db, keyringB, ALL)).toEqual({
      resealed: 0,
      sealed: 0,
      stranded: 0,
      deletedKeys: [],
    });
  });

  it('leaves a former row whose key is gone, or that does not open under it, as it was', async () => {
    const rows = await formerRows(db);
    const subscription = rows.find((row) => row.table === 'legacy_webhook_subscriptions')!;
    const endpoint = rows.find((row) => row.table === 'webhook_endpoints')!;
    // The subscription's key gone; the endpoint's sealed text copied onto the registration's row.
    const registration = rows.find((row) => row.table === 'legacy_webhook_registrations')!;
    await db.query('UPDATE legacy_webhook_registrations SET secret = $2 WHERE id = $1', [
      registration.id,
      await storedSecret(db, subscription),
    ]);
    await db.query('DELETE FROM service_secrets WHERE name = $1', [FORMER_KEY_NAMES.legacy]);
    const before = [await storedSecret(db, subscription), await storedSecret(db, registration)];
    const report = await upgradeSealedRows(db, keyringB, ALL);
    expect(report).toMatchObject({ resealed: 1, sealed: 1, stranded: 2, deletedKeys: [FORMER_KEY_NAMES.endpoints] });
    expect([await storedSecret(db, subscription), await storedSecret(db, registration)]).toEqual(before);
    expect(keyringB.open(await storedSecret(db, endpoint), endpoint.binding)).toBe(endpoint.secret);
    expect(rowsIn(await countSealedRows(db, ALL), 'former')).toBe(2);
  });

  it('is all or nothing: a failure after the first column leaves every row and every key as it was', async () => {
    await formerRows(db);
    const before = await everySealedValue(db);
    const keysBefore = await formerKeyRows();
    armFailpoint(UPGRADE_FAILPOINT);
    await expect(upgradeSealedRows(db, keyringB, ALL)).rejects.toThrow(FailpointError);
    expect(await everySealedValue(db)).toEqual(before);
    expect(await formerKeyRows()).toEqual(keysBefore);
    // Done again, it goes through.
    expect((await upgradeSealedRows(db, keyringB, ALL)).resealed).toBe(3);
  });

  it.runIf(driver === 'postgres')(
    'is done once when processes start together: the key rows are locked first',
    async () => {
      await formerRows(db);
      await formerRows(db);
      const reports = await Promise.all(Array.from({ length: 4 }, () => upgradeSealedRows(db, keyringB, ALL)));
      expect(reports.reduce((sum, report) => sum + report.resealed + report.sealed, 0)).toBe(8);
      expect(reports.filter((report) => report.deletedKeys.length > 0)).toHaveLength(1);
      expect(rowsByKeyId(await countSealedRows(db, ALL))).toEqual(new Map([[keyringB.sealingKeyId, 8]]));
    },
  );

  it('reseals every row under another held key with the sealing key, each still opening for its own row', async () => {
    const underA = await sealedRows(db, keyringA);
    const underB = await sealedRows(db, keyringB);
    const report = await resealRows(db, keyringBA, ALL);
    expect(report).toEqual({ resealed: 3, skipped: 0, unknownKeys: new Map(), damaged: 0 });
    for (const row of [...underA, ...underB]) {
      const stored = await storedSecret(db, row);
      expect(sealedKeyId(stored)).toBe(keyringB.sealingKeyId);
      expect(keyringB.open(stored, row.binding)).toBe(row.secret);
    }
    expect(await resealRows(db, keyringBA, ALL)).toEqual({
      resealed: 0,
      skipped: 0,
      unknownKeys: new Map(),
      damaged: 0,
    });
  });

  it('leaves rows under a key it does not hold, and rows that do not open, counting each', async () => {
    const c = randomBytes(32);
    await sealedRows(db, SealingKeyring.of([c]));
    const underA = await sealedRows(db, keyringA);
    // A sealed value copied onto another row's: held key, but not for that row.
    await db.query('UPDATE legacy_webhook_subscriptions SET secret = $2 WHERE id = $1', [
      underA[1]!.id,
      await storedSecret(db, underA[2]!),
    ]);
    const report = await resealRows(db, keyringBA, ALL);
    expect(report).toEqual({ resealed: 2, skipped: 0, unknownKeys: new Map([[keyIdOf(c), 3]]), damaged: 1 });
    expect(rowsByKeyId(await countSealedRows(db, ALL))).toEqual(
      new Map([
        [keyIdOf(a), 1],
        [keyIdOf(b), 2],
        [keyIdOf(c), 3],
      ]),
    );
  });

  it.runIf(driver === 'postgres')(
    'reseals each row once when runs overlap: a row another rewrote is left to it',
    async () => {
      for (let org = 0; org < 5; org++) await sealedRows(db, keyringA);
      const reports = await Promise.all(Array.from({ length: 3 }, () => resealRows(db, keyringBA, ALL)));
      const resealed = reports.reduce((sum, report) => sum + report.resealed, 0);
      const skipped = reports.reduce((sum, report) => sum + report.skipped, 0);
      expect(resealed).toBe(15);
      expect(resealed + skipped).toBeGreaterThanOrEqual(15);
      expect(rowsByKeyId(await countSealedRows(db, ALL))).toEqual(new Map([[keyringB.sealingKeyId, 15]]));
    },
  );
});
