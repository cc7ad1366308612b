/**
 * FXGATE_WEBHOOK_ALLOWED_NETWORKS as a list of networks: what an entry may be, the message that
 * names a bad one, and which addresses a list contains. Pure.
 */
import { describe, expect, it } from 'vitest';

import { NetworkListError } from '../../../src/lib/errors/internal-errors.js';
import { parseIpLiteral } from '../../../src/lib/net/address-class.js';
import { AllowedNetworks, readNetworkList } from '../../../src/lib/net/allowed-networks.js';

describe('readNetworkList', () => {
  it('takes CIDRs of both families and single addresses, canonical and once each', () => {
    expect(
      readNetworkList([
        '10.0.0.0/8',
        '172.16.0.0/12',
        'FD00::/8',
        '10.20.30.40',
        'fd00:1::5',
        '10.0.0.0/8',
        '127.0.0.1',
      ]),
    ).toEqual({
      networks: ['10.0.0.0/8', '172.16.0.0/12', 'fd00::/8', '10.20.30.40/32', 'fd00:1::5/128', '127.0.0.1/32'],
      problems: [],
    });
  });

  it('names each bad entry and what is wrong with it', () => {
    const { networks, problems } = readNetworkList([
      '10.0.0.0/8',
      'ten.0.0.0/8',
      '10.0.0.0/33',
      'fd00::/129',
      '10.0.0.0/8/1',
      '10.0.0.0/x',
      '10.1.2.3/8',
      '::ffff:10.0.0.0/104',
      '0.0.0.0/0',
      '::/0',
      '8.8.8.0/24',
      '10.0.0.0/7',
      '224.0.0.0/4',
      '0.0.0.0/8',
    ]);
    expect(networks).toEqual(['10.0.0.0/8']);
    expect(problems).toEqual([
      '"ten.0.0.0/8" is not a network: write a CIDR such as 10.0.0.0/8 or fd00::/8, or a single address',
      '"10.0.0.0/33" has a prefix longer than 32 bits',
      '"fd00::/129" has a prefix longer than 128 bits',
      '"10.0.0.0/8/1" is not a network: write a CIDR such as 10.0.0.0/8 or fd00::/8, or a single address',
      '"10.0.0.0/x" is not a network: write a CIDR such as 10.0.0.0/8 or fd00::/8, or a single address',
      '"10.1.2.3/8" has bits set past its prefix: the network is 10.0.0.0/8',
      '"::ffff:10.0.0.0/104" is an IPv4-mapped IPv6 network: write it as IPv4, such as 10.0.0.0/8',
      '"0.0.0.0/0" spans addresses of different kinds (0.0.0.0 is an unspecified address (this network), 255.255.255.255 the broadcast address); name each private network on its own',
      '"::/0" spans addresses of different kinds (:: is the unspecified address, ffff:ffff:ffff:ffff:ffff:ffff:ffff:ffff a multicast address); name each private network on its own',
      '"8.8.8.0/24" is public: public addresses are allowed already',
      '"10.0.0.0/7" spans addresses of different kinds (10.0.0.0 is a private address, 11.255.255.255 a public address); name each private network on its own',
      '"224.0.0.0/4" cannot hold a receiver: 224.0.0.0 is a multicast address',
      '"0.0.0.0/8" cannot hold a receiver: 0.0.0.0 is an unspecified address (this network)',
    ]);
  });
});

describe('AllowedNetworks', () => {
  it('contains the addresses of its networks, an IPv4-mapped address as its IPv4 address', () => {
    const networks = AllowedNetworks.of(['10.1.0.0/16', 'fd00:1::/32']);
    const contains = (address: string) => networks.contains(parseIpLiteral(address)!);
    expect(contains('10.1.2.3')).toBe(true);
    expect(contains('::ffff:10.1.2.3')).toBe(true);
    expect(contains('fd00:1::7')).toBe(true);
    expect(contains('10.2.0.1')).toBe(false);
    expect(contains('fd00:2::7')).toBe(false);
    expect(contains('127.0.0.1')).toBe(false);
    expect(networks.empty).toBe(false);
    expect(AllowedNetworks.of([]).empty).toBe(true);
    expect(AllowedNetworks.NONE.contains(parseIpLiteral('10.1.2.3')!)).toBe(false);
  });

  it('refuses a bad list as a whole, naming every problem', () => {
    expect(() => AllowedNetworks.of(['10.0.0.0/8', '0.0.0.0/0', 'nope'])).toThrow(NetworkListError);
    expect(() => AllowedNetworks.of(['nope'])).toThrow(/"nope" is not a network/);
  });
});
