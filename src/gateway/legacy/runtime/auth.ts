/**
 * Legacy (v1/v2) authentication and authorization at the gateway (docs/contract.md#auth-legacy;
 * the order is docs/contract.md#auth-check-order). The legacy operation handler
 * (pipeline/operation-handler.ts) runs it before any upstream call and downgrades a refusal's v3
 * code with the generation's error table. The moment the token proves its key, `onProven` is
 * told, so that the handler charges the key's rate limit beside the nonce claim rather than a
 * round trip after it.
 *
 * What a legacy request must carry, checked in this order (the same order as the core's v3
 * authenticator, with the org check added because legacy paths name an org):
 *   1. `X-App-Mode`, read by the conventions of `mappings/conventions.ts` (sandbox, live or
 *      production in any case; absent is live, or sandbox on a sandbox host: below); anything
 *      else is VALIDATION_HEADER_FAILED (legacy 400 Query validation failed).
 *   2. `Authorization: Bearer <JWT>`: missing is AUTH_TOKEN_MISSING, another shape AUTH_TOKEN_INVALID.
 *   3. The JWT of docs/contract.md#auth-tokens, by the shared verifier: ES256 only (alg `none`,
 *      HS256 and the like are refused before any key lookup), kid = sub = the name of a
 *      registered, unrevoked key, aud ['developer-api'], the configured issuer, nonce of 32
 *      lower-case hex, `exp - iat` at most 120 s, iat/nbf/exp with 5 s skew.
 *   4. Single use: the nonce is claimed in the ephemeral store until the token's expiry plus the
 *      skew. A replay is AUTH_TOKEN_INVALID, and so is a token signed before the store's epoch
 *      (the store was reset since: lib/auth/single-use.ts). The nonce key is the core's own
 *      (`nonce:{<key name>}:<nonce>`), so when the gateway and the core share a store a token
 *      used at one cannot be used again at the other.
 *   5. The declared mode against the key's mode: AUTH_API_KEY_SANDBOX_REQUIRED /
 *      AUTH_API_KEY_LIVE_REQUIRED; on a sandbox host, a live key is AUTH_API_KEY_SANDBOX_REQUIRED
 *      whatever the header declares.
 *   6. The key's IP allowlist against the client address: AUTH_FORBIDDEN_IP.
 *   7. The org in the path must be the key's org: otherwise ROUTE_NOT_FOUND (see below).
 *   8. The operation's scope (from the endpoint tables): AUTH_INSUFFICIENT_SCOPE.
 * Every legacy table maps the token, key, mode, IP and scope codes to the 401 with the legacy
 * authorization message (v1 and v2 have no 403; docs/contract.md#errors-legacy-v2).
 *
 * Decision, sandbox hosts (FXGATE_SANDBOX_HOSTS; sandbox-hosts.ts). The legacy service's sandbox
 * was its own host, which knew sandbox keys only, and the public v1 examples send no header. On
 * such a host a request without `X-App-Mode` declares sandbox; a header still declares what it
 * says and is checked against the key as anywhere (a sandbox key declaring live is refused, never
 * quietly served sandbox); and a live key is refused there whatever it declares, as the legacy
 * sandbox host refused it: AUTH_API_KEY_SANDBOX_REQUIRED, every table's 401. A sandbox host thus
 * never moves live money. Elsewhere nothing changes: no header is live.
 *
 * Decision, another org in the path: ROUTE_NOT_FOUND, not TRADE_NOT_FOUND. The answer must be
 * the legacy "not found" and must not depend on the operation or on anything about the other
 * org (never reveal other orgs: docs/contract.md#auth-orgs). ROUTE_NOT_FOUND is
 * operation-independent in both tables: v1 400 "Route not found" (v1 has no 404) and v2 404
 * "Route not found". TRADE_NOT_FOUND would say "Trade not found" on balances and answer 400 or
 * 404 depending on the operation. An existing other org and an org that does not exist get the
 * same answer, because the check only compares the path with the key's own org (case-insensitive:
 * the registry stores lower-case UUIDs, a client may send upper case).
 *
 * Decision, a read's replay check may finish after the read was sent. The nonce claim is sent
 * in step 4 whatever happens, and every refusal waits for it (a replayed token is refused as
 * such, whatever else is wrong with the request). But when every other check passes and the
 * caller asks for it (`deferReplayCheck`, honoured for reads only), the authenticator answers at
 * once with the claim still pending (`replayCheck`): the handler sends the v3 read meanwhile,
 * and answers only once the claim has settled, dropping the read's answer unseen when the token
 * was a replay. A replayed read token thus still gets its 401 and nothing else. It costs one v3
 * read, which moves no money, and only the first replay that a gateway process sees does so:
 * after it the token is refused before the store (known-replays.ts). What it buys: the store's
 * round trip leaves the read's path. Writes never defer: nothing is sent upstream for a token
 * not yet proven single-use.
 *
 * Decision, nonce store unavailable: writes fail CLOSED, reads fail open. A write (every
 * trade/withdraw-scope operation: quotes, trades, reversals, settlement, withdrawals) whose nonce
 * cannot be claimed is refused with IDEMPOTENCY_UNAVAILABLE, which v2 downgrades to its
 * 503 IDEMPOTENCY_SERVICE_UNAVAILABLE ("fails closed; retry with backoff", the same answer its
 * idempotency step would give for the same outage) and v1 to its 500. This matters for v1 in
 * particular: a v1 write may come without an idempotency key (it then gets a fresh v3 key), and
 * then nothing later in the pipeline would stop a replay of it. A read goes on without replay
 * protection, as the
 * core does for v3 reads: it moves no money, and refusing every read during a store outage
 * would turn a cache outage into a full outage. The caller says which it is (`write`); when it
 * does not, the request is treated as a write (closed).
 */
