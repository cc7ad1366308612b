/**
 * Withdrawal accounts: where an org's withdrawals go. A fiat account is a bank account reached by
 * FEDWIRE (account number and ABA routing number) or SWIFT (IBAN or account number, and BIC); a
 * stablecoin account is an address on one of the currency's networks.
 *
 * Creation checks in three layers, each with its own status: the body's shape (the zod schema
 * below, 400 VALIDATION_BODY_FAILED), its fit with reference data (the currency exists, is of the
 * stated asset type and, for a stablecoin, lives on the stated network; also 400, because the
 * request names something that is not there), then the checksums of
 * docs/contract.md#v3-withdrawal-accounts-checksums (422 WITHDRAWAL_ADDRESS_CHECKSUM_FAILED, a
 * well-formed request whose identifier is wrong). The same checksums run again when a withdrawal is
 * made (accountChecksumFailure), so a row that reached the table some other way still cannot send
 * money to a mistyped address.
 *
 * Creation is idempotent like a trade: the row carries the Idempotency-Key under a unique
 * constraint, so a retry whose store record was lost finds the account instead of adding another.
 */
import { z } from 'zod';

import type { Mode } from '../../lib/auth/credential-vocabulary.js';
import type { Queryable } from '../../lib/db/database.js';
import { ApiError } from '../../lib/errors/api-error.js';
import type { ValidationIssue } from '../../lib/errors/validation-issues.js';
import { isId, newId } from '../../lib/ids.js';
import { type BookSelect, rowInBook } from '../book-rows.js';
import { raceWinner, replayOrMismatch } from '../idempotent-rows.js';
import type { Principal } from '../principal.js';
import type { ReferenceSnapshot } from '../trading/reference-data.js';
import { actorIdOf } from '../trading/trades.js';
import { currencyCode, timestamp, v3Id } from '../wire-types.js';
import {
  isValidAbaRoutingNumber,
  isValidBic,
  isValidIban,
  isValidStablecoinAddress,
  normaliseIban,
  STABLECOIN_NETWORKS,
  type StablecoinNetwork,
} from './checksums.js';

export const WITHDRAWAL_ACCOUNT_STATUSES = ['PENDING_VERIFICATION', 'ACTIVE', 'DISABLED'] as const;
export type WithdrawalAccountStatus = (typeof WITHDRAWAL_ACCOUNT_STATUSES)[number];
export const ASSET_TYPES = ['FIAT', 'STABLECOIN'] as const;
export type AssetType = (typeof ASSET_TYPES)[number];
export const TRANSFER_TYPES = ['FEDWIRE', 'SWIFT'] as const;
export type TransferType = (typeof TRANSFER_TYPES)[number];

/** The book an account belongs to: an org in one environment. */
export type AccountOwner = Pick<Principal, 'orgId' | 'environment'>;

const ACCOUNTS: BookSelect = { select: 'SELECT * FROM withdrawal_accounts' };

export interface WithdrawalAccountRow {
  id: string;
  org_id: string;
  environment: Mode;
  currency: string;
  asset_type: AssetType;
  account_name: string;
  status: WithdrawalAccountStatus;
  verified: boolean;
  withdrawals_enabled: boolean;
  transfer_type: TransferType | null;
  bank_name: string | null;
  account_number: string | null;
  routing_number: string | null;
  swift_code: string | null;
  memo: string | null;
  network: StablecoinNetwork | null;
  address: string | null;
  comments: string | null;
  creator_actor_id: string;
  idempotency_key: string;
  request_fingerprint: string;
  created_at: Date;
  updated_at: Date;
}

/**
 * The v3 record. Every field is always present, null where it does not apply to the account's
 * kind, so clients read one shape (docs/contract.md#resources-withdrawal-account). accountNumber
 * is returned in full, as the legacy fiat account does: the gateway serves v1 from these records,
 * and the caller registered the number.
 */
