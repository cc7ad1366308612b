/**
 * A v1/v2 client written the way an integrator writes one against the public legacy contract,
 * with none of fxgate's code: it signs every request with its own ES256 token (node:crypto,
 * issuer "openfx", 110 s lifetime, a fresh nonce), sends `Content-Type: application/json` on
 * every request (GETs without a body too), `x-app-mode: SANDBOX`, and a random UUID as
 * Idempotency-Key on every POST, and treats an answer as an error when its HTTP status is not
 * 2xx or its body says `status: "error"`.
 *
 * Each of the twelve operations reads its answer through a strict typed reader: every field the
 * contract lists must be there with its type (numbers as JSON numbers, ids as UUIDs, timestamps
 * ISO 8601 with milliseconds and Z, enums as listed). Extra fields are allowed, because the
 * contract says they harm no client. The body is parsed with lossless-json, so every number
 * comes out as the exact digits the gateway wrote: an amount is read as decimal text and
 * compared as a decimal, never through a JS double.
 */
import { createPrivateKey, type KeyObject, randomBytes, randomUUID, sign } from 'node:crypto';

import BigNumber from 'bignumber.js';
import { LosslessNumber, parse as parseLossless, stringify as stringifyLossless } from 'lossless-json';
import { z } from 'zod';

export type Generation = 'v1' | 'v2';
export const GENERATIONS: readonly Generation[] = ['v1', 'v2'];

/** The key file the dashboard hands out: `{name, orgId, privateKey}`, the name `org/{orgId}/apiKey/{keyId}`. */
export interface DashboardKeyFile {
  readonly name: string;
  readonly orgId: string;
  /** PKCS#8 PEM. */
  readonly privateKey: string;
}

// ---------------------------------------------------------------------------------------------
// The token, exactly as the legacy documentation describes it.

const base64url = (data: string | Buffer) => Buffer.from(data).toString('base64url');

/** Legacy services call themselves "openfx"; real clients put that in `iss`. */
export const LEGACY_ISSUER = 'openfx';
/** What the documentation's example clients use: iat + 110. */
export const TOKEN_LIFETIME_SECONDS = 110;

export function signLegacyToken(
  keyName: string,
  privateKey: KeyObject,
  nowSeconds = Math.floor(Date.now() / 1000),
): string {
  const header = { alg: 'ES256', typ: 'JWT', kid: keyName, nonce: randomBytes(16).toString('hex') };
  const claims = {
    iss: LEGACY_ISSUER,
    sub: keyName,
    aud: ['developer-api'],
    iat: nowSeconds,
    nbf: nowSeconds,
    exp: nowSeconds + TOKEN_LIFETIME_SECONDS,
  };
  const input = `${base64url(JSON.stringify(header))}.${base64url(JSON.stringify(claims))}`;
  const signature = sign('sha256', Buffer.from(input), { key: privateKey, dsaEncoding: 'ieee-p1363' });
  return `${input}.${signature.toString('base64url')}`;
}

// ---------------------------------------------------------------------------------------------
// The typed readers. They read the lossless parse of the body: a JSON number arrives as a
// LosslessNumber (its exact text), so `amount` proves the field was a JSON number and keeps
// its digits, and a number written as a string fails.

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;
const TIMESTAMP = /^[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}\.[0-9]{3}Z$/;

/** A JSON number, read as the exact decimal text the gateway wrote. */
const amount = z.instanceof(LosslessNumber, { message: 'must be a JSON number' }).transform((number) => number.value);
/** A JSON number that is a whole number. */
const integer = z
  .instanceof(LosslessNumber, { message: 'must be a JSON number' })
  .refine((number) => /^-?[0-9]+$/.test(number.value), 'must be a whole number')
  .transform((number) => Number(number.value));
const uuid = z.string().regex(UUID, 'must be a UUID');
const timestamp = z.string().regex(TIMESTAMP, 'must be an ISO 8601 UTC timestamp with milliseconds and Z');
const currency = z.string().regex(/^[A-Z]{3,5}$/, 'must be a currency code');
const text = z.string();

const pagination = z.object({
  pagination: z.object({ total: integer, start: integer, end: integer, page: integer, limit: integer }),
});

function success<Data extends z.ZodType>(data: Data) {
  return z.object({ status: z.literal('success'), message: text, data });
}

function page<Item extends z.ZodType>(record: Item) {
  return success(z.array(record)).extend({ meta: pagination });
}

export const marketsData = z.object({
  tradingPairs: z.array(z.object({ buy: currency, sell: currency })),
  tradeLimits: z.array(
    z
      .record(z.string(), z.object({ minTradeLimit: amount, maxTradeLimit: amount }))
      .refine((limits) => Object.keys(limits).length === 1, 'each element must be a map with one key'),
  ),
});

