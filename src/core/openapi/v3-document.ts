/**
 * The v3 OpenAPI 3.1 document, generated from the code: each operation's declaration (method,
 * path, scope, summary, the zod schemas of its query, body and success body) and the error
 * catalog (status, type, retry strategy and details schema of every code the operation may
 * answer: the pipeline's, by step, and its handler's). zod-openapi turns the zod schemas into
 * JSON Schema 2020-12. Part of the core; imports lib and the core's HTTP declarations only.
 */
import { z } from 'zod';
import {
  createDocument,
  type ZodOpenApiObject,
  type ZodOpenApiOperationObject,
  type ZodOpenApiResponsesObject,
} from 'zod-openapi';

import {
  ERROR_CATALOG,
  type ErrorCode,
  type RetryStrategy,
  retryStrategyFor,
} from '../../lib/errors/v3-error-catalog.js';
import {
  anyCasePattern,
  documentPath,
  headerComponents,
  headerRefs,
  idempotencyKeyParameter,
  OPENAPI_VERSION,
  type OpenApiDocument,
  openApiPath,
  operationIdOf,
  REQUEST_ID_PARAMETER,
  type ResponseHeaderName,
} from '../../lib/openapi/document.js';
import type { Operation } from '../http/operation.js';
import { DOCUMENT_ERROR_CODES, operationErrorCodes } from '../http/pipeline-errors.js';
import { isWriteMethod } from '../http/request-state.js';
import { requiresIdempotencyKey } from '../http/v3-idempotency.js';

/** The operations' groups, by the first path segment below `/v3/fx/`, in the reference's order. */
const TAGS = {
  pairs: { name: 'Pairs', description: 'The tradable currency pairs and their trade limits.' },
  quotes: { name: 'Quotes', description: 'Prices locked for one trade.' },
  trades: { name: 'Trades', description: 'Executing quotes, listing trades, reversing and settling them.' },
  exposure: {
    name: 'Balances and exposure',
    description: 'What the book holds in each currency, and what its open trades commit of its credit line.',
  },
  balances: { name: 'Balances and exposure', description: '' },
  deposits: { name: 'Deposits', description: 'Money arriving in the book.' },
  'withdrawal-accounts': {
    name: 'Withdrawal accounts',
    description: 'Bank accounts and wallet addresses to withdraw to.',
  },
  withdrawals: { name: 'Withdrawals', description: 'Money leaving the book.' },
  'webhook-endpoints': { name: 'Webhook endpoints', description: "Where the book's events are delivered." },
  sandbox: { name: 'Sandbox', description: 'Simulations that reach every state, in sandbox mode only.' },
} as const satisfies Record<string, { name: string; description: string }>;

const V3_PREFIX = '/v3/fx/';

const INTRODUCTION = [
  'The native v3 API of fxgate: FX quotes and trades, balances and exposure, deposits, withdrawals and webhook endpoints.',
  '',
  '- Every request carries `Authorization: Bearer <JWT>` (ES256, single use, at most 60 s) and `X-Request-Signature` over the method, path and query, nonce, Idempotency-Key and body hash.',
  '- Every `POST` takes an `Idempotency-Key`; the first completed answer is replayed for 24 hours.',
  '- `X-App-Mode: SANDBOX` selects the sandbox book; absent means live.',
  "- Amounts are decimal strings; ids carry their kind's prefix; timestamps are ISO 8601 UTC with milliseconds.",
  '- Every error is `{"error": {code, type, message, retryStrategy, details}}`; `code`, `type` and `retryStrategy` are open vocabularies: treat an unknown type as INTERNAL_ERROR and an unknown strategy as TERMINAL.',
  '- v3 may add fields to a record and values to an enumeration; clients ignore what they do not know.',
  '- Any other path under /v3 is 404 ROUTE_NOT_FOUND; a known path with another method is 405 METHOD_NOT_ALLOWED with `Allow`.',
].join('\n');

/** Every answer's headers; rate-limit headers are absent only on answers the HTTP server gives before routing. */
const ALWAYS: readonly ResponseHeaderName[] = ['RequestId', 'TraceId', 'RequestTimestamp'];
const RATE_LIMIT: readonly ResponseHeaderName[] = ['RateLimitLimit', 'RateLimitRemaining', 'RateLimitReset'];
const HEADER_COMPONENTS: readonly ResponseHeaderName[] = [
  ...ALWAYS,
  ...RATE_LIMIT,
  'RetryAfter',
  'IdempotencyReplayed',
];

