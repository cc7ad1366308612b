/**
 * The private networks an operator allows outbound calls into (FXGATE_WEBHOOK_ALLOWED_NETWORKS):
 * in-house webhook receivers, a stand-alone gateway's receiver, a legacy service on the internal
 * network. Each entry is a CIDR (a bare address is its own /32 or /128), checked when the
 * configuration is read so that a typo stops start-up instead of opening or closing a door
 * silently. Part of lib; pure.
 */
import { isIP } from 'node:net';

import ipaddr from 'ipaddr.js';

import { NetworkListError } from '../errors/internal-errors.js';
import { type AddressClass, classifyAddress, type IpAddress, parseIpLiteral, reachedAddress } from './address-class.js';

/** The setting the list comes from, named in the hints of refusals. */
export const ALLOWED_NETWORKS_SETTING = 'FXGATE_WEBHOOK_ALLOWED_NETWORKS';

/** Kinds no receiver can be at: allowing them would mean nothing, or everything. */
const NEVER_ALLOWED: ReadonlySet<AddressClass> = new Set(['unspecified', 'multicast', 'broadcast']);

/** The networks of a list, canonical (`10.0.0.0/8`), and what is wrong with each bad entry. */
export function readNetworkList(entries: readonly string[]): { networks: string[]; problems: string[] } {
  const networks: string[] = [];
  const problems: string[] = [];
  for (const entry of entries) {
    const checked = checkNetwork(entry);
    if (typeof checked === 'string') {
      if (!networks.includes(checked)) networks.push(checked);
    } else {
      problems.push(`${JSON.stringify(entry.slice(0, 64))} ${checked.problem}`);
    }
  }
  return { networks, problems };
}

function checkNetwork(entry: string): string | { problem: string } {
  const [address = '', prefixText, ...rest] = entry.split('/');
  const family = isIP(address);
  if (family === 0 || rest.length > 0 || (prefixText !== undefined && !/^[0-9]{1,3}$/.test(prefixText)))
    return { problem: 'is not a network: write a CIDR such as 10.0.0.0/8 or fd00::/8, or a single address' };
  const bits = family === 4 ? 32 : 128;
  const prefix = prefixText === undefined ? bits : Number(prefixText);
  if (prefix > bits) return { problem: `has a prefix longer than ${bits} bits` };
  const parsed = parseIpLiteral(family === 6 ? `[${address}]` : address)!;
  if (parsed.kind() === 'ipv6' && (parsed as ipaddr.IPv6).isIPv4MappedAddress())
    return { problem: 'is an IPv4-mapped IPv6 network: write it as IPv4, such as 10.0.0.0/8' };
  const first =
    family === 4
      ? ipaddr.IPv4.networkAddressFromCIDR(`${parsed.toString()}/${prefix}`)
      : ipaddr.IPv6.networkAddressFromCIDR(`${parsed.toString()}/${prefix}`);
  const network = `${first.toString()}/${prefix}`;
  if (first.toString() !== parsed.toString())
    return { problem: `has bits set past its prefix: the network is ${network}` };
  const last =
    family === 4 ? ipaddr.IPv4.broadcastAddressFromCIDR(network) : ipaddr.IPv6.broadcastAddressFromCIDR(network);
  // Aligned blocks: a network whose first and last addresses are of one kind lies inside one block of it.
  const [from, to] = [classifyAddress(first), classifyAddress(last)];
  if (from.class !== to.class)
    return {
      problem: `spans addresses of different kinds (${from.text} is ${from.description}, ${to.text} ${to.description}); name each private network on its own`,
    };
  if (from.class === 'public') return { problem: 'is public: public addresses are allowed already' };
  if (NEVER_ALLOWED.has(from.class)) return { problem: `cannot hold a receiver: ${from.text} is ${from.description}` };
  return network;
}

export class AllowedNetworks {
  /** No network allowed beyond what the rules allow by themselves. */
  static readonly NONE = new AllowedNetworks([]);

  private readonly ranges: readonly (readonly [IpAddress, number])[];

  private constructor(readonly cidrs: readonly string[]) {
    this.ranges = cidrs.map((cidr) => ipaddr.parseCIDR(cidr));
  }

  /** The networks of a list (FXGATE_WEBHOOK_ALLOWED_NETWORKS); throws NetworkListError naming every bad entry. */
  static of(entries: readonly string[]): AllowedNetworks {
    const { networks, problems } = readNetworkList(entries);
    if (problems.length > 0) throw new NetworkListError(problems);
    return networks.length === 0 ? AllowedNetworks.NONE : new AllowedNetworks(networks);
  }

  get empty(): boolean {
    return this.ranges.length === 0;
  }

  /** Whether a connection to the address stays inside an allowed network (an IPv4-mapped address counts as its IPv4 address). */
  contains(address: IpAddress): boolean {
    const reached = reachedAddress(address);
    return this.ranges.some(([network, prefix]) => network.kind() === reached.kind() && reached.match(network, prefix));
  }
}
