/**
 * Legacy authentication and authorization (docs/contract.md#auth-legacy): the gateway's checks
 * against a real PostgreSQL key registry and a MemoryStore, with tokens forged by node:crypto
 * (test/support/independent-signing.ts). Each refusal is also downgraded through the real legacy
 * error tables, so the test shows what a v1 or v2 client reads.
 */
import { randomBytes } from 'node:crypto';

import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { LEGACY_CONVENTIONS } from '../../../../mappings/conventions.js';
import { V1_ERROR_CHANGES } from '../../../../mappings/errors.v1.js';
import { V2_ERROR_TABLES } from '../../../../mappings/errors.v2.js';
import { MemoryStore } from '../../../../src/cli/store/memory-store.js';
import { declaredMode } from '../../../../src/gateway/legacy/declarations/conventions.js';
import { applyV1ErrorChanges, resolveLegacyError } from '../../../../src/gateway/legacy/declarations/error-tables.js';
import {
  createLegacyAuthenticator,
  type LegacyAuthenticator,
  type LegacyAuthLogEvent,
  type LegacyAuthRequest,
  type LegacyAuthResult,
} from '../../../../src/gateway/legacy/runtime/auth.js';
import { SandboxHosts } from '../../../../src/gateway/legacy/runtime/sandbox-hosts.js';
import type { Scope } from '../../../../src/lib/auth/credential-vocabulary.js';
import { keyName } from '../../../../src/lib/auth/credential-vocabulary.js';
import { newUuid } from '../../../../src/lib/ids.js';
import { type LoadedKey, loadKey } from '../../../../src/lib/keys/key-file.js';
import { KeyRegistry } from '../../../../src/lib/keys/key-registry.js';
import type { NonceClaim } from '../../../../src/lib/store/ephemeral-store.js';
import { createTestPostgres, type TestDatabase } from '../../../support/databases.js';
import { makeJwt, standardToken, type TokenSigner } from '../../../support/independent-signing.js';

/** v1's error tables: v2's with v1's declared changes applied. */
const V1_ERROR_TABLES = applyV1ErrorChanges(V2_ERROR_TABLES, V1_ERROR_CHANGES);

/** fxgate's own name, then the legacy service's, which existing legacy clients send. */
const ISSUERS = ['fx-service', 'openfx'] as const;
const ISSUER = ISSUERS[0];
const DECLARED_MODE = (header: string | readonly string[] | undefined) => declaredMode(LEGACY_CONVENTIONS, header);
const AUTH_MESSAGE = 'The authorization key provided is either invalid or expired, please try again';
const CLIENT_IP = '203.0.113.7';

let database: TestDatabase;
let registry: KeyRegistry;
let store: MemoryStore;
let authenticate: LegacyAuthenticator;

const orgA = newUuid();
const orgB = newUuid();
let tradeKey: LoadedKey; // org A, live, view + trade + withdraw
let viewKey: LoadedKey; // org A, live, view only
let sandboxKey: LoadedKey; // org A, sandbox, view + trade
let allowlistedKey: LoadedKey; // org A, live, view, 10.0.0.0/8 and 2001:db8::/32 only
let revokedKey: LoadedKey; // org A, revoked
let orgBKey: LoadedKey; // org B, live, view + trade

beforeAll(async () => {
  database = await createTestPostgres();
  registry = new KeyRegistry(database.db);
  store = new MemoryStore();
  authenticate = createLegacyAuthenticator({ registry, store, issuers: ISSUERS, declaredMode: DECLARED_MODE });
  tradeKey = loadKey(await registry.createKey({ orgId: orgA, scopes: ['view', 'trade', 'withdraw'], mode: 'live' }));
  viewKey = loadKey(await registry.createKey({ orgId: orgA, scopes: ['view'], mode: 'live' }));
  sandboxKey = loadKey(await registry.createKey({ orgId: orgA, scopes: ['view', 'trade'], mode: 'sandbox' }));
  allowlistedKey = loadKey(
    await registry.createKey({
      orgId: orgA,
      scopes: ['view'],
      mode: 'live',
      ipAllowlist: ['10.0.0.0/8', '2001:db8::/32'],
    }),
  );
  revokedKey = loadKey(await registry.createKey({ orgId: orgA, scopes: ['view', 'trade'], mode: 'live' }));
  await registry.revoke(revokedKey.file.name);
  orgBKey = loadKey(await registry.createKey({ orgId: orgB, scopes: ['view', 'trade'], mode: 'live' }));
});

