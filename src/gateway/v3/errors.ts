/**
 * Errors the gateway itself answers on /v3 (the upstream is down, a path it cannot forward
 * exactly): the v3 envelope from the shared catalog, as the upstream would have written it.
 */
import type { ApiError } from '../../lib/errors/api-error.js';

/** v3 counts GET and HEAD as reads; everything else is a write, whose retry advice differs. */
export function isWriteMethod(method: string): boolean {
  return method !== 'GET' && method !== 'HEAD';
}

/** The part of a fastify reply this needs, whatever server type the reply was made for. */
export interface ErrorReply {
  readonly request: { readonly method: string };
  code(statusCode: number): unknown;
  header(name: string, value: string): unknown;
  send(payload: unknown): unknown;
}

/** Sends the error and returns the reply, which an async fastify handler must return. */
export function sendV3Error<R extends ErrorReply>(reply: R, error: ApiError): R {
  for (const [name, value] of Object.entries(error.headers)) reply.header(name, value);
  reply.code(error.statusCode);
  reply.header('content-type', 'application/json; charset=utf-8');
  reply.send(error.toEnvelope(isWriteMethod(reply.request.method)));
  return reply;
}