export const withdrawalAccountRecordSchema = z
  .object({
    object: z.literal('withdrawal_account'),
    id: v3Id('withdrawalAccount'),
    currency: currencyCode,
    assetType: z.enum(ASSET_TYPES),
    accountName: z.string(),
    status: z.enum(WITHDRAWAL_ACCOUNT_STATUSES),
    verified: z.boolean(),
    withdrawalsEnabled: z.boolean(),
    transferType: z.enum(TRANSFER_TYPES).nullable().meta({ description: 'Fiat: FEDWIRE or SWIFT.' }),
    bankName: z.string().nullable().meta({ description: 'Fiat.' }),
    accountNumber: z.string().nullable().meta({ description: 'Fiat: returned in full; an IBAN in electronic form.' }),
    routingNumber: z.string().nullable().meta({ description: 'FEDWIRE: the ABA routing number.' }),
    swiftCode: z.string().nullable().meta({ description: 'SWIFT: the BIC, upper case.' }),
    memo: z.string().nullable().meta({ description: 'Fiat: the reference sent with each payment.' }),
    network: z
      .enum(STABLECOIN_NETWORKS as readonly [StablecoinNetwork, ...StablecoinNetwork[]])
      .nullable()
      .meta({ description: 'Stablecoin.' }),
    address: z.string().nullable().meta({ description: 'Stablecoin: exactly as registered.' }),
    comments: z.string().nullable(),
    creatorId: v3Id('user'),
    createdAt: timestamp,
    updatedAt: timestamp,
  })
  .meta({
    id: 'WithdrawalAccount',
    description: 'A bank account or wallet address to withdraw to; fields of the other kind are null.',
  });

export type WithdrawalAccountRecord = Readonly<z.output<typeof withdrawalAccountRecordSchema>>;

export function toWithdrawalAccountRecord(row: WithdrawalAccountRow): WithdrawalAccountRecord {
  return {
    object: 'withdrawal_account',
    id: row.id,
    currency: row.currency,
    assetType: row.asset_type,
    accountName: row.account_name,
    status: row.status,
    verified: row.verified,
    withdrawalsEnabled: row.withdrawals_enabled,
    transferType: row.transfer_type,
    bankName: row.bank_name,
    accountNumber: row.account_number,
    routingNumber: row.routing_number,
    swiftCode: row.swift_code,
    memo: row.memo,
    network: row.network,
    address: row.address,
    comments: row.comments,
    creatorId: row.creator_actor_id,
    createdAt: row.created_at.toISOString(),
    updatedAt: row.updated_at.toISOString(),
  };
}

// ---------------------------------------------------------------------------------------------
// The create body (docs/contract.md#v3-withdrawal-accounts-create): a union on assetType, the
// fiat side a union on transferType, every object strict, so a field of the other kind (a
// swiftCode on a FEDWIRE account) is an error.

const CURRENCY_CODE = /^[A-Z]{3,5}$/;
/** Upper-cases ASCII letters only, for the reason normaliseIban gives. */
const upperAscii = (value: string) => value.replace(/[a-z]/g, (c) => c.toUpperCase());

const common = {
  currency: z.string().regex(CURRENCY_CODE, 'a currency code such as USD or USDC'),
  accountName: z.string().trim().min(1).max(140),
  comments: z.string().max(500).optional(),
};
const fiatCommon = {
  ...common,
  assetType: z.literal('FIAT'),
  bankName: z.string().trim().min(1).max(140),
  // Fedwire's originator-to-beneficiary field is 4 lines of 35 characters.
  memo: z.string().max(140).optional(),
};

const fedwireSchema = z.strictObject({
  ...fiatCommon,
  transferType: z.literal('FEDWIRE'),
  // US account numbers are 4 to 17 digits; anything else cannot be a Fedwire beneficiary account.
  accountNumber: z.string().regex(/^[0-9]{4,17}$/, 'a US account number: 4 to 17 digits'),
  // Only bounded here: a routing number that is not 9 digits fails the ABA check, which answers
  // 422 naming it, the same as any other mistyped routing number.
  routingNumber: z.string().min(1).max(64),
});

