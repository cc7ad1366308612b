import { afterAll, beforeAll, expect, it } from 'vitest';

import { seedSandbox } from '../../src/cli/sandbox-seed.js';
import { readClientBalances } from '../../src/core/ledger/ledger.js';
import { checkLedger } from '../../src/core/ledger/ledger-check.js';
import { newUuid } from '../../src/lib/ids.js';
import { KeyRegistry } from '../../src/lib/keys/key-registry.js';
import { formatDecimal } from '../../src/lib/money.js';
import { createTestPostgres, type TestDatabase } from '../support/databases.js';

let database: TestDatabase;
beforeAll(async () => {
  database = await createTestPostgres();
});
afterAll(async () => database?.drop());

it('funds the sandbox book by deposits and verifies one fiat and one stablecoin account, once however often it runs', async () => {
  const registry = new KeyRegistry(database.db);
  const orgId = newUuid();
  const key = await registry.createKey({ orgId, scopes: ['view', 'trade', 'withdraw', 'webhooks'], mode: 'sandbox' });
  const first = await seedSandbox(database.db, orgId, key.name);
  const again = await seedSandbox(database.db, orgId, key.name);
  expect(again).toEqual(first);
  expect(first.balances).toEqual(['100000.00 USD', '50000.00 EUR', '100000.000000 USDC']);

  const balances = await readClientBalances(database.db, orgId, 'sandbox');
  expect(balances.map((b) => [b.currency, formatDecimal(b.balance)])).toEqual([
    ['EUR', '50000'],
    ['USD', '100000'],
    ['USDC', '100000'],
  ]);
  const { rows } = await database.db.query<{ currency: string; status: string; verified: boolean; asset_type: string }>(
    "SELECT currency, status, verified, asset_type FROM withdrawal_accounts WHERE org_id = $1 AND environment = 'sandbox' ORDER BY currency",
    [orgId],
  );
  expect(rows).toEqual([
    { currency: 'USD', status: 'ACTIVE', verified: true, asset_type: 'FIAT' },
    { currency: 'USDC', status: 'ACTIVE', verified: true, asset_type: 'STABLECOIN' },
  ]);
  const deposits = await database.db.query<{ n: string }>(
    'SELECT count(*)::text AS n FROM deposits WHERE org_id = $1',
    [orgId],
  );
  expect(deposits.rows[0]!.n).toBe('3');
  expect(await checkLedger(database.db, { orgId })).toEqual([]);
});
