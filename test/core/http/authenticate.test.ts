/**
 * Step 4, authentication and authorisation: every 401 and 403 code the pipeline raises, in the
 * order of docs/contract.md#auth-check-order.
 */
import { generateKeyPairSync } from 'node:crypto';

import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { V3RequestSigner } from '../../../src/lib/auth/request-signer.js';
import type { LoadedKey } from '../../../src/lib/keys/key-file.js';
import { makeJwt, signCanonical, standardToken, type TokenSigner } from '../../support/independent-signing.js';
import { OperationLog, withTestOperations } from '../../support/test-operations.js';
import { TEST_ISSUER, TEST_ISSUERS, type TestResponse, V3Harness } from '../../support/v3-harness.js';

let harness: V3Harness;
let key: LoadedKey;

beforeAll(async () => {
  // Tokens signed up to a minute before the harness started (the skew tests) must pass the
  // single-use rule, which is tested on a store of its own below.
  harness = await V3Harness.start({
    operations: withTestOperations(new OperationLog()),
    nonceEpochMs: Date.now() - 120_000,
  });
  key = await harness.createKey({ scopes: ['view', 'trade'], mode: 'sandbox' });
});
afterAll(async () => harness?.close());

type Token = ReturnType<typeof standardToken>;

function expectError(response: TestResponse, status: number, code: string, details: Record<string, unknown> = {}) {
  expect({ status: response.status, body: response.json() }).toEqual({
    status,
    body: {
      error: {
        code,
        type: expect.any(String),
        message: expect.any(String),
        retryStrategy: expect.any(String),
        details,
      },
    },
  });
}

/** Sends GET /v3/fx/pairs with a hand-made token, correctly signed unless told otherwise; to the file's harness unless told. */
async function sendWithToken(
  edit: (token: Token) => void,
  options: {
    signer?: TokenSigner;
    signatureKey?: LoadedKey['privateKey'];
    signatureHeader?: string | undefined;
    on?: { harness: V3Harness; key: LoadedKey };
  } = {},
) {
  const target = options.on ?? { harness, key };
  const token = standardToken({ keyName: target.key.file.name });
  edit(token);
  const jwt = makeJwt(token.header, token.payload, options.signer ?? { kind: 'es256', key: target.key.privateKey });
  const signature = signCanonical(options.signatureKey ?? target.key.privateKey, {
    method: 'GET',
    pathAndQuery: '/v3/fx/pairs',
    nonce: String(token.header.nonce),
  });
  return target.harness.send({
    path: '/v3/fx/pairs',
    headers: {
      authorization: `Bearer ${jwt}`,
      'x-request-signature': 'signatureHeader' in options ? options.signatureHeader : signature,
      'x-app-mode': 'SANDBOX',
    },
  });
}

