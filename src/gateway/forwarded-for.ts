/**
 * X-Forwarded-For towards the upstream. The upstream sees the gateway's socket, so the client's
 * address travels in this header, and the upstream's IP allowlists check it. A chain the client
 * sent is kept only as far as it came through proxies this gateway trusts; otherwise any client
 * could name the address it wants to be checked as.
 */

/** The two fields of a fastify request this reads. */
export interface ClientAddresses {
  /** With trustProxy set: [socket, ...trusted hops, first untrusted address]; else undefined. */
  readonly ips?: string[];
  readonly ip: string;
}

export function forwardedFor(request: ClientAddresses): string {
  const chain = request.ips;
  // No trusted proxy (the default): the socket's address alone, with no list made for it.
  if (chain === undefined) return request.ip;
  return [...chain].reverse().join(', ');
}