export const balanceRecord = z.object({
  id: uuid,
  amount,
  currency,
  createdAt: timestamp,
  updatedAt: timestamp,
  totalBalanceInUSD: amount,
  withdrawableBalanceInUSD: amount,
  withdrawableBalance: amount,
});

export const quoteRecord = z.object({
  id: uuid,
  userId: uuid,
  buy: currency,
  sell: currency,
  referencedUnit: currency,
  referencedAmount: amount,
  quoteAmount: amount,
  createdAt: timestamp,
  expiryTimeinSeconds: integer,
});

export const tradeResultRecord = z.object({
  id: uuid,
  buy: currency,
  sell: currency,
  referencedUnit: currency,
  referencedAmount: amount,
  referenceAmount: amount,
  amount,
  status: text,
  transactedAt: timestamp,
  quoteId: uuid,
});

export const tradeData = z.object({
  balances: z.record(currency, amount),
  trade: tradeResultRecord,
  userCreditLimit: amount,
  userCreditUsed: amount,
});

export const tradeRecord = z.object({
  id: uuid,
  tradingPair: z.string().regex(/^[A-Z]{3,5}\/[A-Z]{3,5}$/, 'must be BASE/QUOTE'),
  referencedUnit: currency,
  tradeDirection: z.enum(['BUY', 'SELL']),
  amount,
  computedAmount: amount,
  createdAtUtc: timestamp,
  updatedAtUtc: timestamp,
  orderType: z.literal('MARKET'),
  status: text,
  source: z.enum(['API', 'GUI', 'OTC']),
});

export const depositRecord = z.object({
  id: uuid,
  orgId: uuid,
  currency,
  amount,
  status: z.enum(['PENDING', 'COMPLETED', 'ERROR']),
  network: text,
  transactionHash: text.nullable(),
  comments: text.nullable(),
  referenceId: text.nullable(),
  createdAt: timestamp,
  completedAt: timestamp.nullable(),
});

export const withdrawalAddressRecord = z.object({
  id: uuid,
  name: text,
  coinId: uuid,
  coinName: currency,
  coinNetworkId: uuid,
  coinNetworkName: text,
  address: text,
  status: text,
  verified: z.boolean(),
  createdAt: timestamp,
  updatedAt: timestamp,
  comments: text.nullable(),
});

export const fiatWithdrawalAddressRecord = z.object({
  id: uuid,
  currency,
  nickname: text.nullable(),
  accountName: text,
  accountNumber: text,
  bankName: text,
  routingNumber: text.nullable(),
  swiftCode: text.nullable(),
  status: text,
  verified: z.boolean(),
  creatorId: uuid,
  orgId: uuid,
  comments: text.nullable(),
  transferType: z.enum(['FEDWIRE', 'SWIFT']),
  memo: text.nullable(),
  createdAt: timestamp,
  updatedAt: timestamp,
});

export const withdrawalRecord = z.object({
  id: uuid,
  createdAt: timestamp,
  amount,
  currency,
  network: text,
  status: text,
  transactionHash: text.nullable(),
  withdrawalAddressId: uuid,
  comments: text.nullable(),
});

/** What each operation answers, as the contract describes it. v1's trade has its result at the root as well. */
export const READERS = {
  availableMarkets: success(marketsData),
  balances: success(z.array(balanceRecord)).extend({
    netPositiveBalanceInUSD: amount,
    netNegativeBalanceInUSD: amount,
    netBalanceInUSD: amount,
  }),
  generateQuote: success(z.object({ quote: quoteRecord })),
  tradeV2: success(tradeData),
  tradeV1: success(tradeData).extend(tradeData.shape),
  trades: page(tradeRecord),
  trade: success(tradeRecord),
  deposits: page(depositRecord),
  withdrawalAddresses: page(withdrawalAddressRecord),
  fiatWithdrawalAddresses: page(fiatWithdrawalAddressRecord),
  withdrawals: page(withdrawalRecord),
  withdrawal: success(withdrawalRecord),
} as const;

export type Markets = z.output<typeof READERS.availableMarkets>;
export type Balances = z.output<typeof READERS.balances>;
export type QuoteAnswer = z.output<typeof READERS.generateQuote>;
export type TradeAnswer = z.output<typeof READERS.tradeV2> & Partial<z.output<typeof tradeData>>;
export type TradeList = z.output<typeof READERS.trades>;
export type TradeOne = z.output<typeof READERS.trade>;
export type DepositList = z.output<typeof READERS.deposits>;
export type AddressList = z.output<typeof READERS.withdrawalAddresses>;
export type FiatAddressList = z.output<typeof READERS.fiatWithdrawalAddresses>;
export type WithdrawalList = z.output<typeof READERS.withdrawals>;
export type WithdrawalAnswer = z.output<typeof READERS.withdrawal>;

