/**
 * The legacy v1/v2 service the shadow mode runs beside, over HTTP. The gateway sends it only
 * what a client sent, as the client sent it (the client's own single-use token included; the
 * gateway never makes a token for it, and never presents a client's token anywhere else):
 *
 * - `relay`: the plain proxy of an org the legacy service still serves. Method, path, query,
 *   headers and body go as they came, the answer's status, headers and bytes come back as they
 *   came, within the deadline; a copy of the body is kept when the caller will compare it.
 * - `mirror`: a read the gateway has already answered, sent again as it came, for comparison,
 *   within the shadow timeout. Any failure is the caller's "not compared"; no client waits on it.
 *
 * It is reached only where the destination policy of the operator's own services allows
 * (src/lib/net/destination-policy.ts): a public or loopback address, or an allowed network;
 * checked at start-up on the URL as written and at every connection on the addresses its name
 * resolves to. A refused connection is a relay that never reached it, a mirror not compared.
 *
 * Hop-by-hop headers are not forwarded either way; the legacy service sees its own host in
 * `Host` and the client's address in `X-Forwarded-For`, as the /v3 passthrough sends them, and
 * `Via: 1.1 fxgate`, by which a gateway that receives the request again (FXGATE_SHADOW_URL
 * pointing at a gateway) serves it itself instead of sending it round once more. With tracing
 * on, the gateway's `traceparent` replaces the client's, each call a CLIENT span.
 */
import type { IncomingHttpHeaders } from 'node:http';
import type { Readable } from 'node:stream';

import type { FastifyReply, FastifyRequest } from 'fastify';
import type { Dispatcher, Pool } from 'undici';

import { InvalidLegacyServiceUrlError, LegacyTimeoutError } from '../../lib/errors/internal-errors.js';
import { operatorServicePolicy, type OutboundAllowance } from '../../lib/net/destination-policy.js';
import { guardedPool } from '../../lib/net/guarded-connector.js';
import { parseServiceUrl } from '../../lib/net/service-url.js';
import { type HttpClientSpan, startHttpClientSpan } from '../../lib/tracing/http-client-span.js';
import { TRACERS, tracingActive } from '../../lib/tracing/spans.js';
import { forwardedFor } from '../forwarded-for.js';
import { errorCodesOf, NOT_SENT_CODES } from '../upstream/error-codes.js';
import { endToEndHeaders } from '../upstream/relay.js';

/**
 * With tracing on, the CLIENT span of a call to the legacy service, named by the legacy route's
 * template (never the path, which carries the org id), its `traceparent` in the headers sent.
 */
function traceLegacyCall(
  request: FastifyRequest,
  headers: IncomingHttpHeaders,
  use: 'relay' | 'mirror',
): HttpClientSpan | null {
  if (!tracingActive()) return null;
  return startHttpClientSpan(
    TRACERS.gateway,
    {
      method: use === 'mirror' ? 'GET' : request.method,
      template: request.routeOptions.url,
      attributes: { 'fxgate.shadow.call': use },
    },
    headers,
  );
}

/** What the gateway adds to `Via` on what it sends on (RFC 9110 7.6.3). */
export const VIA = '1.1 fxgate';

/** Whether a request has already been sent on by a gateway (its `Via` names one). */
export function cameThroughGateway(via: string | string[] | undefined): boolean {
  if (via === undefined) return false;
  return (Array.isArray(via) ? via : [via]).some((value) => value.split(',').some((hop) => hop.trim() === VIA));
}

/** The most of a legacy answer kept for comparison; legacy pages are at most 50 records, far below it. */
export const MAX_COMPARED_BODY_BYTES = 4 * 1024 * 1024;

export interface LegacyAnswerBytes {
  readonly status: number;
  readonly body: Buffer;
}

export interface LegacyServiceOptions {
  /** Its base URL: an origin, optionally with a path the legacy paths sit under. */
  readonly url: string;
  readonly connectTimeoutMs: number;
  /** For the answer's headers, and again between two chunks of its body. */
  readonly timeoutMs: number;
  /** What carries the calls instead of a Pool of its own (left open on close). */
  readonly dispatcher?: Dispatcher;
  /** The private networks it may be in besides loopback (FXGATE_WEBHOOK_ALLOWED_NETWORKS), and the resolver. */
  readonly outbound?: OutboundAllowance;
}

