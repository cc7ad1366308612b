/**
 * A v3 operation, declared: method, path, required scope, schemas and handler. The pipeline
 * does everything else (ids, auth, limits, idempotency, validation, envelopes), so a handler
 * only sees a principal and validated input, and returns the success body.
 */
import type { FastifyBaseLogger } from 'fastify';
import type { z } from 'zod';
import type { Scope } from '../../lib/auth/credentials.js';
import type { Principal } from './request-state.js';

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
export interface OperationResult {
  readonly status?: 200 | 201 | 202;
  readonly body: Record<string, unknown>;
}

export interface Operation<Query = unknown, Body = unknown> extends OperationMeta {
  readonly query?: z.ZodType<Query>;
  /** Omitted, the operation takes no parameters: an empty body or `{}` (validateNoParameters). */
  readonly body?: z.ZodType<Body>;
  handle(context: OperationContext<Query, Body>): Promise<OperationResult>;
}

/** Keeps the Query and Body types of one operation tied to its schemas. */
export function defineOperation<Query = Record<string, never>, Body = undefined>(operation: Operation<Query, Body>): Operation<Query, Body> {
  return operation;
}

/** `/v3/fx/trades/:id` -> `/v3/fx/trades/{id}`, the form used in docs and error details. */
export function displayPath(path: string): string {
  return path.replace(/:([A-Za-z0-9_]+)/g, '{$1}');
}