describe('bearer token', () => {
  it('AUTH_TOKEN_MISSING without Authorization', async () => {
    expectError(await harness.send({ path: '/v3/fx/pairs' }), 401, 'AUTH_TOKEN_MISSING');
  });

  it('AUTH_TOKEN_INVALID for another scheme or a token that is not a JWT', async () => {
    expectError(
      await harness.send({ path: '/v3/fx/pairs', headers: { authorization: 'Basic dXNlcjpwYXNz' } }),
      401,
      'AUTH_TOKEN_INVALID',
    );
    expectError(
      await harness.send({ path: '/v3/fx/pairs', headers: { authorization: 'Bearer not.a.jwt' } }),
      401,
      'AUTH_TOKEN_INVALID',
    );
  });

  it('AUTH_TOKEN_INVALID for alg none and for HS256 keyed with the public key', async () => {
    expectError(
      await sendWithToken((t) => (t.header.alg = 'none'), { signer: { kind: 'none' } }),
      401,
      'AUTH_TOKEN_INVALID',
    );
    const publicPem = Buffer.from(key.file.publicKey);
    expectError(
      await sendWithToken((t) => (t.header.alg = 'HS256'), { signer: { kind: 'hs256', secret: publicPem } }),
      401,
      'AUTH_TOKEN_INVALID',
    );
  });

  it('AUTH_TOKEN_INVALID for a token signed by another key', async () => {
    const other = generateKeyPairSync('ec', { namedCurve: 'P-256' }).privateKey;
    expectError(await sendWithToken(() => {}, { signer: { kind: 'es256', key: other } }), 401, 'AUTH_TOKEN_INVALID');
  });

  it.each<[string, (t: Token) => void]>([
    ['wrong audience', (t) => (t.payload.aud = ['someone-else'])],
    ['audience as a string', (t) => (t.payload.aud = 'developer-api')],
    ['wrong issuer', (t) => (t.payload.iss = 'evil')],
    ['sub other than kid', (t) => (t.payload.sub = 'org/x/apiKey/y')],
    ['lifetime over 60 s', (t) => (t.payload.exp = Number(t.payload.iat) + 61)],
    ['nbf in the future', (t) => (t.payload.nbf = Number(t.payload.iat) + 30)],
    [
      'iat in the future',
      (t) => {
        t.payload.iat = Number(t.payload.iat) + 30;
        t.payload.exp = Number(t.payload.iat) + 30;
      },
    ],
    ['missing exp', (t) => delete t.payload.exp],
    ['nonce not 32 hex', (t) => (t.header.nonce = 'abc')],
    ['missing nonce', (t) => delete t.header.nonce],
    ['typ other than JWT', (t) => (t.header.typ = 'at+jwt')],
    ['missing typ', (t) => delete t.header.typ],
    ['typ as a media type', (t) => (t.header.typ = 'application/jwt')],
  ])('AUTH_TOKEN_INVALID for %s', async (_name, edit) => {
    expectError(await sendWithToken(edit), 401, 'AUTH_TOKEN_INVALID');
  });

  it.each(['jwt', 'Jwt'])('accepts typ %s: a media type name is compared without case', async (typ) => {
    expect((await sendWithToken((t) => (t.header.typ = typ))).status).toBe(200);
  });

  it("accepts a token with any configured issuer, the legacy service's name included", async () => {
    expect(TEST_ISSUERS).toEqual(['fx-service', 'openfx']);
    for (const iss of TEST_ISSUERS) expect((await sendWithToken((t) => (t.payload.iss = iss))).status).toBe(200);
  });

  it.each(['OpenFX', 'fx-service,openfx', ''])('AUTH_TOKEN_INVALID for an issuer not on the list: %j', async (iss) => {
    expectError(await sendWithToken((t) => (t.payload.iss = iss)), 401, 'AUTH_TOKEN_INVALID');
  });

  it('accepts a token of exactly 60 s lifetime', async () => {
    const response = await sendWithToken((t) => (t.payload.exp = Number(t.payload.iat) + 60));
    expect(response.status).toBe(200);
  });

  it('AUTH_TOKEN_EXPIRED for a token past exp plus the 5 s skew', async () => {
    const past = Math.floor(Date.now() / 1000) - 100;
    const response = await sendWithToken((t) => {
      t.payload.iat = past;
      t.payload.nbf = past;
      t.payload.exp = past + 30;
    });
    expectError(response, 401, 'AUTH_TOKEN_EXPIRED');
  });

  it('tolerates a few seconds of clock skew on exp', async () => {
    const now = Math.floor(Date.now() / 1000);
    const response = await sendWithToken((t) => {
      t.payload.iat = now - 30;
      t.payload.nbf = now - 30;
      t.payload.exp = now - 3;
    });
    expect(response.status).toBe(200);
  });

  it('AUTH_TOKEN_INVALID when a token is used twice', async () => {
    const signer = new V3RequestSigner(key, { issuer: TEST_ISSUER });
    const headers = await signer.headers({ method: 'GET', pathAndQuery: '/v3/fx/pairs' });
    expect((await harness.send({ path: '/v3/fx/pairs', headers })).status).toBe(200);
    expectError(await harness.send({ path: '/v3/fx/pairs', headers }), 401, 'AUTH_TOKEN_INVALID');
  });
});

describe('single use across a reset of the nonce store', () => {
  let reset: V3Harness;
  let resetKey: LoadedKey;
  /** Before the harness and its store exist: what a client signed before the store was (re)made. */
  let startedAt: number;
  beforeAll(async () => {
    startedAt = Date.now();
    reset = await V3Harness.start({ operations: withTestOperations(new OperationLog()) });
    resetKey = await reset.createKey({ scopes: ['view'], mode: 'sandbox' });
  });
  afterAll(async () => reset?.close());

  it('AUTH_TOKEN_INVALID for a token signed in a second before the store began, though its nonce is new; then it is spent', async () => {
    const before = Math.floor(startedAt / 1000) - 1;
    const token = standardToken({ keyName: resetKey.file.name, nowSeconds: before, lifetimeSeconds: 60 });
    const send = () =>
      sendWithToken(
        (t) => {
          t.header = token.header;
          t.payload = token.payload;
        },
        { on: { harness: reset, key: resetKey } },
      );
    const refused = await send();
    expectError(refused, 401, 'AUTH_TOKEN_INVALID');
    expect(refused.json<{ error: { message: string } }>().error.message).toBe(
      'The bearer token was signed before the replay store was reset; sign a new one.',
    );
    const again = await send();
    expectError(again, 401, 'AUTH_TOKEN_INVALID');
    expect(again.json<{ error: { message: string } }>().error.message).toBe(
      'The bearer token was already used; sign a new one per request.',
    );
  });

  it('accepts a token signed since, at once', async () => {
    const signer = new V3RequestSigner(resetKey, { issuer: TEST_ISSUER });
    const headers = await signer.headers({ method: 'GET', pathAndQuery: '/v3/fx/pairs' });
    expect((await reset.send({ path: '/v3/fx/pairs', headers: { ...headers, 'x-app-mode': 'SANDBOX' } })).status).toBe(
      200,
    );
  });
});

