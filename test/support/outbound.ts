/**
 * What the outbound-destination tests share: a resolver of test names that never asks real DNS,
 * and a record of every socket Node is asked to open (net.connect and tls.connect, which
 * undici's connector calls), so that a test can show a refused destination never reached one.
 */
import net from 'node:net';
import tls from 'node:tls';

import { type MockInstance, vi } from 'vitest';

import type { Resolver } from '../../src/lib/net/destination-policy.js';

export interface TestResolver extends Resolver {
  /** Every name asked, in order. */
  readonly asked: string[];
  /** Changes what a name resolves to (a DNS answer that changes between attempts). */
  set(name: string, addresses: readonly string[]): void;
}

/** Resolves the names of `table` (lower case) to their addresses, and every other name to ENOTFOUND. */
export function testResolver(table: Readonly<Record<string, readonly string[]>>): TestResolver {
  const answers = new Map(Object.entries(table));
  const asked: string[] = [];
  const resolve = async (hostname: string) => {
    asked.push(hostname);
    const addresses = answers.get(hostname.toLowerCase());
    if (addresses === undefined)
      throw Object.assign(new Error(`getaddrinfo ENOTFOUND ${hostname}`), { code: 'ENOTFOUND', hostname });
    return addresses.map((address) => ({ address, family: net.isIP(address) }));
  };
  return Object.assign(resolve, {
    asked,
    set: (name: string, addresses: readonly string[]) => void answers.set(name.toLowerCase(), addresses),
  });
}

export interface ConnectionRecord {
  /** The host of every socket asked for since the record began, as net.connect and tls.connect were given it. */
  hosts(): string[];
  restore(): void;
}

/** A loopback literal: the only kind of host a test may open a socket to. */
function isLoopbackLiteral(host: string): boolean {
  return (net.isIPv4(host) && host.startsWith('127.')) || host === '::1';
}

function hostOf(options: unknown): string {
  return typeof options === 'object' && options !== null && 'host' in options
    ? String((options as { host: unknown }).host)
    : String(options);
}

/**
 * Records every socket asked for from now on. One to a loopback literal opens as it would; any
 * other host throws instead of opening, so a test of a guard that let it through fails without
 * a packet leaving the machine.
 */
export function recordConnections(): ConnectionRecord {
  const hosts: string[] = [];
  const guard = <F extends (...args: never[]) => unknown>(original: F, self: object): F =>
    ((...args: Parameters<F>) => {
      const host = hostOf(args[0]);
      hosts.push(host);
      if (!isLoopbackLiteral(host)) throw new Error(`a test asked for a socket to ${host}, off loopback`);
      return original.apply(self, args);
    }) as F;
  // The originals, taken before the spies replace them.
  const [netConnect, tlsConnect] = [guard(net.connect, net), guard(tls.connect, tls)];
  const spies: MockInstance[] = [
    vi.spyOn(net, 'connect').mockImplementation(netConnect),
    vi.spyOn(tls, 'connect').mockImplementation(tlsConnect),
  ];
  return {
    hosts: () => [...hosts],
    restore: () => {
      for (const spy of spies) spy.mockRestore();
    },
  };
}