// ---------------------------------------------------------------------------------------------
// Answers and errors.

export interface RawAnswer {
  readonly status: number;
  readonly headers: Readonly<Record<string, string>>;
  readonly text: string;
}

export interface Answer<T> extends RawAnswer {
  /** The body as the typed reader read it: amounts are their exact decimal text. */
  readonly body: T;
}

/** An answer the client counts as an error: HTTP not 2xx, or `status: "error"` in the body. */
export class LegacyApiError extends Error {
  constructor(
    readonly answer: RawAnswer,
    readonly body: unknown,
  ) {
    super(`legacy error ${answer.status}: ${answer.text.slice(0, 500)}`);
  }
}

/** The body did not match the contract: which operation, and every field that is wrong. */
export class ContractViolation extends Error {
  constructor(
    readonly operation: string,
    readonly problems: readonly string[],
    readonly answer: RawAnswer,
  ) {
    super(`${operation} broke the legacy contract: ${problems.join('; ')}\n${answer.text.slice(0, 2000)}`);
  }
}

/** The body parsed with every number kept as its text (LosslessNumber); null when it is not JSON. */
export function parseExact(text: string): unknown {
  try {
    return parseLossless(text);
  } catch {
    return null;
  }
}

/** Two decimal texts are the same number (`100.50` and `100.5` are). */
export function sameDecimal(a: string, b: string): boolean {
  const left = new BigNumber(a);
  return left.isFinite() && left.isEqualTo(new BigNumber(b));
}

/** The legacy UUID of a v3 id (`trd_0190…` -> `0190…-…`), computed here: the hex after the prefix, with dashes. */
export function legacyIdOf(v3Id: string): string {
  const hex = v3Id.slice(v3Id.indexOf('_') + 1);
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
}

// ---------------------------------------------------------------------------------------------
// The client.

export type Query = Readonly<Record<string, string | readonly string[]>>;

export interface WriteOptions {
  /** The Idempotency-Key to send; a random UUID unless given; `null` sends none (v1 allows that). */
  readonly idempotencyKey?: string | null;
}

export interface QuoteRequest {
  /** Decimal text, written into the body as a JSON number with exactly these digits. */
  readonly amount: string;
  readonly buy: string;
  readonly sell: string;
  readonly referencedUnit: string;
  readonly quoteForSeconds?: 3 | 15 | 30 | 45 | 60;
}

export interface WithdrawalRequest {
  /** Decimal text, written as a JSON number. */
  readonly amount: string;
  readonly currency: string;
  readonly withdrawalAddressId: string;
}

export interface RawRequest {
  readonly method: 'GET' | 'POST';
  /** Below `/{generation}/brokerage/{orgId}/`. */
  readonly path: string;
  readonly query?: Query;
  /** Written with lossless-json: LosslessNumber values come out as JSON numbers with their digits. */
  readonly body?: Record<string, unknown>;
  readonly idempotencyKey?: string | null;
}

export interface LegacyClientOptions {
  readonly baseUrl: string;
  readonly generation: Generation;
  readonly key: DashboardKeyFile;
  /** The x-app-mode header; SANDBOX unless told. */
  readonly appMode?: string;
}

export class LegacyClient {
  readonly generation: Generation;
  private readonly privateKey: KeyObject;

  constructor(private readonly options: LegacyClientOptions) {
    this.generation = options.generation;
    this.privateKey = createPrivateKey(options.key.privateKey);
  }

  get orgId(): string {
    return this.options.key.orgId;
  }

  /** The key id of the key name, the id a legacy quote names as its `userId`. */
  get keyId(): string {
    return this.options.key.name.split('/')[3] ?? '';
  }

  // The twelve operations.

  availableMarkets(query?: Query): Promise<Answer<Markets>> {
    return this.read('available_markets', READERS.availableMarkets, {
      method: 'GET',
      path: 'available_markets',
      query,
    });
  }

  balances(query?: Query): Promise<Answer<Balances>> {
    return this.read('balances', READERS.balances, { method: 'GET', path: 'balances', query });
  }

  generateQuote(request: QuoteRequest, options: WriteOptions = {}): Promise<Answer<QuoteAnswer>> {
    const body: Record<string, unknown> = {
      amount: new LosslessNumber(request.amount),
      buy: request.buy,
      sell: request.sell,
      referencedUnit: request.referencedUnit,
    };
    if (request.quoteForSeconds !== undefined) body.quoteForSeconds = request.quoteForSeconds;
    return this.read('generate_quote', READERS.generateQuote, {
      method: 'POST',
      path: 'generate_quote',
      body,
      ...options,
    });
  }

