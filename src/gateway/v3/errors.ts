/**
 * Errors the gateway itself answers on /v3 (the upstream is down, a path it cannot forward
 * exactly): the v3 envelope from the shared catalog, as the upstream would have written it.
 */
import type { FastifyReply, FastifyRequest } from 'fastify';
import { ApiError } from '../../lib/errors/api-error.js';

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

/**
 * The gateway's last-resort error handler: an error no route answered becomes the v3 envelope,
 * logged as a failure. Except when the client has already closed its connection (its own timeout,
 * a load generator stopping): a proxied answer's stream is aborted on its way here, nothing can be
 * sent, and nothing failed on this side, so it is an info line, not one for the platform's alerts.
 */
export async function handleGatewayError(error: Error, request: FastifyRequest, reply: FastifyReply): Promise<FastifyReply> {
  if (reply.raw.destroyed) {
    request.log.info({ err: error }, 'client closed the connection before the answer');
    return reply;
  }
  request.log.error({ err: error }, 'gateway request failed');
  return sendV3Error(reply, error instanceof ApiError ? error : new ApiError('INTERNAL_ERROR', {}, { cause: error }));
}