afterAll(async () => {
  await store?.close();
  await database?.drop();
});

interface TokenOptions {
  readonly header?: Record<string, unknown>;
  readonly payload?: Record<string, unknown>;
  readonly lifetimeSeconds?: number;
  readonly signer?: TokenSigner;
  readonly issuer?: string;
}

/** A legacy token (docs/contract.md#auth-tokens) for the key, with single fields overridden. */
function token(key: LoadedKey, options: TokenOptions = {}): string {
  const base = standardToken({
    keyName: key.file.name,
    issuer: options.issuer ?? ISSUER,
    lifetimeSeconds: options.lifetimeSeconds ?? 60,
  });
  return makeJwt(
    { ...base.header, ...options.header },
    { ...base.payload, ...options.payload },
    options.signer ?? { kind: 'es256', key: key.privateKey },
  );
}

function request(overrides: Partial<LegacyAuthRequest> & { token?: string }): LegacyAuthRequest {
  const { token: jwt, ...rest } = overrides;
  return {
    generation: 'v2',
    authorization: jwt === undefined ? undefined : `Bearer ${jwt}`,
    appMode: undefined,
    clientIp: CLIENT_IP,
    pathOrgId: orgA,
    requiredScope: 'view',
    write: false,
    ...rest,
  };
}

function refusal(result: LegacyAuthResult): string {
  expect(result.ok).toBe(false);
  return result.ok ? 'accepted' : result.code;
}

/** What v1 and v2 clients read for the refusal, from the real tables. */
function legacyAnswers(result: LegacyAuthResult) {
  const code = refusal(result);
  return { v1: resolveLegacyError(V1_ERROR_TABLES, { code }), v2: resolveLegacyError(V2_ERROR_TABLES, { code }) };
}

function expectLegacy401(result: LegacyAuthResult): void {
  const answers = legacyAnswers(result);
  expect(answers.v1).toEqual({ status: 401, message: AUTH_MESSAGE });
  expect(answers.v2).toEqual({ status: 401, message: AUTH_MESSAGE });
}

describe('legacy authentication: valid tokens', () => {
  it('accepts a well-formed legacy token and returns the key, its org, scopes and mode', async () => {
    for (const generation of ['v1', 'v2'] as const) {
      const result = await authenticate(
        request({ generation, token: token(tradeKey), requiredScope: 'trade', write: true }),
      );
      expect(result).toEqual({
        ok: true,
        principal: { keyName: tradeKey.file.name, orgId: orgA, scopes: ['view', 'trade', 'withdraw'], mode: 'live' },
        replayCheck: expect.any(Promise),
      });
      expect(result.ok && (await result.replayCheck)).toBeNull();
    }
  });

  it('accepts an org id in upper case in the path', async () => {
    const result = await authenticate(request({ token: token(tradeKey), pathOrgId: orgA.toUpperCase() }));
    expect(result.ok).toBe(true);
  });

  it('accepts `X-App-Mode: LIVE` and a lower-case `bearer`', async () => {
    const result = await authenticate(request({ authorization: `bearer ${token(tradeKey)}`, appMode: 'LIVE' }));
    expect(result.ok).toBe(true);
  });
});