import { type Mode, parseKeyName, type Scope } from '../../../lib/auth/credential-vocabulary.js';
import { TOKEN_FAILURE_ERROR_CODES, type VerifiedToken, verifyApiToken } from '../../../lib/auth/jwt.js';
import { singleUseVerdict, tokenNonce } from '../../../lib/auth/single-use.js';
import { StoreUnavailableError, TokenVerificationError } from '../../../lib/errors/internal-errors.js';
import type { ErrorCode } from '../../../lib/errors/v3-error-catalog.js';
import type { ActiveKey, KeyRegistry } from '../../../lib/keys/key-registry.js';
import { type EphemeralStore } from '../../../lib/store/ephemeral-store.js';
import type { LegacyGeneration } from '../declarations/legacy-operations.js';
import { KnownReplays } from './known-replays.js';
import type { SandboxHosts } from './sandbox-hosts.js';

/** v1 and v2 tokens live at most 120 s (docs/contract.md#auth-tokens-lifetime). */
export const LEGACY_MAX_TOKEN_LIFETIME_SECONDS = 120;

export interface LegacyPrincipal {
  readonly keyName: string;
  readonly orgId: string;
  readonly scopes: readonly Scope[];
  /** The declared mode, which the key's mode matched: the book the request works on. */
  readonly mode: Mode;
}

export interface LegacyAuthRefusal {
  readonly ok: false;
  /** The v3 code the route layer downgrades with the generation's error table. */
  readonly code: ErrorCode;
  /** For logs only, never for the client (legacy bodies carry only the table's message). */
  readonly reason: string;
  /** The key a verified token named, when the refusal came after it (mode, address, org, scope): the usage report counts the request against it. */
  readonly caller?: { readonly orgId: string; readonly keyName: string };
}

export type LegacyAuthResult =
  | {
      readonly ok: true;
      readonly principal: LegacyPrincipal;
      /**
       * The token's single-use check: null once this request has spent the token (or, for a
       * read, when the store was down), else the refusal to answer instead. Already settled
       * unless the request asked to defer it; it may reject with an unexpected store error.
       */
      readonly replayCheck: Promise<LegacyAuthRefusal | null>;
    }
  | LegacyAuthRefusal;