const swiftSchema = z.strictObject({
  ...fiatCommon,
  transferType: z.literal('SWIFT'),
  // An IBAN (printed in groups of four at most 42 characters) or a plain account number.
  accountNumber: z
    .string()
    .trim()
    .min(1)
    .max(42)
    .regex(/^[A-Za-z0-9 -]+$/, 'an IBAN or an account number: letters, digits, spaces and hyphens'),
  // A BIC is a code: surrounding spaces and lower case are typing, not a different code.
  swiftCode: z.string().trim().min(1).max(64).transform(upperAscii),
});

const stablecoinSchema = z.strictObject({
  ...common,
  assetType: z.literal('STABLECOIN'),
  network: z.enum(STABLECOIN_NETWORKS),
  // Never trimmed or re-cased: an EVM address's case is its checksum.
  address: z.string().min(1).max(128),
});

export const withdrawalAccountCreateSchema = z.discriminatedUnion('assetType', [
  z.discriminatedUnion('transferType', [fedwireSchema, swiftSchema]),
  stablecoinSchema,
]);
export type WithdrawalAccountCreateInput = z.infer<typeof withdrawalAccountCreateSchema>;

/** The sandbox update: any of the three switches, at least one, in any combination (so every withdrawal rule can be tried). */
export const withdrawalAccountUpdateSchema = z
  .strictObject({
    status: z.enum(WITHDRAWAL_ACCOUNT_STATUSES).optional(),
    verified: z.boolean().optional(),
    withdrawalsEnabled: z.boolean().optional(),
  })
  .refine(
    (value) => value.status !== undefined || value.verified !== undefined || value.withdrawalsEnabled !== undefined,
    {
      message: 'give at least one of status, verified, withdrawalsEnabled',
      params: { code: 'empty_update' },
    },
  );
export type WithdrawalAccountChanges = z.infer<typeof withdrawalAccountUpdateSchema>;

// ---------------------------------------------------------------------------------------------
// Checks against reference data and checksums.

/** Where the body names something reference data does not have; empty when it fits. */
function referenceIssues(input: WithdrawalAccountCreateInput, reference: ReferenceSnapshot): ValidationIssue[] {
  const currency = reference.currencies.get(input.currency);
  if (!currency) {
    return [
      {
        path: 'currency',
        code: 'unknown_currency',
        message: `unknown currency "${input.currency}"; the currencies are ${[...reference.currencies.keys()].join(', ')}`,
      },
    ];
  }
  if (currency.assetType !== input.assetType) {
    return [
      {
        path: 'assetType',
        code: 'asset_type_mismatch',
        message: `${currency.code} is a ${currency.assetType} currency`,
      },
    ];
  }
  if (input.assetType === 'STABLECOIN' && !currency.networks.includes(input.network)) {
    return [
      {
        path: 'network',
        code: 'network_not_supported',
        message: `${currency.code} is not on ${input.network}; its networks are ${currency.networks.join(', ')}`,
      },
    ];
  }
  return [];
}

/** The identifying fields of an account, as stored: what the checksums look at. */
export type AccountIdentifiers = Pick<
  WithdrawalAccountRow,
  'asset_type' | 'transfer_type' | 'account_number' | 'routing_number' | 'swift_code' | 'network' | 'address'
>;

/** An IBAN is written country first: an account number that starts with two letters is taken for one. */
function looksLikeIban(accountNumber: string): boolean {
  return /^[A-Za-z]{2}/.test(accountNumber);
}

/**
 * The first identifier of the account whose checksum fails, as WITHDRAWAL_ADDRESS_CHECKSUM_FAILED
 * reports it (`network` is the rail for fiat: FEDWIRE or SWIFT), or null when all pass. For SWIFT
 * the bank (BIC) is checked before the account (IBAN). Used at creation and again by withdrawals
 * (rule 10).
 */
