/**
 * The steady mixed load of the fleet test, as clients send it through the load balancer: v3
 * quotes, trades, withdrawals and reads signed with the independent signer
 * (test/support/independent-signing.ts), v2 generate_quote, trade, fiat_withdrawal and balances,
 * and v1 reads, through the independent legacy client (test/gateway/legacy/contract/legacy-client.ts).
 * Every attempt is recorded and judged (see `Outcome`); every write is sent again with its
 * Idempotency-Key and a fresh token until it has an answer.
 *
 * It may touch: the fleet's balancer URL over HTTP, on 127.0.0.1; nothing else.
 */
import { createPrivateKey, type KeyObject, randomUUID } from 'node:crypto';

import { LosslessNumber } from 'lossless-json';
import { z } from 'zod';

import { ERROR_CATALOG, retryStrategyFor } from '../../src/lib/errors/v3-error-catalog.js';
import type { KeyFile } from '../../src/lib/keys/key-file.js';
import {
  type DashboardKeyFile,
  type Generation as LegacyGeneration,
  LegacyClient,
  legacyIdOf,
  parseExact,
  type RawAnswer,
  type RawRequest,
  READERS,
  sameDecimal,
} from '../gateway/legacy/contract/legacy-client.js';
import { makeJwt, signCanonical, standardToken } from '../support/independent-signing.js';
import { v3ErrorEnvelopeSchema } from '../support/v3-assertions.js';

export type Generation = 'v1' | 'v2' | 'v3';

/**
 * How one attempt ended:
 * - `ok`: a 2xx that reads as the contract says and answers what was asked;
 * - `unavailable`: a write's 503 in its generation's envelope (v3 IDEMPOTENCY_UNAVAILABLE, v2
 *   IDEMPOTENCY_SERVICE_UNAVAILABLE) while the Redis primary is being failed over: nothing was
 *   attempted, and the client sends it again with the same key;
 * - `re-sign`: the 401 of a token signed before the store's new epoch marker, during the
 *   failover: the client signs a new token and sends again;
 * - `in-flight`: a write's 409 IDEMPOTENCY_IN_FLIGHT after the primary was killed: an attempt's
 *   lock whose release the outage lost stays until its lifetime ends, and the contract tells the
 *   client to wait Retry-After and send it again with the same key, which it does;
 * - `failed`: anything else (see the test's header): a connection error, a 5xx, a malformed or
 *   a wrong answer, and the two above outside a failover.
 */
export type Outcome = 'ok' | 'unavailable' | 're-sign' | 'in-flight' | 'failed';

export interface Exchange {
  readonly stream: string;
  readonly generation: Generation;
  /** The legacy operation's name (as the usage report counts it), or the v3 method and path. */
  readonly operation: string;
  readonly write: boolean;
  readonly idempotencyKey: string | null;
  /** 1 for the first attempt of a request, then one more for each time it was sent again. */
  readonly attempt: number;
  /** When its token was signed (ms since the epoch). */
  readonly signedAt: number;
  readonly answeredAt: number;
  /** The HTTP status, or null when no answer came (a connection error). */
  readonly status: number | null;
  readonly outcome: Outcome;
  /** Why it failed, or what it was refused with. */
  readonly detail: string | null;
}

/** A money movement the client was told happened: what the database must hold, once each. */
export interface Effect {
  readonly kind: 'trade' | 'withdrawal';
  readonly idempotencyKey: string;
  /** The v3 id's legacy UUID form, whichever generation answered (`legacyIdOf`). */
  readonly legacyId: string;
}

export const SIGNED_BEFORE_RESET = 'The bearer token was signed before the replay store was reset; sign a new one.';
const LEGACY_AUTH_MESSAGE = 'The authorization key provided is either invalid or expired, please try again';