describe('legacy authentication: the token', () => {
  it('refuses a missing Authorization header and one that is not Bearer', async () => {
    const missing = await authenticate(request({}));
    expect(refusal(missing)).toBe('AUTH_TOKEN_MISSING');
    expectLegacy401(missing);
    const basic = await authenticate(request({ authorization: `Basic ${Buffer.from('a:b').toString('base64')}` }));
    expect(refusal(basic)).toBe('AUTH_TOKEN_INVALID');
    expectLegacy401(basic);
  });

  it('refuses a replayed token (single use), in either generation', async () => {
    const jwt = token(tradeKey);
    expect((await authenticate(request({ generation: 'v1', token: jwt }))).ok).toBe(true);
    const replay = await authenticate(request({ generation: 'v1', token: jwt }));
    expect(refusal(replay)).toBe('AUTH_TOKEN_INVALID');
    expectLegacy401(replay);
    expect(refusal(await authenticate(request({ generation: 'v2', token: jwt })))).toBe('AUTH_TOKEN_INVALID');
  });

  it('refuses alg none', async () => {
    const result = await authenticate(
      request({ token: token(tradeKey, { header: { alg: 'none' }, signer: { kind: 'none' } }) }),
    );
    expect(refusal(result)).toBe('AUTH_TOKEN_INVALID');
    expectLegacy401(result);
  });

  it('refuses HS256, also keyed with the public key (algorithm confusion)', async () => {
    for (const secret of [randomBytes(32), Buffer.from(tradeKey.file.publicKey)]) {
      const result = await authenticate(
        request({ token: token(tradeKey, { header: { alg: 'HS256' }, signer: { kind: 'hs256', secret } }) }),
      );
      expect(refusal(result)).toBe('AUTH_TOKEN_INVALID');
      expectLegacy401(result);
    }
  });

  it('refuses a token signed by another key than its kid names', async () => {
    const result = await authenticate(
      request({ token: token(tradeKey, { signer: { kind: 'es256', key: viewKey.privateKey } }) }),
    );
    expect(refusal(result)).toBe('AUTH_TOKEN_INVALID');
  });

  it('accepts a lifetime of 120 s and refuses 121 s', async () => {
    expect((await authenticate(request({ token: token(tradeKey, { lifetimeSeconds: 120 }) }))).ok).toBe(true);
    const long = await authenticate(request({ token: token(tradeKey, { lifetimeSeconds: 121 }) }));
    expect(refusal(long)).toBe('AUTH_TOKEN_INVALID');
    expectLegacy401(long);
  });

  it('refuses an expired token, and one not valid yet beyond the 5 s skew', async () => {
    const now = Math.floor(Date.now() / 1000);
    const expired = await authenticate(
      request({ token: token(tradeKey, { payload: { iat: now - 100, nbf: now - 100, exp: now - 10 } }) }),
    );
    expect(refusal(expired)).toBe('AUTH_TOKEN_EXPIRED');
    expectLegacy401(expired);
    const future = await authenticate(
      request({ token: token(tradeKey, { payload: { iat: now + 30, nbf: now + 30, exp: now + 60 } }) }),
    );
    expect(refusal(future)).toBe('AUTH_TOKEN_INVALID');
    // Within the skew: a client clock 3 s ahead still works.
    expect(
      (
        await authenticate(
          request({ token: token(tradeKey, { payload: { iat: now + 3, nbf: now + 3, exp: now + 63 } }) }),
        )
      ).ok,
    ).toBe(true);
  });

  it('refuses a wrong audience, an audience that is not a one-element array, and a wrong issuer', async () => {
    for (const aud of [['other-api'], 'developer-api', ['developer-api', 'other-api']]) {
      const result = await authenticate(request({ token: token(tradeKey, { payload: { aud } }) }));
      expect(refusal(result)).toBe('AUTH_TOKEN_INVALID');
      expectLegacy401(result);
    }
    const issuer = await authenticate(request({ token: token(tradeKey, { issuer: 'someone-else' }) }));
    expect(refusal(issuer)).toBe('AUTH_TOKEN_INVALID');
    expectLegacy401(issuer);
  });

  it("accepts a token with any configured issuer, the legacy service's own included, and no other", async () => {
    for (const iss of ISSUERS)
      expect((await authenticate(request({ token: token(tradeKey, { issuer: iss }) }))).ok).toBe(true);
    // Compared exactly: neither another case nor the list's text as one value is an issuer on it.
    for (const iss of ['OpenFX', 'fx-service,openfx', '']) {
      const result = await authenticate(request({ token: token(tradeKey, { issuer: iss }) }));
      expect(refusal(result)).toBe('AUTH_TOKEN_INVALID');
      expectLegacy401(result);
    }
  });

  it('refuses a nonce that is not 32 lower-case hex, and sub different from kid', async () => {
    for (const nonce of [undefined, 'abc', 'A'.repeat(32)]) {
      const result = await authenticate(request({ token: token(tradeKey, { header: { nonce } }) }));
      expect(refusal(result)).toBe('AUTH_TOKEN_INVALID');
    }
    const sub = await authenticate(request({ token: token(tradeKey, { payload: { sub: viewKey.file.name } }) }));
    expect(refusal(sub)).toBe('AUTH_TOKEN_INVALID');
  });

  it('refuses a missing kid, an unknown key and a revoked key', async () => {
    const missing = await authenticate(request({ token: token(tradeKey, { header: { kid: undefined } }) }));
    expect(refusal(missing)).toBe('AUTH_API_KEY_MISSING');
    expectLegacy401(missing);

    const unknownName = keyName(orgA, newUuid());
    const unknown = await authenticate(
      request({ token: token(tradeKey, { header: { kid: unknownName }, payload: { sub: unknownName } }) }),
    );
    expect(refusal(unknown)).toBe('AUTH_API_KEY_INVALID');
    expectLegacy401(unknown);

    const revoked = await authenticate(request({ token: token(revokedKey) }));
    expect(refusal(revoked)).toBe('AUTH_API_KEY_INVALID');
    expectLegacy401(revoked);
  });
});