export interface LegacyAuthRequest {
  readonly generation: LegacyGeneration;
  /** The `Authorization` header as received. */
  readonly authorization: string | undefined;
  /** The `X-App-Mode` header as received. */
  readonly appMode: string | readonly string[] | undefined;
  /** The host the client called (`Host`, or a trusted proxy's `X-Forwarded-Host`), port included. */
  readonly host?: string;
  /** The client address (the socket's, or the trusted-proxy one). */
  readonly clientIp: string;
  /** The `:orgId` of `/v{1,2}/brokerage/:orgId/...`. */
  readonly pathOrgId: string;
  /** The operation's scope, from the endpoint tables. */
  readonly requiredScope: Scope;
  /** True for operations that change state. When the nonce store is down these fail closed. Default true. */
  readonly write?: boolean;
  /** For a read (`write: false`) that passes every other check: answer before the nonce claim settles (see the header). */
  readonly deferReplayCheck?: boolean;
  /**
   * Told the key the moment the token proves it (a registered, unrevoked key's signature over
   * valid claims), before the nonce is claimed: every outcome from there on is the key's, a
   * replay and a refusal of its mode, address, org or scope included. The rate limit is charged
   * to it then, beside the claim (pipeline/rate-limit-step.ts).
   */
  readonly onProven?: (caller: { readonly orgId: string; readonly keyName: string }) => void;
}

export interface LegacyAuthLogEvent {
  readonly event: 'nonce_store_unavailable';
  readonly generation: LegacyGeneration;
  readonly keyName: string;
  readonly outcome: 'refused' | 'allowed_without_replay_check';
  readonly error: unknown;
}

export interface LegacyAuthenticatorOptions {
  readonly registry: KeyRegistry;
  readonly store: EphemeralStore;
  /** The `iss` values accepted (`FXGATE_JWT_ISSUER`). */
  readonly issuers: readonly string[];
  /** The book an `X-App-Mode` value declares, or null for one the conventions do not know. */
  readonly declaredMode: (header: string | readonly string[] | undefined) => Mode | null;
  /** Milliseconds since the epoch; tests move it. */
  readonly now?: () => number;
  /** Called when the nonce store is down, so that an operator sees the skipped replay check. */
  readonly log?: (event: LegacyAuthLogEvent) => void;
  /** Tokens already caught replayed, refused before the store (known-replays.ts). Default: a fresh one. */
  readonly knownReplays?: KnownReplays;
  /** FXGATE_SANDBOX_HOSTS: where no `X-App-Mode` is sandbox and live keys are refused. Default: none. */
  readonly sandboxHosts?: SandboxHosts;
}

function refuse(code: ErrorCode, reason: string): LegacyAuthRefusal {
  return { ok: false, code, reason };
}

const SPENT: Promise<null> = Promise.resolve(null);

export function createLegacyAuthenticator(options: LegacyAuthenticatorOptions) {
  const { registry, store, issuers } = options;
  const nowMs = options.now ?? Date.now;
  const knownReplays = options.knownReplays ?? new KnownReplays(undefined, nowMs);

  return async function authenticate(request: LegacyAuthRequest): Promise<LegacyAuthResult> {
    const onSandboxHost = options.sandboxHosts?.includes(request.host) ?? false;
    const mode = request.appMode === undefined && onSandboxHost ? 'sandbox' : options.declaredMode(request.appMode);
    if (mode === null) return refuse('VALIDATION_HEADER_FAILED', 'X-App-Mode names no mode the conventions know');

    const authorization = request.authorization;
    if (authorization === undefined || authorization === '')
      return refuse('AUTH_TOKEN_MISSING', 'no Authorization header');
    const match = /^Bearer +(\S+)$/i.exec(authorization);
    if (!match) return refuse('AUTH_TOKEN_INVALID', 'Authorization must be "Bearer <JWT>"');

    const nowSeconds = Math.floor(nowMs() / 1000);
    let key: ActiveKey | null = null;
    let verified: VerifiedToken;
    try {
      verified = await verifyApiToken(match[1]!, {
        issuers,
        maxLifetimeSeconds: LEGACY_MAX_TOKEN_LIFETIME_SECONDS,
        nowSeconds,
        resolveKey: async (name) => {
          key = await registry.findActive(name);
          return key?.publicKey ?? null;
        },
      });
    } catch (error) {
      if (error instanceof TokenVerificationError)
        return refuse(TOKEN_FAILURE_ERROR_CODES[error.failure], `${error.failure}: ${error.message}`);
      throw error;
    }
    const activeKey = key as ActiveKey | null;
    if (!activeKey) return refuse('AUTH_API_KEY_INVALID', 'unknown or revoked key');
    const record = activeKey.record;
    request.onProven?.({ orgId: record.orgId, keyName: record.name });

    // Single use (docs/contract.md#auth-tokens-single-use). The claim goes out before the
    // authorization checks, so that a token is spent by the first request that presents it,
    // whatever that request's outcome.
    const write = request.write ?? true;
    const nonce = tokenNonce(verified, nowSeconds);
    if (knownReplays.has(nonce.key))
      return refuse('AUTH_TOKEN_INVALID', 'token already used (a replay this gateway has seen)');
    const replayCheck = store.claimNonce(nonce.key, nonce.ttlMs).then(
      (claim) => {
        const verdict = singleUseVerdict(verified, claim);
        if (verdict === 'FRESH') return null;
        // Either way the nonce is claimed now, so every later use of the token is a replay.
        knownReplays.add(nonce.key, nowMs() + nonce.ttlMs);
        return verdict === 'REPLAYED'
          ? refuse('AUTH_TOKEN_INVALID', 'token already used (nonce replay)')
          : refuse('AUTH_TOKEN_INVALID', 'token signed before the nonce store was reset (it may have been used)');
      },
      (error: unknown) => {
        if (!(error instanceof StoreUnavailableError)) throw error;
        options.log?.({
          event: 'nonce_store_unavailable',
          generation: request.generation,
          keyName: verified.keyName,
          outcome: write ? 'refused' : 'allowed_without_replay_check',
          error,
        });
        return write ? refuse('IDEMPOTENCY_UNAVAILABLE', 'nonce store unavailable; writes fail closed') : null;
      },
    );

    const refused = authorizationRefusal(activeKey, mode, onSandboxHost, request);
    const refusal = refused === null ? null : { ...refused, caller: { orgId: record.orgId, keyName: record.name } };
    if (refusal !== null || write || request.deferReplayCheck !== true) {
      const replayed = await replayCheck;
      return replayed ?? refusal ?? { ok: true, principal: principalOf(record, mode), replayCheck: SPENT };
    }
    return { ok: true, principal: principalOf(record, mode), replayCheck };
  };
}

