/**
 * The one destination policy of every URL fxgate calls on someone's say-so: v3 webhook endpoints
 * (set by a tenant), legacy webhook subscriptions and the shadow legacy service (set by the
 * operator). It decides twice. At registration, on the host as written: an IP literal of a
 * refused kind, or a name that is never public (`localhost`, `.internal`). When connecting, on
 * every address the name resolves to, before any socket exists; guarded-connector.ts then
 * connects to exactly the addresses checked. By default only public addresses are allowed;
 * the rules add loopback, the operator's networks (FXGATE_WEBHOOK_ALLOWED_NETWORKS) and exact
 * host:port destinations. Part of lib; touches the network only through its resolver.
 */
import { lookup } from 'node:dns/promises';

import type { Mode } from '../auth/credential-vocabulary.js';
import { DestinationRefusedError } from '../errors/internal-errors.js';
import { type ClassifiedAddress, classifyAddress, type IpAddress, parseIpLiteral } from './address-class.js';
import { ALLOWED_NETWORKS_SETTING, AllowedNetworks } from './allowed-networks.js';

export interface ResolvedAddress {
  readonly address: string;
  readonly family: number;
}

/** Every address a name has, as dns.lookup with `all: true` gives them. */
export type Resolver = (hostname: string) => Promise<readonly ResolvedAddress[]>;

/** The operating system's resolver, as a socket would use it. */
export const systemResolver: Resolver = (hostname) => lookup(hostname, { all: true });

/** The port a URL reaches: its own, or its scheme's. */
export function effectivePort(url: URL): number {
  return url.port === '' ? (url.protocol === 'https:' ? 443 : 80) : Number(url.port);
}

/** A name as DNS compares it: lower case, without the root's trailing dot. */
function normaliseName(host: string): string {
  return host.toLowerCase().replace(/\.$/, '');
}

function destinationKey(host: string, port: number): string {
  const literal = parseIpLiteral(host);
  return `${literal === null ? normaliseName(host) : literal.toString()} ${port}`;
}

/**
 * host:port pairs allowed as written, whatever their address: the service's own public listener
 * (`fxgate all` registers its legacy webhook receiver there). Anything sent there, a tenant
 * could send from outside anyway.
 */
export class ExactDestinations {
  private readonly allowed = new Set<string>();

  /** Allows the host and port of a URL. */
  allow(url: string): void {
    const parsed = new URL(url);
    this.allowed.add(destinationKey(parsed.hostname, effectivePort(parsed)));
  }

  has(host: string, port: number): boolean {
    return this.allowed.has(destinationKey(host, port));
  }
}

/** A name that is never public, whatever it resolves to; null for any other name. */
function reservedName(name: string): { readonly loopback: boolean; readonly description: string } | null {
  if (name === 'localhost' || name.endsWith('.localhost'))
    return { loopback: true, description: 'a loopback name (localhost)' };
  if (name === 'internal' || name.endsWith('.internal'))
    return { loopback: false, description: 'a private name (.internal is never public)' };
  return null;
}

const LOOPBACK = parseIpLiteral('127.0.0.1')!;

export interface DestinationRules {
  /** Loopback addresses, and `localhost` names. */
  readonly loopback: boolean;
  /** Private networks allowed besides (FXGATE_WEBHOOK_ALLOWED_NETWORKS); `.internal` names once there is one. */
  readonly networks: AllowedNetworks;
  readonly exact: ExactDestinations;
  /** What is allowed, said after every refusal: "live webhooks must reach a public address". */
  readonly requirement: string;
}

export class DestinationPolicy {
  constructor(
    readonly rules: DestinationRules,
    private readonly resolver: Resolver = systemResolver,
  ) {}

  /** Whether host:port is an exact destination, allowed as written. */
  isExact(host: string, port: number): boolean {
    return this.rules.exact.has(host, port);
  }

  /**
   * On the URL's host as written (at registration, and again before every attempt): why it is
   * refused, or null. A name allowed here is checked again, resolved, at every connection. Text
   * that is no URL is refused as such.
   */
  refusalOf(target: URL | string): string | null {
    if (typeof target === 'string' && !URL.canParse(target)) return `${target.slice(0, 200)} is not an absolute URL`;
    const url = typeof target === 'string' ? new URL(target) : target;
    if (this.isExact(url.hostname, effectivePort(url))) return null;
    const literal = parseIpLiteral(url.hostname);
    if (literal === null) return this.nameRefusal(normaliseName(url.hostname));
    const refused = this.refusedAddress(literal);
    return refused === null ? null : this.because(`${refused.text} is ${refused.description}`);
  }

  /**
   * Whether the URL reaches the sender's own machine (a loopback address or name) or the
   * service's own listener, where TLS protects nothing: plain http is accepted there in live.
   */
  reachesItself(url: URL): boolean {
    if (this.isExact(url.hostname, effectivePort(url))) return true;
    const literal = parseIpLiteral(url.hostname);
    if (literal !== null) return classifyAddress(literal).class === 'loopback';
    return reservedName(normaliseName(url.hostname))?.loopback === true;
  }