describe('legacy authorization: org, scope, mode, address', () => {
  it("answers org A's key on org B's path with the legacy not-found, the same as for an org that does not exist", async () => {
    for (const pathOrgId of [orgB, newUuid(), 'not-an-org']) {
      const result = await authenticate(
        request({ token: token(tradeKey), pathOrgId, requiredScope: 'trade', write: true }),
      );
      expect(refusal(result)).toBe('ROUTE_NOT_FOUND');
      const answers = legacyAnswers(result);
      expect(answers.v1).toEqual({ status: 400, message: 'Route not found' });
      expect(answers.v2).toEqual({ status: 404, message: 'Route not found' });
    }
    // And org B's key on org A's path.
    expect(refusal(await authenticate(request({ token: token(orgBKey) })))).toBe('ROUTE_NOT_FOUND');
    expect((await authenticate(request({ token: token(orgBKey), pathOrgId: orgB }))).ok).toBe(true);
  });

  it('lets a view-only key read but not quote, trade or withdraw', async () => {
    expect((await authenticate(request({ token: token(viewKey), requiredScope: 'view' }))).ok).toBe(true);
    for (const requiredScope of ['trade', 'withdraw'] satisfies Scope[]) {
      const result = await authenticate(request({ token: token(viewKey), requiredScope, write: true }));
      expect(refusal(result)).toBe('AUTH_INSUFFICIENT_SCOPE');
      expectLegacy401(result);
    }
  });

  it('refuses a sandbox key declaring live (or declaring nothing), and a live key declaring sandbox', async () => {
    for (const appMode of [undefined, 'LIVE', 'live', 'production', 'Production']) {
      const result = await authenticate(request({ token: token(sandboxKey), appMode }));
      expect(refusal(result)).toBe('AUTH_API_KEY_LIVE_REQUIRED');
      expectLegacy401(result);
    }
    const sandbox = await authenticate(
      request({ token: token(sandboxKey), appMode: 'SANDBOX', requiredScope: 'trade' }),
    );
    expect(sandbox).toMatchObject({ ok: true, principal: { mode: 'sandbox', orgId: orgA } });

    const live = await authenticate(request({ token: token(tradeKey), appMode: 'sandbox' }));
    expect(refusal(live)).toBe('AUTH_API_KEY_SANDBOX_REQUIRED');
    expectLegacy401(live);
  });

  it('on a sandbox host: no header is sandbox, a live key is refused whatever it declares, and each reason says why', async () => {
    const onHost = createLegacyAuthenticator({
      registry,
      store,
      issuers: ISSUERS,
      declaredMode: DECLARED_MODE,
      sandboxHosts: new SandboxHosts(['sandbox.example.test']),
    });
    const host = 'Sandbox.Example.test:8443';
    expect(await onHost(request({ token: token(sandboxKey), host }))).toMatchObject({
      ok: true,
      principal: { mode: 'sandbox' },
    });
    const reasons: string[] = [];
    for (const appMode of [undefined, 'live', 'sandbox']) {
      const result = await onHost(request({ token: token(tradeKey), host, appMode }));
      expect(refusal(result)).toBe('AUTH_API_KEY_SANDBOX_REQUIRED');
      expectLegacy401(result);
      if (!result.ok) reasons.push(result.reason);
    }
    expect(reasons).toEqual([
      `a live key without X-App-Mode on ${host} is a sandbox host (FXGATE_SANDBOX_HOSTS): call the live host`,
      `a live key on ${host} is a sandbox host (FXGATE_SANDBOX_HOSTS), which serves the sandbox only`,
      'sandbox declared with a live key',
    ]);
    const declaredLive = await onHost(request({ token: token(sandboxKey), host, appMode: 'LIVE' }));
    expect(refusal(declaredLive)).toBe('AUTH_API_KEY_LIVE_REQUIRED');
    // Another host: no header is live, and the reason names the header to send.
    const elsewhere = await onHost(request({ token: token(sandboxKey), host: 'api.example.test' }));
    expect(elsewhere).toMatchObject({
      ok: false,
      code: 'AUTH_API_KEY_LIVE_REQUIRED',
      reason: 'no X-App-Mode (live) with a sandbox key: send X-App-Mode: sandbox',
    });
    expect((await onHost(request({ token: token(tradeKey), host: 'api.example.test' }))).ok).toBe(true);
  });

  it('refuses an X-App-Mode that names no mode with the legacy 400', async () => {
    for (const appMode of ['TEST', '', ['SANDBOX', 'LIVE']]) {
      const result = await authenticate(request({ token: token(tradeKey), appMode }));
      expect(refusal(result)).toBe('VALIDATION_HEADER_FAILED');
      expect(legacyAnswers(result).v2).toEqual({ status: 400, message: 'Query validation failed' });
    }
  });

  it("refuses a client address outside the key's allowlist, and accepts one inside (IPv4, mapped IPv4, IPv6)", async () => {
    for (const clientIp of [CLIENT_IP, '11.0.0.1', '2001:db9::1']) {
      const result = await authenticate(request({ token: token(allowlistedKey), clientIp }));
      expect(refusal(result)).toBe('AUTH_FORBIDDEN_IP');
      expectLegacy401(result);
    }
    for (const clientIp of ['10.1.2.3', '::ffff:10.1.2.3', '2001:db8::42']) {
      expect((await authenticate(request({ token: token(allowlistedKey), clientIp }))).ok).toBe(true);
    }
  });

  it('spends the token even when the request is refused after the signature check', async () => {
    const jwt = token(viewKey);
    expect(refusal(await authenticate(request({ token: jwt, requiredScope: 'trade' })))).toBe(
      'AUTH_INSUFFICIENT_SCOPE',
    );
    expect(refusal(await authenticate(request({ token: jwt, requiredScope: 'view' })))).toBe('AUTH_TOKEN_INVALID');
  });
});

