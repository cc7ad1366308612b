/**
 * Whether the Node running fxgate is one it supports: package.json's `engines.node`, read at
 * run time so that the one range is the rule. The process entry (main.ts) prints the warning;
 * an older Node still runs the command, since refusing would strand an operator mid-upgrade.
 * Reads package.json only.
 */
import { readFileSync } from 'node:fs';

import semver from 'semver';

/** package.json is two folders up from both src/cli and dist/cli. */
export function enginesNodeRange(): string {
  const manifest = JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as {
    engines?: { node?: string };
  };
  const range = manifest.engines?.node;
  if (range === undefined) throw new Error('package.json has no engines.node; put the supported Node range back there');
  return range;
}

/** The one-line warning for a Node outside `range`, or null when it is inside. */
export function unsupportedNodeWarning(version: string, range: string): string | null {
  if (semver.satisfies(version, range)) return null;
  return (
    `fxgate: warning: Node ${version} is not supported (package.json engines.node: ${range}); ` +
    `this run may fail in ways no test covers. Install a Node in that range (nodejs.org or a version manager; ` +
    `in a checkout, \`node test/support/engine-node.mjs\` fetches one and prints its bin folder)`
  );
}