/** Between two requests of one stream: a steady load, not a flood, on a machine the fleet shares. */
const PAUSE_MS = 20;
/** Before sending a refused or unanswered write again. */
const RETRY_PAUSE_MS = 100;
/** The most a write is sent again before the client gives up (then it is reported): past an in-flight lock's lifetime. */
const WRITE_RETRY_DEADLINE_MS = 60_000;
/** The longest Retry-After of an in-flight answer the client waits, whatever the header says. */
const MAX_RETRY_AFTER_MS = 5_000;

const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

/** What came back for one attempt: an answer, or the connection error that stood for one. */
type Sent =
  { readonly answer: RawAnswer; readonly signedAt: number } | { readonly error: string; readonly signedAt: number };

/** A v3 client from the contract alone: node:crypto token and signature per request (independent-signing.ts). */
export class IndependentV3Client {
  private readonly privateKey: KeyObject;

  constructor(
    private readonly baseUrl: string,
    private readonly key: KeyFile,
  ) {
    this.privateKey = createPrivateKey(key.privateKey);
  }

  async send(method: 'GET' | 'POST', pathAndQuery: string, body?: object, idempotencyKey?: string): Promise<Sent> {
    const signedAt = Date.now();
    const { header, payload } = standardToken({ keyName: this.key.name, lifetimeSeconds: 60 });
    const bytes = body === undefined ? undefined : Buffer.from(JSON.stringify(body));
    const headers: Record<string, string> = {
      authorization: `Bearer ${makeJwt(header, payload, { kind: 'es256', key: this.privateKey })}`,
      'x-request-signature': signCanonical(this.privateKey, {
        method,
        pathAndQuery,
        nonce: String(header.nonce),
        idempotencyKey,
        body: bytes,
      }),
      'x-app-mode': 'SANDBOX',
    };
    if (idempotencyKey !== undefined) headers['idempotency-key'] = idempotencyKey;
    if (bytes !== undefined) headers['content-type'] = 'application/json';
    try {
      const response = await fetch(`${this.baseUrl}${pathAndQuery}`, { method, headers, body: bytes });
      const flat: Record<string, string> = {};
      response.headers.forEach((value, name) => (flat[name] = value));
      return { answer: { status: response.status, headers: flat, text: await response.text() }, signedAt };
    } catch (error) {
      return { error: connectionError(error), signedAt };
    }
  }
}

/** The legacy client's send, with a connection error returned rather than thrown. */
async function sendLegacy(client: LegacyClient, request: RawRequest): Promise<Sent> {
  const signedAt = Date.now();
  try {
    return { answer: await client.send(request), signedAt };
  } catch (error) {
    return { error: connectionError(error), signedAt };
  }
}

/** fetch's `TypeError: fetch failed` names the socket's error in its cause. */
function connectionError(error: unknown): string {
  const cause = error instanceof Error ? (error.cause as { code?: string; message?: string } | undefined) : undefined;
  const message = error instanceof Error ? error.message : String(error);
  return `connection error: ${message}${cause ? ` (${cause.code ?? ''} ${cause.message ?? ''})` : ''}`;
}

/** What the 2xx body says, or why it does not answer the request. */
type Reading<T> = { readonly value: T } | { readonly problem: string };

function problemsOf(error: z.ZodError): string {
  return error.issues.map((issue) => `${issue.path.map(String).join('.') || '(body)'}: ${issue.message}`).join('; ');
}

function readWith<T>(schema: z.ZodType<T>, value: unknown): Reading<T> {
  const parsed = schema.safeParse(value);
  return parsed.success ? { value: parsed.data } : { problem: `malformed: ${problemsOf(parsed.error)}` };
}

function json(text: string): unknown {
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return undefined;
  }
}

