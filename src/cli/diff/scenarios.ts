/**
 * One scenario per legacy operation: what `fxgate diff generations` puts in place through v3
 * before it calls the operation, and the legacy request it then sends. Everything is made in the
 * key's sandbox book through v3's public API (sandbox deposits, withdrawal accounts verified
 * through the sandbox endpoints, quotes, trades), so a run needs nothing but a sandbox key with
 * view, trade and withdraw. What several scenarios share (a trade, a deposit, the accounts) is
 * made once a run; accounts already verified in the book are reused, so runs do not pile them up.
 */
import type { LegacyGeneration, V2Operation } from '../../gateway/legacy/declarations/legacy-operations.js';
import { idToLegacyUuid } from '../../lib/ids.js';
import { Decimal } from '../../lib/money.js';

/** v3 as the scenarios use it; the runner sends signed requests and throws on any answer but 200. */
export interface V3Setup {
  /** A GET: the whole body. */
  read(path: string): Promise<Record<string, unknown>>;
  /** A POST with a fresh Idempotency-Key: the answer's `data`. */
  write(path: string, body?: object): Promise<Record<string, unknown>>;
}

/** The legacy request of a scenario. */
export interface LegacyCall {
  readonly method: 'GET' | 'POST';
  /** Below `/{generation}/brokerage/{orgId}/`, with its id and query: `trade/<uuid>`, `trades?page=1&limit=5`. */
  readonly path: string;
  /** The JSON text of a POST's body, numbers written as legacy clients write them. */
  readonly body?: string;
  /** v2 writes require an Idempotency-Key; v1 clients send none. */
  readonly idempotencyKey?: string;
  /** The page asked for, on a paginated operation. */
  readonly page?: { readonly page: number; readonly limit: number };
}

export type Scenario = (setup: Fixtures, generation: LegacyGeneration) => Promise<LegacyCall>;

/** A trade of the scenarios: 250.00 EUR bought with USD. */
const TRADE = {
  buyCurrency: 'EUR',
  sellCurrency: 'USD',
  amount: '250.00',
  amountCurrency: 'EUR',
  validForSeconds: 60,
} as const;
/** A page small enough to read back every record of it cheaply. */
const PAGE = { page: 1, limit: 5 } as const;
/** What the book keeps at least, topped up by sandbox deposits: trades sell USD, withdrawals take USD and USDC. */
const FLOORS = {
  USD: { amount: 10_000, deposit: '100000.00' },
  USDC: { amount: 100, deposit: '10000.000000', network: 'ETHEREUM' },
} as const;
/** The second address of the EIP-55 specification's examples (fxgate all's seed uses the first). */
const DIFF_WALLET = '0xfB6916095ca1df60bB79Ce92cE3Ea74c37c5d359';
const DIFF_BANK_ACCOUNT = {
  currency: 'USD',
  assetType: 'FIAT',
  accountName: 'fxgate diff account',
  transferType: 'FEDWIRE',
  bankName: 'JPMorgan Chase Bank, N.A.',
  accountNumber: '000987654321',
  routingNumber: '021000021',
} as const;

function uuid(kind: Parameters<typeof idToLegacyUuid>[0], id: unknown): string {
  const legacy = typeof id === 'string' ? idToLegacyUuid(kind, id) : null;
  if (legacy === null) throw new Error(`v3 answered ${JSON.stringify(id)} where a ${kind} id belongs`);
  return legacy;
}

/** A once-per-run value, made on first use. */
function once<T>(make: () => Promise<T>): () => Promise<T> {
  let made: Promise<T> | null = null;
  return () => {
    made ??= make().catch((error: unknown) => {
      made = null;
      throw error;
    });
    return made;
  };
}

/** What the scenarios put in place through v3, each made once a run. */
export class Fixtures {
  private sequence = 0;

  constructor(
    readonly v3: V3Setup,
    /** Tells this run's keys and references apart from other runs'. */
    readonly runId: string,
  ) {}

  /** A reference unique to this run. */
  reference(what: string): string {
    this.sequence += 1;
    return `fxgate-diff-${this.runId}-${what}-${this.sequence}`;
  }

  /** No balance below zero (withdrawals refuse a book that owes), and enough USD and USDC to spend. */
  readonly funds = once(async () => {
    const { data } = (await this.v3.read('/v3/fx/balances')) as { data: { currency: string; amount: string }[] };
    // A stablecoin deposit without a network arrives on the currency's first chain.
    for (const balance of data)
      if (balance.amount.startsWith('-'))
        await this.v3.write('/v3/fx/sandbox/deposits', { currency: balance.currency, amount: balance.amount.slice(1) });
    for (const [currency, floor] of Object.entries(FLOORS)) {
      const balance = data.find((candidate) => candidate.currency === currency);
      if (balance === undefined || new Decimal(balance.amount).lt(floor.amount)) {
        await this.v3.write('/v3/fx/sandbox/deposits', {
          currency,
          amount: floor.deposit,
          ...('network' in floor ? { network: floor.network } : {}),
        });
      }
    }
  });

  /** A fresh v3 trade (EXECUTED), with its own quote. */
  async newTrade(): Promise<Record<string, unknown>> {
    await this.funds();
    const quote = await this.v3.write('/v3/fx/quotes', TRADE);
    return this.v3.write('/v3/fx/trades', { quoteId: quote.id, clientReferenceId: this.reference('trade') });
  }

  /** The run's trade, for the reads and the reverse quote. */
  readonly trade = once(() => this.newTrade());

