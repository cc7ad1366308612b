/**
 * A v3 client's signer: for each request, a fresh JWT (new nonce) and the X-Request-Signature
 * over the canonical string, made with a key file's private key (imported once). Used by
 * `fxgate sign`, by the gateway for its upstream calls, and by the tests and benchmarks.
 */
import type { LoadedKey } from '../keys/key-file.js';
import { signApiToken } from './jwt.js';
import { signRequest } from './request-signature.js';

export interface RequestToSign {
  readonly method: string;
  /** Path and query exactly as they will be sent. */
  readonly pathAndQuery: string;
  /** The exact bytes that will be sent; a string is taken as UTF-8. */
  readonly body?: Uint8Array | string;
  readonly idempotencyKey?: string;
}

export const SIGNER_DEFAULTS = { lifetimeSeconds: 60 } as const;

export class V3RequestSigner {
  constructor(
    private readonly key: LoadedKey,
    private readonly options: { readonly issuer: string; readonly lifetimeSeconds?: number },
  ) {}

  get keyName(): string {
    return this.key.file.name;
  }

  async headers(request: RequestToSign): Promise<Record<string, string>> {
    const body = typeof request.body === 'string' ? Buffer.from(request.body) : request.body;
    const { token, nonce } = await signApiToken({
      privateKey: this.key.privateKey,
      keyName: this.key.file.name,
      issuer: this.options.issuer,
      lifetimeSeconds: this.options.lifetimeSeconds ?? SIGNER_DEFAULTS.lifetimeSeconds,
    });
    const headers: Record<string, string> = {
      authorization: `Bearer ${token}`,
      'x-request-signature': signRequest(this.key.privateKey, {
        method: request.method,
        pathAndQuery: request.pathAndQuery,
        nonce,
        idempotencyKey: request.idempotencyKey,
        body,
      }),
    };
    if (this.key.file.mode === 'sandbox') headers['x-app-mode'] = 'SANDBOX';
    if (request.idempotencyKey !== undefined) headers['idempotency-key'] = request.idempotencyKey;
    if (body !== undefined && body.length > 0) headers['content-type'] = 'application/json';
    return headers;
  }
}
