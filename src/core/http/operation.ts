/**
 * A v3 operation, declared: method, path, required scope, schemas and handler. The pipeline
 * does everything else (ids, auth, limits, idempotency, validation, envelopes), so a handler
 * only sees a principal and validated input, and returns the success body.
 */
import type { FastifyBaseLogger } from 'fastify';
import type { z } from 'zod';

import type { Scope } from '../../lib/auth/credential-vocabulary.js';
import type { ErrorCode } from '../../lib/errors/v3-error-catalog.js';
import type { Principal } from '../principal.js';

export type HttpMethod = 'GET' | 'POST' | 'DELETE';

export interface OperationMeta {
  readonly method: HttpMethod;
  /** Fastify route syntax: `/v3/fx/trades/:id`. */
  readonly path: string;
  readonly scope: Scope;
  /** Sandbox-only operations answer SANDBOX_MODE_REQUIRED in live mode. */
  readonly sandboxOnly?: boolean;
}

export interface OperationContext<Query, Body> {
  readonly principal: Principal;
  readonly query: Query;
  readonly body: Body;
  readonly params: Readonly<Record<string, string>>;
  readonly requestId: string;
  /**
   * The write's Idempotency-Key and request fingerprint (null on reads). Money-moving rows store
   * them under a unique constraint: the second line of defence behind the idempotency store.
   */
  readonly idempotency: { readonly key: string; readonly fingerprint: string } | null;
  readonly log: FastifyBaseLogger;
  /** Records the id of the resource being written, so a 500 can name it: docs/contract.md#errors-recovery. */
  setResourceId(id: string): void;
}

/** The success response: 200 with this JSON body unless a status is given. */
export interface OperationResult<Response = Record<string, unknown>> {
  readonly status?: 200 | 201 | 202;
  readonly body: Response;
}

export interface Operation<
  Query = unknown,
  Body = unknown,
  Response extends Record<string, unknown> = Record<string, unknown>,
> extends OperationMeta {
  /** One line for the reference: what the operation does, in the imperative. */
  readonly summary: string;
  readonly query?: z.ZodType<Query>;
  /** Omitted, the operation takes no parameters: an empty body or `{}` (validateNoParameters). */
  readonly body?: z.ZodType<Body>;
  /** The success body, envelope included; the OpenAPI document is generated from it (src/core/openapi/). */
  readonly response: z.ZodType<Response>;
  /**
   * The codes the handler itself may answer. The pipeline's own codes (authentication, limits,
   * idempotency, validation) are not listed here: pipeline-errors.ts derives them from the
   * method, the schemas and sandboxOnly.
   */
  readonly errors?: readonly ErrorCode[];
  handle(context: OperationContext<Query, Body>): Promise<OperationResult<Response>>;
}

/** Keeps the Query, Body and Response types of one operation tied to its schemas: a handler cannot answer what `response` does not describe. */
export function defineOperation<
  Query = Record<string, never>,
  Body = undefined,
  Response extends Record<string, unknown> = Record<string, unknown>,
>(operation: Operation<Query, Body, Response>): Operation<Query, Body, Response> {
  return operation;
}

/** `/v3/fx/trades/:id` -> `/v3/fx/trades/{id}`, the form used in docs and error details. */
export function displayPath(path: string): string {
  return path.replace(/:([A-Za-z0-9_]+)/g, '{$1}');
}
