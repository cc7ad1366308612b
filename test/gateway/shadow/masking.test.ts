/**
 * What the shadow report keeps of an example value: account numbers, routing numbers, SWIFT
 * codes, addresses and IBAN-like values only their last four characters; secrets (tokens, keys,
 * signatures) nothing; every other value as it is.
 */
import { describe, expect, it } from 'vitest';

import { keepLastFour, maskExample, REDACTED } from '../../../src/gateway/shadow/masking.js';

describe('maskExample', () => {
  it.each([
    ['data[].accountNumber', '"000123456789"', '"********6789"'],
    ['data[].routingNumber', '"021000021"', '"*****0021"'],
    ['data[].swiftCode', '"DEUTDEFF"', '"****DEFF"'],
    ['data[].address', '"0x5aAeb6053F3E94C9b9A09f33669435E7Ef1BeAed"', `"${'*'.repeat(38)}eAed"`],
    ['data[].accountNumber', '12345678', '"****5678"'],
    ['data[].comments', '"DE89370400440532013000"', `"${'*'.repeat(18)}3000"`],
    ['data[].comments', '"DE89 3704 0044 0532 0130 00"', `"${'*'.repeat(23)}0 00"`],
    ['data[].accountNumber', '"123"', '"***"'],
    ['data[].accountNumber', 'null', 'null'],
    ['data[].accountNumber', '(absent)', '(absent)'],
  ])('%s %s -> %s', (path, value, masked) => {
    expect(maskExample(path, value)).toBe(masked);
  });

  it('drops secrets whole, by field name or by shape', () => {
    expect(maskExample('data.token', '"abc"')).toBe(JSON.stringify(REDACTED));
    expect(maskExample('data[].apiKey', '"k-123"')).toBe(JSON.stringify(REDACTED));
    expect(maskExample('data[].comments', '"eyJhbGciOiJFUzI1NiJ9.eyJzdWIiOiJ4In0.c2ln"')).toBe(
      JSON.stringify(REDACTED),
    );
    expect(maskExample('data[].comments', '"-----BEGIN PRIVATE KEY-----\\nMIG..."')).toBe(JSON.stringify(REDACTED));
  });

  it('keeps every other value, numbers with their digits', () => {
    expect(maskExample('data[].amount', '12345678901234567890.10')).toBe('12345678901234567890.10');
    expect(maskExample('data[].currency', '"USD"')).toBe('"USD"');
    expect(maskExample('(status)', '401')).toBe('401');
  });

  it('keepLastFour hides everything of four characters or fewer', () => {
    expect(keepLastFour('abcd')).toBe('****');
    expect(keepLastFour('abcde')).toBe('*bcde');
  });
});