function principalOf(record: ActiveKey['record'], mode: Mode): LegacyPrincipal {
  return { keyName: record.name, orgId: record.orgId, scopes: record.scopes, mode };
}

/** Steps 5 to 8: the declared mode (and the host), the client address, the path's org and the scope. */
function authorizationRefusal(
  key: ActiveKey,
  mode: Mode,
  onSandboxHost: boolean,
  request: LegacyAuthRequest,
): LegacyAuthRefusal | null {
  const { record } = key;
  // Worded only for a refusal that names it, not on every request.
  const sandboxHost = (): string => `${request.host ?? ''} is a sandbox host (FXGATE_SANDBOX_HOSTS)`;
  if (mode === 'sandbox' && record.mode !== 'sandbox')
    return refuse(
      'AUTH_API_KEY_SANDBOX_REQUIRED',
      request.appMode === undefined
        ? `a live key without X-App-Mode on ${sandboxHost()}: call the live host`
        : 'sandbox declared with a live key',
    );
  if (mode === 'live' && record.mode !== 'live')
    return refuse(
      'AUTH_API_KEY_LIVE_REQUIRED',
      request.appMode === undefined
        ? 'no X-App-Mode (live) with a sandbox key: send X-App-Mode: sandbox'
        : 'live declared with a sandbox key',
    );
  if (onSandboxHost && record.mode !== 'sandbox')
    return refuse('AUTH_API_KEY_SANDBOX_REQUIRED', `a live key on ${sandboxHost()}, which serves the sandbox only`);
  if (!key.allowsAddress(request.clientIp))
    return refuse('AUTH_FORBIDDEN_IP', `client address ${request.clientIp} outside the key's allowlist`);

  // The key name carries its org too; both must be the path's org.
  const pathOrg = request.pathOrgId.toLowerCase();
  if (pathOrg !== record.orgId.toLowerCase() || parseKeyName(record.name)?.orgId !== record.orgId) {
    return refuse('ROUTE_NOT_FOUND', "the path's org is not the key's org");
  }
  if (!record.scopes.includes(request.requiredScope))
    return refuse('AUTH_INSUFFICIENT_SCOPE', `scope ${request.requiredScope} required`);
  return null;
}

export type LegacyAuthenticator = ReturnType<typeof createLegacyAuthenticator>;
