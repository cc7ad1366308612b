/**
 * undici connections that go only where a destination policy allows (destination-policy.ts).
 * The connector asks the policy for the host's addresses (a literal checked as it is, a name
 * resolved once and every address checked) before any socket exists, then connects to those
 * addresses themselves, one after another, so nothing resolves the name a second time (DNS
 * rebinding finds nothing to rebind). TLS still checks the certificate against the URL's name.
 * Once connected, the socket's peer address is checked again, the last assertion. An exact
 * destination (the service's own listener) is connected to as written. Part of lib; touches
 * the network through undici's connector.
 */
import type { Socket } from 'node:net';

import { Agent, buildConnector, Pool } from 'undici';

import { DestinationRefusedError } from '../errors/internal-errors.js';
import type { DestinationPolicy } from './destination-policy.js';
import { type ResolvedAddress } from './destination-policy.js';

/** Errors after which the next address of the name is tried: this one could not be reached. */
const UNREACHED = new Set([
  'ECONNREFUSED',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'ETIMEDOUT',
  'EADDRNOTAVAIL',
  'UND_ERR_CONNECT_TIMEOUT',
]);

function errorCode(error: Error): string | undefined {
  const code = (error as Error & { code?: unknown }).code;
  return typeof code === 'string' ? code : undefined;
}

/**
 * A connector for undici (`connect` of an Agent or a Pool) that connects only where the policy
 * allows. `connect` is the connector that opens the sockets; buildConnector(options) unless
 * given (tests give a spy).
 */
export function guardedConnector(
  policy: DestinationPolicy,
  options: buildConnector.BuildOptions = {},
  connect: buildConnector.connector = buildConnector(options),
): buildConnector.connector {
  return (target, callback) => {
    const port = target.port === '' ? (target.protocol === 'https:' ? 443 : 80) : Number(target.port);
    if (policy.isExact(target.hostname, port)) {
      connect(target, callback);
      return;
    }
    const attempt = (addresses: readonly ResolvedAddress[], index: number): void => {
      // `host` is left as it came: TLS takes its server name, and so checks the certificate, from it.
      connect({ ...target, hostname: addresses[index]!.address }, (error, socket) => {
        if (error !== null) {
          const code = errorCode(error);
          if (index + 1 < addresses.length && code !== undefined && UNREACHED.has(code)) attempt(addresses, index + 1);
          else callback(error, null);
          return;
        }
        const refusal = policy.peerRefusal((socket as Socket).remoteAddress);
        if (refusal !== null) {
          socket.destroy();
          callback(new DestinationRefusedError(refusal), null);
          return;
        }
        callback(null, socket);
      });
    };
    policy.addressesOf(target.hostname).then(
      (addresses) => attempt(addresses, 0),
      (error: unknown) => callback(error instanceof Error ? error : new Error(String(error)), null),
    );
  };
}

export type GuardedAgentOptions = Omit<Agent.Options, 'connect'> & { readonly connect?: buildConnector.BuildOptions };

/** An undici Agent whose every connection the policy allowed. */
export function guardedAgent(policy: DestinationPolicy, options: GuardedAgentOptions = {}): Agent {
  const { connect, ...rest } = options;
  return new Agent({ ...rest, connect: guardedConnector(policy, connect) });
}

export type GuardedPoolOptions = Omit<Pool.Options, 'connect'> & { readonly connect?: buildConnector.BuildOptions };

/** An undici Pool to one origin whose every connection the policy allowed. */
export function guardedPool(policy: DestinationPolicy, origin: string, options: GuardedPoolOptions = {}): Pool {
  const { connect, ...rest } = options;
  return new Pool(origin, { ...rest, connect: guardedConnector(policy, connect) });
}