const decimal = z.string().regex(/^-?[0-9]+(\.[0-9]+)?$/);
const v3Quote = z.object({
  data: z.object({
    object: z.literal('quote'),
    id: z.string().regex(/^qte_[0-9a-f]{32}$/),
    buyCurrency: z.string(),
    sellCurrency: z.string(),
    buyAmount: decimal,
    sellAmount: decimal,
  }),
});
const v3Trade = z.object({
  data: z.object({ id: z.string().regex(/^trd_[0-9a-f]{32}$/), quoteId: z.string(), status: z.string() }),
});
const v3Withdrawal = z.object({
  data: z.object({
    object: z.literal('withdrawal'),
    id: z.string().regex(/^wtd_[0-9a-f]{32}$/),
    currency: z.string(),
    withdrawalAmount: decimal,
    withdrawalAccountId: z.string(),
    status: z.string(),
  }),
});
const v3Balances = z.object({
  data: z.array(z.object({ object: z.literal('balance'), currency: z.string(), amount: decimal })),
});
const v3Trades = z.object({ data: z.array(z.object({ id: z.string().regex(/^trd_[0-9a-f]{32}$/) })) });

/** What the load needs of the book besides the key. */
export interface LoadBook {
  /** The verified USD (FEDWIRE) withdrawal account, `wac_...`. */
  readonly usdAccountId: string;
}

export interface LoadOptions {
  readonly baseUrl: string;
  /** The integrator's key file (view, trade, withdraw), sandbox. */
  readonly key: KeyFile;
  readonly book: LoadBook;
}

/** Every exchange and effect of a run, across its phases; the load runs in `run` until stopped. */
export class MixedLoad {
  readonly exchanges: Exchange[] = [];
  readonly effects: Effect[] = [];
  /** Writes given up on (a definitive error, or no answer within the deadline), with why. */
  readonly abandoned: string[] = [];
  /** From when a write's store 503 and a 401 for a token signed before the new marker are the contract's answer. */
  storeOutageSince: number | null = null;

  private readonly v3: IndependentV3Client;
  private readonly legacy: Record<LegacyGeneration, LegacyClient>;
  private readonly legacyAccountId: string;

  constructor(private readonly options: LoadOptions) {
    this.v3 = new IndependentV3Client(options.baseUrl, options.key);
    const dashboardKey: DashboardKeyFile = {
      name: options.key.name,
      orgId: options.key.orgId,
      privateKey: options.key.privateKey,
    };
    this.legacy = {
      v1: new LegacyClient({ baseUrl: options.baseUrl, generation: 'v1', key: dashboardKey }),
      v2: new LegacyClient({ baseUrl: options.baseUrl, generation: 'v2', key: dashboardKey }),
    };
    this.legacyAccountId = legacyIdOf(options.book.usdAccountId);
  }

  /** Runs every stream until `running()` turns false; each finishes the request it is in. */
  async run(running: () => boolean): Promise<void> {
    const streams: Record<string, () => Promise<void>> = {
      'v3 trades': () => this.v3TradeFlow(),
      'v2 trades': () => this.v2TradeFlow(),
      withdrawals: () => this.withdrawalFlow(),
      reads: () => this.readRound(),
    };
    await Promise.all(
      Object.values(streams).map(async (step) => {
        while (running()) {
          await step();
          await sleep(PAUSE_MS);
        }
      }),
    );
  }

