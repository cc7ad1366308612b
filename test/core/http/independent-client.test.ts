/**
 * Interoperability: a client that knows only docs/contract.md#auth-tokens and
 * docs/contract.md#auth-v3-signature, signing with node:crypto directly (not through the project's
 * signer), gets 200 on a read and on a write.
 */
import { createPrivateKey } from 'node:crypto';

import { afterAll, beforeAll, expect, it } from 'vitest';

import type { KeyFile } from '../../../src/lib/keys/key-file.js';
import { makeJwt, signCanonical, standardToken } from '../../support/independent-signing.js';
import { OperationLog, withTestOperations } from '../../support/test-operations.js';
import { V3Harness } from '../../support/v3-harness.js';

let harness: V3Harness;
let keyFile: KeyFile;

beforeAll(async () => {
  harness = await V3Harness.start({ operations: withTestOperations(new OperationLog()) });
  // Only the key file as a client would download it: JSON with a PKCS#8 PEM.
  keyFile = JSON.parse(JSON.stringify((await harness.createKey({ mode: 'live' })).file)) as KeyFile;
});
afterAll(async () => harness?.close());

async function independentRequest(method: string, pathAndQuery: string, body?: string, idempotencyKey?: string) {
  const privateKey = createPrivateKey(keyFile.privateKey);
  const { header, payload } = standardToken({ keyName: keyFile.name, lifetimeSeconds: 60 });
  const jwt = makeJwt(header, payload, { kind: 'es256', key: privateKey });
  const bytes = body === undefined ? undefined : Buffer.from(body, 'utf8');
  const signature = signCanonical(privateKey, {
    method,
    pathAndQuery,
    nonce: String(header.nonce),
    idempotencyKey,
    body: bytes,
  });
  return harness.send({
    method,
    path: pathAndQuery,
    body: bytes,
    headers: {
      authorization: `Bearer ${jwt}`,
      'x-request-signature': signature,
      'content-type': bytes ? 'application/json' : undefined,
      'idempotency-key': idempotencyKey,
    },
  });
}

it('reads GET /v3/fx/pairs', async () => {
  const response = await independentRequest('GET', '/v3/fx/pairs');
  expect(response.status).toBe(200);
  expect(response.json<{ data: unknown[] }>().data).toHaveLength(42);
});

it('writes with a body, query string and Idempotency-Key, exactly as signed', async () => {
  const body = '{ "currency": "EUR",\n  "amount": "12.50" }';
  const response = await independentRequest('POST', '/v3/fx/test/echo', body, 'independent-client-1');
  expect(response.status).toBe(200);
  expect(response.json()).toMatchObject({ data: { amount: '12.50', currency: 'EUR', environment: 'live' } });
});

it('reads a path with a query string', async () => {
  const response = await independentRequest('GET', '/v3/fx/test/items/abc?expand=all');
  expect(response.status).toBe(200);
  expect(response.json()).toEqual({ data: { id: 'abc', expand: 'all' } });
});