describe('legacy authentication: the key a token proves (onProven, where the rate limit is charged)', () => {
  /** The outcome's code (or `accepted`), and the keys onProven was told of. */
  async function proven(overrides: Partial<LegacyAuthRequest> & { token?: string }) {
    const told: { orgId: string; keyName: string }[] = [];
    const result = await authenticate(request({ ...overrides, onProven: (caller) => told.push(caller) }));
    return { outcome: result.ok ? 'accepted' : result.code, told };
  }

  it('names the key once its signature is checked: accepted, a replay, or refused for its mode, address, org or scope', async () => {
    const caller = { orgId: orgA, keyName: viewKey.file.name };
    const jwt = token(viewKey);
    expect(await proven({ token: jwt })).toEqual({ outcome: 'accepted', told: [caller] });
    expect(await proven({ token: jwt })).toEqual({ outcome: 'AUTH_TOKEN_INVALID', told: [caller] });
    expect(await proven({ token: token(viewKey), requiredScope: 'trade' })).toEqual({
      outcome: 'AUTH_INSUFFICIENT_SCOPE',
      told: [caller],
    });
    expect(await proven({ token: token(viewKey), appMode: 'sandbox' })).toEqual({
      outcome: 'AUTH_API_KEY_SANDBOX_REQUIRED',
      told: [caller],
    });
    expect(await proven({ token: token(viewKey), pathOrgId: orgB })).toEqual({
      outcome: 'ROUTE_NOT_FOUND',
      told: [caller],
    });
    expect(await proven({ token: token(allowlistedKey), clientIp: '198.51.100.1' })).toEqual({
      outcome: 'AUTH_FORBIDDEN_IP',
      told: [{ orgId: orgA, keyName: allowlistedKey.file.name }],
    });
  });

  it('names none when the token proves no key: missing, malformed, signed by another key, for a revoked key, or a bad X-App-Mode', async () => {
    expect(await proven({})).toEqual({ outcome: 'AUTH_TOKEN_MISSING', told: [] });
    expect(await proven({ authorization: 'Bearer not.a.token' })).toEqual({ outcome: 'AUTH_TOKEN_INVALID', told: [] });
    const forged = token(tradeKey, { signer: { kind: 'es256', key: orgBKey.privateKey } });
    expect((await proven({ token: forged })).told).toEqual([]);
    expect((await proven({ token: token(revokedKey) })).told).toEqual([]);
    expect(await proven({ token: token(tradeKey), appMode: 'staging' })).toEqual({
      outcome: 'VALIDATION_HEADER_FAILED',
      told: [],
    });
  });
});