  private async v3TradeFlow(): Promise<void> {
    const stream = 'v3 trades';
    const quoteBody = { buyCurrency: 'EUR', sellCurrency: 'USD', amount: '10.00', amountCurrency: 'EUR' };
    const quote = await this.write(
      stream,
      'v3',
      'POST /v3/fx/quotes',
      randomUUID(),
      (key) => this.v3.send('POST', '/v3/fx/quotes', quoteBody, key),
      (answer) => {
        const read = readWith(v3Quote, json(answer.text));
        if ('problem' in read) return read;
        const { data } = read.value;
        if (data.buyCurrency !== 'EUR' || data.sellCurrency !== 'USD' || !sameDecimal(data.buyAmount, '10.00'))
          return { problem: `wrong quote: ${answer.text.slice(0, 300)}` };
        return { value: data.id };
      },
    );
    if (quote === null) return;
    const tradeKey = randomUUID();
    const trade = await this.write(
      stream,
      'v3',
      'POST /v3/fx/trades',
      tradeKey,
      (key) => this.v3.send('POST', '/v3/fx/trades', { quoteId: quote }, key),
      (answer) => {
        const read = readWith(v3Trade, json(answer.text));
        if ('problem' in read) return read;
        if (read.value.data.quoteId !== quote)
          return { problem: `a trade of another quote: ${answer.text.slice(0, 300)}` };
        return { value: read.value.data.id };
      },
    );
    if (trade !== null) this.effects.push({ kind: 'trade', idempotencyKey: tradeKey, legacyId: legacyIdOf(trade) });
  }

  private async v2TradeFlow(): Promise<void> {
    const stream = 'v2 trades';
    const client = this.legacy.v2;
    const quoteBody = { amount: new LosslessNumber('10.00'), buy: 'EUR', sell: 'USD', referencedUnit: 'EUR' };
    const quote = await this.write(
      stream,
      'v2',
      'generate_quote',
      randomUUID(),
      (key) => sendLegacy(client, { method: 'POST', path: 'generate_quote', body: quoteBody, idempotencyKey: key }),
      (answer) => {
        const read = readWith(READERS.generateQuote, parseExact(answer.text));
        if ('problem' in read) return read;
        const { quote } = read.value.data;
        if (quote.buy !== 'EUR' || quote.sell !== 'USD' || !sameDecimal(quote.referencedAmount, '10.00'))
          return { problem: `wrong quote: ${answer.text.slice(0, 300)}` };
        return { value: quote.id };
      },
    );
    if (quote === null) return;
    const tradeKey = randomUUID();
    const trade = await this.write(
      stream,
      'v2',
      'trade',
      tradeKey,
      (key) => sendLegacy(client, { method: 'POST', path: 'trade', body: { quoteId: quote }, idempotencyKey: key }),
      (answer) => {
        const read = readWith(READERS.tradeV2, parseExact(answer.text));
        if ('problem' in read) return read;
        const { trade } = read.value.data;
        if (trade.quoteId !== quote) return { problem: `a trade of another quote: ${answer.text.slice(0, 300)}` };
        return { value: trade.id };
      },
    );
    if (trade !== null) this.effects.push({ kind: 'trade', idempotencyKey: tradeKey, legacyId: trade });
  }

  private withdrawalTurn = 0;

  private async withdrawalFlow(): Promise<void> {
    const stream = 'withdrawals';
    const key = randomUUID();
    const { usdAccountId } = this.options.book;
    let id: string | null;
    if (this.withdrawalTurn++ % 2 === 0) {
      const body = { withdrawalAccountId: usdAccountId, withdrawalAmount: '1.00', currency: 'USD' };
      id = await this.write(
        stream,
        'v3',
        'POST /v3/fx/withdrawals',
        key,
        (k) => this.v3.send('POST', '/v3/fx/withdrawals', body, k),
        (answer) => {
          const read = readWith(v3Withdrawal, json(answer.text));
          if ('problem' in read) return read;
          const { data } = read.value;
          if (
            data.currency !== 'USD' ||
            !sameDecimal(data.withdrawalAmount, '1.00') ||
            data.withdrawalAccountId !== usdAccountId
          )
            return { problem: `wrong withdrawal: ${answer.text.slice(0, 300)}` };
          return { value: legacyIdOf(data.id) };
        },
      );
    } else {
      const body = { amount: new LosslessNumber('1.00'), currency: 'USD', withdrawalAddressId: this.legacyAccountId };
      id = await this.write(
        stream,
        'v2',
        'fiat_withdrawal',
        key,
        (k) => sendLegacy(this.legacy.v2, { method: 'POST', path: 'fiat_withdrawal', body, idempotencyKey: k }),
        (answer) => {
          const read = readWith(READERS.withdrawal, parseExact(answer.text));
          if ('problem' in read) return read;
          const { data } = read.value;
          if (
            data.currency !== 'USD' ||
            !sameDecimal(data.amount, '1.00') ||
            data.withdrawalAddressId !== this.legacyAccountId
          )
            return { problem: `wrong withdrawal: ${answer.text.slice(0, 300)}` };
          return { value: data.id };
        },
      );
    }
    if (id !== null) this.effects.push({ kind: 'withdrawal', idempotencyKey: key, legacyId: id });
  }

