import { InvalidArgumentError } from 'commander';
import { describe, expect, it } from 'vitest';

import {
  collectCidr,
  parseHttpMethod,
  parseHttpUrl,
  parseKeyNameArgument,
  parseMode,
  parseOrgId,
  parseRequestPath,
  parseScopes,
  SIGNED_METHODS,
} from '../../src/cli/arguments.js';
import { declaredCoreOperations } from '../../src/core/openapi/declared-operations.js';

describe('CLI argument parsers', () => {
  it('takes an org id as a lower-case UUID', () => {
    expect(parseOrgId(' 0190C5A8-7D2E-7C1A-9F3B-2A4D6E8F0B1C ')).toBe('0190c5a8-7d2e-7c1a-9f3b-2a4d6e8f0b1c');
    for (const bad of ['', 'abc', '0190c5a8-7d2e-7c1a-9f3b-2a4d6e8f0b1', '0190c5a87d2e7c1a9f3b2a4d6e8f0b1c']) {
      expect(() => parseOrgId(bad), bad).toThrow(InvalidArgumentError);
    }
  });

  it('takes the mode sandbox or live', () => {
    expect(parseMode('Sandbox')).toBe('sandbox');
    expect(parseMode('live')).toBe('live');
    expect(() => parseMode('test')).toThrow('The mode is one of sandbox, live.');
  });

  it('takes scopes as a comma-separated list, in catalog order, without repeats', () => {
    expect(parseScopes('webhooks, view,VIEW,trade')).toEqual(['view', 'trade', 'webhooks']);
    expect(() => parseScopes('view,admin,root')).toThrow(
      'Unknown scope admin, root; the scopes are view, trade, withdraw, webhooks.',
    );
    expect(() => parseScopes(' , ')).toThrow(InvalidArgumentError);
  });

  it('collects IPv4 and IPv6 addresses and CIDR blocks, normalised', () => {
    expect(collectCidr('2001:db8::/32', collectCidr('10.1.2.3', []))).toEqual(['10.1.2.3/32', '2001:db8::/32']);
    for (const bad of ['10.0.0.0/33', '10.0.0', '::1/129', 'example.com', '10.0.0.0/-1']) {
      expect(() => collectCidr(bad, []), bad).toThrow(InvalidArgumentError);
    }
  });

  it('takes key names, methods, paths and URLs only in their shapes', () => {
    const name = 'org/0190c5a8-7d2e-7c1a-9f3b-2a4d6e8f0b1c/apiKey/0190c5a8-7d2e-7c1a-9f3b-2a4d6e8f0b1d';
    expect(parseKeyNameArgument(name)).toBe(name);
    expect(() => parseKeyNameArgument('org/x/apiKey/y')).toThrow(InvalidArgumentError);
    expect(parseHttpMethod('post')).toBe('POST');
    expect(() => parseHttpMethod('GET /')).toThrow(InvalidArgumentError);
    expect(parseRequestPath('/v3/fx/trades?limit=10')).toBe('/v3/fx/trades?limit=10');
    expect(() => parseRequestPath('v3/fx/pairs')).toThrow(InvalidArgumentError);
    expect(parseHttpUrl('http://127.0.0.1:8081')).toBe('http://127.0.0.1:8081');
    expect(() => parseHttpUrl('redis://127.0.0.1')).toThrow(InvalidArgumentError);
    expect(() => parseHttpUrl('nope')).toThrow(InvalidArgumentError);
  });

  it('takes the methods the APIs serve and refuses any other, naming those it takes', () => {
    for (const method of ['get', 'HEAD', ' post ', 'Delete']) expect(SIGNED_METHODS).toContain(parseHttpMethod(method));
    for (const bad of ['FETCH', 'PUT', 'PATCH', 'OPTIONS', 'PROPFIND', '']) {
      expect(() => parseHttpMethod(bad), bad).toThrow(
        new InvalidArgumentError(`The APIs serve GET, HEAD, POST, DELETE; no route takes ${bad || 'an empty method'}.`),
      );
    }
  });

  it('signs exactly the methods v3 operations are declared with, and HEAD for their GETs', () => {
    const declared = new Set(declaredCoreOperations().map((operation) => operation.method));
    expect([...SIGNED_METHODS].sort()).toEqual([...declared, 'HEAD'].sort());
  });
});