/** How refusals name the service, so that the operator knows which setting to look at. */
const SERVICE_NAME = 'the legacy service (FXGATE_SHADOW_URL)';

/** The relay could not get an answer. `mayHaveReached`: false only when the request certainly never reached the legacy service. */
export type RelayFailure = (reply: FastifyReply, error: unknown, mayHaveReached: boolean) => void;

function parseBase(url: string): { origin: string; prefix: string } {
  const parsed = parseServiceUrl(
    url,
    (place) => (place.search !== '' || place.hash !== '' ? 'must not carry a query or fragment' : null),
    (reason) => {
      throw new InvalidLegacyServiceUrlError(url, reason);
    },
  );
  return { origin: parsed.origin, prefix: parsed.pathname.replace(/\/+$/, '') };
}

/** The request body to forward: the client's stream, when it announced one. */
function bodyOf(request: FastifyRequest): Readable | null {
  const { headers } = request.raw;
  const announced =
    headers['transfer-encoding'] !== undefined ||
    (headers['content-length'] !== undefined && headers['content-length'] !== '0');
  return announced ? request.raw : null;
}

/** Resolves when the client's socket takes more, or is gone. */
function drained(response: FastifyReply['raw']): Promise<void> {
  return new Promise((resolve) => {
    const done = (): void => {
      response.off('drain', done);
      response.off('close', done);
      resolve();
    };
    response.once('drain', done);
    response.once('close', done);
  });
}

export class LegacyService {
  private readonly origin: string;
  private readonly prefix: string;
  private readonly host: string;
  private readonly ownPool: Pool | null;
  private readonly dispatcher: Dispatcher;

  constructor(options: LegacyServiceOptions) {
    const { origin, prefix } = parseBase(options.url);
    // The operator's own service: public, loopback or an allowed network; its name is checked again at every connection.
    const destinations = operatorServicePolicy(SERVICE_NAME, options.outbound);
    const refusal = destinations.refusalOf(new URL(origin));
    if (refusal !== null) throw new InvalidLegacyServiceUrlError(options.url, refusal);
    this.origin = origin;
    this.prefix = prefix;
    this.host = new URL(origin).host;
    this.ownPool = options.dispatcher
      ? null
      : guardedPool(destinations, origin, {
          connect: { timeout: options.connectTimeoutMs },
          headersTimeout: options.timeoutMs,
          bodyTimeout: options.timeoutMs,
        });
    this.dispatcher = options.dispatcher ?? this.ownPool!;
  }

  private headersOf(request: FastifyRequest, withBody: boolean): IncomingHttpHeaders {
    const headers = endToEndHeaders(request.headers);
    headers.host = this.host;
    headers['x-forwarded-for'] = forwardedFor(request);
    headers.via = headers.via === undefined ? VIA : `${String(headers.via)}, ${VIA}`;
    if (withBody) return headers;
    const bodiless: IncomingHttpHeaders = {};
    for (const name in headers)
      if (name !== 'content-length' && name !== 'transfer-encoding') bodiless[name] = headers[name];
    return bodiless;
  }

