/**
 * The destination policy: every refused range in every textual disguise the URL parser sees
 * through, refused in live; loopback allowed in the sandbox only; the names rule; allowed
 * networks and exact destinations in both modes; and the connect-time check of every address a
 * name resolves to. Names are resolved by a test resolver and nothing connects: where an
 * address is public, only the decision is asserted.
 */
import { describe, expect, it } from 'vitest';

import { DestinationRefusedError } from '../../../src/lib/errors/internal-errors.js';
import { AllowedNetworks } from '../../../src/lib/net/allowed-networks.js';
import {
  type DestinationPolicy,
  ExactDestinations,
  operatorServicePolicy,
  type Resolver,
  webhookPolicy,
} from '../../../src/lib/net/destination-policy.js';

const LIVE_REQUIREMENT = 'live webhooks must reach a public address';
const SANDBOX_REQUIREMENT = 'sandbox webhooks must reach a public or loopback address';

function refusal(policy: DestinationPolicy, url: string): string | null {
  return policy.refusalOf(new URL(url));
}

/**
 * Every way the URL parser lets an IPv4 address be written that it turns back into that address,
 * and its IPv4-compatible IPv6 form, which a socket sends towards the IPv6 network instead.
 */
function ipv4Disguises(address: string): { readonly name: string; readonly host: string }[] {
  const octets = address.split('.').map(Number) as [number, number, number, number];
  const [a, b, c, d] = octets;
  const value = ((a << 24) >>> 0) + (b << 16) + (c << 8) + d;
  const hexGroups = [(a << 8) + b, (c << 8) + d].map((group) => group.toString(16));
  return [
    { name: 'dotted', host: address },
    { name: 'decimal', host: String(value) },
    { name: 'hex', host: `0x${value.toString(16)}` },
    { name: 'hex, mixed case', host: `0X${value.toString(16).toUpperCase()}` },
    { name: 'octal', host: octets.map((octet) => `0${octet.toString(8)}`).join('.') },
    { name: 'short, two parts', host: `${a}.${(b << 16) + (c << 8) + d}` },
    { name: 'short, three parts', host: `${a}.${b}.${(c << 8) + d}` },
    { name: 'IPv4-mapped', host: `[::ffff:${address}]` },
    { name: 'IPv4-mapped, hex, mixed case', host: `[::FFFF:${hexGroups.join(':').toUpperCase()}]` },
    { name: 'IPv4-mapped, expanded', host: `[0:0:0:0:0:ffff:${address}]` },
    // ::0.0.0.0 and ::0.0.0.1 are :: and ::1 themselves.
    { name: 'IPv4-compatible', host: value > 1 ? `[::${address}]` : `[::ffff:${address}]` },
    { name: 'trailing dot', host: `${address}.` },
    { name: 'percent-encoded', host: [...address].map((char) => `%${char.charCodeAt(0).toString(16)}`).join('') },
  ];
}

/** IPv4 addresses of every refused block, with the words their refusal uses. */
const REFUSED_IPV4: readonly (readonly [string, string])[] = [
  ['127.0.0.1', 'a loopback address'],
  ['127.255.0.9', 'a loopback address'],
  ['10.0.0.1', 'a private address'],
  ['172.16.5.4', 'a private address'],
  ['172.31.255.254', 'a private address'],
  ['192.168.1.1', 'a private address'],
  ['100.64.0.1', 'a shared address (carrier-grade NAT)'],
  ['169.254.169.254', 'a link-local address (cloud metadata)'],
  ['0.0.0.0', 'an unspecified address (this network)'],
  ['0.1.2.3', 'an unspecified address (this network)'],
  ['224.0.0.1', 'a multicast address'],
  ['239.1.2.3', 'a multicast address'],
  ['255.255.255.255', 'the broadcast address'],
  ['198.18.0.1', 'a reserved address'],
  ['192.0.0.1', 'a reserved address'],
  ['192.0.2.1', 'a reserved address'],
  ['198.51.100.1', 'a reserved address'],
  ['203.0.113.1', 'a reserved address'],
  ['240.0.0.1', 'a reserved address'],
];

