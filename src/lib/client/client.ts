/**
 * `fxgate/client`: a typed v3 client for integrators (docs/v3-client.md). Calls go through
 * openapi-fetch with the types generated from the v3 document (v3-api.ts); each request gets an
 * Idempotency-Key when it is a write without one, and each attempt a fresh token and request
 * signature over the exact bytes sent (the project's signer, lib/auth/request-signer.ts), retried
 * as retry.ts decides. Touches the network only through the fetch it is given (the global one by
 * default); reads no file and no environment.
 */
import { randomUUID } from 'node:crypto';

import createFetchClient, { type Client, type ClientOptions, type Middleware } from 'openapi-fetch';

import { DEFAULT_JWT_ISSUERS } from '../auth/credential-vocabulary.js';
import { V3RequestSigner } from '../auth/request-signer.js';
import type { RetryStrategy } from '../errors/v3-error-catalog.js';
import { type KeyFile, keyFileSchema, loadKey } from '../keys/key-file.js';
import { DEFAULT_RETRY_POLICY, retryDelayMs, type RetryPolicy } from './retry.js';
import type { components, operations, paths } from './v3-api.js';

export type { components, operations, paths };
export { DEFAULT_RETRY_POLICY, type RetryPolicy };

/** The v3 error envelope, any code; each operation's `error` is the union of its own codes. */
export type V3Error = {
  [Name in keyof components['schemas']]: Name extends `Error_${string}` ? components['schemas'][Name] : never;
}[keyof components['schemas']];

export interface ClientSettings {
  /** Where the API is, e.g. `https://fx.example.com` (no `/v3`: the paths carry it). */
  readonly baseUrl: string;
  /** The API key file's JSON, as `fxgate keys create` writes it (parsed: `JSON.parse(text)`). */
  readonly key: unknown;
  /** The token's `iss`; the first of the server's accepted issuers (FXGATE_JWT_ISSUER) unless given. */
  readonly issuer?: string;
  /** Retry bounds; each one left out is DEFAULT_RETRY_POLICY's. */
  readonly retry?: Partial<RetryPolicy>;
  /** What sends each signed attempt; the global fetch unless given (a proxy's, a test's). */
  readonly fetch?: (request: Request) => Promise<Response>;
  /** Headers sent with every request (X-Request-Id, traceparent). */
  readonly headers?: ClientOptions['headers'];
}

/** Paths whose GET answers a cursor page: `{ data: [...], pagination }`. */
export type ListPath = {
  [P in keyof paths]: paths[P] extends {
    get: {
      responses: {
        200: {
          content: {
            'application/json': { data: unknown[]; pagination: components['schemas']['CursorPagination'] };
          };
        };
      };
    };
  }
    ? P
    : never;
}[keyof paths];

type ListOperation<P extends ListPath> = paths[P]['get'];
/** One record of a list. */
export type ListRecord<P extends ListPath> =
  ListOperation<P>['responses'][200]['content']['application/json']['data'][number];
/** A list's filters and page size; the cursors are the iterator's. */
export type ListQuery<P extends ListPath> = Omit<
  NonNullable<ListOperation<P>['parameters']['query']>,
  'startingAfter' | 'endingBefore'
>;

/** A list page the API refused, thrown by paginate() (an iterator has no `{ error }` to hand back). */
export class V3ClientError extends Error {
  constructor(
    readonly error: V3Error | undefined,
    readonly response: Response,
  ) {
    super(
      error === undefined
        ? `${response.url} answered ${response.status} without a v3 error envelope: check baseUrl names the fxgate API`
        : `${error.error.code} (${response.status}): ${error.error.message} [retryStrategy ${error.error.retryStrategy}]`,
    );
    this.name = 'V3ClientError';
  }
}

export type V3Client = Client<paths> & {
  /** Every record of a list, newest first, across as many pages (and cursors) as it takes. */
  paginate<P extends ListPath>(path: P, init?: { readonly query?: ListQuery<P> }): AsyncGenerator<ListRecord<P>>;
};

const WRITE_METHODS = new Set(['POST', 'PATCH']);

/** A write without an Idempotency-Key gets one here, before any other middleware: every attempt sends the same one. */
const idempotencyKeys: Middleware = {
  onRequest({ request }) {
    if (WRITE_METHODS.has(request.method) && !request.headers.has('idempotency-key'))
      request.headers.set('idempotency-key', randomUUID());
    return request;
  },
};

function loadKeyOf(value: unknown) {
  const parsed = keyFileSchema.safeParse(value);
  if (!parsed.success)
    throw new TypeError(
      `key is not an fxgate API key file (pass the parsed JSON that \`fxgate keys create\` writes): ${parsed.error.issues
        .map((issue) => `${issue.path.join('.') || '(root)'}: ${issue.message}`)
        .join('; ')}`,
    );
  return loadKey(parsed.data satisfies KeyFile);
}

