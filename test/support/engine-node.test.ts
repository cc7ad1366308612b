/**
 * test/support/engine-node.mjs, the runner that puts package.json's Node first on PATH: the suite
 * itself runs on the engines major, and a cached runtime is found without the registry while a
 * partial download beside it is ignored. Downloads are not tested here (the registry is not on
 * loopback); `.ci/run` logs each one. Touches a temporary folder only.
 */
import { chmod, mkdir, mkdtemp, rm, utimes, writeFile } from 'node:fs/promises';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import { afterEach, beforeEach, describe, expect, it } from 'vitest';

import {
  cachedVersions,
  cacheRoot,
  compareVersions,
  engineMinimum,
  ensureEngineNode,
  parseVersion,
} from './engine-node.mjs';

describe('the suite', () => {
  it('runs on a Node that engines.node accepts, of its major', () => {
    const minimum = engineMinimum();
    expect(parseVersion(process.version)[0]).toBe(parseVersion(minimum)[0]);
    expect(compareVersions(process.version, minimum)).toBeGreaterThanOrEqual(0);
  });
});

describe('versions', () => {
  it('compare numerically, not as text', () => {
    expect(compareVersions('v24.9.0', '24.15.0')).toBeLessThan(0);
    expect(compareVersions('24.22.3', 'v24.22.3')).toBe(0);
    expect(compareVersions('25.0.0', '24.99.99')).toBeGreaterThan(0);
    expect(() => parseVersion('24')).toThrow(/not a version/);
  });

  it('reads the minimum from a ">=X.Y.Z" engines range and names the form it reads otherwise', async () => {
    const root = await mkdtemp(join(tmpdir(), 'fxgate-engine-'));
    try {
      await writeFile(join(root, 'package.json'), JSON.stringify({ engines: { node: '>=24.15.0' } }));
      expect(engineMinimum(root)).toBe('24.15.0');
      await writeFile(join(root, 'package.json'), JSON.stringify({ engines: { node: '^24' } }));
      expect(() => engineMinimum(root)).toThrow(/write it as ">=X\.Y\.Z"/);
    } finally {
      await rm(root, { recursive: true, force: true });
    }
  });
});

describe('the cache', () => {
  let home: string;
  let root: string;
  const logged: string[] = [];

  beforeEach(async () => {
    home = await mkdtemp(join(tmpdir(), 'fxgate-engine-cache-'));
    root = join(home, 'repo');
    await mkdir(root);
    await writeFile(join(root, 'package.json'), JSON.stringify({ engines: { node: '>=24.15.0' } }));
    logged.length = 0;
  });
  afterEach(() => rm(home, { recursive: true, force: true }));

  /** A runtime as the runner leaves it: node-vX.Y.Z/bin/node. */
  async function cached(folder: string): Promise<void> {
    const bin = join(cacheRoot({ XDG_CACHE_HOME: home }), folder, 'bin');
    await mkdir(bin, { recursive: true });
    await writeFile(join(bin, 'node'), '#!/bin/sh\n');
    await chmod(join(bin, 'node'), 0o755);
  }

  it('is under XDG_CACHE_HOME/fxgate', () => {
    expect(cacheRoot({ XDG_CACHE_HOME: home })).toBe(join(home, 'fxgate'));
  });

  it('lists complete runtimes only, oldest first', async () => {
    await cached('node-v24.22.3');
    await cached('node-v24.16.0');
    await cached(`.partial-${process.pid}-x/package`);
    await mkdir(join(home, 'fxgate', 'node-v24.30.0'));
    expect(cachedVersions(join(home, 'fxgate'))).toEqual(['24.16.0', '24.22.3']);
  });

  it('is used without the registry for a day: the newest cached release of the major at least the minimum', async () => {
    await cached('node-v24.14.0');
    await cached('node-v24.16.0');
    await cached('node-v24.22.3');
    await cached('node-v26.1.0');
    await writeFile(join(home, 'fxgate', '.checked'), 'now\n');
    const found = ensureEngineNode({
      root,
      env: { XDG_CACHE_HOME: home },
      log: (l) => logged.push(l),
      running: 'v20.20.2',
    });
    expect(found).toEqual({
      bin: join(home, 'fxgate', 'node-v24.22.3', 'bin'),
      version: 'v24.22.3',
      source: 'registry',
    });
    expect(logged).toEqual([]);
  });

  it('is not needed when the running Node is recent enough: its own folder is the answer', async () => {
    const found = ensureEngineNode({
      root,
      env: { XDG_CACHE_HOME: home },
      running: 'v24.15.0',
      execPath: '/opt/node/bin/node',
    });
    expect(found).toEqual({ bin: '/opt/node/bin', version: 'v24.15.0', source: 'running' });
  });

  it('past a day it asks the registry again, and when the registry cannot answer the cached runtime serves', async () => {
    await cached('node-v24.22.3');
    const stamp = join(home, 'fxgate', '.checked');
    await writeFile(stamp, 'old\n');
    const twoDaysAgo = new Date(Date.now() - 2 * 24 * 60 * 60 * 1000);
    await utimes(stamp, twoDaysAgo, twoDaysAgo);
    // npm pointed at a closed loopback port: the registry cannot answer, the cached runtime serves.
    const env = {
      ...process.env,
      XDG_CACHE_HOME: home,
      npm_config_registry: `http://127.0.0.1:${await closedPort()}/`,
      npm_config_fetch_retries: '0',
      npm_config_cache: join(home, 'npm-cache'),
    };
    const found = ensureEngineNode({ root, env, log: (l) => logged.push(l), running: 'v20.20.2' });
    expect(found.version).toBe('v24.22.3');
    expect(logged).toEqual([expect.stringMatching(/^could not ask the npm registry .*; using the cached v24\.22\.3$/)]);
  });
});

/** A loopback port nothing listens on: one the kernel handed out and that was closed again. */
async function closedPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}