  /**
   * Relays the client's request and the answer. Resolves once the client has the answer (or
   * has been given `onFailure`'s), with the answer's bytes when `capture` and the body was whole
   * and not over MAX_COMPARED_BODY_BYTES; else null. A client that leaves does not stop the
   * legacy service's answer from being read to its end: the request still took effect there.
   */
  async relay(
    request: FastifyRequest,
    reply: FastifyReply,
    options: { readonly deadlineMs: number; readonly capture: boolean; readonly onFailure: RelayFailure },
  ): Promise<LegacyAnswerBytes | null> {
    const body = bodyOf(request);
    const controller = new AbortController();
    const timer = setTimeout(() => controller.abort(new LegacyTimeoutError(options.deadlineMs)), options.deadlineMs);
    const sent = this.headersOf(request, body !== null);
    const span = traceLegacyCall(request, sent, 'relay');
    try {
      let answer: Dispatcher.ResponseData;
      try {
        answer = await this.dispatcher.request({
          origin: this.origin,
          path: this.prefix + request.url,
          method: request.method as Dispatcher.HttpMethod,
          headers: sent,
          body,
          signal: controller.signal,
        });
      } catch (error) {
        span?.failed(error);
        options.onFailure(reply, error, !errorCodesOf(error).some((code) => NOT_SENT_CODES.has(code)));
        return null;
      }
      const response = reply.raw;
      reply.hijack();
      const kept: Buffer[] | null = options.capture ? [] : null;
      let size = 0;
      let whole = true;
      // From here the reply is ours alone: whatever fails ends the span and cuts the client, who would otherwise wait for an answer fastify no longer sends.
      try {
        const headers = endToEndHeaders(answer.headers as IncomingHttpHeaders);
        // A client still sending a body the legacy service did not wait for would be left writing into a connection nobody reads.
        if (!request.raw.complete) headers.connection = 'close';
        if (!response.destroyed) response.writeHead(answer.statusCode, headers);
        for await (const chunk of answer.body as AsyncIterable<Buffer>) {
          if (kept !== null && whole) {
            size += chunk.length;
            if (size > MAX_COMPARED_BODY_BYTES) whole = false;
            else kept.push(chunk);
          }
          if (!response.destroyed && !response.write(chunk)) await drained(response);
        }
      } catch (error) {
        span?.failed(error);
        // Broken off after its headers, or they could not be written: cut the client too, so a truncated body never looks whole.
        request.log.warn(
          { err: error },
          response.headersSent
            ? 'legacy answer broke off after its headers were sent'
            : 'legacy answer has a head this server cannot write',
        );
        response.destroy(error instanceof Error ? error : new Error(String(error)));
        return null;
      }
      response.end();
      span?.answered(answer.statusCode);
      return kept !== null && whole ? { status: answer.statusCode, body: Buffer.concat(kept) } : null;
    } finally {
      clearTimeout(timer);
    }
  }

  /**
   * A read sent again as it came: its status and whole body within timeoutMs, or a rejection.
   * Through undici's dispatch API, the chunks collected as they come: no stream is built for an
   * answer nobody reads but the comparison, on every mirrored read.
   */
  mirror(request: FastifyRequest, timeoutMs: number): Promise<LegacyAnswerBytes> {
    return new Promise((resolve, reject) => {
      const chunks: Buffer[] = [];
      let size = 0;
      let status = 0;
      let controller: Dispatcher.DispatchController | null = null;
      let settled = false;
      const headers = this.headersOf(request, false);
      const span = traceLegacyCall(request, headers, 'mirror');
      const settle = (error: Error | null): void => {
        if (settled) return;
        settled = true;
        clearTimeout(timer);
        if (error === null) {
          span?.answered(status);
          resolve({ status, body: Buffer.concat(chunks, size) });
        } else {
          span?.failed(error);
          reject(error);
        }
      };
      const timer = setTimeout(() => {
        const error = new LegacyTimeoutError(timeoutMs);
        controller?.abort(error);
        settle(error);
      }, timeoutMs);
      const tooLarge = (): Error => new Error(`the legacy answer is larger than ${MAX_COMPARED_BODY_BYTES} bytes`);
      this.dispatcher.dispatch(
        {
          origin: this.origin,
          path: this.prefix + request.url,
          method: 'GET',
          headers,
          headersTimeout: timeoutMs,
          bodyTimeout: timeoutMs,
        },
        {
          onRequestStart(started) {
            controller = started;
            if (settled) started.abort(new LegacyTimeoutError(timeoutMs));
          },
          onResponseStart(started, statusCode, headers) {
            if (statusCode < 200) return;
            status = statusCode;
            if (Number(headers['content-length'] ?? 0) > MAX_COMPARED_BODY_BYTES) started.abort(tooLarge());
          },
          onResponseData(started, chunk) {
            size += chunk.length;
            if (size > MAX_COMPARED_BODY_BYTES) started.abort(tooLarge());
            else chunks.push(chunk);
          },
          onResponseEnd() {
            settle(null);
          },
          onResponseError(_started, error) {
            settle(error);
          },
        },
      );
    });
  }

  async close(): Promise<void> {
    await this.ownPool?.close();
  }
}
