/**
 * What kind of IP address an address is, in words an integrator can act on: a public (globally
 * routable unicast) address, or one of the special-purpose blocks: loopback, private, link-local
 * and the rest. The blocks are ipaddr.js's, from IANA's special-purpose registries; IPv6 is
 * public only inside 2000::/3, the global unicast space. An IPv4-mapped address is of its IPv4
 * address's kind (a socket reaches that address); a NAT64 address of a public IPv4 address is
 * public; every other IPv6 form of an IPv4 address (IPv4-compatible, NAT64 of a private one) is
 * refused everywhere, its description naming the IPv4 address. Part of lib; pure.
 */
import { isIP } from 'node:net';

import ipaddr from 'ipaddr.js';

export type IpAddress = ipaddr.IPv4 | ipaddr.IPv6;

export type AddressClass =
  | 'public'
  | 'loopback'
  | 'private'
  | 'shared'
  | 'link-local'
  | 'unique-local'
  | 'unspecified'
  | 'multicast'
  | 'broadcast'
  | 'special-purpose';

export interface ClassifiedAddress {
  /** The address as written in reasons: dotted quad, or RFC 5952 IPv6. */
  readonly text: string;
  readonly class: AddressClass;
  /** Its kind in words, such as "a link-local address (cloud metadata)". */
  readonly description: string;
}

/**
 * An IP literal, as a URL's hostname ([::1] with its brackets), a connector or a resolver
 * writes it; null for a name. Only the canonical forms count (net.isIP): the URL parser has
 * already turned 2130706433 or 0x7f.1 into 127.0.0.1, and any other text is a name to resolve.
 */
export function parseIpLiteral(host: string): IpAddress | null {
  const bracketed = host.startsWith('[') && host.endsWith(']');
  const bare = bracketed ? host.slice(1, -1) : host;
  const family = isIP(bare);
  if (family === 4 && !bracketed) return ipaddr.IPv4.parse(bare);
  if (family === 6) return parseIpv6(bare);
  return null;
}

/**
 * ipaddr.js reads `::a.b.c.d` as IPv4-mapped, a convenience of its own; RFC 4291 and every
 * socket read it as IPv4-compatible (::7f00:1), so the dotted tail is written in hex first. A
 * zone (`fe80::1%eth0`) says nothing about the address's kind and is left out.
 */
function parseIpv6(text: string): ipaddr.IPv6 {
  const address = text.split('%', 1)[0]!;
  const hex = address.replace(/(\d+)\.(\d+)\.(\d+)\.(\d+)$/, (_match, a: string, b: string, c: string, d: string) =>
    [Number(a) * 256 + Number(b), Number(c) * 256 + Number(d)].map((part) => part.toString(16)).join(':'),
  );
  return ipaddr.IPv6.parse(hex);
}

interface Kind {
  readonly class: AddressClass;
  readonly description: string;
}

/** ipaddr.js's ranges that mean the same in both families. */
const EITHER_FAMILY: Readonly<Record<string, Kind>> = {
  unicast: { class: 'public', description: 'a public address' },
  loopback: { class: 'loopback', description: 'a loopback address' },
  multicast: { class: 'multicast', description: 'a multicast address' },
};

const IPV4_KINDS: Readonly<Record<string, Kind>> = {
  ...EITHER_FAMILY,
  private: { class: 'private', description: 'a private address' },
  carrierGradeNat: { class: 'shared', description: 'a shared address (carrier-grade NAT)' },
  linkLocal: { class: 'link-local', description: 'a link-local address (cloud metadata)' },
  unspecified: { class: 'unspecified', description: 'an unspecified address (this network)' },
  broadcast: { class: 'broadcast', description: 'the broadcast address' },
  reserved: {
    class: 'special-purpose',
    description: 'a reserved address (documentation, benchmarking, or future use)',
  },
};

const IPV6_KINDS: Readonly<Record<string, Kind>> = {
  ...EITHER_FAMILY,
  uniqueLocal: { class: 'unique-local', description: 'a unique local address (private IPv6)' },
  deprecatedSiteLocal: { class: 'private', description: 'a site-local address (private IPv6)' },
  linkLocal: { class: 'link-local', description: 'a link-local address' },
  unspecified: { class: 'unspecified', description: 'the unspecified address' },
  reserved: { class: 'special-purpose', description: 'a reserved address (documentation or future use)' },
};

