/**
 * The deployment `fxgate diff generations` talks to, over HTTP only: signed v3 requests (a fresh
 * token and X-Request-Signature per attempt) and legacy v1/v2 requests (a fresh legacy token per
 * request), each with a deadline, through one keep-alive pool. A 429 is waited out as its
 * Retry-After says, a few times, so that a deployment's rate limits slow a run down rather than
 * fail it. Anything that keeps a request from being answered is a DeploymentError saying what to
 * do about it.
 */
import { randomUUID } from 'node:crypto';

import { Pool } from 'undici';

import { V3RequestSigner } from '../../lib/auth/request-signer.js';
import { DeploymentError } from '../../lib/errors/internal-errors.js';
import type { LoadedKey } from '../../lib/keys/key-file.js';
import { legacyRequestHeaders } from '../commands/sign.js';

export interface DeploymentOptions {
  /** The deployment's origin (no path): it serves /v1, /v2 and /v3. */
  readonly origin: string;
  readonly key: LoadedKey;
  /** The `iss` of every token signed. */
  readonly issuer: string;
  /** The most one request may take, connecting to the last byte of its answer. */
  readonly timeoutMs: number;
  /** The longest wait for one 429's Retry-After; longer waits fail the request. */
  readonly maxRateLimitWaitMs?: number;
}

export const DEPLOYMENT_DEFAULTS = { maxRateLimitWaitMs: 11_000, rateLimitAttempts: 4 } as const;

export interface Answer {
  readonly status: number;
  readonly headers: Readonly<Record<string, string>>;
  readonly text: string;
}

/** The error code of a v3 envelope, or the legacy message, for messages; null when the body is neither. */
export function answerSummary(answer: Answer): string {
  try {
    const body = JSON.parse(answer.text) as { error?: { code?: unknown; message?: unknown }; message?: unknown };
    if (typeof body.error?.code === 'string')
      return `${answer.status} ${body.error.code}${typeof body.error.message === 'string' ? ` (${body.error.message})` : ''}`;
    if (typeof body.message === 'string') return `${answer.status} ${JSON.stringify(body.message)}`;
  } catch {
    // not JSON: described by its start below
  }
  const start = answer.text.slice(0, 120).replaceAll(/\s+/g, ' ');
  return `${answer.status}${start === '' ? '' : ` ${start}`}`;
}

function errorCode(error: unknown): string | undefined {
  let current: unknown = error;
  for (let depth = 0; depth < 4 && current instanceof Error; depth += 1) {
    const code = (current as NodeJS.ErrnoException).code;
    if (typeof code === 'string') return code;
    current = current.cause;
  }
  return undefined;
}

const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

export class Deployment {
  private readonly pool: Pool;
  private readonly signer: V3RequestSigner;
  readonly orgId: string;

  constructor(private readonly options: DeploymentOptions) {
    this.pool = new Pool(options.origin, {
      connections: 8,
      connect: { timeout: options.timeoutMs },
      headersTimeout: options.timeoutMs,
      bodyTimeout: options.timeoutMs,
    });
    this.signer = new V3RequestSigner(options.key, { issuer: options.issuer });
    this.orgId = options.key.file.orgId;
  }

  get origin(): string {
    return this.options.origin;
  }

  /** One request, answered in full within the deadline, or a DeploymentError. */
  async send(method: string, path: string, headers: Record<string, string>, body?: string): Promise<Answer> {
    const what = `${method} ${this.options.origin}${path}`;
    try {
      const response = await this.pool.request({
        method: method as 'GET',
        path,
        headers,
        body,
        signal: AbortSignal.timeout(this.options.timeoutMs),
      });
      const text = await response.body.text();
      const flat: Record<string, string> = {};
      for (const [name, value] of Object.entries(response.headers))
        if (value !== undefined) flat[name] = Array.isArray(value) ? value.join(', ') : value;
      return { status: response.statusCode, headers: flat, text };
    } catch (error) {
      const code = errorCode(error);
      const name = error instanceof Error ? error.name : '';
      if (
        code === 'ECONNREFUSED' ||
        code === 'ENOTFOUND' ||
        code === 'EAI_AGAIN' ||
        code === 'EHOSTUNREACH' ||
        code === 'UND_ERR_CONNECT_TIMEOUT'
      ) {
        throw new DeploymentError(
          `cannot reach ${this.options.origin} (${code}): start the deployment (\`fxgate all\`) or give the URL it listens on with --url`,
          { cause: error },
        );
      }
      if (
        name === 'TimeoutError' ||
        name === 'AbortError' ||
        code === 'UND_ERR_HEADERS_TIMEOUT' ||
        code === 'UND_ERR_BODY_TIMEOUT'
      ) {
        throw new DeploymentError(
          `${what} was not answered within ${this.options.timeoutMs} ms: the deployment is stalled or overloaded (a longer --timeout gives it more time)`,
          { cause: error },
        );
      }
      throw new DeploymentError(
        `${what} failed: ${error instanceof Error ? error.message : String(error)}${code ? ` (${code})` : ''}`,
        { cause: error },
      );
    }
  }

  /** Sends, signing each attempt anew, and waits out a 429 a few times. */
  private async withRateLimits(
    method: string,
    path: string,
    headersFor: () => Promise<Record<string, string>>,
    body?: string,
  ): Promise<Answer> {
    const maxWait = this.options.maxRateLimitWaitMs ?? DEPLOYMENT_DEFAULTS.maxRateLimitWaitMs;
    for (let attempt = 1; ; attempt += 1) {
      const answer = await this.send(method, path, await headersFor(), body);
      if (answer.status !== 429 || attempt >= DEPLOYMENT_DEFAULTS.rateLimitAttempts) return answer;
      const seconds = Number(answer.headers['retry-after'] ?? '1');
      const waitMs = Math.max(100, Number.isFinite(seconds) ? seconds * 1000 : 1000);
      if (waitMs > maxWait) return answer;
      await sleep(waitMs);
    }
  }

  /** A signed v3 request; a write gets the Idempotency-Key given (the same on every attempt) or a fresh one. */
  v3(
    method: 'GET' | 'POST',
    path: string,
    options: { readonly body?: object; readonly idempotencyKey?: string } = {},
  ): Promise<Answer> {
    const body = options.body === undefined ? undefined : JSON.stringify(options.body);
    const idempotencyKey = method === 'POST' ? (options.idempotencyKey ?? `fxgate-diff-${randomUUID()}`) : undefined;
    return this.withRateLimits(
      method,
      path,
      () => this.signer.headers({ method, pathAndQuery: path, body, idempotencyKey }),
      body,
    );
  }

  /** A legacy request below `/{generation}/brokerage/{orgId}/`, with a fresh legacy token. */
  legacy(
    generation: string,
    method: 'GET' | 'POST',
    below: string,
    options: { readonly body?: string; readonly idempotencyKey?: string } = {},
  ): Promise<Answer> {
    const path = `/${generation}/brokerage/${this.orgId}/${below}`;
    return this.withRateLimits(
      method,
      path,
      async () => {
        const headers = await legacyRequestHeaders(this.options.key, {
          issuer: this.options.issuer,
          idempotencyKey: options.idempotencyKey,
        });
        // A GET carries no body; legacy clients send the JSON type on writes.
        if (options.body === undefined) delete headers['content-type'];
        return headers;
      },
      options.body,
    );
  }

  close(): Promise<void> {
    return this.pool.close();
  }
}
