/**
 * The one check of a webhook receiver's URL (v3's endpoints and the legacy subscriptions): each
 * refusal, and the normalised URL of one that passes.
 */
import { describe, expect, it } from 'vitest';

import { webhookPolicy } from '../../../src/lib/net/destination-policy.js';
import { MAX_WEBHOOK_URL_LENGTH, webhookUrlCheck } from '../../../src/lib/webhooks/webhook-url.js';

describe('webhookUrlCheck', () => {
  const sandbox = webhookPolicy('sandbox');
  const live = webhookPolicy('live');

  it('normalises a URL it accepts', () => {
    expect(webhookUrlCheck('HTTPS://Hooks.Example.com/a', 'live', live, 'endpoints')).toEqual({
      href: 'https://hooks.example.com/a',
    });
    expect(webhookUrlCheck('http://127.0.0.1:8080/hook', 'sandbox', sandbox, 'endpoints')).toEqual({
      href: 'http://127.0.0.1:8080/hook',
    });
  });

  it.each([
    ['https://x.example.com/' + 'a'.repeat(MAX_WEBHOOK_URL_LENGTH), `longer than ${MAX_WEBHOOK_URL_LENGTH} characters`],
    ['/relative', 'not an absolute URL'],
    ['ftp://x.example.com/', 'the scheme must be https (or http in the sandbox)'],
    ['https://user:pw@x.example.com/', 'the URL must not contain credentials'],
    ['https://x.example.com/#part', 'the URL must not contain a fragment'],
    ['http://x.example.com/', 'live subscriptions must use https'],
  ])('refuses %s in live: %s', (url, refusal) => {
    expect(webhookUrlCheck(url, 'live', live, 'subscriptions')).toEqual({ refusal });
  });

  it('refuses what the destination policy refuses, with its reason', () => {
    const checked = webhookUrlCheck('https://10.0.0.1/hook', 'live', live, 'endpoints');
    expect(checked).toEqual({ refusal: expect.stringContaining('live webhooks must reach a public address') });
  });
});
