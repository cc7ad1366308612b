/**
 * ApiError: a cataloged v3 error on its way to the client. Throw it anywhere in the core; the
 * error handler turns it into the v3 envelope. Details are typed per code by the catalog.
 */
import type { z } from 'zod';

import {
  ERROR_CATALOG,
  type ErrorCode,
  type ErrorType,
  type RetryStrategy,
  retryStrategyFor,
} from './v3-error-catalog.js';

export type ErrorDetails<C extends ErrorCode> = z.input<(typeof ERROR_CATALOG)[C]['details']>;

/** Codes whose details are `{}`, so that callers may leave them out. */
type CodesWithoutDetails = {
  [C in ErrorCode]: keyof ErrorDetails<C> extends never ? C : never;
}[ErrorCode];

export interface ErrorEnvelope {
  readonly error: {
    readonly code: string;
    readonly type: ErrorType;
    readonly message: string;
    readonly retryStrategy: RetryStrategy;
    readonly details: Record<string, unknown>;
  };
}

export class ApiError<C extends ErrorCode = ErrorCode> extends Error {
  readonly code: C;
  readonly statusCode: number;
  readonly details: Record<string, unknown>;
  /** Extra response headers this error needs (Allow, Retry-After). */
  readonly headers: Readonly<Record<string, string>>;

  constructor(
    code: C,
    ...args: C extends CodesWithoutDetails
      ? [details?: ErrorDetails<C>, options?: ApiErrorOptions]
      : [details: ErrorDetails<C>, options?: ApiErrorOptions]
  ) {
    const [details, options] = args;
    super(
      options?.message ?? ERROR_CATALOG[code].message,
      options?.cause === undefined ? undefined : { cause: options.cause },
    );
    this.name = 'ApiError';
    this.code = code;
    this.statusCode = ERROR_CATALOG[code].status;
    this.details = (details ?? {}) as Record<string, unknown>;
    this.headers = options?.headers ?? {};
  }

  toEnvelope(isWrite: boolean): ErrorEnvelope {
    const row = ERROR_CATALOG[this.code];
    return {
      error: {
        code: this.code,
        type: row.type,
        message: this.message,
        retryStrategy: retryStrategyFor(this.code, isWrite),
        details: this.details,
      },
    };
  }
}

export interface ApiErrorOptions {
  readonly message?: string;
  readonly headers?: Readonly<Record<string, string>>;
  readonly cause?: unknown;
}

export function isApiError(value: unknown): value is ApiError {
  return value instanceof ApiError;
}
