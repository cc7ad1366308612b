/**
 * The seeded sandbox `fxgate all` prepares on first start, so a newcomer can try everything at
 * once: balances funded through real sandbox deposits, and one verified fiat and one verified
 * stablecoin withdrawal account. Every step uses the same code paths as the API, with stable
 * idempotency keys, so later starts find what the first one made and change nothing.
 */
import { createHash } from 'node:crypto';

import { createSandboxDeposit } from '../core/money-movement/deposits.js';
import {
  createWithdrawalAccount,
  verifyWithdrawalAccount,
  type WithdrawalAccountCreateInput,
  withdrawalAccountCreateSchema,
} from '../core/money-movement/withdrawal-accounts.js';
import type { Principal } from '../core/principal.js';
import { referenceData } from '../core/trading/reference-data.js';
import { SCOPES } from '../lib/auth/credential-vocabulary.js';
import type { Database } from '../lib/db/database.js';

export const SEED_DEPOSITS = [
  { currency: 'USD', amount: '100000.00' },
  { currency: 'EUR', amount: '50000.00' },
  { currency: 'USDC', amount: '100000.000000', network: 'ETHEREUM' },
] as const;

/** A published ABA routing number (JPMorgan Chase) and the EIP-55 specification's first address. */
export const SEED_ACCOUNTS: readonly WithdrawalAccountCreateInput[] = [
  withdrawalAccountCreateSchema.parse({
    currency: 'USD',
    assetType: 'FIAT',
    accountName: 'Sandbox operating account',
    transferType: 'FEDWIRE',
    bankName: 'JPMorgan Chase Bank, N.A.',
    accountNumber: '000123456789',
    routingNumber: '021000021',
  }),
  withdrawalAccountCreateSchema.parse({
    currency: 'USDC',
    assetType: 'STABLECOIN',
    accountName: 'Sandbox USDC wallet',
    network: 'ETHEREUM',
    address: '0x5aAeb6053F3E94C9b9A09f33669435E7Ef1BeAed',
  }),
];

export interface SeedReport {
  readonly balances: readonly string[];
  readonly accounts: readonly string[];
}

function stableFingerprint(value: unknown): string {
  return `sha256:${createHash('sha256')
    .update(`fxgate sandbox seed\n${JSON.stringify(value)}`)
    .digest('hex')}`;
}

export async function seedSandbox(db: Database, orgId: string, keyName: string): Promise<SeedReport> {
  const context = { db, reference: referenceData(db), now: () => new Date() };
  const principal: Principal = { orgId, environment: 'sandbox', keyName, scopes: SCOPES };
  const balances: string[] = [];
  for (const deposit of SEED_DEPOSITS) {
    const record = await createSandboxDeposit(context, principal, {
      ...deposit,
      idempotencyKey: `fxgate-seed:deposit:${deposit.currency}`,
    });
    balances.push(`${record.amount} ${record.currency}`);
  }
  const accounts: string[] = [];
  for (const [index, input] of SEED_ACCOUNTS.entries()) {
    const row = await createWithdrawalAccount(context, principal, input, {
      key: `fxgate-seed:account:${index}`,
      fingerprint: stableFingerprint(input),
    });
    await verifyWithdrawalAccount(db, { orgId, environment: 'sandbox' }, row.id);
    accounts.push(`${row.id} (${input.currency} ${input.assetType === 'FIAT' ? input.transferType : input.network})`);
  }
  return { balances, accounts };
}