describe('legacy authentication: a read whose replay check is deferred', () => {
  /**
   * Runs a test with an authenticator whose store answers nonce claims only when the test lets
   * them (`release`); `pending` counts the claims waiting.
   */
  async function withHeldClaims(
    test: (held: { authenticate: LegacyAuthenticator; release: () => void; pending: () => number }) => Promise<void>,
  ) {
    const inner = new MemoryStore();
    const held: (() => void)[] = [];
    const claimNonce = (key: string, ttlMs: number) =>
      new Promise<NonceClaim>((resolve, reject) =>
        held.push(() => void inner.claimNonce(key, ttlMs).then(resolve, reject)),
      );
    const store = new Proxy(inner, {
      get: (target, property) => {
        if (property === 'claimNonce') return claimNonce;
        const value: unknown = Reflect.get(target, property, target);
        return typeof value === 'function' ? (value as (...args: unknown[]) => unknown).bind(target) : value;
      },
    });
    try {
      await test({
        authenticate: createLegacyAuthenticator({ registry, store, issuers: ISSUERS, declaredMode: DECLARED_MODE }),
        release: () => held.splice(0).forEach((go) => go()),
        pending: () => held.length,
      });
    } finally {
      await inner.close();
    }
  }

  it('answers a read before the claim settles, and the check then says whether the token was spent here', () =>
    withHeldClaims(async (held) => {
      const jwt = token(tradeKey);
      const first = await held.authenticate(request({ token: jwt, write: false, deferReplayCheck: true }));
      if (!first.ok) throw new Error(`refused: ${first.code}`);
      expect(first.principal.orgId).toBe(orgA);
      expect(held.pending()).toBe(1);
      const replay = await held.authenticate(request({ token: jwt, write: false, deferReplayCheck: true }));
      if (!replay.ok) throw new Error(`refused: ${replay.code}`);
      held.release();
      expect(await first.replayCheck).toBeNull();
      const refused = await replay.replayCheck;
      expect(refused?.code).toBe('AUTH_TOKEN_INVALID');
      expectLegacy401(refused!);
    }));

  it('never defers a write, nor a refusal: both wait for the claim (a replay is refused as a replay)', () =>
    withHeldClaims(async (held) => {
      const jwt = token(tradeKey);
      const write = held.authenticate(
        request({ token: jwt, requiredScope: 'trade', write: true, deferReplayCheck: true }),
      );
      await expect.poll(() => held.pending()).toBe(1);
      held.release();
      expect((await write).ok).toBe(true);

      // The same token again, on another org's path: the replay is what the client is told.
      const elsewhere = held.authenticate(
        request({ token: jwt, pathOrgId: orgB, write: false, deferReplayCheck: true }),
      );
      await expect.poll(() => held.pending()).toBe(1);
      held.release();
      expect(refusal(await elsewhere)).toBe('AUTH_TOKEN_INVALID');
    }));

  it('refuses a token it has caught replayed before asking the store again', () =>
    withHeldClaims(async (held) => {
      const jwt = token(tradeKey);
      const read = () => held.authenticate(request({ token: jwt, write: false, deferReplayCheck: true }));
      const first = await read();
      const replay = await read();
      held.release();
      expect(first.ok && (await first.replayCheck)).toBeNull();
      expect(replay.ok && (await replay.replayCheck)).toMatchObject({ code: 'AUTH_TOKEN_INVALID' });
      // Caught once: the next replays are refused here, with no claim sent to the store.
      expect(refusal(await read())).toBe('AUTH_TOKEN_INVALID');
      expect(refusal(await held.authenticate(request({ token: jwt, requiredScope: 'trade', write: true })))).toBe(
        'AUTH_TOKEN_INVALID',
      );
      expect(held.pending()).toBe(0);
    }));

  it('lets a deferred read through when the store is down, as an undeferred one', async () => {
    const down = new MemoryStore();
    await down.close();
    const degraded = createLegacyAuthenticator({
      registry,
      store: down,
      issuers: ISSUERS,
      declaredMode: DECLARED_MODE,
    });
    const result = await degraded(request({ token: token(tradeKey), write: false, deferReplayCheck: true }));
    expect(result.ok && (await result.replayCheck)).toBeNull();
  });
});