  private readIndex = 0;

  /** One read of each kind in turn: v3 balances and trades, v2 balances, v1 balances and trades. */
  private async readRound(): Promise<void> {
    const stream = 'reads';
    const reads: (() => Promise<void>)[] = [
      () =>
        this.read(
          stream,
          'v3',
          'GET /v3/fx/balances',
          () => this.v3.send('GET', '/v3/fx/balances'),
          (a) => {
            const read = readWith(v3Balances, json(a.text));
            if ('problem' in read) return read;
            return read.value.data.some((balance) => balance.currency === 'USD')
              ? { value: null }
              : { problem: `no USD balance: ${a.text.slice(0, 300)}` };
          },
        ),
      () =>
        this.read(
          stream,
          'v3',
          'GET /v3/fx/trades',
          () => this.v3.send('GET', '/v3/fx/trades?limit=5'),
          (a) => readWith(v3Trades, json(a.text)),
        ),
      () => this.legacyRead(stream, 'v2', 'balances', READERS.balances, { method: 'GET', path: 'balances' }),
      () => this.legacyRead(stream, 'v1', 'balances', READERS.balances, { method: 'GET', path: 'balances' }),
      () =>
        this.legacyRead(stream, 'v1', 'trades', READERS.trades, {
          method: 'GET',
          path: 'trades',
          query: { page: '1', limit: '5' },
        }),
    ];
    await reads[this.readIndex++ % reads.length]!();
  }

  private legacyRead(
    stream: string,
    generation: LegacyGeneration,
    operation: string,
    reader: z.ZodType,
    request: RawRequest,
  ): Promise<void> {
    return this.read(
      stream,
      generation,
      operation,
      () => sendLegacy(this.legacy[generation], request),
      (answer) => readWith(reader, parseExact(answer.text)),
    );
  }

  /** A read, sent once (and once more with a new token after the 401 of a token signed before a new marker). */
  private async read<T>(
    stream: string,
    generation: Generation,
    operation: string,
    send: () => Promise<Sent>,
    reading: (answer: RawAnswer) => Reading<T>,
  ): Promise<void> {
    for (let attempt = 1; attempt <= 2; attempt++) {
      const sent = await send();
      const judged = this.judge(generation, false, sent, reading);
      this.record(stream, generation, operation, false, null, attempt, sent, judged);
      if (judged.outcome !== 're-sign') return;
    }
  }

  /**
   * A write with one Idempotency-Key, sent until it has an answer: again after a connection
   * error (the client's right for a write, and counted), a 5xx, or a 401 for a token signed
   * before the new marker; each time with a fresh token. Returns what the 2xx said, or null.
   */
  private async write<T>(
    stream: string,
    generation: Generation,
    operation: string,
    idempotencyKey: string,
    send: (idempotencyKey: string) => Promise<Sent>,
    reading: (answer: RawAnswer) => Reading<T>,
  ): Promise<T | null> {
    const deadline = Date.now() + WRITE_RETRY_DEADLINE_MS;
    for (let attempt = 1; ; attempt++) {
      const sent = await send(idempotencyKey);
      const judged = this.judge(generation, true, sent, reading);
      this.record(stream, generation, operation, true, idempotencyKey, attempt, sent, judged);
      if ('value' in judged) return judged.value;
      if (!judged.sendAgain) {
        this.abandoned.push(`${generation} ${operation} ${idempotencyKey}: ${judged.detail}`);
        return null;
      }
      if (Date.now() > deadline) {
        this.abandoned.push(
          `${generation} ${operation} ${idempotencyKey}: no answer within ${WRITE_RETRY_DEADLINE_MS} ms`,
        );
        return null;
      }
      if (judged.outcome === 'in-flight') await sleep(retryAfterMs(sent));
      else if (judged.outcome !== 're-sign') await sleep(RETRY_PAUSE_MS);
    }
  }

