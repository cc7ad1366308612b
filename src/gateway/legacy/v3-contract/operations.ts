/**
 * The v3 operations a legacy mapping may call (docs/contract.md#v3-endpoints), derived at start-up
 * from the published v3 document (document.ts), not imported from the core (the gateway knows v3
 * only over HTTP, and must work in front of any conforming v3): each operation a v3 key may call,
 * with its method, path, scope, list kind and query parameters. The endpoint-mapping validator
 * checks every target against this list, so a mapping cannot call a path v3 does not have, with
 * a query parameter it does not take, or under a scope that differs from the legacy operation's.
 * V3_RECORD_READS says which of these reads serves each v3 record kind again, for the tools that
 * check a legacy answer against v3 (the generation diff).
 */
import {
  documentOperations,
  parametersOf,
  V3_DOCUMENT,
  type V3Document,
  type V3DocumentOperation,
} from './document.js';
import type { V3RecordKind } from './v3-records.js';

export const V3_METHODS = ['GET', 'POST', 'DELETE'] as const;
export type V3Method = (typeof V3_METHODS)[number];
export const V3_SCOPES = ['view', 'trade', 'withdraw', 'webhooks'] as const;
export type V3Scope = (typeof V3_SCOPES)[number];

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
 * past this. Kept here by hand: the document states it in prose only.
 */
export const V3_WEBHOOK_RETRY_WINDOW_MS = 72 * 60 * 60 * 1000;

/** The scheme v3's keys are accepted under; an operation without it (the document itself) is not called. */
const KEY_SCHEME = 'bearerToken';
/** The tag of the sandbox-only simulations. */
const SANDBOX_TAG = 'Sandbox';

function listKindOf(operation: V3DocumentOperation): V3ListKind {
  const success = operation.responses['200'] ?? operation.responses['201'];
  const properties = success?.content?.['application/json']?.schema?.properties as
    Readonly<Record<string, { readonly type?: unknown } | undefined>> | undefined;
  if (properties?.data?.type !== 'array') return null;
  return properties.pagination === undefined ? 'bounded' : 'cursor';
}

const isMember = <T extends string>(values: readonly T[], value: string): value is T =>
  (values as readonly string[]).includes(value);

/** The operations of a v3 document that a v3 key may call, in its order; throws on one the gateway cannot name. */
export function deriveV3Operations(document: V3Document): V3Operation[] {
  const operations: V3Operation[] = [];
  for (const [method, openApiPath, operation] of documentOperations(document)) {
    const scopes = operation.security?.find((requirement) => requirement[KEY_SCHEME] !== undefined)?.[KEY_SCHEME];
    if (scopes === undefined) continue;
    const where = `${method} ${openApiPath}`;
    const scope = scopes[0] ?? '';
    if (!isMember(V3_METHODS, method)) throw new Error(`the v3 document's ${where}: a method the gateway cannot call`);
    if (scopes.length !== 1 || !isMember(V3_SCOPES, scope))
      throw new Error(`the v3 document's ${where}: scopes ${scopes.join(', ')}, not one of ${V3_SCOPES.join(', ')}`);
    operations.push({
      method,
      path: openApiPath.replaceAll(/\{([A-Za-z][A-Za-z0-9]*)\}/g, ':$1'),
      scope,
      list: listKindOf(operation),
      query: parametersOf(document, operation)
        .filter((parameter) => parameter.in === 'query')
        .map(({ name }) => name),
      ...(operation.tags?.includes(SANDBOX_TAG) === true ? { sandboxOnly: true as const } : {}),
    });
  }
  return operations;
}

export const V3_OPERATIONS: readonly V3Operation[] = deriveV3Operations(V3_DOCUMENT);

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
 * none: the reversal details are answered once, with the reversal that made them. The gateway's
 * choice, kept by hand; records.ts checks each against the document.
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