/** IPv6 addresses of every refused block, each as written in a URL in two ways, with the words their refusal uses. */
const REFUSED_IPV6: readonly (readonly [string[], string])[] = [
  [['[::1]', '[0:0:0:0:0:0:0:1]'], 'a loopback address'],
  [['[::]', '[0:0:0:0:0:0:0:0]'], 'the unspecified address'],
  [['[fe80::1]', '[FE80:0:0:0:0:0:0:1]'], 'a link-local address'],
  [['[fc00::1]', '[FC00::1]'], 'a unique local address (private IPv6)'],
  [['[fd00::1]', '[fd00:0::0:1]'], 'a unique local address (private IPv6)'],
  [['[fd00:ec2::254]', '[FD00:EC2::254]'], 'a unique local address (private IPv6)'],
  [['[ff02::1]', '[FF02::1]'], 'a multicast address'],
  [['[2001:db8::1]', '[2001:DB8::1]'], 'a reserved address (documentation or future use)'],
  [['[64:ff9b::10.0.0.1]', '[64:FF9B::A00:1]'], '10.0.0.1 (NAT64), a private address'],
  [['[64:ff9b::169.254.169.254]', '[64:ff9b::a9fe:a9fe]'], '169.254.169.254 (NAT64), a link-local address'],
  [['[::127.0.0.1]', '[::7f00:1]'], '127.0.0.1 (IPv4-compatible), a loopback address'],
  [['[::10.0.0.1]', '[::A00:1]'], '10.0.0.1 (IPv4-compatible), a private address'],
  [['[100::1]', '[0100::1]'], 'a special-purpose address'],
  [['[2001::1]', '[2001:0:0::1]'], 'a special-purpose address'],
  [['[2002:a00:1::1]', '[2002:A00:1::1]'], 'a special-purpose address'],
  [['[4000::1]', '[4000:0::1]'], 'outside the global unicast space'],
];