  /** The outcome of one attempt, and whether the client sends the request again. */
  private judge<T>(
    generation: Generation,
    write: boolean,
    sent: Sent,
    reading: (answer: RawAnswer) => Reading<T>,
  ):
    | { readonly outcome: 'ok'; readonly value: T; readonly status: number; readonly detail: null }
    | {
        readonly outcome: Exclude<Outcome, 'ok'>;
        readonly status: number | null;
        readonly detail: string;
        readonly sendAgain: boolean;
      } {
    if ('error' in sent) return { outcome: 'failed', status: null, detail: sent.error, sendAgain: write };
    const { answer } = sent;
    const answeredAt = Date.now();
    const inOutage = this.storeOutageSince !== null && answeredAt >= this.storeOutageSince;
    if (answer.status >= 200 && answer.status <= 299) {
      const read = reading(answer);
      if ('value' in read) return { outcome: 'ok', value: read.value, status: answer.status, detail: null };
      return { outcome: 'failed', status: answer.status, detail: read.problem, sendAgain: false };
    }
    const brief = `${answer.status} ${answer.text.slice(0, 300)}`;
    if (write && isStoreUnavailable(generation, answer)) {
      // The contract's answer while the store is down; any other time it is a failure all the same.
      return { outcome: inOutage ? 'unavailable' : 'failed', status: 503, detail: brief, sendAgain: true };
    }
    if (write && isInFlight(generation, answer)) {
      return { outcome: inOutage ? 'in-flight' : 'failed', status: 409, detail: brief, sendAgain: true };
    }
    if (isSignedBeforeReset(generation, answer)) {
      return { outcome: inOutage ? 're-sign' : 'failed', status: 401, detail: brief, sendAgain: true };
    }
    // A write's 5xx may have moved money before it failed: a client sends it again with the same key, as v3 advises.
    return { outcome: 'failed', status: answer.status, detail: brief, sendAgain: write && answer.status >= 500 };
  }

  private record(
    stream: string,
    generation: Generation,
    operation: string,
    write: boolean,
    idempotencyKey: string | null,
    attempt: number,
    sent: Sent,
    judged: { readonly outcome: Outcome; readonly status: number | null; readonly detail: string | null },
  ): void {
    this.exchanges.push({
      stream,
      generation,
      operation,
      write,
      idempotencyKey,
      attempt,
      signedAt: sent.signedAt,
      answeredAt: Date.now(),
      status: judged.status,
      outcome: judged.outcome,
      detail: judged.detail,
    });
  }
}

/** A write's 503 in its generation's envelope: v3 IDEMPOTENCY_UNAVAILABLE as cataloged, v2 IDEMPOTENCY_SERVICE_UNAVAILABLE. */
/** A write's 409 IDEMPOTENCY_IN_FLIGHT, in any generation's envelope (v1 answers v2's, see mappings/errors.v1.ts). */
export function isInFlight(generation: Generation, answer: RawAnswer): boolean {
  if (answer.status !== 409) return false;
  const body = json(answer.text);
  if (generation === 'v3') {
    const parsed = v3ErrorEnvelopeSchema.safeParse(body);
    return parsed.success && parsed.data.error.code === 'IDEMPOTENCY_IN_FLIGHT';
  }
  return z.object({ error: z.object({ code: z.literal('IDEMPOTENCY_IN_FLIGHT') }) }).safeParse(body).success;
}