describe('legacy authentication: nonce store unavailable', () => {
  it('fails writes closed (v2 503 IDEMPOTENCY_SERVICE_UNAVAILABLE, v1 500) and lets reads through, logging both', async () => {
    const down = new MemoryStore();
    await down.close();
    const events: LegacyAuthLogEvent[] = [];
    const degraded = createLegacyAuthenticator({
      registry,
      store: down,
      issuers: ISSUERS,
      declaredMode: DECLARED_MODE,
      log: (event) => events.push(event),
    });

    const write = await degraded(request({ token: token(tradeKey), requiredScope: 'trade', write: true }));
    expect(refusal(write)).toBe('IDEMPOTENCY_UNAVAILABLE');
    const answers = legacyAnswers(write);
    expect(answers.v2).toMatchObject({ status: 503, error: { code: 'IDEMPOTENCY_SERVICE_UNAVAILABLE' } });
    expect(answers.v1).toEqual({ status: 500, message: 'An internal error has occurred' });

    // `write` left out counts as a write.
    const { write: _omitted, ...withoutWrite } = request({ token: token(tradeKey) });
    expect(refusal(await degraded(withoutWrite))).toBe('IDEMPOTENCY_UNAVAILABLE');

    expect((await degraded(request({ token: token(tradeKey), write: false }))).ok).toBe(true);
    expect(events.map((event) => event.outcome)).toEqual(['refused', 'refused', 'allowed_without_replay_check']);
  });

  it('still refuses a bad token before it needs the store', async () => {
    const down = new MemoryStore();
    await down.close();
    const degraded = createLegacyAuthenticator({
      registry,
      store: down,
      issuers: ISSUERS,
      declaredMode: DECLARED_MODE,
    });
    expect(refusal(await degraded(request({ token: token(tradeKey, { lifetimeSeconds: 121 }), write: false })))).toBe(
      'AUTH_TOKEN_INVALID',
    );
  });
});