/** The envelope's retryStrategy, if the answer is a v3 error; the body is read from a copy. */
async function retryStrategyOf(response: Response): Promise<RetryStrategy | undefined> {
  if (response.ok || !response.headers.get('content-type')?.includes('application/json')) return undefined;
  try {
    const body = (await response.clone().json()) as { error?: { retryStrategy?: unknown } };
    const strategy = body.error?.retryStrategy;
    return typeof strategy === 'string' ? (strategy as RetryStrategy) : undefined;
  } catch {
    return undefined;
  }
}

function sleep(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal.aborted) return reject(signal.reason);
    const timer = setTimeout(() => {
      signal.removeEventListener('abort', abort);
      resolve();
    }, ms);
    const abort = () => {
      clearTimeout(timer);
      reject(signal.reason);
    };
    signal.addEventListener('abort', abort, { once: true });
  });
}

/**
 * The fetch openapi-fetch sends through, after every middleware: the body is read once as the
 * bytes openapi-fetch serialised, and each attempt signs and sends exactly those bytes with a
 * fresh token (tokens are single use), the Idempotency-Key unchanged.
 */
function signingFetch(
  signer: V3RequestSigner,
  policy: RetryPolicy,
  send: (request: Request) => Promise<Response>,
): (request: Request) => Promise<Response> {
  return async (request) => {
    const body = request.body === null ? undefined : new Uint8Array(await request.arrayBuffer());
    const url = new URL(request.url);
    const idempotencyKey = request.headers.get('idempotency-key') ?? undefined;
    for (let attempt = 1; ; attempt++) {
      const headers = new Headers(request.headers);
      const signed = await signer.headers({
        method: request.method,
        pathAndQuery: `${url.pathname}${url.search}`,
        body,
        idempotencyKey,
      });
      for (const [name, value] of Object.entries(signed)) headers.set(name, value);
      let response: Response;
      try {
        response = await send(
          new Request(request.url, { method: request.method, headers, body, signal: request.signal }),
        );
      } catch (error) {
        if (request.signal.aborted) throw error;
        const delay = retryDelayMs(
          {
            attempt,
            method: request.method,
            hasIdempotencyKey: idempotencyKey !== undefined,
            outcome: { kind: 'network' },
          },
          policy,
          Date.now(),
        );
        if (delay === null) throw error;
        await sleep(delay, request.signal);
        continue;
      }
      const outcome = {
        kind: 'response' as const,
        status: response.status,
        retryStrategy: await retryStrategyOf(response),
        retryAfter: response.headers.get('retry-after'),
      };
      const delay = response.ok
        ? null
        : retryDelayMs(
            { attempt, method: request.method, hasIdempotencyKey: idempotencyKey !== undefined, outcome },
            policy,
            Date.now(),
          );
      if (delay === null) return response;
      await response.body?.cancel();
      await sleep(delay, request.signal);
    }
  };
}

/** A v3 client signing with `key`; see docs/v3-client.md. */
export function createClient(settings: ClientSettings): V3Client {
  const signer = new V3RequestSigner(loadKeyOf(settings.key), { issuer: settings.issuer ?? DEFAULT_JWT_ISSUERS[0] });
  const policy: RetryPolicy = { ...DEFAULT_RETRY_POLICY, ...settings.retry };
  if (!Number.isInteger(policy.maxAttempts) || policy.maxAttempts < 1)
    throw new RangeError(
      `retry.maxAttempts must be a whole number of at least 1 (1 turns retries off), not ${policy.maxAttempts}`,
    );
  const client = createFetchClient<paths>({
    baseUrl: settings.baseUrl,
    headers: settings.headers,
    fetch: signingFetch(signer, policy, settings.fetch ?? ((request) => globalThis.fetch(request))),
  });
  client.use(idempotencyKeys);

  async function* paginate<P extends ListPath>(
    path: P,
    init?: { readonly query?: ListQuery<P> },
  ): AsyncGenerator<ListRecord<P>> {
    let startingAfter: string | undefined;
    for (;;) {
      const query = { ...init?.query, ...(startingAfter === undefined ? {} : { startingAfter }) };
      // The path is one of ListPath's, whose GET takes these query parameters; the union is too wide for openapi-fetch's overloads.
      const get = client.GET as unknown as (
        path: string,
        init: { params: { query: Record<string, unknown> } },
      ) => Promise<{
        data?: { data: ListRecord<P>[]; pagination: components['schemas']['CursorPagination'] };
        error?: V3Error;
        response: Response;
      }>;
      const { data, error, response } = await get(path, { params: { query } });
      if (data === undefined) throw new V3ClientError(error, response);
      yield* data.data;
      if (!data.pagination.hasNext || data.pagination.nextCursor === null) return;
      startingAfter = data.pagination.nextCursor;
    }
  }

  return Object.assign(client, { paginate });
}
