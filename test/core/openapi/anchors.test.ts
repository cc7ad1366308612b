import { describe, expect, it } from 'vitest';

import { headingAnchor, headingAnchors } from '../../../src/core/openapi/anchors.js';

describe('heading anchors', () => {
  it('follows the rule GitHub applies to a heading', () => {
    expect(headingAnchor('Two commands on a fresh machine')).toBe('two-commands-on-a-fresh-machine');
    expect(headingAnchor('`POST /v3/fx/trades/{id}/reverse-quote`')).toBe('post-v3fxtradesidreverse-quote');
    expect(headingAnchor("Shadow mode's cost (`shadow-reads`)")).toBe('shadow-modes-cost-shadow-reads');
    expect(headingAnchor('Who still calls v1 (and v2): the usage report')).toBe(
      'who-still-calls-v1-and-v2-the-usage-report',
    );
    expect(headingAnchor('Idempotency_key and  spaces')).toBe('idempotency_key-and--spaces');
  });

  it('numbers repeated headings and skips fenced code', () => {
    const markdown = ['# Guide', '## Errors', '```sh', '# not a heading', '```', '### Errors', '## Errors ##'].join(
      '\n',
    );
    expect(headingAnchors(markdown)).toEqual(['guide', 'errors', 'errors-1', 'errors-2']);
  });
});