describe('legacy authentication: a nonce store reset since the token was signed', () => {
  /** A token signed `secondsAgo` before now, valid for another minute. */
  const signedBefore = (secondsAgo: number): string => {
    const at = Math.floor(Date.now() / 1000) - secondsAgo;
    return token(tradeKey, { payload: { iat: at, nbf: at, exp: at + 60 } });
  };

  it('refuses a token signed in an earlier second than the store began, write or deferred read, as spent from then on', async () => {
    const write = signedBefore(2);
    const read = signedBefore(2);
    // Made after the tokens were signed: the store of a restarted process, which never saw their nonces.
    const restarted = new MemoryStore();
    try {
      const after = createLegacyAuthenticator({
        registry,
        store: restarted,
        issuers: ISSUERS,
        declaredMode: DECLARED_MODE,
      });
      const refusedWrite = await after(request({ token: write, requiredScope: 'trade', write: true }));
      expect(refusal(refusedWrite)).toBe('AUTH_TOKEN_INVALID');
      expect(!refusedWrite.ok && refusedWrite.reason).toMatch(/signed before the nonce store was reset/);
      expectLegacy401(refusedWrite);

      const deferred = await after(request({ token: read, write: false, deferReplayCheck: true }));
      if (!deferred.ok) throw new Error(`refused: ${deferred.code}`);
      const refusedRead = await deferred.replayCheck;
      expect(refusedRead).toMatchObject({ code: 'AUTH_TOKEN_INVALID' });
      expectLegacy401(refusedRead!);

      // Its nonce is claimed now: the next use is a replay this gateway knows, refused before the store.
      const again = await after(request({ token: write, requiredScope: 'trade', write: true }));
      expect(!again.ok && again.reason).toMatch(/a replay this gateway has seen/);

      // A token signed now passes at once.
      const fresh = await after(request({ token: token(tradeKey), requiredScope: 'trade', write: true }));
      expect(fresh.ok).toBe(true);
    } finally {
      await restarted.close();
    }
  });
});

describe('legacy authentication: nonce lifetime', () => {
  it('keeps a nonce until expiry plus skew, then forgets it (the token has expired by then)', async () => {
    let nowMs = Date.now();
    const clockStore = new MemoryStore({ now: () => nowMs });
    try {
      const timed = createLegacyAuthenticator({
        registry,
        store: clockStore,
        issuers: ISSUERS,
        declaredMode: DECLARED_MODE,
        now: () => nowMs,
      });
      const nowSeconds = Math.floor(nowMs / 1000);
      const jwt = token(tradeKey, { payload: { iat: nowSeconds, nbf: nowSeconds, exp: nowSeconds + 20 } });
      expect((await timed(request({ token: jwt }))).ok).toBe(true);
      nowMs += 24_000; // expiry + 4 s: inside the skew, the token is still valid and still spent
      expect(refusal(await timed(request({ token: jwt })))).toBe('AUTH_TOKEN_INVALID');
      nowMs += 3_000; // expiry + 7 s: the nonce is gone, and the token is expired
      expect(refusal(await timed(request({ token: jwt })))).toBe('AUTH_TOKEN_EXPIRED');
    } finally {
      await clockStore.close();
    }
  });
});