/** The reason phrase of each status an operation may answer, for the response descriptions. */
const STATUS_TEXT: Readonly<Record<number, string>> = {
  400: 'Bad request',
  401: 'Not authenticated',
  403: 'Not allowed',
  404: 'Not found',
  408: 'Request timeout',
  409: 'Conflict',
  413: 'Payload too large',
  422: 'Business rule broken',
  428: 'Idempotency-Key required',
  429: 'Rate limited',
  431: 'Request headers too large',
  500: 'Internal error',
  503: 'Unavailable',
};

/** The envelope of one code with one retry strategy, a component named after both when the code has two. */
function errorEnvelope(code: ErrorCode, strategy: RetryStrategy, split: boolean) {
  const row = ERROR_CATALOG[code];
  return z
    .object({
      error: z.object({
        code: z.literal(code),
        type: z.literal(row.type),
        message: z.string().meta({ description: 'Human-readable; not stable, never to be parsed.' }),
        retryStrategy: z.literal(strategy),
        details: row.details,
      }),
    })
    .meta({ id: split ? `Error_${code}_${strategy}` : `Error_${code}`, description: `${code}: ${row.message}` });
}

/** One envelope schema per code and strategy, made once: zod's registry holds each component id once per process. */
const ENVELOPES = new Map<string, ReturnType<typeof errorEnvelope>>();

function envelopeOf(code: ErrorCode, isWrite: boolean) {
  const strategy = retryStrategyFor(code, isWrite);
  const split = typeof ERROR_CATALOG[code].retryStrategy !== 'string';
  const key = `${code}/${strategy}`;
  let envelope = ENVELOPES.get(key);
  if (envelope === undefined) {
    envelope = errorEnvelope(code, strategy, split);
    ENVELOPES.set(key, envelope);
  }
  return envelope;
}

function tagOf(path: string) {
  const segment = path.slice(V3_PREFIX.length).split('/', 1)[0]!;
  if (!Object.hasOwn(TAGS, segment))
    throw new Error(`${path}: no tag is declared for /v3/fx/${segment} (src/core/openapi/v3-document.ts)`);
  return TAGS[segment as keyof typeof TAGS];
}

/** The error responses of these codes: one per status, each the union of its codes' envelopes. */
function errorResponses(codes: readonly ErrorCode[], isWrite: boolean): ZodOpenApiResponsesObject {
  const byStatus = new Map<number, ErrorCode[]>();
  for (const code of codes) {
    const { status } = ERROR_CATALOG[code];
    byStatus.set(status, [...(byStatus.get(status) ?? []), code]);
  }
  const responses: ZodOpenApiResponsesObject = {};
  for (const [status, codes] of [...byStatus].sort(([a], [b]) => a - b)) {
    const envelopes = codes.map((code) => envelopeOf(code, isWrite));
    const headers: ResponseHeaderName[] = [
      ...ALWAYS,
      ...RATE_LIMIT,
      ...(status === 409 || status === 429 ? (['RetryAfter'] as const) : []),
    ];
    responses[String(status) as `${1 | 2 | 3 | 4 | 5}${string}`] = {
      description: `${STATUS_TEXT[status] ?? 'Error'}: ${codes.join(', ')}.`,
      headers: headerRefs(headers),
      content: { 'application/json': { schema: envelopes.length === 1 ? envelopes[0]! : z.union(envelopes) } },
    };
  }
  return responses;
}

/** An operation without a body schema accepts nothing, an empty body, or `{}` (docs/contract.md#v3-requests). */
const NO_PARAMETERS = z
  .object({})
  .strict()
  .meta({ description: 'This operation takes no parameters: send no body, or `{}`.' });

function describe(operation: Operation): string {
  const lines = [`Scope: \`${operation.scope}\`.`];
  if (requiresIdempotencyKey(operation.method)) lines.push('Requires an `Idempotency-Key`.');
  if (operation.sandboxOnly)
    lines.push('Sandbox mode only (`X-App-Mode: SANDBOX`); live is 403 SANDBOX_MODE_REQUIRED.');
  return lines.join(' ');
}

