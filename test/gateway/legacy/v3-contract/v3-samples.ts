/**
 * v3 answers as the running core gives them (every field the core writes, including the ones the
 * gateway drops), and the legacy caller the transform and pipeline tests act for. Each test
 * copies what it changes; these objects are never mutated.
 */
import type { RecordContext } from '../../../../src/gateway/legacy/transforms/response-body.js';

export const ORG_ID = '01a207ce-4400-7000-8000-0000000000a1';
export const KEY_ID = '01a207ce-44eb-7202-8b2f-43bbb9b9c176';
/** What a legacy record may take from the caller: the org of the path, the key id (a quote's userId). */
export const CONTEXT: RecordContext = { orgId: ORG_ID, keyId: KEY_ID };

/** v3 id -> legacy UUID, spelt out so the tests do not depend on the mapping they check. */
export const UUIDS = {
  quote: '01a207ce-7e0e-71e7-81eb-30df52f9704b',
  trade: '01a207ce-8088-70c9-b585-a056c085396d',
  reverseQuote: '01a207ce-9900-7aaa-8bbb-cccccccccccc',
  reversal: '01a207ce-9a1b-7c2d-8e3f-405162738495',
  user: '01a207ce-44eb-7202-8b2f-43bbb9b9c176',
  balanceEur: '01a207ce-4512-7c42-ad47-e31f2cea5c9a',
  balanceUsd: '01a207ce-4513-7000-8000-000000000002',
  depositUsdc: '01a207ce-5000-7000-8000-00000000d001',
  depositUsd: '01a207ce-5000-7000-8000-00000000d002',
  fiatAccount: '01a207ce-6000-7000-8000-00000000ac01',
  walletAccount: '01a207ce-6000-7000-8000-00000000ac02',
  withdrawal: '01a207ce-7000-7000-8000-00000000f001',
  fiatWithdrawal: '01a207ce-7000-7000-8000-00000000f002',
  depositFailed: '01a207ce-5000-7000-8000-00000000d003',
} as const;

const v3 = (prefix: string, uuid: string) => `${prefix}_${uuid.replaceAll('-', '')}`;

export const QUOTE = {
  object: 'quote',
  id: 'qte_01a207ce7e0e71e781eb30df52f9704b',
  buyCurrency: 'EUR',
  sellCurrency: 'USD',
  buyAmount: '100.50',
  sellAmount: '108.76',
  amountCurrency: 'EUR',
  rate: '1.08216',
  reversesTradeId: null,
  createdAt: '2026-11-23T09:48:22.926Z',
  expiresAt: '2026-11-23T09:48:52.926Z',
} as const;

/** Bought EUR, the referenced (bought) side: v1 BUY. */
export const TRADE = {
  object: 'trade',
  id: 'trd_01a207ce808870c9b585a056c085396d',
  quoteId: 'qte_01a207ce7e0e71e781eb30df52f9704b',
  buyCurrency: 'EUR',
  sellCurrency: 'USD',
  buyAmount: '100.50',
  sellAmount: '108.76',
  referencedCurrency: 'EUR',
  referencedAmount: '100.50',
  rate: '1.08216',
  status: 'EXECUTED',
  settlementStage: 'FUNDED',
  clientReferenceId: 'ref1',
  originalTradeId: null,
  reversedByTradeId: null,
  source: 'API',
  actorId: 'usr_01a207ce44eb72028b2f43bbb9b9c176',
  createdAt: '2026-11-23T09:48:23.560Z',
  updatedAt: '2026-11-23T09:48:23.560Z',
  settledAt: null,
  metadata: {},
} as const;

/** The reversal of TRADE: sells the EUR back (the referenced side is now the sold one). */
export const REVERSAL = {
  trade: {
    ...TRADE,
    id: v3('trd', UUIDS.reversal),
    quoteId: v3('qte', UUIDS.reverseQuote),
    buyCurrency: 'USD',
    sellCurrency: 'EUR',
    buyAmount: '108.32',
    sellAmount: '100.50',
    rate: '1.07781',
    status: 'REVERSED',
    settlementStage: 'CLOSED',
    clientReferenceId: null,
    originalTradeId: 'trd_01a207ce808870c9b585a056c085396d',
    createdAt: '2026-11-23T09:50:01.000Z',
    updatedAt: '2026-11-23T09:50:01.000Z',
  },
  reversalDetails: { direction: 'DEBIT', differentialAmount: '0.44', currency: 'USD' },
} as const;

export const REVERSE_QUOTE = {
  ...QUOTE,
  id: v3('qte', UUIDS.reverseQuote),
  buyCurrency: 'USD',
  sellCurrency: 'EUR',
  buyAmount: '108.32',
  sellAmount: '100.50',
  amountCurrency: 'EUR',
  reversesTradeId: 'trd_01a207ce808870c9b585a056c085396d',
  createdAt: '2026-11-23T09:50:00.000Z',
  expiresAt: '2026-11-23T09:50:30.000Z',
} as const;

export const SETTLED = {
  ...TRADE,
  status: 'SETTLED',
  settlementStage: 'SETTLED',
  settledAt: '2026-11-24T10:00:00.000Z',
  updatedAt: '2026-11-24T10:00:00.000Z',
} as const;

export const BALANCE_EUR = {
  object: 'balance',
  id: 'bal_01a207ce45127c42ad47e31f2cea5c9a',
  currency: 'EUR',
  amount: '50000.00',
  withdrawableAmount: '50000.00',
  usdValue: '54000.00',
  withdrawableUsdValue: '54000.00',
  createdAt: '2026-11-23T09:40:00.000Z',
  updatedAt: '2026-11-23T09:48:23.560Z',
} as const;

