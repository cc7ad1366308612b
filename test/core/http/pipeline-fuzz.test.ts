/**
 * Property: whatever arrives (random methods, paths, headers, tokens, signatures and bodies,
 * some of them correctly signed), the v3 pipeline answers within a bound with a 2xx or a
 * well-formed v3 error of the catalog, and never with a 5xx.
 */
import fc from 'fast-check';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { z } from 'zod';

import { V3RequestSigner } from '../../../src/lib/auth/request-signer.js';
import { ERROR_CATALOG, ERROR_TYPES, isErrorCode, RETRY_STRATEGIES } from '../../../src/lib/errors/v3-error-catalog.js';
import type { LoadedKey } from '../../../src/lib/keys/key-file.js';
import { OperationLog, withTestOperations } from '../../support/test-operations.js';
import { TEST_ISSUER, V3Harness } from '../../support/v3-harness.js';

const RUNS = 1200;
const RESPONSE_BOUND_MS = 5_000;

let harness: V3Harness;
let keys: LoadedKey[];

beforeAll(async () => {
  harness = await V3Harness.start({
    operations: withTestOperations(new OperationLog()),
    core: { rateLimits: { reads: 1_000_000, writes: 1_000_000 } },
  });
  keys = [
    await harness.createKey({ mode: 'sandbox' }),
    await harness.createKey({ mode: 'live', scopes: ['view'] }),
    await harness.createKey({ mode: 'live', ipAllowlist: ['10.0.0.0/8'] }),
  ];
});
afterAll(async () => harness?.close());

const envelope = z
  .object({
    error: z
      .object({
        code: z.string(),
        type: z.enum(ERROR_TYPES),
        message: z.string().min(1),
        retryStrategy: z.enum(RETRY_STRATEGIES),
        details: z.record(z.string(), z.unknown()),
      })
      .strict(),
  })
  .strict();

const printable = (max: number) =>
  fc.string({
    unit: fc.constantFrom(
      ...' !#$%&()*+,-./0123456789:;<=>?@ABCDEFGHIJKLMNOPQRSTUVWXYZ[]^_`abcdefghijklmnopqrstuvwxyz{|}~',
    ),
    maxLength: max,
  });
const paths = fc.oneof(
  fc.constantFrom(
    '/v3/fx/pairs',
    '/v3/fx/test/echo',
    '/v3/fx/test/slow',
    '/v3/fx/test/items/x1',
    '/v3/fx/test/sandbox-only',
    '/v3/fx/nope',
    '/',
    '/v3',
  ),
  fc
    .tuple(fc.constantFrom('/v3/fx/pairs', '/v3/fx/test/echo', '/v3/fx/test/items/'), printable(40))
    .map(([p, q]) => `${p}?${encodeURIComponent(q)}=${encodeURIComponent(q)}`),
  fc.array(fc.stringMatching(/^[A-Za-z0-9%._~-]{0,12}$/), { maxLength: 5 }).map((segments) => `/${segments.join('/')}`),
);
const bodies = fc.oneof(
  fc.constant(undefined),
  fc.constant('{"amount":"10.00","currency":"USD"}'),
  fc.json().map((json) => json),
  fc
    .record({
      amount: fc.oneof(fc.string(), fc.double().map(String), fc.constant('1.123456789')),
      currency: fc.string({ maxLength: 5 }),
    })
    .map((o) => JSON.stringify(o)),
  fc.uint8Array({ maxLength: 300 }).map((bytes) => Buffer.from(bytes).toString('latin1')),
  fc.integer({ min: 8000, max: 9000 }).map((n) => 'x'.repeat(n)),
);
const optionalHeader = (arb: fc.Arbitrary<string>) => fc.option(arb, { nil: undefined });