  /**
   * When connecting: the addresses a connection to `host` may use, every one of them checked,
   * or DestinationRefusedError. A literal is checked as it is; a name is resolved once, and
   * refused if any of its addresses is (a name that also points inward is not a public name).
   */
  async addressesOf(host: string): Promise<ResolvedAddress[]> {
    const literal = parseIpLiteral(host);
    if (literal !== null) {
      const refused = this.refusedAddress(literal);
      if (refused !== null)
        throw new DestinationRefusedError(this.because(`${refused.text} is ${refused.description}`));
      return [{ address: literal.toString(), family: literal.kind() === 'ipv4' ? 4 : 6 }];
    }
    const name = normaliseName(host);
    const refusal = this.nameRefusal(name);
    if (refusal !== null) throw new DestinationRefusedError(refusal);
    const resolved = await this.resolver(host);
    const addresses: ResolvedAddress[] = [];
    for (const entry of resolved) {
      const address = parseIpLiteral(entry.address);
      if (address === null)
        throw new DestinationRefusedError(this.because(`${name} resolved to ${entry.address}, not an IP address`));
      const refused = this.refusedAddress(address);
      if (refused !== null)
        throw new DestinationRefusedError(this.because(`${name} resolved to ${refused.text}, ${refused.description}`));
      // As the resolver wrote it (an IPv6 zone included): it is the text just checked.
      addresses.push({ address: entry.address, family: address.kind() === 'ipv4' ? 4 : 6 });
    }
    if (addresses.length === 0)
      throw Object.assign(new Error(`${name} resolved to no address`), { code: 'ENOTFOUND', hostname: name });
    return addresses;
  }

  /** After connecting, the last assertion: why the socket's peer is refused, or null. */
  peerRefusal(address: string | undefined): string | null {
    const literal = address === undefined ? null : parseIpLiteral(address);
    if (literal === null) return this.because(`the connection's peer address is unknown (${String(address)})`);
    const refused = this.refusedAddress(literal);
    return refused === null ? null : this.because(`connected to ${refused.text}, ${refused.description}`);
  }

  private because(what: string): string {
    return `${what}; ${this.rules.requirement}`;
  }

  private nameRefusal(name: string): string | null {
    const reserved = reservedName(name);
    if (reserved === null) return null;
    const allowed = reserved.loopback
      ? this.rules.loopback || this.rules.networks.contains(LOOPBACK)
      : !this.rules.networks.empty;
    return allowed ? null : this.because(`${name} is ${reserved.description}`);
  }

  /** The address's kind when it is refused; null when allowed. */
  private refusedAddress(address: IpAddress): ClassifiedAddress | null {
    const classified = classifyAddress(address);
    if (classified.class === 'public') return null;
    if (classified.class === 'loopback' && this.rules.loopback) return null;
    if (this.rules.networks.contains(address)) return null;
    return classified;
  }
}

/** What an operator allows outbound calls beyond public addresses, and how names are resolved. */
export interface OutboundAllowance {
  /** FXGATE_WEBHOOK_ALLOWED_NETWORKS; none unless given. */
  readonly networks?: AllowedNetworks;
  /** Exact host:port destinations (the core's own public listener in `fxgate all`); none unless given. */
  readonly exact?: ExactDestinations;
  /** dns.lookup unless given; tests give their own, so no test ever asks real DNS. */
  readonly resolver?: Resolver;
}

/** Who reads a refusal: an integrator cannot change the operator's settings, so only an operator is told of them. */
export type Audience = 'integrator' | 'operator';

/**
 * The destinations of a book's webhooks: public addresses; in the sandbox loopback too (an
 * integrator's local receiver), and nothing else private; the allowance's networks and exact
 * destinations in either mode.
 */
export function webhookPolicy(
  mode: Mode,
  allowance: OutboundAllowance = {},
  audience: Audience = 'integrator',
): DestinationPolicy {
  const networks = allowance.networks ?? AllowedNetworks.NONE;
  const reach = mode === 'live' ? 'a public address' : 'a public or loopback address';
  const inHouse = networks.empty ? '' : ' or an allowed in-house network';
  const hint =
    audience === 'operator' ? ` (for an in-house receiver, add its network to ${ALLOWED_NETWORKS_SETTING})` : '';
  return new DestinationPolicy(
    {
      loopback: mode === 'sandbox',
      networks,
      exact: allowance.exact ?? new ExactDestinations(),
      requirement: `${mode} webhooks must reach ${reach}${inHouse}${hint}`,
    },
    allowance.resolver,
  );
}

/** The webhook policies of both modes, on one allowance. */
export function webhookPolicies(
  allowance: OutboundAllowance = {},
  audience: Audience = 'integrator',
): Readonly<Record<Mode, DestinationPolicy>> {
  return { sandbox: webhookPolicy('sandbox', allowance, audience), live: webhookPolicy('live', allowance, audience) };
}

/**
 * A service of the operator's own (the shadow legacy service, `what`): public addresses,
 * loopback, and the allowed networks.
 */
export function operatorServicePolicy(what: string, allowance: OutboundAllowance = {}): DestinationPolicy {
  return new DestinationPolicy(
    {
      loopback: true,
      networks: allowance.networks ?? AllowedNetworks.NONE,
      exact: allowance.exact ?? new ExactDestinations(),
      requirement: `${what} must be at a public or loopback address, or in a network of ${ALLOWED_NETWORKS_SETTING}`,
    },
    allowance.resolver,
  );
}
