/**
 * The v3 operations a legacy mapping may call (docs/contract.md#v3-endpoints), written down
 * from the contract, not imported from the core (the gateway knows v3
 * only over HTTP, and must work in front of any conforming v3). The endpoint-mapping validator
 * checks every target against this list, so a mapping cannot call a path v3 does not have, with
 * a query parameter it does not take, or under a scope that differs from the legacy operation's.
 * V3_RECORD_READS says which of these reads serves each v3 record kind again, for the tools that
 * check a legacy answer against v3 (the generation diff).
 */
import type { V3RecordKind } from './transforms/v3-records.js';

export type V3Method = 'GET' | 'POST' | 'DELETE';
export type V3Scope = 'view' | 'trade' | 'withdraw' | 'webhooks';

/** `cursor`: docs/contract.md#pagination-cursor; `bounded`: the whole list in one `data` array; null: not a list. */
export type V3ListKind = 'cursor' | 'bounded' | null;

export interface V3Operation {
  readonly method: V3Method;
  /** Path with `:param` placeholders, as fastify writes routes. */
  readonly path: string;
  readonly scope: V3Scope;
  readonly list: V3ListKind;
  /** Query parameters it takes (cursor lists also take limit, startingAfter, endingBefore). */
  readonly query: readonly string[];
  /** Sandbox-only simulations (docs/contract.md#v3-sandbox): never a target of a legacy mapping. */
  readonly sandboxOnly?: true;
}

/**
 * How long v3 keeps trying a webhook delivery: until 72 hours after its event, then it gives it up
 * (docs/contract.md#webhooks-retries). An endpoint that hears no new event holds no delivery
 * past this.
 */
export const V3_WEBHOOK_RETRY_WINDOW_MS = 72 * 60 * 60 * 1000;

const CURSOR_QUERY = ['limit', 'startingAfter', 'endingBefore'] as const;

export const V3_OPERATIONS: readonly V3Operation[] = [
  { method: 'GET', path: '/v3/fx/pairs', scope: 'view', list: 'bounded', query: [] },
  { method: 'GET', path: '/v3/fx/balances', scope: 'view', list: 'bounded', query: [] },
  { method: 'GET', path: '/v3/fx/exposure', scope: 'view', list: null, query: [] },
  { method: 'POST', path: '/v3/fx/quotes', scope: 'trade', list: null, query: [] },
  { method: 'GET', path: '/v3/fx/quotes/:id', scope: 'view', list: null, query: [] },
  { method: 'POST', path: '/v3/fx/trades', scope: 'trade', list: null, query: [] },
  {
    method: 'GET',
    path: '/v3/fx/trades',
    scope: 'view',
    list: 'cursor',
    query: [...CURSOR_QUERY, 'status', 'currency'],
  },
  { method: 'GET', path: '/v3/fx/trades/:id', scope: 'view', list: null, query: [] },
  { method: 'POST', path: '/v3/fx/trades/:id/reverse-quote', scope: 'trade', list: null, query: [] },
  { method: 'POST', path: '/v3/fx/trades/:id/reverse', scope: 'trade', list: null, query: [] },
  { method: 'POST', path: '/v3/fx/trades/:id/settle', scope: 'trade', list: null, query: [] },
  {
    method: 'GET',
    path: '/v3/fx/deposits',
    scope: 'view',
    list: 'cursor',
    query: [...CURSOR_QUERY, 'status', 'currency'],
  },
  { method: 'GET', path: '/v3/fx/deposits/:id', scope: 'view', list: null, query: [] },
  { method: 'POST', path: '/v3/fx/withdrawals', scope: 'withdraw', list: null, query: [] },
  {
    method: 'GET',
    path: '/v3/fx/withdrawals',
    scope: 'view',
    list: 'cursor',
    query: [...CURSOR_QUERY, 'status', 'currency'],
  },
  { method: 'GET', path: '/v3/fx/withdrawals/:id', scope: 'view', list: null, query: [] },
  { method: 'POST', path: '/v3/fx/withdrawal-accounts', scope: 'withdraw', list: null, query: [] },
  {
    method: 'GET',
    path: '/v3/fx/withdrawal-accounts',
    scope: 'view',
    list: 'bounded',
    query: ['assetType', 'network', 'currency', 'status', 'verified'],
  },
  { method: 'GET', path: '/v3/fx/withdrawal-accounts/:id', scope: 'view', list: null, query: [] },
  { method: 'POST', path: '/v3/fx/webhook-endpoints', scope: 'webhooks', list: null, query: [] },
  { method: 'GET', path: '/v3/fx/webhook-endpoints', scope: 'webhooks', list: 'bounded', query: [] },
  { method: 'GET', path: '/v3/fx/webhook-endpoints/:id', scope: 'webhooks', list: null, query: [] },
  { method: 'DELETE', path: '/v3/fx/webhook-endpoints/:id', scope: 'webhooks', list: null, query: [] },
  { method: 'POST', path: '/v3/fx/sandbox/deposits', scope: 'trade', list: null, query: [], sandboxOnly: true },
  {
    method: 'POST',
    path: '/v3/fx/sandbox/withdrawal-accounts/:id/verify',
    scope: 'withdraw',
    list: null,
    query: [],
    sandboxOnly: true,
  },
  {
    method: 'POST',
    path: '/v3/fx/sandbox/withdrawal-accounts/:id',
    scope: 'withdraw',
    list: null,
    query: [],
    sandboxOnly: true,
  },
  {
    method: 'POST',
    path: '/v3/fx/sandbox/withdrawals/:id/complete',
    scope: 'withdraw',
    list: null,
    query: [],
    sandboxOnly: true,
  },
  {
    method: 'POST',
    path: '/v3/fx/sandbox/withdrawals/:id/fail',
    scope: 'withdraw',
    list: null,
    query: [],
    sandboxOnly: true,
  },
];

export function findV3Operation(method: string, path: string): V3Operation | undefined {
  return V3_OPERATIONS.find((operation) => operation.method === method && operation.path === path);
}

/** The `:param` names of a route path, in order. */
export function pathParams(path: string): string[] {
  return [...path.matchAll(/:([A-Za-z][A-Za-z0-9]*)/g)].map((match) => match[1]!);
}

/**
 * How a v3 record is read again after the call that answered it: `one`, the GET of `path` with
 * the record's `key` as `:id`; `in-list`, the record whose `key` field matches, in the data of the
 * bounded list `path` answers whole. Every path is a GET of V3_OPERATIONS.
 */
export interface V3RecordRead {
  readonly path: string;
  readonly key: string;
  readonly read: 'one' | 'in-list';
}

/**
 * The read that serves each v3 record kind the legacy records are built from; null where v3 has
 * none: the reversal details are answered once, with the reversal that made them.
 */
export const V3_RECORD_READS: Readonly<Record<V3RecordKind, V3RecordRead | null>> = {
  quote: { path: '/v3/fx/quotes/:id', key: 'id', read: 'one' },
  trade: { path: '/v3/fx/trades/:id', key: 'id', read: 'one' },
  reversalDetails: null,
  balance: { path: '/v3/fx/balances', key: 'id', read: 'in-list' },
  pair: { path: '/v3/fx/pairs', key: 'symbol', read: 'in-list' },
  deposit: { path: '/v3/fx/deposits/:id', key: 'id', read: 'one' },
  withdrawalAccount: { path: '/v3/fx/withdrawal-accounts/:id', key: 'id', read: 'one' },
  withdrawal: { path: '/v3/fx/withdrawals/:id', key: 'id', read: 'one' },
};
