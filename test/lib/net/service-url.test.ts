/**
 * parseServiceUrl: each reason, in the order it is checked, and a usable URL parsed. Pure.
 */
import { describe, expect, it } from 'vitest';

import { parseServiceUrl } from '../../../src/lib/net/service-url.js';

const refuse = (reason: string): never => {
  throw new Error(reason);
};
const noQuery = (parsed: URL) => (parsed.search === '' ? null : 'no query');

describe('parseServiceUrl', () => {
  it('parses an http(s) URL the caller allows', () => {
    expect(parseServiceUrl('https://example.test:8443/base', noQuery, refuse).pathname).toBe('/base');
  });

  it.each([
    ['not a url', 'not a URL'],
    ['ftp://example.test/', 'must start with http:// or https://'],
    ['http://user:secret@example.test/?q=1', 'no query'],
    ['http://user:secret@example.test/', 'must not carry credentials'],
  ])('refuses %s: %s', (url, reason) => {
    expect(() => parseServiceUrl(url, noQuery, refuse)).toThrow(reason);
  });
});