  /** The run's deposit: completed at once, with a reference and comments. */
  readonly deposit = once(() =>
    this.v3.write('/v3/fx/sandbox/deposits', {
      currency: 'USD',
      amount: '125.50',
      referenceId: this.reference('deposit'),
      comments: 'fxgate diff generations',
    }),
  );

  /** A verified account of the book matching the filter, or a new one verified through the sandbox. */
  private async account(query: string, create: object): Promise<Record<string, unknown>> {
    const { data } = (await this.v3.read(`/v3/fx/withdrawal-accounts?${query}&status=ACTIVE&verified=true`)) as {
      data: Record<string, unknown>[];
    };
    const found = data.find((account) => account.withdrawalsEnabled !== false);
    if (found) return found;
    const account = await this.v3.write('/v3/fx/withdrawal-accounts', create);
    return this.v3.write(`/v3/fx/sandbox/withdrawal-accounts/${String(account.id)}/verify`);
  }

  readonly stablecoinAccount = once(() =>
    this.account('assetType=STABLECOIN&currency=USDC&network=ETHEREUM', {
      currency: 'USDC',
      assetType: 'STABLECOIN',
      accountName: 'fxgate diff wallet',
      network: 'ETHEREUM',
      address: DIFF_WALLET,
    }),
  );

  readonly fiatAccount = once(() => this.account('assetType=FIAT&currency=USD', DIFF_BANK_ACCOUNT));

  /** The run's withdrawal (sandbox withdrawals stay PENDING). */
  readonly withdrawal = once(async () => {
    await this.funds();
    const account = await this.fiatAccount();
    return this.v3.write('/v3/fx/withdrawals', {
      withdrawalAccountId: account.id,
      withdrawalAmount: '1.00',
      currency: 'USD',
    });
  });
}

const get = (path: string, page?: typeof PAGE): LegacyCall => ({
  method: 'GET',
  path: page ? `${path}?page=${page.page}&limit=${page.limit}` : path,
  ...(page ? { page } : {}),
});

/** A legacy write: its body as JSON text, with an Idempotency-Key where the generation requires one. */
function post(setup: Fixtures, generation: LegacyGeneration, path: string, body: string): LegacyCall {
  return { method: 'POST', path, body, ...(generation === 'v2' ? { idempotencyKey: setup.reference('legacy') } : {}) };
}

/** The first page of a legacy list, once the book holds what it should show. */
function firstPage(operation: V2Operation, make: (setup: Fixtures) => Promise<unknown>): Scenario {
  return async (setup) => {
    await make(setup);
    return get(operation, PAGE);
  };
}

/** A legacy withdrawal of `amount` (written as legacy clients write it, a JSON number) to an account of the book. */
function legacyWithdrawal(
  operation: 'withdrawal' | 'fiat_withdrawal',
  amount: string,
  currency: string,
  account: (setup: Fixtures) => Promise<Record<string, unknown>>,
): Scenario {
  return async (setup, generation) => {
    await setup.funds();
    const accountId = uuid('withdrawalAccount', (await account(setup)).id);
    return post(
      setup,
      generation,
      operation,
      `{"amount":${amount},"currency":${JSON.stringify(currency)},"withdrawalAddressId":${JSON.stringify(accountId)}}`,
    );
  };
}

export const SCENARIOS: { readonly [O in V2Operation]: Scenario } = {
  available_markets: async () => get('available_markets'),
  balances: async (setup) => {
    await setup.funds();
    return get('balances');
  },
  generate_quote: async (setup, generation) =>
    post(
      setup,
      generation,
      'generate_quote',
      '{"amount":250.00,"buy":"EUR","sell":"USD","referencedUnit":"EUR","quoteForSeconds":60}',
    ),
  trade: async (setup, generation) => {
    await setup.funds();
    const quote = await setup.v3.write('/v3/fx/quotes', TRADE);
    return post(
      setup,
      generation,
      'trade',
      JSON.stringify({ quoteId: uuid('quote', quote.id), clientReferenceId: setup.reference(`${generation}-trade`) }),
    );
  },
  trades: firstPage('trades', (setup) => setup.trade()),
  'trade/{id}': async (setup) => get(`trade/${uuid('trade', (await setup.trade()).id)}`),
  deposits: firstPage('deposits', (setup) => setup.deposit()),
  withdrawal_addresses: firstPage('withdrawal_addresses', (setup) => setup.stablecoinAccount()),
  fiat_withdrawal_addresses: firstPage('fiat_withdrawal_addresses', (setup) => setup.fiatAccount()),
  withdrawals: firstPage('withdrawals', (setup) => setup.withdrawal()),
  withdrawal: legacyWithdrawal('withdrawal', '1.50', 'USDC', (setup) => setup.stablecoinAccount()),
  fiat_withdrawal: legacyWithdrawal('fiat_withdrawal', '2.25', 'USD', (setup) => setup.fiatAccount()),
  'trade/reverse-quote': async (setup, generation) =>
    post(
      setup,
      generation,
      'trade/reverse-quote',
      JSON.stringify({ tradeId: uuid('trade', (await setup.trade()).id) }),
    ),
  'trade/reverse': async (setup, generation) => {
    const trade = await setup.newTrade();
    const quote = await setup.v3.write(`/v3/fx/trades/${String(trade.id)}/reverse-quote`);
    return post(
      setup,
      generation,
      'trade/reverse',
      JSON.stringify({
        tradeId: uuid('trade', trade.id),
        quoteId: uuid('quote', quote.id),
        clientReferenceId: setup.reference(`${generation}-reversal`),
      }),
    );
  },
  'trade/settle': async (setup, generation) =>
    post(setup, generation, 'trade/settle', JSON.stringify({ tradeId: uuid('trade', (await setup.newTrade()).id) })),
};