export function accountChecksumFailure(account: AccountIdentifiers): { address: string; network: string } | null {
  if (account.asset_type === 'STABLECOIN') {
    const network = account.network ?? '';
    const address = account.address ?? '';
    return isValidStablecoinAddress(network as StablecoinNetwork, address) ? null : { address, network };
  }
  if (account.transfer_type === 'FEDWIRE') {
    const routing = account.routing_number ?? '';
    return isValidAbaRoutingNumber(routing) ? null : { address: routing, network: 'FEDWIRE' };
  }
  const bic = account.swift_code ?? '';
  if (!isValidBic(bic)) return { address: bic, network: 'SWIFT' };
  const accountNumber = account.account_number ?? '';
  if (looksLikeIban(accountNumber) && !isValidIban(accountNumber)) return { address: accountNumber, network: 'SWIFT' };
  return null;
}

/** The body as it will be stored: IBANs in electronic form, the other kind's fields null. */
function storedIdentifiers(
  input: WithdrawalAccountCreateInput,
): AccountIdentifiers & Pick<WithdrawalAccountRow, 'bank_name' | 'memo'> {
  if (input.assetType === 'STABLECOIN') {
    return {
      asset_type: 'STABLECOIN',
      transfer_type: null,
      bank_name: null,
      account_number: null,
      routing_number: null,
      swift_code: null,
      memo: null,
      network: input.network,
      address: input.address,
    };
  }
  const fiat = {
    asset_type: 'FIAT' as const,
    bank_name: input.bankName,
    memo: input.memo ?? null,
    network: null,
    address: null,
  };
  if (input.transferType === 'FEDWIRE') {
    return {
      ...fiat,
      transfer_type: 'FEDWIRE',
      account_number: input.accountNumber,
      routing_number: input.routingNumber,
      swift_code: null,
    };
  }
  const accountNumber = looksLikeIban(input.accountNumber) ? normaliseIban(input.accountNumber) : input.accountNumber;
  return {
    ...fiat,
    transfer_type: 'SWIFT',
    account_number: accountNumber,
    routing_number: null,
    swift_code: input.swiftCode,
  };
}

// ---------------------------------------------------------------------------------------------
// Repository.

/** The account, if it exists in this book; a malformed id names no account (404, never 400). */
export async function findWithdrawalAccount(
  db: Queryable,
  owner: AccountOwner,
  id: string,
): Promise<WithdrawalAccountRow | null> {
  if (!isId('withdrawalAccount', id)) return null;
  return rowInBook<WithdrawalAccountRow>(db, ACCOUNTS, owner, 'id', id);
}

export interface WithdrawalAccountFilters {
  readonly assetType?: AssetType | undefined;
  readonly network?: StablecoinNetwork | undefined;
  readonly currency?: string | undefined;
  readonly status?: WithdrawalAccountStatus | undefined;
  readonly verified?: boolean | undefined;
}

/** Every account of the book that passes the filters, newest first: a bounded list (an org registers a handful). */
export async function listWithdrawalAccounts(
  db: Queryable,
  owner: AccountOwner,
  filters: WithdrawalAccountFilters = {},
): Promise<WithdrawalAccountRow[]> {
  const { rows } = await db.query<WithdrawalAccountRow>(
    `SELECT * FROM withdrawal_accounts
      WHERE org_id = $1 AND environment = $2
        AND ($3::text IS NULL OR asset_type = $3) AND ($4::text IS NULL OR network = $4) AND ($5::text IS NULL OR currency = $5)
        AND ($6::text IS NULL OR status = $6) AND ($7::boolean IS NULL OR verified = $7)
      ORDER BY created_at DESC, id DESC`,
    [
      owner.orgId,
      owner.environment,
      filters.assetType ?? null,
      filters.network ?? null,
      filters.currency ?? null,
      filters.status ?? null,
      filters.verified ?? null,
    ],
  );
  return rows;
}

function findByIdempotencyKey(db: Queryable, owner: AccountOwner, key: string): Promise<WithdrawalAccountRow | null> {
  return rowInBook<WithdrawalAccountRow>(db, ACCOUNTS, owner, 'idempotency_key', key);
}

export interface CreateAccountContext {
  readonly db: Queryable;
  readonly reference: () => Promise<ReferenceSnapshot>;
  readonly now: () => Date;
}