/** What an answer's Retry-After asks the client to wait, in ms, within MAX_RETRY_AFTER_MS. */
function retryAfterMs(sent: Sent): number {
  if (!('answer' in sent)) return RETRY_PAUSE_MS;
  const seconds = Number(sent.answer.headers['retry-after']);
  return Number.isFinite(seconds) && seconds >= 0 ? Math.min(seconds * 1000, MAX_RETRY_AFTER_MS) : RETRY_PAUSE_MS;
}

export function isStoreUnavailable(generation: Generation, answer: RawAnswer): boolean {
  if (answer.status !== 503) return false;
  const body = json(answer.text);
  if (generation === 'v3') {
    const parsed = v3ErrorEnvelopeSchema.safeParse(body);
    if (!parsed.success || parsed.data.error.code !== 'IDEMPOTENCY_UNAVAILABLE') return false;
    const row = ERROR_CATALOG.IDEMPOTENCY_UNAVAILABLE;
    return (
      row.status === 503 &&
      parsed.data.error.type === row.type &&
      parsed.data.error.retryStrategy === retryStrategyFor('IDEMPOTENCY_UNAVAILABLE', true)
    );
  }
  return (
    generation === 'v2' &&
    z
      .object({ status: z.literal('error'), error: z.object({ code: z.literal('IDEMPOTENCY_SERVICE_UNAVAILABLE') }) })
      .safeParse(body).success
  );
}

/**
 * The 401 of a token signed before the store's new epoch marker: v3 says so in its message; a
 * legacy 401 has one message for every refused token, so the test holds its time against the
 * marker's.
 */
export function isSignedBeforeReset(generation: Generation, answer: RawAnswer): boolean {
  if (answer.status !== 401) return false;
  const body = json(answer.text);
  if (generation === 'v3') {
    const parsed = v3ErrorEnvelopeSchema.safeParse(body);
    return (
      parsed.success &&
      parsed.data.error.code === 'AUTH_TOKEN_INVALID' &&
      parsed.data.error.message === SIGNED_BEFORE_RESET
    );
  }
  return z
    .object({ status: z.literal('error'), message: z.literal(LEGACY_AUTH_MESSAGE) })
    .strict()
    .safeParse(body).success;
}

/** Counts of a set of exchanges, for the test's assertions and its report. */
export interface Tally {
  readonly requests: number;
  readonly attempts: number;
  readonly ok: number;
  readonly failed: number;
  readonly unavailable: number;
  readonly reSigned: number;
  /** Writes sent again after a connection error: the client's right, counted (also in `failed`). */
  readonly retriedAfterConnectionError: number;
  readonly waitedInFlight: number;
}

export function tally(exchanges: readonly Exchange[]): Tally {
  const count = (test: (exchange: Exchange) => boolean) => exchanges.filter(test).length;
  return {
    requests: count((e) => e.attempt === 1),
    attempts: exchanges.length,
    ok: count((e) => e.outcome === 'ok'),
    failed: count((e) => e.outcome === 'failed'),
    unavailable: count((e) => e.outcome === 'unavailable'),
    reSigned: count((e) => e.outcome === 're-sign'),
    waitedInFlight: count((e) => e.outcome === 'in-flight'),
    retriedAfterConnectionError: count((e) => e.write && e.status === null),
  };
}

/** The legacy requests a gateway answered, per `generation operation`: what its usage report must count. */
export function legacyRequestsAnswered(exchanges: readonly Exchange[]): Record<string, number> {
  const counts: Record<string, number> = {};
  for (const e of exchanges) {
    if (e.generation === 'v3' || e.status === null) continue;
    const name = `${e.generation} ${e.operation}`;
    counts[name] = (counts[name] ?? 0) + 1;
  }
  return counts;
}
