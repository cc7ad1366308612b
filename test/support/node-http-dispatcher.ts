/**
 * An undici Dispatcher that sends each request with node:http, so that nock, which patches
 * node:http, can stand in for v3 in the gateway's unit tests.
 *
 * Why it exists: the gateway calls v3 through undici (its Pool), which writes to its sockets
 * itself, below anything nock sees (nock/nock#2183). The gateway takes any Dispatcher as
 * `upstreamDispatcher`; this one hands the request to node:http and feeds the answer back
 * through the handler callbacks undici's `request()` gives it (onConnect, onHeaders, onData,
 * onComplete, onError). Test code only: the product never sends through node:http.
 *
 * What it does not do: timeouts (the gateway's own Pool and the scripted-v3 tests cover them),
 * upgrades, CONNECT, trailers, or request bodies given as streams.
 */
import http, { Agent, type IncomingMessage, type OutgoingHttpHeaders } from 'node:http';

import { Dispatcher } from 'undici';

/** The callbacks undici's `request()` passes to `dispatch` (undici 7's RequestHandler). */
interface LegacyDispatchHandler {
  onConnect?(abort: (reason?: Error) => void): void;
  onHeaders?(statusCode: number, rawHeaders: Buffer[], resume: () => void, statusMessage: string): boolean | void;
  onData?(chunk: Buffer): boolean | void;
  onComplete?(trailers: Buffer[] | null): void;
  onError?(error: Error): void;
}

function headersOf(headers: Dispatcher.DispatchOptions['headers']): OutgoingHttpHeaders {
  if (headers === undefined || headers === null) return {};
  if (Array.isArray(headers)) {
    const out: OutgoingHttpHeaders = {};
    for (let index = 0; index + 1 < headers.length; index += 2)
      out[String(headers[index])] = String(headers[index + 1]);
    return out;
  }
  if (Symbol.iterator in headers) return Object.fromEntries(headers as Iterable<[string, string]>);
  return { ...(headers as Record<string, string | string[]>) };
}

function bodyOf(body: Dispatcher.DispatchOptions['body']): Buffer | string | undefined {
  if (body === undefined || body === null) return undefined;
  if (typeof body === 'string' || Buffer.isBuffer(body)) return body;
  if (body instanceof Uint8Array) return Buffer.from(body);
  throw new TypeError('NodeHttpDispatcher sends string and Buffer bodies only');
}

export class NodeHttpDispatcher extends Dispatcher {
  private readonly agent = new Agent({ keepAlive: false });

  /** @param origin Where requests without an `origin` of their own go, as an undici Pool would send them. */
  constructor(private readonly origin: string) {
    super();
  }

  override dispatch(options: Dispatcher.DispatchOptions, handler: Dispatcher.DispatchHandler): boolean {
    const callbacks = handler as LegacyDispatchHandler;
    const url = new URL(options.path, options.origin ?? this.origin);
    // Looked up per call: nock patches the module object, and this file may load before nock does.
    const outgoing = http.request(url, {
      method: options.method,
      headers: headersOf(options.headers),
      agent: this.agent,
    });
    let failed = false;
    const fail = (error: Error) => {
      if (failed) return;
      failed = true;
      callbacks.onError?.(error);
    };
    callbacks.onConnect?.((reason) => outgoing.destroy(reason ?? new Error('aborted')));
    outgoing.on('error', fail);
    outgoing.on('response', (response: IncomingMessage) => {
      const rawHeaders = response.rawHeaders.map((value) => Buffer.from(value, 'latin1'));
      callbacks.onHeaders?.(
        response.statusCode ?? 0,
        rawHeaders,
        () => response.resume(),
        response.statusMessage ?? '',
      );
      response.on('data', (chunk: Buffer) => {
        if (callbacks.onData?.(chunk) === false) response.pause();
      });
      response.on('end', () => {
        if (!failed) callbacks.onComplete?.([]);
      });
      response.on('error', fail);
    });
    outgoing.end(bodyOf(options.body));
    return true;
  }

  override async close(): Promise<void> {
    this.agent.destroy();
  }

  override async destroy(): Promise<void> {
    this.agent.destroy();
  }
}