/**
 * Registers the account (PENDING_VERIFICATION, unverified, withdrawals enabled) and returns its
 * row; a retry of the same request returns the first attempt's account as it is now.
 * `onId` learns the new id before the write, so that a failure can name it.
 */
export async function createWithdrawalAccount(
  context: CreateAccountContext,
  principal: Principal,
  input: WithdrawalAccountCreateInput,
  idempotency: { readonly key: string; readonly fingerprint: string },
  onId: (id: string) => void = () => undefined,
): Promise<WithdrawalAccountRow> {
  const earlier = await findByIdempotencyKey(context.db, principal, idempotency.key);
  if (earlier) return replayOrMismatch(earlier, idempotency.fingerprint);

  const issues = referenceIssues(input, await context.reference());
  if (issues.length > 0) throw new ApiError('VALIDATION_BODY_FAILED', { issues });
  const stored = storedIdentifiers(input);
  const failure = accountChecksumFailure(stored);
  if (failure) throw new ApiError('WITHDRAWAL_ADDRESS_CHECKSUM_FAILED', failure);

  const now = context.now();
  const id = newId('withdrawalAccount', now.getTime());
  onId(id);
  try {
    const { rows } = await context.db.query<WithdrawalAccountRow>(
      `INSERT INTO withdrawal_accounts (id, org_id, environment, currency, asset_type, account_name, status, verified, withdrawals_enabled,
                                        transfer_type, bank_name, account_number, routing_number, swift_code, memo, network, address, comments,
                                        creator_actor_id, idempotency_key, request_fingerprint, created_at, updated_at)
       VALUES ($1, $2, $3, $4, $5, $6, 'PENDING_VERIFICATION', false, true, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16, $17, $18, $19, $19)
       RETURNING *`,
      [
        id,
        principal.orgId,
        principal.environment,
        input.currency,
        stored.asset_type,
        input.accountName,
        stored.transfer_type,
        stored.bank_name,
        stored.account_number,
        stored.routing_number,
        stored.swift_code,
        stored.memo,
        stored.network,
        stored.address,
        input.comments ?? null,
        actorIdOf(principal),
        idempotency.key,
        idempotency.fingerprint,
        now,
      ],
    );
    return rows[0]!;
  } catch (error) {
    const winner = await raceWinner(error, idempotency, (key) => findByIdempotencyKey(context.db, principal, key));
    if (winner) return winner;
    throw error;
  }
}

/**
 * Sets any of status, verified and withdrawalsEnabled; returns the updated row, or null when the
 * book has no such account. For the sandbox endpoint and for operators (CLI).
 */
export async function updateWithdrawalAccount(
  db: Queryable,
  owner: AccountOwner,
  id: string,
  changes: WithdrawalAccountChanges,
  at: Date = new Date(),
): Promise<WithdrawalAccountRow | null> {
  if (!isId('withdrawalAccount', id)) return null;
  const { rows } = await db.query<WithdrawalAccountRow>(
    `UPDATE withdrawal_accounts
        SET status = COALESCE($4, status), verified = COALESCE($5, verified), withdrawals_enabled = COALESCE($6, withdrawals_enabled), updated_at = $7
      WHERE id = $1 AND org_id = $2 AND environment = $3
      RETURNING *`,
    [
      id,
      owner.orgId,
      owner.environment,
      changes.status ?? null,
      changes.verified ?? null,
      changes.withdrawalsEnabled ?? null,
      at,
    ],
  );
  return rows[0] ?? null;
}

/**
 * Verification: the account's details are confirmed, so it is ACTIVE and verified. From DISABLED
 * too: verifying is the deliberate act by which an operator lifts a disable.
 */
export function verifyWithdrawalAccount(
  db: Queryable,
  owner: AccountOwner,
  id: string,
  at: Date = new Date(),
): Promise<WithdrawalAccountRow | null> {
  return updateWithdrawalAccount(db, owner, id, { status: 'ACTIVE', verified: true }, at);
}
