/**
 * src/cli/node-support.ts: the one-line warning the process entry prints on a Node outside
 * package.json's engines, and none inside it. Reads package.json only.
 */
import { readFileSync } from 'node:fs';

import { describe, expect, it } from 'vitest';

import { enginesNodeRange, unsupportedNodeWarning } from '../../src/cli/node-support.js';

describe('the Node fxgate supports', () => {
  it('is package.json engines.node, which the suite runs inside', () => {
    const manifest = JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as {
      engines: { node: string };
    };
    expect(enginesNodeRange()).toBe(manifest.engines.node);
    expect(unsupportedNodeWarning(process.version, enginesNodeRange())).toBeNull();
  });

  it('an older Node gets one line that names it, the range, and how to get a supported one', () => {
    const warning = unsupportedNodeWarning('v20.20.2', '>=24.15.0');
    expect(warning).toMatch(
      /^fxgate: warning: Node v20\.20\.2 is not supported \(package\.json engines\.node: >=24\.15\.0\); /,
    );
    expect(warning).toContain('Install a Node in that range');
    expect(warning).toContain('node test/support/engine-node.mjs');
    expect(warning).not.toContain('\n');
  });

  it('an older patch release of the same major is outside too, a newer one inside', () => {
    expect(unsupportedNodeWarning('v24.11.0', '>=24.15.0')).not.toBeNull();
    expect(unsupportedNodeWarning('v24.22.3', '>=24.15.0')).toBeNull();
  });
});