/** Any other block of either registry (AS112, AMT, Teredo, 6to4, discard, ORCHID ...). */
const SPECIAL_PURPOSE: Kind = { class: 'special-purpose', description: 'a special-purpose address' };

/** IPv6 unicast outside 2000::/3 is not assigned for global use. */
const NOT_GLOBAL_IPV6: Kind = {
  class: 'special-purpose',
  description: 'an IPv6 address outside the global unicast space (2000::/3)',
};

/** The NAT64 well-known prefix 64:ff9b::/96 (RFC 6052): the last 32 bits are the IPv4 address reached. */
function isNat64(parts: readonly number[]): boolean {
  return parts[0] === 0x64 && parts[1] === 0xff9b && parts.slice(2, 6).every((part) => part === 0);
}

/** The IPv4 address an IPv6 form carries, and the form's name; null for any other IPv6 address. */
function embeddedIpv4(address: ipaddr.IPv6): { ipv4: ipaddr.IPv4; form: string } | null {
  const { parts } = address;
  const tail = () => new ipaddr.IPv4([parts[6]! >> 8, parts[6]! & 0xff, parts[7]! >> 8, parts[7]! & 0xff]);
  if (address.isIPv4MappedAddress()) return { ipv4: address.toIPv4Address(), form: 'IPv4-mapped' };
  if (isNat64(parts)) return { ipv4: tail(), form: 'NAT64' };
  // ::a.b.c.d (deprecated by RFC 4291); :: and ::1 are themselves, not 0.0.0.0 and 0.0.0.1.
  const range = address.range() as string;
  if (parts.slice(0, 6).every((part) => part === 0) && range !== 'unspecified' && range !== 'loopback')
    return { ipv4: tail(), form: 'IPv4-compatible' };
  return null;
}

function classifyIpv4(address: ipaddr.IPv4): ClassifiedAddress {
  const kind = IPV4_KINDS[address.range() as string] ?? SPECIAL_PURPOSE;
  return { text: address.toString(), ...kind };
}

export function classifyAddress(address: IpAddress): ClassifiedAddress {
  if (address.kind() === 'ipv4') return classifyIpv4(address as ipaddr.IPv4);
  const v6 = address as ipaddr.IPv6;
  const text = v6.toString();
  const embedded = embeddedIpv4(v6);
  if (embedded !== null) {
    const reached = classifyIpv4(embedded.ipv4);
    // A socket reaches an IPv4-mapped address's IPv4 address itself: it is of that kind.
    if (embedded.form === 'IPv4-mapped')
      return { text, class: reached.class, description: `${reached.text} (IPv4-mapped), ${reached.description}` };
    // NAT64 reaches a public IPv4 address through a translator on the network, never one of this machine's.
    if (embedded.form === 'NAT64' && reached.class === 'public')
      return { text, class: 'public', description: `${reached.text} through NAT64, a public address` };
    // Anything else leaves as IPv6 towards no such IPv4 address: allowed nowhere, not even as loopback.
    const kind = reached.class === 'public' ? 'an obsolete form' : reached.description;
    return { text, class: 'special-purpose', description: `${reached.text} (${embedded.form}), ${kind}` };
  }
  const range = v6.range() as string;
  const kind = IPV6_KINDS[range] ?? SPECIAL_PURPOSE;
  if (kind.class === 'public' && (v6.parts[0]! & 0xe000) !== 0x2000) return { text, ...NOT_GLOBAL_IPV6 };
  return { text, ...kind };
}

/** The address a connection to this one reaches, for matching networks: an IPv4-mapped address is its IPv4 address. */
export function reachedAddress(address: IpAddress): IpAddress {
  return address.kind() === 'ipv6' && (address as ipaddr.IPv6).isIPv4MappedAddress()
    ? (address as ipaddr.IPv6).toIPv4Address()
    : address;
}