describe('API key', () => {
  it('AUTH_API_KEY_MISSING when the token names no kid', async () => {
    expectError(await sendWithToken((t) => delete t.header.kid), 401, 'AUTH_API_KEY_MISSING');
  });

  it('AUTH_API_KEY_INVALID for an unknown kid', async () => {
    const unknown = 'org/00000000-0000-7000-8000-000000000000/apiKey/00000000-0000-7000-8000-000000000001';
    const response = await sendWithToken((t) => {
      t.header.kid = unknown;
      t.payload.sub = unknown;
    });
    expectError(response, 401, 'AUTH_API_KEY_INVALID');
  });

  it('AUTH_API_KEY_INVALID once the key is revoked', async () => {
    const doomed = await harness.createKey({ scopes: ['view'], mode: 'live' });
    expect((await harness.signed({ key: doomed, path: '/v3/fx/pairs' })).status).toBe(200);
    expect(await harness.registry.revoke(doomed.file.name)).toBe(true);
    expectError(await harness.signed({ key: doomed, path: '/v3/fx/pairs' }), 401, 'AUTH_API_KEY_INVALID');
  });
});

describe('request signature', () => {
  it('SIGNATURE_MISSING without X-Request-Signature', async () => {
    const response = await harness.signed({ key, path: '/v3/fx/pairs', headers: { 'x-request-signature': undefined } });
    expectError(response, 401, 'AUTH_TOKEN_INVALID_CONFIG', { reason: 'SIGNATURE_MISSING' });
  });

  it('SIGNATURE_MALFORMED for a signature that is not 64 bytes of base64url', async () => {
    for (const bad of ['abc', Buffer.alloc(72).toString('base64url'), `${'A'.repeat(85)}=`]) {
      const response = await harness.signed({ key, path: '/v3/fx/pairs', headers: { 'x-request-signature': bad } });
      expectError(response, 401, 'AUTH_TOKEN_INVALID_CONFIG', { reason: 'SIGNATURE_MALFORMED' });
    }
  });

  it('SIGNATURE_INVALID when the signature was made by another key', async () => {
    const other = generateKeyPairSync('ec', { namedCurve: 'P-256' }).privateKey;
    expectError(await sendWithToken(() => {}, { signatureKey: other }), 401, 'AUTH_TOKEN_INVALID_CONFIG', {
      reason: 'SIGNATURE_INVALID',
    });
  });

  it('a failing token is reported before the request signature, though both are checked together', async () => {
    const other = generateKeyPairSync('ec', { namedCurve: 'P-256' }).privateKey;
    const past = Math.floor(Date.now() / 1000) - 100;
    const expire = (t: Token) => {
      t.payload.iat = past;
      t.payload.nbf = past;
      t.payload.exp = past + 30;
    };
    expectError(
      await sendWithToken(() => {}, { signer: { kind: 'es256', key: other }, signatureKey: other }),
      401,
      'AUTH_TOKEN_INVALID',
    );
    expectError(await sendWithToken(expire, { signatureKey: other }), 401, 'AUTH_TOKEN_EXPIRED');
    expectError(await sendWithToken(expire, { signatureHeader: undefined }), 401, 'AUTH_TOKEN_EXPIRED');
    expectError(await sendWithToken(expire, { signatureHeader: 'abc' }), 401, 'AUTH_TOKEN_EXPIRED');
    expectError(
      await sendWithToken((t) => (t.payload.aud = ['someone-else']), { signatureHeader: undefined }),
      401,
      'AUTH_TOKEN_INVALID',
    );
  });

  it('SIGNATURE_INVALID when the body, query or idempotency key differ from what was signed', async () => {
    const signer = new V3RequestSigner(key, { issuer: TEST_ISSUER });
    const body = '{"amount":"10.00","currency":"USD"}';
    const tampered = [
      { path: '/v3/fx/test/echo', body: '{"amount":"10.00", "currency":"USD"}', idem: 'k1' },
      { path: '/v3/fx/test/echo?x=1', body, idem: 'k1' },
      { path: '/v3/fx/test/echo', body, idem: 'k2' },
    ];
    for (const sent of tampered) {
      const headers = await signer.headers({
        method: 'POST',
        pathAndQuery: '/v3/fx/test/echo',
        body,
        idempotencyKey: 'k1',
      });
      const response = await harness.send({
        method: 'POST',
        path: sent.path,
        body: sent.body,
        headers: { ...headers, 'idempotency-key': sent.idem },
      });
      expectError(response, 401, 'AUTH_TOKEN_INVALID_CONFIG', { reason: 'SIGNATURE_INVALID' });
    }
  });
});