describe('the destination policy at registration', () => {
  const live = webhookPolicy('live');
  const sandbox = webhookPolicy('sandbox');

  it('refuses every refused IPv4 block in live, in every disguise, naming the address and its kind', () => {
    let checked = 0;
    for (const [address, kind] of REFUSED_IPV4) {
      for (const { name, host } of ipv4Disguises(address)) {
        for (const url of [`http://${host}/`, `https://${host}:8443/hook?x=1`]) {
          const reason = refusal(live, url);
          expect(reason, `${address} ${name}: ${url}`).toContain(address);
          expect(reason, `${address} ${name}: ${url}`).toContain(kind);
          expect(reason, `${address} ${name}: ${url}`).toMatch(new RegExp(`; ${LIVE_REQUIREMENT}$`));
          checked += 1;
        }
      }
    }
    expect(checked).toBe(REFUSED_IPV4.length * 13 * 2);
  });

  it('writes the reason an integrator can act on', () => {
    expect(refusal(live, 'https://169.254.169.254/latest/meta-data/')).toBe(
      `169.254.169.254 is a link-local address (cloud metadata); ${LIVE_REQUIREMENT}`,
    );
    expect(refusal(live, 'http://[::ffff:a9fe:a9fe]/')).toBe(
      `::ffff:a9fe:a9fe is 169.254.169.254 (IPv4-mapped), a link-local address (cloud metadata); ${LIVE_REQUIREMENT}`,
    );
    expect(refusal(live, 'http://0x7f000001/metrics')).toBe(`127.0.0.1 is a loopback address; ${LIVE_REQUIREMENT}`);
    expect(refusal(sandbox, 'https://10.0.0.1/')).toBe(`10.0.0.1 is a private address; ${SANDBOX_REQUIREMENT}`);
    // A stored URL is checked as text, and text that is no URL is refused rather than thrown.
    expect(live.refusalOf('https://10.0.0.1/')).toBe(`10.0.0.1 is a private address; ${LIVE_REQUIREMENT}`);
    expect(live.refusalOf('not a url')).toBe('not a url is not an absolute URL');
  });

  it('refuses every refused IPv6 block in live, however it is written', () => {
    for (const [hosts, kind] of REFUSED_IPV6) {
      for (const host of hosts) {
        const reason = refusal(live, `https://${host}/hook`);
        expect(reason, host).toContain(kind);
        expect(reason, host).toMatch(new RegExp(`; ${LIVE_REQUIREMENT}$`));
      }
    }
  });

  it('allows loopback, in every disguise, in the sandbox only', () => {
    for (const address of ['127.0.0.1', '127.255.0.9']) {
      for (const { name, host } of ipv4Disguises(address)) {
        // The IPv4-compatible form leaves the machine: refused in the sandbox too (below).
        if (name !== 'IPv4-compatible')
          expect(refusal(sandbox, `http://${host}:9000/hook`), `${name}: ${host}`).toBeNull();
        expect(refusal(live, `http://${host}:9000/hook`), `${name}: ${host}`).toMatch(/a loopback address/);
      }
    }
    for (const host of ['[::1]', '[0:0:0:0:0:0:0:1]']) {
      expect(refusal(sandbox, `http://${host}:9000/`)).toBeNull();
      expect(refusal(live, `http://${host}:9000/`)).toBe(`::1 is a loopback address; ${LIVE_REQUIREMENT}`);
    }
  });

  it('refuses every other refused block in the sandbox too, loopback written as IPv6 that leaves the machine included', () => {
    for (const [address, kind] of REFUSED_IPV4.filter(([, kind]) => kind !== 'a loopback address'))
      for (const { host } of ipv4Disguises(address))
        expect(refusal(sandbox, `http://${host}/`), host).toMatch(
          new RegExp(`${kind.replace(/[()]/g, '\\$&')}.*; ${SANDBOX_REQUIREMENT}$`),
        );
    for (const [hosts] of REFUSED_IPV6.filter(([, kind]) => kind !== 'a loopback address'))
      for (const host of hosts) expect(refusal(sandbox, `http://${host}/`), host).not.toBeNull();
    expect(refusal(sandbox, 'http://[::127.0.0.1]/')).toBe(
      `::7f00:1 is 127.0.0.1 (IPv4-compatible), a loopback address; ${SANDBOX_REQUIREMENT}`,
    );
  });

  it('allows public addresses in both modes, an IPv4-mapped or NAT64 form of one too', () => {
    for (const url of [
      'https://1.1.1.1/hook',
      'https://16843009/hook',
      'https://[2606:4700:4700::1111]/hook',
      'https://[::ffff:1.1.1.1]/hook',
      'https://[64:ff9b::1.1.1.1]/hook',
      'https://11.0.0.1/',
      'https://172.32.0.1/',
    ]) {
      expect(refusal(live, url), url).toBeNull();
      expect(refusal(sandbox, url), url).toBeNull();
    }
  });

  it('refuses localhost names where loopback is refused, and .internal names without allowed networks, in any case', () => {
    for (const host of [
      'localhost',
      'LOCALHOST',
      'localhost.',
      'app.localhost',
      'A.LocalHost.',
      '%6c%6f%63%61%6c%68%6f%73%74',
    ]) {
      expect(refusal(live, `http://${host}:8080/`), host).toMatch(/ is a loopback name \(localhost\); live webhooks/);
      expect(refusal(sandbox, `http://${host}:8080/`), host).toBeNull();
    }
    for (const host of ['metadata.google.internal', 'METADATA.Google.Internal.', 'internal', 'svc.corp.internal']) {
      for (const policy of [live, sandbox])
        expect(refusal(policy, `https://${host}/`), host).toMatch(
          / is a private name \(\.internal is never public\); /,
        );
    }
    expect(refusal(live, 'https://metadata.google.internal./computeMetadata/v1/')).toBe(
      `metadata.google.internal is a private name (.internal is never public); ${LIVE_REQUIREMENT}`,
    );
    // Any other name is checked when connecting, on what it resolves to.
    for (const host of ['example.com', 'internal.example.com', 'localhost.example.com', 'xn--nxasmq6b.example'])
      expect(refusal(live, `https://${host}/`), host).toBeNull();
  });

  it('allows the allowed networks in both modes, and .internal names once there are any', () => {
    const networks = AllowedNetworks.of(['10.1.0.0/16', 'fd00:1::/32']);
    for (const mode of ['live', 'sandbox'] as const) {
      const policy = webhookPolicy(mode, { networks });
      for (const url of [
        'https://10.1.2.3/hook',
        'https://0x0a010203/hook',
        'https://[::ffff:10.1.2.3]/hook',
        'https://[fd00:1::5]/hook',
        'https://hooks.corp.internal/',
      ])
        expect(refusal(policy, url), `${mode} ${url}`).toBeNull();
      expect(refusal(policy, 'https://10.2.0.1/')).toMatch(/or an allowed in-house network$/);
      expect(refusal(policy, 'https://169.254.169.254/')).toMatch(/link-local/);
      expect(refusal(policy, 'https://[fd00:2::5]/')).toMatch(/unique local/);
    }
    // Loopback in live only when it is one of them; localhost names with it.
    const withLoopback = webhookPolicy('live', { networks: AllowedNetworks.of(['127.0.0.1']) });
    expect(refusal(withLoopback, 'http://127.0.0.1:9/')).toBeNull();
    expect(refusal(withLoopback, 'http://localhost:9/')).toBeNull();
    expect(refusal(withLoopback, 'http://127.0.0.2:9/')).toMatch(/loopback/);
  });

  it('allows an exact destination as written, on its port only', () => {
    const exact = new ExactDestinations();
    exact.allow('http://127.0.0.1:8080/_fxgate/webhooks/v3');
    const policy = webhookPolicy('live', { exact });
    expect(refusal(policy, 'http://127.0.0.1:8080/_fxgate/webhooks/v3/org/live')).toBeNull();
    expect(refusal(policy, 'http://2130706433:8080/anything')).toBeNull();
    // The admin listener on the next port, and the default port, are loopback like any other.
    expect(refusal(policy, 'http://127.0.0.1:8081/metrics')).toMatch(/a loopback address/);
    expect(refusal(policy, 'http://127.0.0.1/')).toMatch(/a loopback address/);
    expect(policy.isExact('127.0.0.1', 8080)).toBe(true);
    expect(policy.isExact('127.0.0.1', 8081)).toBe(false);
    exact.allow('https://[::1]/');
    expect(policy.isExact('::1', 443)).toBe(true);
    expect(refusal(policy, 'https://[0:0::1]:443/x')).toBeNull();
  });

  it('says which URLs reach the sender itself, where plain http is accepted in live', () => {
    const exact = new ExactDestinations();
    exact.allow('http://10.0.0.5:8080/');
    const policy = webhookPolicy('live', { exact });
    for (const url of ['http://127.0.0.1/', 'http://[::1]/', 'http://localhost/', 'http://10.0.0.5:8080/x'])
      expect(policy.reachesItself(new URL(url)), url).toBe(true);
    for (const url of ['http://10.0.0.5/', 'http://example.com/', 'http://8.8.8.8/'])
      expect(policy.reachesItself(new URL(url)), url).toBe(false);
  });

  it("allows the operator's own service loopback and the allowed networks, and says how to allow more", () => {
    const policy = operatorServicePolicy('the legacy service (FXGATE_SHADOW_URL)', {
      networks: AllowedNetworks.of(['10.9.0.0/16']),
    });
    for (const url of [
      'http://127.0.0.1:9000/',
      'http://localhost:9000/',
      'http://10.9.8.7/',
      'https://legacy.corp.internal/',
    ])
      expect(refusal(policy, url), url).toBeNull();
    expect(refusal(policy, 'http://169.254.169.254/')).toBe(
      '169.254.169.254 is a link-local address (cloud metadata); the legacy service (FXGATE_SHADOW_URL) must be at a public or loopback address, or in a network of FXGATE_WEBHOOK_ALLOWED_NETWORKS',
    );
    expect(refusal(operatorServicePolicy('it'), 'https://legacy.corp.internal/')).toMatch(/\.internal is never public/);
  });

  it('tells an operator, not an integrator, which setting allows an in-house receiver', () => {
    expect(refusal(webhookPolicy('live', {}, 'operator'), 'https://10.0.0.1/')).toBe(
      `10.0.0.1 is a private address; ${LIVE_REQUIREMENT} (for an in-house receiver, add its network to FXGATE_WEBHOOK_ALLOWED_NETWORKS)`,
    );
    expect(refusal(webhookPolicy('live'), 'https://10.0.0.1/')).not.toMatch(/FXGATE_/);
  });
});