function operationObject(operation: Operation): ZodOpenApiOperationObject {
  const path = openApiPath(operation.path);
  const params = [...path.matchAll(/\{([A-Za-z0-9_]+)\}/g)].map((match) => match[1]!);
  const isWrite = isWriteMethod(operation.method);
  const successHeaders: ResponseHeaderName[] = [
    ...ALWAYS,
    ...RATE_LIMIT,
    ...(requiresIdempotencyKey(operation.method) ? (['IdempotencyReplayed'] as const) : []),
  ];
  const body = operation.body ?? (isWrite ? NO_PARAMETERS : undefined);
  return {
    operationId: operationIdOf(operation.method, path, 2),
    summary: operation.summary,
    description: describe(operation),
    tags: [tagOf(path).name],
    security: [{ bearerToken: [operation.scope], requestSignature: [] }],
    parameters: [
      ...(requiresIdempotencyKey(operation.method)
        ? [
            idempotencyKeyParameter(
              true,
              'Required on every POST: 1 to 255 characters of A-Z a-z 0-9 - _ . :, unique per logical operation.',
            ),
          ]
        : []),
      { $ref: '#/components/parameters/AppMode' },
      { $ref: '#/components/parameters/RequestId' },
      { $ref: '#/components/parameters/Traceparent' },
    ],
    requestParams: {
      ...(params.length > 0
        ? {
            path: z.object(
              Object.fromEntries(
                params.map((name) => [
                  name,
                  z.string().meta({
                    description:
                      "The id; one that is malformed, of another kind or of another book is the resource's 404.",
                  }),
                ]),
              ),
            ),
          }
        : {}),
      ...(operation.query ? { query: operation.query as z.ZodObject } : {}),
    },
    ...(body
      ? {
          requestBody: {
            required: !(operation.body === undefined || operation.body.safeParse(undefined).success),
            content: { 'application/json': { schema: body } },
          },
        }
      : {}),
    responses: {
      '200': {
        description: operation.summary,
        headers: headerRefs(successHeaders),
        content: { 'application/json': { schema: operation.response } },
      },
      ...errorResponses(operationErrorCodes(operation), isWrite),
    },
  };
}

/** The document served at /v3/openapi.json, itself part of the v3 surface. */
function documentOperation(): ZodOpenApiOperationObject {
  return {
    operationId: 'getOpenapiJson',
    summary: 'Retrieve this OpenAPI document',
    description: 'No authentication.',
    tags: ['Reference'],
    security: [],
    responses: {
      '200': {
        description: 'The v3 OpenAPI 3.1 document.',
        headers: headerRefs(ALWAYS),
        content: { 'application/json': { schema: { type: 'object', description: 'An OpenAPI 3.1 document.' } } },
      },
      ...errorResponses(DOCUMENT_ERROR_CODES, false),
    },
  };
}

/** The v3 document of these operations (the core's own, or a test app's). */
export function buildV3Document(operations: readonly Operation[]): OpenApiDocument {
  const paths: NonNullable<ZodOpenApiObject['paths']> = {};
  for (const operation of operations) {
    const path = openApiPath(operation.path);
    paths[path] = { ...paths[path], [operation.method.toLowerCase()]: operationObject(operation) };
  }
  paths[documentPath('v3')] = { get: documentOperation() };
  const tagNames = new Set(operations.map((operation) => tagOf(openApiPath(operation.path)).name));
  const tags = [
    ...new Map(
      Object.values(TAGS)
        .filter((tag) => tag.description !== '' && tagNames.has(tag.name))
        .map((tag) => [tag.name, tag]),
    ).values(),
  ];
  return createDocument({
    openapi: OPENAPI_VERSION,
    info: { title: 'fxgate v3', version: '3', description: INTRODUCTION, license: { name: 'UNLICENSED' } },
    servers: [{ url: '/', description: 'The host that serves this document.' }],
    tags: [...tags, { name: 'Reference', description: 'This document.' }],
    paths,
    components: {
      securitySchemes: {
        bearerToken: {
          type: 'http',
          scheme: 'bearer',
          bearerFormat: 'JWT',
          description:
            'An ES256 JWT signed with the API key: kid and sub the key name, a 16-byte hex nonce, aud ["developer-api"], exp - iat at most 60 s, good for one request. The scopes listed are the key scopes the operation needs.',
        },
        requestSignature: {
          type: 'apiKey',
          in: 'header',
          name: 'X-Request-Signature',
          description:
            'base64url (86 characters) of the ECDSA P-256 / SHA-256 signature, with the same key, over METHOD, path and query, the token nonce, the Idempotency-Key (or empty) and the hex SHA-256 of the body bytes, joined by newlines.',
        },
      },
      parameters: {
        AppMode: {
          name: 'X-App-Mode',
          in: 'header',
          required: false,
          description: 'SANDBOX or LIVE, any case; absent means live.',
          schema: { type: 'string', pattern: anyCasePattern(['SANDBOX', 'LIVE']) },
        },
        RequestId: REQUEST_ID_PARAMETER,
        Traceparent: {
          name: 'traceparent',
          in: 'header',
          required: false,
          description: 'A W3C trace context; its trace id is continued in X-Trace-Id.',
          schema: { type: 'string' },
        },
      },
      headers: headerComponents(HEADER_COMPONENTS),
    },
  }) as OpenApiDocument;
}
