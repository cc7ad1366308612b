/**
 * The admin listener's bearer token (FXGATE_ADMIN_TOKEN). The listener serves org ids, key names
 * and client addresses; with a token set, every request must carry `Authorization: Bearer
 * <token>`, compared in constant time. On a loopback address a token is the operator's choice;
 * on any other address the listener is reachable from the network, and start-up is refused
 * without one. Part of lib's admin listener: it imports no part.
 */
import { createHash, timingSafeEqual } from 'node:crypto';
import { BlockList, isIP } from 'node:net';

import { AdminTokenRequiredError } from '../errors/internal-errors.js';

/** The shortest token taken: 32 characters, 192 bits when they are random base64. */
export const ADMIN_TOKEN_MIN_LENGTH = 32;

/** One `Bearer` credential: visible ASCII, no space (RFC 9110 header text, one token). */
export const ADMIN_TOKEN_PATTERN = /^[\x21-\x7e]+$/;

const LOOPBACK = new BlockList();
LOOPBACK.addSubnet('127.0.0.0', 8, 'ipv4');
LOOPBACK.addAddress('::1', 'ipv6');
// 127.0.0.0/8 written as an IPv4-mapped IPv6 address.
LOOPBACK.addSubnet('::ffff:127.0.0.0', 104, 'ipv6');

/**
 * Whether a host the listener binds or a peer address is loopback: 127.0.0.0/8, ::1 (in any
 * spelling, bracketed or not, IPv4-mapped included) or `localhost` (RFC 6761 keeps the name for
 * loopback). A wildcard (`0.0.0.0`, `::`) and every other name or address is not.
 */
export function isLoopbackHost(host: string): boolean {
  const address = host.replace(/^\[(.*)\]$/, '$1');
  if (address.toLowerCase() === 'localhost') return true;
  const family = isIP(address);
  return family !== 0 && LOOPBACK.check(address, family === 4 ? 'ipv4' : 'ipv6');
}

/** Throws AdminTokenRequiredError when the listener would be reachable off loopback without a token. */
export function checkAdminExposure(host: string, token: string | undefined): void {
  if (token === undefined && !isLoopbackHost(host)) throw new AdminTokenRequiredError(host, ADMIN_TOKEN_MIN_LENGTH);
}

const digest = (text: string): Buffer => createHash('sha256').update(text).digest();

/**
 * Whether an Authorization header is `Bearer <token>` (the scheme in any case, RFC 9110 11.1).
 * Equal-length digests are compared, so the time taken says nothing of how much of the token
 * was right, nor of its length.
 */
export function bearerTokenMatches(header: string | undefined, token: string): boolean {
  const sent = /^Bearer +([^\s]+)$/i.exec(header ?? '')?.[1] ?? '';
  return timingSafeEqual(digest(sent), digest(token));
}
