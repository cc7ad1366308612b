/**
 * Parsers for the CLI's option values. Each returns the clean value or throws commander's
 * InvalidArgumentError, which commander reports naming the option (and the CLI exits 2).
 */
import { InvalidArgumentError } from 'commander';

import { type Mode, MODES, parseKeyName, type Scope, SCOPES } from '../lib/auth/credential-vocabulary.js';
import { InvalidCidrError } from '../lib/errors/internal-errors.js';
import { normaliseCidrs } from '../lib/keys/key-registry.js';

/**
 * A credit line as typed: unsigned plain decimal within the column's numeric(38, 18), checked as
 * text so that no digit passes through a JS number.
 */
export const CREDIT_LINE = /^(0|[1-9][0-9]{0,19})(\.[0-9]{1,18})?$/;
export const CURRENCY = /^[A-Z]{3,5}$/;

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

export function parseOrgId(value: string): string {
  const orgId = value.trim().toLowerCase();
  if (!UUID.test(orgId))
    throw new InvalidArgumentError('An org id is a UUID, e.g. 0190c5a8-7d2e-7c1a-9f3b-2a4d6e8f0b1c.');
  return orgId;
}

export function parseMode(value: string): Mode {
  const mode = MODES.find((m) => m === value.trim().toLowerCase());
  if (mode === undefined) throw new InvalidArgumentError(`The mode is one of ${MODES.join(', ')}.`);
  return mode;
}

export function parseScopes(value: string): Scope[] {
  const names = value
    .split(',')
    .map((name) => name.trim().toLowerCase())
    .filter(Boolean);
  if (names.length === 0) throw new InvalidArgumentError(`Name at least one scope of ${SCOPES.join(', ')}.`);
  const unknown = names.filter((name) => !SCOPES.some((scope) => scope === name));
  if (unknown.length > 0)
    throw new InvalidArgumentError(`Unknown scope ${unknown.join(', ')}; the scopes are ${SCOPES.join(', ')}.`);
  return SCOPES.filter((scope) => names.includes(scope));
}

/** For a repeatable --ip: validates one CIDR and adds it to those before. */
export function collectCidr(value: string, previous: string[]): string[] {
  try {
    return [...previous, ...normaliseCidrs([value])];
  } catch (error) {
    if (error instanceof InvalidCidrError)
      throw new InvalidArgumentError('Expected an IPv4 or IPv6 address or CIDR block, e.g. 203.0.113.0/24.');
    throw error;
  }
}

export function parseKeyNameArgument(value: string): string {
  if (parseKeyName(value) === null) throw new InvalidArgumentError('A key name is org/{orgId}/apiKey/{keyId}.');
  return value;
}

/**
 * The methods a request to the APIs is signed with: those v3 operations are declared with, and
 * HEAD, which every GET route also serves (test/cli/arguments.test.ts holds it to the declared
 * operations); v1 and v2 use the same. Any other is answered 405 or 404 whatever its signature,
 * so signing one is a mistake to report at once.
 */
export const SIGNED_METHODS: readonly string[] = ['GET', 'HEAD', 'POST', 'DELETE'];

export function parseHttpMethod(value: string): string {
  const method = value.trim().toUpperCase();
  if (!SIGNED_METHODS.includes(method))
    throw new InvalidArgumentError(
      `The APIs serve ${SIGNED_METHODS.join(', ')}; no route takes ${method || 'an empty method'}.`,
    );
  return method;
}

export function parseRequestPath(value: string): string {
  if (!value.startsWith('/'))
    throw new InvalidArgumentError('Expected the path and query as sent, starting with /, e.g. /v3/fx/pairs.');
  return value;
}

export function parseHttpUrl(value: string): string {
  try {
    const url = new URL(value);
    if (url.protocol === 'http:' || url.protocol === 'https:') return value;
  } catch {
    // reported below
  }
  throw new InvalidArgumentError('Expected an http:// or https:// URL.');
}
