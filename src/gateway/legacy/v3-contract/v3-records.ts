/**
 * The v3 records the legacy shapes are built from, as zod schemas by kind, and `readV3`, the
 * only way the gateway looks at one. This is the part of the v3 contract the gateway relies on;
 * a v3 answer that does not fit is a V3ContractError naming every field that is wrong, so a
 * broken answer is a logged 500, never a crash deep in a builder and never an `undefined` or a
 * mangled amount in a legacy body.
 *
 * The schemas accept extra fields (v3 may add fields in a minor version) and drop them: they are
 * plain z.object, not loose ones, because the builders read only what is declared here and a
 * loose object copies every field it does not know. They check only what the legacy records read,
 * each field as strictly as the legacy answer needs it:
 *   - amounts are decimal text (DECIMAL_PATTERN), exactly what the legacy writer can emit as a
 *     JSON number; a JS number here would already have lost digits in the v3 answer;
 *   - ids must carry their kind's prefix and come out as the record's legacy UUID, so the one
 *     place a v3 id is judged is this read (a `qte_` id where a `trd_` is due is a contract
 *     error, not a wrong UUID in a legacy body);
 *   - status-like strings are passed through unchecked beyond being text: v3 may add values, and
 *     legacy words are given by the value maps of `mappings/`;
 *   - cross-field rules that the legacy shapes rely on (the referenced currency is one of the two
 *     sides, a quote expires after it is created) are checked here too, because the v1 trade and
 *     the legacy quote are derived from them.
 */
import { z } from 'zod';

import { V3ContractError } from '../../../lib/errors/internal-errors.js';
import { issuePath } from '../../../lib/errors/validation-issues.js';
import { ID_PREFIXES, type IdKind, idToLegacyUuid } from '../../../lib/ids.js';
import { DECIMAL_PATTERN } from '../../../lib/money.js';

const decimal = z.string().regex(DECIMAL_PATTERN, 'must be a decimal string');
const currency = z.string().regex(/^[A-Z]{3,5}$/, 'must be a currency code');
const timestamp = z.iso.datetime({ error: 'must be an ISO 8601 UTC timestamp' });
const label = z.string().min(1);

/** A v3 id of one kind, read as its legacy UUID. */
function legacyIdOf(kind: IdKind) {
  const prefix = ID_PREFIXES[kind];
  return z.string().transform((value, ctx) => {
    const uuid = idToLegacyUuid(kind, value);
    if (uuid === null) {
      ctx.addIssue({ code: 'custom', message: `must be a ${prefix}_ id`, input: value });
      return z.NEVER;
    }
    return uuid;
  });
}

/** The legacy shapes derive the referenced side from this: the named currency is one of the pair's two. */
function requirePairSide<Field extends string>(
  record: { readonly buyCurrency: string; readonly sellCurrency: string } & Readonly<Record<Field, string>>,
  field: Field,
  ctx: z.RefinementCtx,
): void {
  const value = record[field];
  if (value !== record.buyCurrency && value !== record.sellCurrency) {
    ctx.addIssue({ code: 'custom', path: [field], message: 'must be buyCurrency or sellCurrency' });
  }
}

export const v3QuoteSchema = z
  .object({
    id: legacyIdOf('quote'),
    buyCurrency: currency,
    sellCurrency: currency,
    buyAmount: decimal,
    sellAmount: decimal,
    amountCurrency: currency,
    createdAt: timestamp,
    expiresAt: timestamp,
  })
  .superRefine((quote, ctx) => {
    requirePairSide(quote, 'amountCurrency', ctx);
    if (Date.parse(quote.expiresAt) < Date.parse(quote.createdAt)) {
      ctx.addIssue({ code: 'custom', path: ['expiresAt'], message: 'must not be before createdAt' });
    }
  });
export type V3Quote = z.output<typeof v3QuoteSchema>;

export const v3TradeSchema = z
  .object({
    id: legacyIdOf('trade'),
    quoteId: legacyIdOf('quote'),
    buyCurrency: currency,
    sellCurrency: currency,
    buyAmount: decimal,
    sellAmount: decimal,
    referencedCurrency: currency,
    referencedAmount: decimal,
    status: label,
    clientReferenceId: z.string().nullable(),
    originalTradeId: legacyIdOf('trade').nullable(),
    source: label,
    createdAt: timestamp,
    updatedAt: timestamp,
  })
  .superRefine((trade, ctx) => requirePairSide(trade, 'referencedCurrency', ctx));
export type V3Trade = z.output<typeof v3TradeSchema>;

export const v3ReversalDetailsSchema = z.object({
  direction: label,
  differentialAmount: decimal,
  currency,
});
export type V3ReversalDetails = z.output<typeof v3ReversalDetailsSchema>;