describe('the destination policy when connecting', () => {
  /** A resolver for test names only: it never asks real DNS, and records what it was asked. */
  function testResolver(table: Readonly<Record<string, readonly string[]>>): Resolver & { asked: string[] } {
    const asked: string[] = [];
    const resolver = async (hostname: string) => {
      asked.push(hostname);
      const addresses = table[hostname.toLowerCase()];
      if (addresses === undefined)
        throw Object.assign(new Error(`getaddrinfo ENOTFOUND ${hostname}`), { code: 'ENOTFOUND' });
      return addresses.map((address) => ({ address, family: address.includes(':') ? 6 : 4 }));
    };
    return Object.assign(resolver, { asked });
  }

  const resolver = testResolver({
    'rebind.example': ['10.0.0.1'],
    'rebind.example.': ['10.0.0.1'],
    'mixed.example': ['93.184.216.34', '10.0.0.1'],
    'mapped.example': ['::ffff:10.0.0.1'],
    'metadata.example': ['169.254.169.254'],
    'public.example': ['93.184.216.34', '2606:2800:220:1:248:1893:25c8:1946'],
    'receiver.test': ['127.0.0.1', '::1'],
    localhost: ['127.0.0.1', '::1'],
    'inhouse.corp.internal': ['10.1.2.3'],
    'stray.corp.internal': ['10.2.0.1'],
    'empty.example': [],
  });
  const live = webhookPolicy('live', { resolver });
  const sandbox = webhookPolicy('sandbox', { resolver });

  async function refused(promise: Promise<unknown>): Promise<string> {
    const error = await promise.then(
      () => null,
      (caught: unknown) => caught,
    );
    expect(error).toBeInstanceOf(DestinationRefusedError);
    expect((error as DestinationRefusedError).code).toBe('FXGATE_DESTINATION_REFUSED');
    return (error as DestinationRefusedError).message;
  }

  it('refuses a name that resolves to a private address (DNS rebinding), in both modes', async () => {
    expect(await refused(live.addressesOf('rebind.example'))).toBe(
      `refused: rebind.example resolved to 10.0.0.1, a private address; ${LIVE_REQUIREMENT}`,
    );
    expect(await refused(sandbox.addressesOf('REBIND.example.'))).toBe(
      `refused: rebind.example resolved to 10.0.0.1, a private address; ${SANDBOX_REQUIREMENT}`,
    );
  });

  it('refuses a name when any one of its addresses is refused', async () => {
    expect(await refused(live.addressesOf('mixed.example'))).toBe(
      `refused: mixed.example resolved to 10.0.0.1, a private address; ${LIVE_REQUIREMENT}`,
    );
  });

  it('sees through an IPv4-mapped answer', async () => {
    expect(await refused(live.addressesOf('mapped.example'))).toBe(
      `refused: mapped.example resolved to ::ffff:a00:1, 10.0.0.1 (IPv4-mapped), a private address; ${LIVE_REQUIREMENT}`,
    );
    expect(await refused(sandbox.addressesOf('metadata.example'))).toMatch(/169\.254\.169\.254, a link-local address/);
  });

  it('gives every address of an allowed name, and loopback answers in the sandbox only', async () => {
    // A decision only: nothing connects to these.
    expect(await live.addressesOf('public.example')).toEqual([
      { address: '93.184.216.34', family: 4 },
      { address: '2606:2800:220:1:248:1893:25c8:1946', family: 6 },
    ]);
    expect(await sandbox.addressesOf('receiver.test')).toEqual([
      { address: '127.0.0.1', family: 4 },
      { address: '::1', family: 6 },
    ]);
    expect(await refused(live.addressesOf('receiver.test'))).toMatch(
      /receiver\.test resolved to 127\.0\.0\.1, a loopback address/,
    );
  });

  it('checks a literal and the never-public names without asking the resolver', async () => {
    const before = resolver.asked.length;
    expect(await refused(live.addressesOf('10.0.0.1'))).toBe(
      `refused: 10.0.0.1 is a private address; ${LIVE_REQUIREMENT}`,
    );
    expect(await refused(live.addressesOf('::1'))).toBe(`refused: ::1 is a loopback address; ${LIVE_REQUIREMENT}`);
    expect(await refused(live.addressesOf('localhost'))).toMatch(/localhost is a loopback name/);
    expect(await refused(live.addressesOf('inhouse.corp.internal'))).toMatch(/\.internal is never public/);
    expect(await sandbox.addressesOf('127.0.0.1')).toEqual([{ address: '127.0.0.1', family: 4 }]);
    expect(resolver.asked.length).toBe(before);
  });

  it('resolves .internal names once networks are allowed, and checks what they resolve to', async () => {
    const policy = webhookPolicy('live', { resolver, networks: AllowedNetworks.of(['10.1.0.0/16']) });
    expect(await policy.addressesOf('inhouse.corp.internal')).toEqual([{ address: '10.1.2.3', family: 4 }]);
    expect(await refused(policy.addressesOf('stray.corp.internal'))).toMatch(
      /stray\.corp\.internal resolved to 10\.2\.0\.1/,
    );
  });

  it('fails a name with no address as the resolver would, and passes the resolver’s own failures on', async () => {
    await expect(live.addressesOf('empty.example')).rejects.toMatchObject({ code: 'ENOTFOUND' });
    await expect(live.addressesOf('unknown.example')).rejects.toMatchObject({ code: 'ENOTFOUND' });
  });

  it('checks the address a socket connected to, the last assertion', () => {
    expect(live.peerRefusal('10.0.0.1')).toBe(`connected to 10.0.0.1, a private address; ${LIVE_REQUIREMENT}`);
    expect(live.peerRefusal('::ffff:127.0.0.1')).toMatch(/127\.0\.0\.1 \(IPv4-mapped\), a loopback address/);
    expect(live.peerRefusal(undefined)).toMatch(/peer address is unknown/);
    expect(sandbox.peerRefusal('127.0.0.1')).toBeNull();
    expect(live.peerRefusal('93.184.216.34')).toBeNull();
  });
});
