/**
 * `fxgate accounts list | verify | disable | withdrawals`: an operator's view and control of an
 * org's withdrawal accounts in the configured database. In the live book nothing else verifies
 * an account (the sandbox has its own endpoints), so these are how a live account goes ACTIVE,
 * is taken out of use, or has its withdrawals switched off. Declared in definitions/accounts.ts.
 */
import { z } from 'zod';

import {
  listWithdrawalAccounts,
  updateWithdrawalAccount,
  verifyWithdrawalAccount,
  type WithdrawalAccountRow,
} from '../../core/money-movement/withdrawal-accounts.js';
import { readOrgBook } from '../../core/trading/org-books.js';
import { type Mode, MODES } from '../../lib/auth/credential-vocabulary.js';
import { CliError } from '../../lib/errors/internal-errors.js';
import { isId } from '../../lib/ids.js';
import type { CliRun } from '../io.js';
import { dateCodec, defineOperation, modeSchema } from '../state/operation.js';
import { withState } from '../state/session.js';
import { textTable } from '../text-table.js';

/** What the commands show of an account (the row has more: who created it, its idempotency key). */
const accountSchema = z.object({
  id: z.string(),
  org_id: z.string(),
  environment: modeSchema,
  currency: z.string(),
  asset_type: z.string(),
  account_name: z.string(),
  status: z.string(),
  verified: z.boolean(),
  withdrawals_enabled: z.boolean(),
  transfer_type: z.string().nullable(),
  account_number: z.string().nullable(),
  routing_number: z.string().nullable(),
  swift_code: z.string().nullable(),
  network: z.string().nullable(),
  address: z.string().nullable(),
  created_at: dateCodec,
  updated_at: dateCodec,
});
export type AccountView = z.output<typeof accountSchema>;

const accountChangeSchema = z.discriminatedUnion('kind', [
  z.object({ kind: z.literal('verify') }),
  z.object({ kind: z.literal('disable') }),
  z.object({ kind: z.literal('withdrawals'), enabled: z.boolean() }),
]);
export type AccountChange = z.infer<typeof accountChangeSchema>;

/** What the accounts commands do with the database, directly or through a running fxgate's admin listener. */
export const accountOperations = {
  /** The accounts of the org's books of the modes asked for, and how many of those books exist. */
  list: defineOperation({
    name: 'accounts/list',
    input: z.object({ orgId: z.uuid(), modes: z.array(modeSchema).min(1) }),
    output: z.object({ books: z.number().int(), rows: z.array(accountSchema) }),
    run: async ({ db }, { orgId, modes }) => {
      let books = 0;
      const rows: WithdrawalAccountRow[] = [];
      for (const mode of modes) {
        if (!(await readOrgBook(db, orgId, mode))) continue;
        books += 1;
        rows.push(...(await listWithdrawalAccounts(db, { orgId, environment: mode })));
      }
      return { books, rows };
    },
  }),
  /** The account after the change; null when the book has no such account. */
  change: defineOperation({
    name: 'accounts/change',
    input: z.object({
      orgId: z.uuid(),
      mode: modeSchema,
      accountId: z.string().refine((id) => isId('withdrawalAccount', id)),
      change: accountChangeSchema,
    }),
    output: accountSchema.nullable(),
    run: async ({ db }, { orgId, mode, accountId, change }) => {
      if (!(await readOrgBook(db, orgId, mode)))
        throw new CliError(`no org ${orgId} (with a ${mode} book) in the configured database`);
      const owner = { orgId, environment: mode };
      switch (change.kind) {
        case 'verify':
          return verifyWithdrawalAccount(db, owner, accountId);
        case 'disable':
          return updateWithdrawalAccount(db, owner, accountId, { status: 'DISABLED' });
        case 'withdrawals':
          return updateWithdrawalAccount(db, owner, accountId, {
            withdrawalsEnabled: change.enabled,
          });
      }
    },
  }),
};

const NONE = '-';
const HEADER = [
  'ID',
  'MODE',
  'CURRENCY',
  'RAIL',
  'DESTINATION',
  'STATUS',
  'VERIFIED',
  'WITHDRAWALS',
  'NAME',
  'CREATED',
];

/** The rail an account is paid on: FEDWIRE or SWIFT for fiat, the chain for a stablecoin. */
function railOf(account: AccountView): string {
  return account.transfer_type ?? account.network ?? NONE;
}

/** Where the money goes: the account number (with its routing number or BIC), or the address. */
function destinationOf(account: AccountView): string {
  if (account.asset_type === 'STABLECOIN') return account.address ?? NONE;
  const bank = account.routing_number ?? account.swift_code;
  return `${account.account_number ?? NONE}${bank ? ` @ ${bank}` : ''}`;
}

function tableRow(account: AccountView): string[] {
  return [
    account.id,
    account.environment,
    account.currency,
    railOf(account),
    destinationOf(account),
    account.status,
    account.verified ? 'yes' : 'no',
    account.withdrawals_enabled ? 'enabled' : 'disabled',
    account.account_name,
    account.created_at.toISOString(),
  ];
}

/** One aligned row per account, for people; ISO times so it also sorts. */
export function formatAccountTable(accounts: readonly AccountView[]): string {
  return textTable(HEADER, accounts.map(tableRow)).join('\n');
}

/** One account as `label: value` lines, after a change. */
export function formatAccount(account: AccountView): string {
  const lines: [string, string][] = [
    ['currency', account.currency],
    ['rail', railOf(account)],
    ['destination', destinationOf(account)],
    ['name', account.account_name],
    ['status', account.status],
    ['verified', account.verified ? 'yes' : 'no'],
    ['withdrawals', account.withdrawals_enabled ? 'enabled' : 'disabled'],
    ['updated', account.updated_at.toISOString()],
  ];
  const width = Math.max(...lines.map(([label]) => label.length)) + 2;
  return [
    `withdrawal account ${account.id} (org ${account.org_id} ${account.environment})`,
    ...lines.map(([label, value]) => `  ${`${label}:`.padEnd(width)}${value}`),
  ].join('\n');
}

/** Applies a change to one account and prints it; an unknown org or account exits 1. */
export async function changeAccount(
  run: CliRun,
  orgId: string,
  mode: Mode,
  accountId: string,
  change: AccountChange,
): Promise<void> {
  const account = await withState(run, (state) =>
    state.run(accountOperations.change, { orgId, mode, accountId, change }),
  );
  if (!account) throw new CliError(`no withdrawal account ${accountId} in the ${mode} book of org ${orgId}`);
  run.out(formatAccount(account));
}

/** The accounts of an org's books, newest first; an org without such a book exits 1. */
export async function listAccounts(run: CliRun, orgId: string, mode: Mode | undefined): Promise<void> {
  const modes = mode ? [mode] : MODES;
  const listed = await withState(run, (state) => state.run(accountOperations.list, { orgId, modes: [...modes] }));
  if (listed.books === 0)
    throw new CliError(`no org ${orgId}${mode ? ` (with a ${mode} book)` : ''} in the configured database`);
  run.out(
    listed.rows.length > 0
      ? formatAccountTable(listed.rows)
      : `org ${orgId} has no withdrawal accounts${mode ? ` in its ${mode} book` : ''}`,
  );
}