export const v3BalanceSchema = z.object({
  id: legacyIdOf('balance'),
  currency,
  amount: decimal,
  withdrawableAmount: decimal,
  usdValue: decimal,
  withdrawableUsdValue: decimal,
  createdAt: timestamp,
  updatedAt: timestamp,
});
export type V3Balance = z.output<typeof v3BalanceSchema>;

export const v3PairSchema = z.object({
  symbol: label,
  baseCurrency: currency,
  quoteCurrency: currency,
  minAmount: decimal,
  maxAmount: decimal,
});
export type V3Pair = z.output<typeof v3PairSchema>;

export const v3DepositSchema = z
  .object({
    id: legacyIdOf('deposit'),
    currency,
    amount: decimal,
    network: z.string().nullable(),
    assetType: label,
    status: label,
    transactionHash: z.string().nullable(),
    referenceId: z.string().nullable(),
    comments: z.string().nullable(),
    createdAt: timestamp,
    completedAt: timestamp.nullable(),
  })
  .superRefine((deposit, ctx) => {
    // v1 shows 'FIAT' in place of a fiat deposit's network; any other deposit needs its own.
    if (deposit.assetType !== 'FIAT' && deposit.network === null) {
      ctx.addIssue({ code: 'custom', path: ['network'], message: 'must be a network for a non-FIAT deposit' });
    }
  });
export type V3Deposit = z.output<typeof v3DepositSchema>;

export const v3WithdrawalAccountSchema = z.object({
  id: legacyIdOf('withdrawalAccount'),
  currency,
  assetType: label,
  accountName: z.string(),
  status: label,
  verified: z.boolean(),
  transferType: z.string().nullable(),
  bankName: z.string().nullable(),
  accountNumber: z.string().nullable(),
  routingNumber: z.string().nullable(),
  swiftCode: z.string().nullable(),
  memo: z.string().nullable(),
  network: z.string().nullable(),
  address: z.string().nullable(),
  comments: z.string().nullable(),
  creatorId: legacyIdOf('user'),
  createdAt: timestamp,
  updatedAt: timestamp,
});
export type V3WithdrawalAccount = z.output<typeof v3WithdrawalAccountSchema>;

export const v3WithdrawalSchema = z.object({
  id: legacyIdOf('withdrawal'),
  currency,
  withdrawalAmount: decimal,
  status: label,
  assetType: label,
  network: z.string().nullable(),
  withdrawalAccountId: legacyIdOf('withdrawalAccount'),
  transactionHash: z.string().nullable(),
  // Read by the legacy webhook record only; the rail's own references once it has paid.
  paymentDetails: z.record(z.string(), z.unknown()),
  actorEmail: z.string().nullable(),
  comments: z.string().nullable(),
  createdAt: timestamp,
  completedAt: timestamp.nullable(),
});
export type V3Withdrawal = z.output<typeof v3WithdrawalSchema>;

/** The v3 records the legacy shapes are built from, by kind (`mappings/records.ts` names them). */
export const V3_RECORDS = {
  quote: v3QuoteSchema,
  trade: v3TradeSchema,
  reversalDetails: v3ReversalDetailsSchema,
  balance: v3BalanceSchema,
  pair: v3PairSchema,
  deposit: v3DepositSchema,
  withdrawalAccount: v3WithdrawalAccountSchema,
  withdrawal: v3WithdrawalSchema,
} as const;

export type V3RecordKind = keyof typeof V3_RECORDS;
export type V3RecordOf<K extends V3RecordKind> = z.output<(typeof V3_RECORDS)[K]>;
export const V3_RECORD_KINDS = Object.keys(V3_RECORDS) as V3RecordKind[];

/** The field names of a v3 record kind: what a legacy field may be read `from`. */
export function v3FieldsOf(kind: V3RecordKind): readonly string[] {
  return Object.keys(V3_RECORDS[kind].shape);
}

function locate(where: string, path: readonly PropertyKey[]): string {
  const inner = issuePath(path);
  if (where === '') return inner === '' ? '(answer)' : inner;
  if (inner === '') return where;
  return inner.startsWith('[') ? `${where}${inner}` : `${where}.${inner}`;
}

/**
 * Reads one v3 answer through its schema: the parsed value (ids as legacy UUIDs), or a
 * V3ContractError listing each problem as `<where>.<field>: <message>`.
 */
export function readV3<T>(schema: z.ZodType<T>, value: unknown, operation: string, where: string): T {
  const parsed = schema.safeParse(value);
  if (parsed.success) return parsed.data;
  throw new V3ContractError(
    operation,
    parsed.error.issues.map((issue) => `${locate(where, issue.path)}: ${issue.message}`),
  );
}
