/**
 * classifyAddress: the kind of every special-purpose block, for both families, and the IPv6 forms
 * of IPv4 addresses. Pure: no address here is ever connected to.
 */
import { describe, expect, it } from 'vitest';

import {
  type AddressClass,
  classifyAddress,
  parseIpLiteral,
  reachedAddress,
} from '../../../src/lib/net/address-class.js';

function classOf(text: string): AddressClass {
  return classifyAddress(parseIpLiteral(text)!).class;
}

describe('classifyAddress', () => {
  it('names every IPv4 block IANA sets apart, and calls the rest public', () => {
    const table: [string, AddressClass][] = [
      ['0.0.0.0', 'unspecified'],
      ['0.255.255.255', 'unspecified'],
      ['10.0.0.1', 'private'],
      ['10.255.255.255', 'private'],
      ['100.64.0.1', 'shared'],
      ['100.127.255.255', 'shared'],
      ['127.0.0.1', 'loopback'],
      ['127.255.255.254', 'loopback'],
      ['169.254.169.254', 'link-local'],
      ['172.16.0.1', 'private'],
      ['172.31.255.255', 'private'],
      ['192.0.0.8', 'special-purpose'],
      ['192.0.2.1', 'special-purpose'],
      ['192.168.1.1', 'private'],
      ['198.18.0.1', 'special-purpose'],
      ['198.19.255.255', 'special-purpose'],
      ['198.51.100.7', 'special-purpose'],
      ['203.0.113.9', 'special-purpose'],
      ['224.0.0.1', 'multicast'],
      ['239.255.255.255', 'multicast'],
      ['240.0.0.1', 'special-purpose'],
      ['255.255.255.255', 'broadcast'],
      // Just outside the blocks.
      ['9.255.255.255', 'public'],
      ['11.0.0.0', 'public'],
      ['100.63.255.255', 'public'],
      ['100.128.0.0', 'public'],
      ['172.15.255.255', 'public'],
      ['172.32.0.0', 'public'],
      ['169.253.255.255', 'public'],
      ['192.167.255.255', 'public'],
      ['198.17.255.255', 'public'],
      ['198.20.0.0', 'public'],
      ['223.255.255.255', 'public'],
      ['1.1.1.1', 'public'],
    ];
    expect(table.map(([address]) => [address, classOf(address)])).toEqual(table);
  });

  it('names every IPv6 block, and calls public only global unicast (2000::/3)', () => {
    const table: [string, AddressClass][] = [
      ['::', 'unspecified'],
      ['::1', 'loopback'],
      ['fe80::1', 'link-local'],
      ['febf:ffff::1', 'link-local'],
      ['fc00::1', 'unique-local'],
      ['fd00::1', 'unique-local'],
      ['fd00:ec2::254', 'unique-local'],
      ['fec0::1', 'private'],
      ['ff02::1', 'multicast'],
      ['2001:db8::1', 'special-purpose'],
      ['2001::1', 'special-purpose'], // Teredo
      ['2002:a00:1::1', 'special-purpose'], // 6to4
      ['100::1', 'special-purpose'], // discard-only
      ['64:ff9b:1::1', 'special-purpose'], // local-use NAT64
      ['::ffff:0:a00:1', 'special-purpose'], // IPv4-translated
      ['4000::1', 'special-purpose'], // outside 2000::/3
      ['2606:4700:4700::1111', 'public'],
      ['2a00:1450:4001::1', 'public'],
    ];
    expect(table.map(([address]) => [address, classOf(address)])).toEqual(table);
  });

  it('judges an IPv4-mapped address by the IPv4 address a socket reaches, and names it', () => {
    expect(classifyAddress(parseIpLiteral('::ffff:a9fe:a9fe')!)).toEqual({
      text: '::ffff:a9fe:a9fe',
      class: 'link-local',
      description: '169.254.169.254 (IPv4-mapped), a link-local address (cloud metadata)',
    });
    expect(classOf('::ffff:127.0.0.1')).toBe('loopback');
    expect(classOf('::ffff:10.0.0.1')).toBe('private');
    expect(classOf('::ffff:8.8.8.8')).toBe('public');
    expect(reachedAddress(parseIpLiteral('::ffff:10.0.0.1')!).toString()).toBe('10.0.0.1');
    expect(reachedAddress(parseIpLiteral('fd00::1')!).toString()).toBe('fd00::1');
  });

  it('refuses everywhere the IPv6 forms that leave as IPv6: IPv4-compatible, and NAT64 of a non-public address', () => {
    // Not loopback: a socket sends ::7f00:1 towards the IPv6 network, not to this machine.
    expect(classifyAddress(parseIpLiteral('::127.0.0.1')!)).toEqual({
      text: '::7f00:1',
      class: 'special-purpose',
      description: '127.0.0.1 (IPv4-compatible), a loopback address',
    });
    expect(classifyAddress(parseIpLiteral('::8.8.8.8')!)).toMatchObject({
      class: 'special-purpose',
      description: '8.8.8.8 (IPv4-compatible), an obsolete form',
    });
    expect(classifyAddress(parseIpLiteral('64:ff9b::10.0.0.1')!)).toEqual({
      text: '64:ff9b::a00:1',
      class: 'special-purpose',
      description: '10.0.0.1 (NAT64), a private address',
    });
    expect(classifyAddress(parseIpLiteral('64:ff9b::8.8.8.8')!)).toMatchObject({ class: 'public' });
  });

  it('reads only canonical literals: anything else is a name to resolve', () => {
    expect(parseIpLiteral('[::1]')?.toString()).toBe('::1');
    expect(parseIpLiteral('127.0.0.1')?.toString()).toBe('127.0.0.1');
    for (const name of ['localhost', 'example.com', '127.1', '2130706433', '0x7f000001', '[127.0.0.1]', ''])
      expect(parseIpLiteral(name), name).toBeNull();
  });
});
