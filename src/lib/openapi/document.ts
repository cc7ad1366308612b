/**
 * What the OpenAPI documents of every generation share: the document type, the OpenAPI version,
 * the serialisation written to disk and served, operation ids, the headers every answer carries
 * (docs/contract.md#v3-responses, #legacy-response-headers) and the request headers both
 * generations read. The v3 document is built in src/core/openapi/, the legacy ones in
 * src/gateway/openapi/; neither imports the other. Part of lib: imports no part.
 */
import type { oas31 } from 'zod-openapi';

import { IDEMPOTENCY_KEY_PATTERN } from '../idempotency-key.js';
import { REQUEST_ID_PATTERN } from '../request-id.js';

export type OpenApiDocument = oas31.OpenAPIObject;
export type OpenApiOperation = oas31.OperationObject;
export type OpenApiSchema = oas31.SchemaObject;

export const OPENAPI_VERSION = '3.1.0';

export const GENERATIONS = ['v3', 'v2', 'v1'] as const;
export type Generation = (typeof GENERATIONS)[number];

/** Where each generation's document is served, without authentication. */
export function documentPath(generation: Generation): string {
  return `/${generation}/openapi.json`;
}

/** The bytes written to docs/openapi/ and served: two-space JSON, keys in the order built, a final newline. */
export function serializeDocument(document: OpenApiDocument): string {
  return `${JSON.stringify(document, null, 2)}\n`;
}

/**
 * A stable operationId from the method and path: `POST /v3/fx/trades/{id}/reverse-quote` is
 * `postTradesByIdReverseQuote`. Ids must be unique in a document, and a path with its method is.
 */
export function operationIdOf(method: string, path: string, dropSegments: number): string {
  const words = path
    .split('/')
    .filter((segment) => segment !== '')
    .slice(dropSegments)
    .flatMap((segment) => {
      const param = /^[{:]([A-Za-z0-9_]+)\}?$/.exec(segment);
      return param ? ['by', param[1]!] : segment.split(/[-_.]/);
    });
  return [method.toLowerCase(), ...words.map((word) => word.charAt(0).toUpperCase() + word.slice(1))].join('');
}

/** `/v3/fx/trades/:id` (fastify) to `/v3/fx/trades/{id}` (OpenAPI). */
export function openApiPath(fastifyPath: string): string {
  return fastifyPath.replace(/:([A-Za-z0-9_]+)/g, '{$1}');
}

const string = (description: string, extra: Record<string, unknown> = {}): oas31.HeaderObject => ({
  description,
  schema: { type: 'string', ...extra },
});
const integer = (description: string): oas31.HeaderObject => ({ description, schema: { type: 'integer', minimum: 0 } });
/** A header every answer of the generation carries, the answers the HTTP server gives before routing included. */
const always = (header: oas31.HeaderObject): oas31.HeaderObject => ({ ...header, required: true });

/** Response headers, by component name; each document takes the ones its generation sends. */
export const RESPONSE_HEADERS = {
  RequestId: always(
    string("The client's X-Request-Id when well formed, else a generated req_ id.", {
      pattern: REQUEST_ID_PATTERN.source,
    }),
  ),
  TraceId: always(
    string('The trace id: 32 hex, continuing traceparent when one was sent.', { pattern: '^[0-9a-f]{32}$' }),
  ),
  RequestTimestamp: always(string('When the request arrived.', { format: 'date-time' })),
  RateLimitLimit: integer("The rate-limit cell's limit."),
  RateLimitRemaining: integer('Requests left in the cell.'),
  RateLimitReset: integer('Seconds until the cell is full again.'),
  RetryAfter: integer('Seconds to wait before retrying (at least 1).'),
  IdempotencyReplayed: string('true when this success is the replay of a stored answer; false on a first success.', {
    enum: ['true', 'false'],
  }),
  Allow: string('The methods the path serves.'),
  ServerTiming: string("upstream;dur=<ms>, gateway;dur=<ms>: time waiting on v3, and the gateway's own time."),
  Deprecation: string('When the generation was deprecated, as @<unix seconds>.'),
  Sunset: string('When the generation is retired, as an HTTP date.'),
  Link: string('The migration guide, rel="deprecation" and rel="sunset".'),
} as const satisfies Record<string, oas31.HeaderObject>;

export type ResponseHeaderName = keyof typeof RESPONSE_HEADERS;

/** The wire name of each response header component. */
export const RESPONSE_HEADER_NAMES: Readonly<Record<ResponseHeaderName, string>> = {
  RequestId: 'X-Request-Id',
  TraceId: 'X-Trace-Id',
  RequestTimestamp: 'X-Request-Timestamp',
  RateLimitLimit: 'RateLimit-Limit',
  RateLimitRemaining: 'RateLimit-Remaining',
  RateLimitReset: 'RateLimit-Reset',
  RetryAfter: 'Retry-After',
  IdempotencyReplayed: 'Idempotency-Replayed',
  Allow: 'Allow',
  ServerTiming: 'Server-Timing',
  Deprecation: 'Deprecation',
  Sunset: 'Sunset',
  Link: 'Link',
};

/** A response's headers, as references to the components. */
export function headerRefs(names: readonly ResponseHeaderName[]): Record<string, oas31.ReferenceObject> {
  return Object.fromEntries(
    names.map((name) => [RESPONSE_HEADER_NAMES[name], { $ref: `#/components/headers/${name}` }]),
  );
}

/** The components.headers section holding the headers a document refers to. */
export function headerComponents(names: readonly ResponseHeaderName[]): Record<string, oas31.HeaderObject> {
  return Object.fromEntries(names.map((name) => [name, RESPONSE_HEADERS[name]]));
}

/** Request header parameters both generations read. */
export function idempotencyKeyParameter(required: boolean, description: string): oas31.ParameterObject {
  return {
    name: 'Idempotency-Key',
    in: 'header',
    required,
    description,
    schema: { type: 'string', pattern: IDEMPOTENCY_KEY_PATTERN.source },
  };
}

export const REQUEST_ID_PARAMETER: oas31.ParameterObject = {
  name: 'X-Request-Id',
  in: 'header',
  required: false,
  description: 'Your id for the request, echoed in the answer; 1 to 128 characters of A-Z a-z 0-9 . _ : -.',
  schema: { type: 'string', pattern: REQUEST_ID_PATTERN.source },
};

/** A case-insensitive match of exact words, in the ECMA-262 dialect JSON Schema patterns use (which has no `i` flag). */
export function anyCasePattern(words: readonly string[]): string {
  const letters = (word: string) =>
    [...word].map((c) => (/[a-z]/i.test(c) ? `[${c.toUpperCase()}${c.toLowerCase()}]` : c)).join('');
  return `^(${words.map(letters).join('|')})$`;
}