  trade(quoteId: string, options: WriteOptions = {}): Promise<Answer<TradeAnswer>> {
    const reader = this.generation === 'v1' ? READERS.tradeV1 : READERS.tradeV2;
    return this.read('trade', reader, { method: 'POST', path: 'trade', body: { quoteId }, ...options });
  }

  trades(query?: Query): Promise<Answer<TradeList>> {
    return this.read('trades', READERS.trades, { method: 'GET', path: 'trades', query });
  }

  tradeById(id: string): Promise<Answer<TradeOne>> {
    return this.read('trade/{id}', READERS.trade, { method: 'GET', path: `trade/${encodeURIComponent(id)}` });
  }

  deposits(query?: Query): Promise<Answer<DepositList>> {
    return this.read('deposits', READERS.deposits, { method: 'GET', path: 'deposits', query });
  }

  withdrawalAddresses(query?: Query): Promise<Answer<AddressList>> {
    return this.read('withdrawal_addresses', READERS.withdrawalAddresses, {
      method: 'GET',
      path: 'withdrawal_addresses',
      query,
    });
  }

  fiatWithdrawalAddresses(query?: Query): Promise<Answer<FiatAddressList>> {
    return this.read('fiat_withdrawal_addresses', READERS.fiatWithdrawalAddresses, {
      method: 'GET',
      path: 'fiat_withdrawal_addresses',
      query,
    });
  }

  withdrawals(query?: Query): Promise<Answer<WithdrawalList>> {
    return this.read('withdrawals', READERS.withdrawals, { method: 'GET', path: 'withdrawals', query });
  }

  withdrawal(request: WithdrawalRequest, options: WriteOptions = {}): Promise<Answer<WithdrawalAnswer>> {
    return this.read('withdrawal', READERS.withdrawal, {
      method: 'POST',
      path: 'withdrawal',
      body: withdrawalBody(request),
      ...options,
    });
  }

  fiatWithdrawal(request: WithdrawalRequest, options: WriteOptions = {}): Promise<Answer<WithdrawalAnswer>> {
    return this.read('fiat_withdrawal', READERS.withdrawal, {
      method: 'POST',
      path: 'fiat_withdrawal',
      body: withdrawalBody(request),
      ...options,
    });
  }

  // Underneath.

  /** Sends one request as the client always does and returns whatever came back; never throws on an error answer. */
  async send(request: RawRequest): Promise<RawAnswer> {
    const { baseUrl, generation, key } = this.options;
    const url = new URL(`${baseUrl}/${generation}/brokerage/${key.orgId}/${request.path}`);
    for (const [name, value] of Object.entries(request.query ?? {})) {
      for (const one of typeof value === 'string' ? [value] : value) url.searchParams.append(name, one);
    }
    const headers: Record<string, string> = {
      authorization: `Bearer ${signLegacyToken(key.name, this.privateKey)}`,
      'content-type': 'application/json',
      'x-app-mode': this.options.appMode ?? 'SANDBOX',
    };
    if (request.method === 'POST') {
      const idempotencyKey = request.idempotencyKey === undefined ? randomUUID() : request.idempotencyKey;
      if (idempotencyKey !== null) headers['idempotency-key'] = idempotencyKey;
    }
    const body = request.body === undefined ? undefined : stringifyLossless(request.body);
    const response = await fetch(url, { method: request.method, headers, body });
    const flat: Record<string, string> = {};
    response.headers.forEach((value, name) => {
      flat[name] = value;
    });
    return { status: response.status, headers: flat, text: await response.text() };
  }

  /** Sends, counts a non-2xx or `status: "error"` answer as an error, and reads the rest through the operation's reader. */
  private async read<Schema extends z.ZodType>(
    operation: string,
    reader: Schema,
    request: RawRequest,
  ): Promise<Answer<z.output<Schema>>> {
    const answer = await this.send(request);
    const exact = parseExact(answer.text);
    const saysError =
      exact !== null && typeof exact === 'object' && (exact as Record<string, unknown>).status === 'error';
    if (answer.status < 200 || answer.status > 299 || saysError)
      throw new LegacyApiError(answer, safeJson(answer.text));
    const parsed = reader.safeParse(exact);
    if (!parsed.success) {
      throw new ContractViolation(
        `${this.generation} ${operation}`,
        parsed.error.issues.map((issue) => `${issue.path.map(String).join('.') || '(body)'}: ${issue.message}`),
        answer,
      );
    }
    return { ...answer, body: parsed.data };
  }
}

function withdrawalBody(request: WithdrawalRequest): Record<string, unknown> {
  return {
    amount: new LosslessNumber(request.amount),
    currency: request.currency,
    withdrawalAddressId: request.withdrawalAddressId,
  };
}

function safeJson(text: string): unknown {
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return text;
  }
}