export const BALANCE_USD = {
  ...BALANCE_EUR,
  id: v3('bal', UUIDS.balanceUsd),
  currency: 'USD',
  amount: '-12.50',
  withdrawableAmount: '0.00',
  usdValue: '-12.50',
  withdrawableUsdValue: '0.00',
} as const;

export const BALANCES = {
  data: [BALANCE_EUR, BALANCE_USD],
  totals: { netPositiveUsd: '54000.00', netNegativeUsd: '-12.50', netUsd: '53987.50' },
} as const;

export const EXPOSURE = {
  data: {
    object: 'exposure',
    currency: 'USD',
    creditLine: '1000000.00',
    committedAmount: '108.76',
    availableCredit: '999891.24',
    breakdown: [],
  },
} as const;

export const PAIR = {
  object: 'pair',
  symbol: 'EUR/GBP',
  baseCurrency: 'EUR',
  quoteCurrency: 'GBP',
  baseDecimals: 2,
  quoteDecimals: 2,
  minAmount: '1.00',
  maxAmount: '1000000.00',
} as const;

export const DEPOSIT_USDC = {
  object: 'deposit',
  id: v3('dep', UUIDS.depositUsdc),
  currency: 'USDC',
  amount: '100000.000000',
  network: 'ETHEREUM',
  assetType: 'STABLECOIN',
  status: 'COMPLETED',
  transactionHash: '0xd77a3c5b1e0f',
  referenceId: null,
  comments: null,
  createdAt: '2026-11-23T09:30:00.000Z',
  updatedAt: '2026-11-23T09:31:00.000Z',
  completedAt: '2026-11-23T09:31:00.000Z',
} as const;

export const DEPOSIT_USD = {
  ...DEPOSIT_USDC,
  id: v3('dep', UUIDS.depositUsd),
  currency: 'USD',
  amount: '75.25',
  network: null,
  assetType: 'FIAT',
  status: 'PENDING',
  transactionHash: null,
  referenceId: 'wire-42',
  comments: 'March top-up',
  completedAt: null,
} as const;

/** A fiat deposit that failed: v3 says FAILED, legacy clients read ERROR. */
export const DEPOSIT_FAILED = {
  ...DEPOSIT_USD,
  id: v3('dep', UUIDS.depositFailed),
  status: 'FAILED',
  referenceId: null,
  comments: 'returned by the bank',
  completedAt: null,
} as const;

export const FIAT_ACCOUNT = {
  object: 'withdrawal_account',
  id: v3('wac', UUIDS.fiatAccount),
  currency: 'USD',
  assetType: 'FIAT',
  accountName: 'Sandbox operating account',
  status: 'ACTIVE',
  verified: true,
  withdrawalsEnabled: true,
  transferType: 'FEDWIRE',
  bankName: 'JPMorgan Chase Bank, N.A.',
  accountNumber: '000123456789',
  routingNumber: '021000021',
  swiftCode: null,
  memo: null,
  network: null,
  address: null,
  comments: null,
  creatorId: 'usr_01a207ce44eb72028b2f43bbb9b9c176',
  createdAt: '2026-11-23T09:41:00.000Z',
  updatedAt: '2026-11-23T09:42:00.000Z',
} as const;

export const WALLET_ACCOUNT = {
  ...FIAT_ACCOUNT,
  id: v3('wac', UUIDS.walletAccount),
  currency: 'USDC',
  assetType: 'STABLECOIN',
  accountName: 'Treasury wallet',
  transferType: null,
  bankName: null,
  accountNumber: null,
  routingNumber: null,
  network: 'ETHEREUM',
  address: '0x5aAeb6053F3E94C9b9A09f33669435E7Ef1BeAed',
  comments: 'cold storage',
} as const;

export const WITHDRAWAL = {
  object: 'withdrawal',
  id: v3('wtd', UUIDS.withdrawal),
  currency: 'USDC',
  assetType: 'STABLECOIN',
  withdrawalAmount: '12.500000',
  status: 'PENDING',
  network: 'ETHEREUM',
  withdrawalAccountId: v3('wac', UUIDS.walletAccount),
  estimatedCompletionAt: null,
  transactionHash: null,
  paymentDetails: {},
  actorId: 'usr_01a207ce44eb72028b2f43bbb9b9c176',
  actorEmail: '01a207ce-44eb-7202-8b2f-43bbb9b9c176@api-keys.fxgate.invalid',
  comments: '',
  createdAt: '2026-11-23T10:00:00.000Z',
  metadata: {},
  updatedAt: '2026-11-23T10:00:00.000Z',
  completedAt: null,
  failureReason: null,
} as const;

export const FIAT_WITHDRAWAL = {
  ...WITHDRAWAL,
  id: v3('wtd', UUIDS.fiatWithdrawal),
  currency: 'USD',
  assetType: 'FIAT',
  withdrawalAmount: '100.00',
  status: 'COMPLETED',
  network: null,
  withdrawalAccountId: v3('wac', UUIDS.fiatAccount),
  paymentDetails: { FEDWIRE: { imad: '20261123MMQFMP2L000001', omad: '20261123QMGFT015000001' } },
  completedAt: '2026-11-23T10:05:00.000Z',
  updatedAt: '2026-11-23T10:05:00.000Z',
} as const;

/** 22 significant digits: a JS number would round it; the legacy body must carry it exactly. */
export const BIG = '12345678901234567890.12';

/** A v3 cursor-list answer holding every record (no further page). */
export function cursorPage(data: readonly unknown[]) {
  return { data, pagination: { hasNext: false, hasPrev: false, nextCursor: null, prevCursor: null } };
}
