/**
 * The v3 service the gateway fronts: its origin, and one keep-alive undici Pool to it with
 * bounded connect, headers and body times, so that a dead or stalled upstream costs a client
 * a bounded wait rather than a hung request. The body time is per chunk: the total deadline of
 * each call is set by its caller (the relay, the V3Client), as undici bounds no whole answer.
 */
import { type Dispatcher, Pool } from 'undici';

import { InvalidUpstreamError } from '../../lib/errors/internal-errors.js';
import { parseServiceUrl } from '../../lib/net/service-url.js';

export interface UpstreamOptions {
  readonly origin: string;
  readonly connectTimeoutMs: number;
  /** For the response headers, and again between two chunks of the body. */
  readonly timeoutMs: number;
}

/**
 * The origin of an upstream URL. A base path is refused rather than prepended: v3 clients sign
 * the path exactly as they send it, so an upstream mounted under another path could never
 * verify a signature made for the gateway.
 */
export function upstreamOrigin(url: string): string {
  return parseServiceUrl(
    url,
    (parsed) =>
      parsed.pathname !== '/' || parsed.search !== '' || parsed.hash !== ''
        ? 'must be an origin only (scheme, host, port): v3 paths are signed as sent'
        : null,
    (reason) => {
      throw new InvalidUpstreamError(url, reason);
    },
  ).origin;
}

export function createUpstreamPool(options: UpstreamOptions): Pool {
  return new Pool(options.origin, {
    connect: { timeout: options.connectTimeoutMs },
    headersTimeout: options.timeoutMs,
    bodyTimeout: options.timeoutMs,
  });
}

/** Resolves when the upstream's /healthz answers 200 within timeoutMs; rejects otherwise. */
export async function probeUpstream(dispatcher: Dispatcher, timeoutMs: number): Promise<void> {
  const response = await dispatcher.request({
    method: 'GET',
    path: '/healthz',
    headersTimeout: timeoutMs,
    bodyTimeout: timeoutMs,
    signal: AbortSignal.timeout(timeoutMs),
  });
  await response.body.dump();
  if (response.statusCode !== 200) throw new Error(`upstream /healthz answered ${response.statusCode}`);
}
