/**
 * Step 4: authentication and authorisation (docs/contract.md#auth-check-order), in this order:
 * bearer token, key, token claims and signature, request signature, single use (the nonce, and a
 * token signed before the nonce store's epoch: lib/auth/single-use.ts), declared mode
 * against the key's mode, IP allowlist, sandbox-only operations, scope. It never throws for a
 * failed check: it returns the failure, because the rate limit (step 5) must be charged first, per
 * key when the token proved the key, per client address otherwise. The moment the token proves its
 * key, `onProven` is told, before the nonce is claimed: every later outcome is charged to that key,
 * so the caller can send the charge to the store alongside the claim instead of a round trip after
 * it.
 */
import type { FastifyRequest } from 'fastify';

import type { Mode } from '../../lib/auth/credential-vocabulary.js';
import {
  checkApiToken,
  parseApiToken,
  type ParsedApiToken,
  TOKEN_FAILURE_ERROR_CODES,
  type VerifiedToken,
} from '../../lib/auth/jwt.js';
import { verifyRequestSignature } from '../../lib/auth/request-signature.js';
import { SINGLE_USE_REFUSAL_MESSAGES, singleUseVerdict, tokenNonce } from '../../lib/auth/single-use.js';
import { ApiError } from '../../lib/errors/api-error.js';
import { StoreUnavailableError, TokenVerificationError } from '../../lib/errors/internal-errors.js';
import type { KeyRegistry } from '../../lib/keys/key-registry.js';
import { type EphemeralStore } from '../../lib/store/ephemeral-store.js';
import type { Principal } from '../principal.js';
import type { OperationMeta } from './operation.js';

/** v3 tokens live at most 60 s (docs/contract.md#auth-tokens-lifetime). */
export const V3_MAX_TOKEN_LIFETIME_SECONDS = 60;

export interface AuthOutcome {
  readonly principal: Principal | null;
  readonly error: ApiError | null;
}

export interface AuthenticatorOptions {
  readonly registry: KeyRegistry;
  readonly store: EphemeralStore;
  /** The `iss` values accepted (FXGATE_JWT_ISSUER). */
  readonly issuers: readonly string[];
}

function fail(error: ApiError): AuthOutcome {
  return { principal: null, error };
}

/** A token's typed failure as its v3 error; anything else (the key registry failing, say) is thrown on. */
function tokenFailure(error: unknown): AuthOutcome {
  if (error instanceof TokenVerificationError) return fail(new ApiError(TOKEN_FAILURE_ERROR_CODES[error.failure]));
  throw error;
}

/** `X-App-Mode`: absent or LIVE is live, SANDBOX is sandbox; anything else is a bad header. */
export function declaredMode(request: FastifyRequest): Mode {
  const value = request.headers['x-app-mode'];
  if (value === undefined) return 'live';
  const upper = typeof value === 'string' ? value.toUpperCase() : '';
  if (upper === 'LIVE') return 'live';
  if (upper === 'SANDBOX') return 'sandbox';
  throw new ApiError('VALIDATION_HEADER_FAILED', {
    header: 'X-App-Mode',
    issues: [{ path: 'X-App-Mode', code: 'invalid_value', message: 'must be SANDBOX or LIVE' }],
  });
}

export function createAuthenticator(options: AuthenticatorOptions) {
  const { registry, store, issuers } = options;

  /** `onProven` gets the key's name once the token and the request signature prove it (the rate-limit subject from then on). */
  return async function authenticate(
    request: FastifyRequest,
    operation: OperationMeta,
    onProven: (keyName: string) => void,
  ): Promise<AuthOutcome> {
    const mode = declaredMode(request);
    const authorization = request.headers.authorization;
    if (authorization === undefined || authorization === '') return fail(new ApiError('AUTH_TOKEN_MISSING'));
    const match = /^Bearer +(\S+)$/i.exec(authorization);
    if (!match)
      return fail(new ApiError('AUTH_TOKEN_INVALID', undefined, { message: 'Authorization must be "Bearer <JWT>".' }));

    let parsed: ParsedApiToken;
    try {
      parsed = parseApiToken(match[1]!);
    } catch (error) {
      return tokenFailure(error);
    }
    const activeKey = await registry.findActive(parsed.keyName);
    if (!activeKey) return fail(new ApiError('AUTH_API_KEY_INVALID'));

    // The two ECDSA checks go to libuv's pool together: they run on two threads at once, and the
    // request waits for one round of hand-offs instead of two. The request signature's outcome is
    // read only once the token has passed, so the errors come in the order above; a request whose
    // token fails has had one verification too many, which costs what the rate limit allows.
    const signature = request.headers['x-request-signature'];
    const idempotencyKey = request.headers['idempotency-key'];
    const signatureCheck =
      typeof signature === 'string' && signature !== ''
        ? verifyRequestSignature(
            activeKey.publicKey,
            {
              method: request.method,
              pathAndQuery: request.raw.url ?? request.url,
              nonce: parsed.nonce,
              idempotencyKey: typeof idempotencyKey === 'string' ? idempotencyKey : undefined,
              body: request.v3.rawBody,
            },
            signature,
          )
        : null;
    let verified: VerifiedToken;
    try {
      verified = await checkApiToken(parsed, activeKey.publicKey, {
        issuers,
        maxLifetimeSeconds: V3_MAX_TOKEN_LIFETIME_SECONDS,
      });
    } catch (error) {
      signatureCheck?.catch(() => {});
      return tokenFailure(error);
    }
    if (signatureCheck === null)
      return fail(new ApiError('AUTH_TOKEN_INVALID_CONFIG', { reason: 'SIGNATURE_MISSING' }));
    const check = await signatureCheck;
    if (check !== 'VALID') return fail(new ApiError('AUTH_TOKEN_INVALID_CONFIG', { reason: check }));

    // From here the token is proven: failures are charged to the key, not the address.
    const proven = verified.keyName;
    onProven(proven);
    try {
      const nonce = tokenNonce(verified, Math.floor(Date.now() / 1000));
      const verdict = singleUseVerdict(verified, await store.claimNonce(nonce.key, nonce.ttlMs));
      if (verdict !== 'FRESH')
        return fail(new ApiError('AUTH_TOKEN_INVALID', undefined, { message: SINGLE_USE_REFUSAL_MESSAGES[verdict] }));
    } catch (error) {
      // Reads go on without replay protection while the store is down; writes stop at step 6,
      // which fails closed. The log says so.
      if (!(error instanceof StoreUnavailableError)) throw error;
      request.log.warn({ err: error }, 'nonce store unavailable; replay check skipped');
    }

    const record = activeKey.record;
    if (mode === 'sandbox' && record.mode !== 'sandbox') return fail(new ApiError('AUTH_API_KEY_SANDBOX_REQUIRED'));
    if (mode === 'live' && record.mode !== 'live') return fail(new ApiError('AUTH_API_KEY_LIVE_REQUIRED'));
    if (!activeKey.allowsAddress(request.ip)) return fail(new ApiError('AUTH_FORBIDDEN_IP'));
    if (operation.sandboxOnly && mode !== 'sandbox') return fail(new ApiError('SANDBOX_MODE_REQUIRED'));
    if (!record.scopes.includes(operation.scope)) {
      return fail(new ApiError('AUTH_INSUFFICIENT_SCOPE', { requiredScope: operation.scope }));
    }
    return {
      principal: { keyName: record.name, orgId: record.orgId, scopes: record.scopes, environment: mode },
      error: null,
    };
  };
}

export type Authenticator = ReturnType<typeof createAuthenticator>;