const randomRequests = fc.record({
  method: fc.constantFrom('GET', 'POST', 'PUT', 'DELETE', 'PATCH', 'HEAD', 'OPTIONS'),
  path: paths,
  body: bodies,
  signWith: fc.option(fc.integer({ min: 0, max: 2 }), { nil: undefined }),
  tamper: fc.constantFrom('none', 'signature', 'token', 'path'),
  headers: fc.record({
    authorization: optionalHeader(
      fc.oneof(
        printable(200),
        printable(120).map((t) => `Bearer ${t}`),
        fc.constant('Bearer a.b.c'),
      ),
    ),
    'x-request-signature': optionalHeader(fc.oneof(printable(100), fc.constant('A'.repeat(86)))),
    'content-type': optionalHeader(
      fc.constantFrom('application/json', 'text/plain', 'application/json; charset=utf-8', 'multipart/form-data', ''),
    ),
    'idempotency-key': optionalHeader(printable(300)),
    'x-app-mode': optionalHeader(fc.constantFrom('SANDBOX', 'LIVE', 'sandbox', 'nonsense', '')),
    'x-request-id': optionalHeader(printable(140)),
  }),
});

/** Signed requests to real operations, so that a good share gets past authentication. */
const wellFormedRequests = fc
  .record({
    call: fc.constantFrom(
      { method: 'GET', path: '/v3/fx/pairs' },
      { method: 'GET', path: '/v3/fx/test/items/xyz?expand=all' },
      { method: 'POST', path: '/v3/fx/test/echo' },
    ),
    body: fc.oneof(
      fc
        .record({ amount: fc.stringMatching(/^[0-9]{1,6}(\.[0-9]{1,8})?$/), currency: fc.constantFrom('USD', 'EUR') })
        .map((o) => JSON.stringify(o)),
      bodies,
    ),
    signWith: fc.integer({ min: 0, max: 2 }),
    idempotencyKey: fc.stringMatching(/^[A-Za-z0-9._:-]{1,40}$/),
  })
  .map(({ call, body, signWith, idempotencyKey }) => ({
    method: call.method,
    path: call.path,
    body,
    signWith,
    tamper: 'none' as const,
    headers: { 'idempotency-key': call.method === 'POST' ? idempotencyKey : undefined } as Record<
      string,
      string | undefined
    >,
  }));

const requests = fc.oneof(randomRequests, wellFormedRequests);

it(`answers ${RUNS} random requests with a 2xx or a well-formed 4xx v3 error, never a 5xx or a hang`, async () => {
  const seen = new Map<number, number>();
  await fc.assert(
    fc.asyncProperty(requests, async (input) => {
      const headers: Record<string, string | undefined> = { ...input.headers };
      const bodyAllowed = !['GET', 'HEAD'].includes(input.method);
      const body = bodyAllowed ? input.body : undefined;
      if (input.signWith !== undefined) {
        const key = keys[input.signWith]!;
        const signer = new V3RequestSigner(key, { issuer: TEST_ISSUER });
        Object.assign(
          headers,
          await signer.headers({
            method: input.method,
            pathAndQuery: input.path,
            body,
            idempotencyKey: headers['idempotency-key'],
          }),
        );
        if (input.tamper === 'signature') headers['x-request-signature'] = 'B'.repeat(86);
        if (input.tamper === 'token') headers.authorization = `${headers.authorization}x`;
      }
      const path = input.tamper === 'path' ? `${input.path}/x` : input.path;
      const started = Date.now();
      const response = await harness.send({ method: input.method, path, body, headers });
      expect(Date.now() - started).toBeLessThan(RESPONSE_BOUND_MS);
      seen.set(response.status, (seen.get(response.status) ?? 0) + 1);
      expect(response.status, response.text).toBeLessThan(500);
      expect(response.headers['x-request-id']).toBeTruthy();
      expect(response.headers['ratelimit-limit']).toBeTruthy();
      if (response.status < 300 || input.method === 'HEAD') return;
      const parsed = envelope.parse(response.json());
      expect(isErrorCode(parsed.error.code), parsed.error.code).toBe(true);
      const row = ERROR_CATALOG[parsed.error.code as keyof typeof ERROR_CATALOG];
      expect(row.status).toBe(response.status);
      expect(row.type).toBe(parsed.error.type);
      expect(row.details.safeParse(parsed.error.details).success, JSON.stringify(parsed.error.details)).toBe(true);
    }),
    { numRuns: RUNS },
  );
  // The generator must reach every stage, past authentication too, or the property says little.
  for (const status of [200, 400, 401, 403, 404, 405])
    expect(seen.get(status) ?? 0, `status ${status}`).toBeGreaterThanOrEqual(5);
}, 240_000);