describe('mode, address, scope', () => {
  it('AUTH_API_KEY_SANDBOX_REQUIRED when sandbox is declared with a live key', async () => {
    const live = await harness.createKey({ scopes: ['view'], mode: 'live' });
    const response = await harness.signed({ key: live, path: '/v3/fx/pairs', headers: { 'x-app-mode': 'SANDBOX' } });
    expectError(response, 403, 'AUTH_API_KEY_SANDBOX_REQUIRED');
  });

  it('AUTH_API_KEY_LIVE_REQUIRED when a sandbox key declares live or nothing', async () => {
    expectError(
      await harness.signed({ key, path: '/v3/fx/pairs', headers: { 'x-app-mode': 'LIVE' } }),
      403,
      'AUTH_API_KEY_LIVE_REQUIRED',
    );
    expectError(
      await harness.signed({ key, path: '/v3/fx/pairs', headers: { 'x-app-mode': undefined } }),
      403,
      'AUTH_API_KEY_LIVE_REQUIRED',
    );
  });

  it('VALIDATION_HEADER_FAILED for an X-App-Mode other than SANDBOX or LIVE', async () => {
    const response = await harness.signed({ key, path: '/v3/fx/pairs', headers: { 'x-app-mode': 'TEST' } });
    expect(response.status).toBe(400);
    expect(response.json()).toMatchObject({
      error: { code: 'VALIDATION_HEADER_FAILED', details: { header: 'X-App-Mode' } },
    });
  });

  it('SANDBOX_MODE_REQUIRED for a sandbox-only operation called live', async () => {
    const live = await harness.createKey({ scopes: ['trade'], mode: 'live' });
    const response = await harness.signed({
      key: live,
      method: 'POST',
      path: '/v3/fx/test/sandbox-only',
      idempotencyKey: 'sbx-1',
    });
    expectError(response, 403, 'SANDBOX_MODE_REQUIRED');
    const sandbox = await harness.signed({
      key,
      method: 'POST',
      path: '/v3/fx/test/sandbox-only',
      idempotencyKey: 'sbx-1',
    });
    expect(sandbox.status).toBe(200);
  });

  it('AUTH_FORBIDDEN_IP outside the allowlist, and passes inside it', async () => {
    const outside = await harness.createKey({ scopes: ['view'], ipAllowlist: ['10.0.0.0/8', '2001:db8::/32'] });
    expectError(await harness.signed({ key: outside, path: '/v3/fx/pairs' }), 403, 'AUTH_FORBIDDEN_IP');
    const inside = await harness.createKey({ scopes: ['view'], ipAllowlist: ['10.0.0.0/8', '127.0.0.0/24'] });
    expect((await harness.signed({ key: inside, path: '/v3/fx/pairs' })).status).toBe(200);
  });

  it('ignores X-Forwarded-For when no proxy is trusted', async () => {
    const onlyTen = await harness.createKey({ scopes: ['view'], ipAllowlist: ['10.1.2.3'] });
    const response = await harness.signed({
      key: onlyTen,
      path: '/v3/fx/pairs',
      headers: { 'x-forwarded-for': '10.1.2.3' },
    });
    expectError(response, 403, 'AUTH_FORBIDDEN_IP');
  });

  it('AUTH_INSUFFICIENT_SCOPE names the required scope', async () => {
    const tradeOnly = await harness.createKey({ scopes: ['trade'] });
    expectError(await harness.signed({ key: tradeOnly, path: '/v3/fx/pairs' }), 403, 'AUTH_INSUFFICIENT_SCOPE', {
      requiredScope: 'view',
    });
    const viewOnly = await harness.createKey({ scopes: ['view'] });
    const write = await harness.signed({
      key: viewOnly,
      method: 'POST',
      path: '/v3/fx/test/echo',
      body: '{"amount":"1","currency":"USD"}',
      idempotencyKey: 'scope-1',
    });
    expectError(write, 403, 'AUTH_INSUFFICIENT_SCOPE', { requiredScope: 'trade' });
  });
});
