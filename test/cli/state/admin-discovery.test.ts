import { chmod, mkdtemp, readFile, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import {
  ADMIN_ADDRESS_FILE,
  ADMIN_TOKEN_FILE,
  checkAdminUrl,
  clearPublishedAdmin,
  isLoopbackAddress,
  localAdminUrl,
  newAdminToken,
  publishAdmin,
  readAdminToken,
  readPublishedAdmin,
} from '../../../src/cli/state/admin-discovery.js';

describe('admin discovery files', () => {
  let dir: string;
  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'fxgate-discovery-'));
  });
  afterAll(async () => {
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  it('makes 32 random bytes of token', () => {
    const tokens = new Set(Array.from({ length: 100 }, newAdminToken));
    expect(tokens.size).toBe(100);
    for (const token of tokens) expect(token).toMatch(/^[0-9a-f]{64}$/);
  });

  it('publishes the URL and token 0600 whatever the umask, reads them back, and removes only its own', async () => {
    const token = newAdminToken();
    const previous = process.umask(0o000);
    let remove: () => Promise<void>;
    try {
      remove = await publishAdmin(dir, 'http://127.0.0.1:8081', token);
    } finally {
      process.umask(previous);
    }
    for (const file of [ADMIN_ADDRESS_FILE, ADMIN_TOKEN_FILE])
      expect((await stat(join(dir, file))).mode & 0o777).toBe(0o600);
    expect(await readPublishedAdmin(dir)).toEqual({ pid: process.pid, url: 'http://127.0.0.1:8081' });
    expect(await readAdminToken(dir)).toBe(token);

    // Another process has published since: its files stay.
    const other = newAdminToken();
    await writeFile(join(dir, ADMIN_TOKEN_FILE), `${other}\n`);
    await writeFile(join(dir, ADMIN_ADDRESS_FILE), JSON.stringify({ pid: process.pid + 1, url: 'http://127.0.0.1:9' }));
    await remove();
    expect(await readFile(join(dir, ADMIN_TOKEN_FILE), 'utf8')).toBe(`${other}\n`);
    expect(await readPublishedAdmin(dir)).toEqual({ pid: process.pid + 1, url: 'http://127.0.0.1:9' });

    await clearPublishedAdmin(dir);
    expect(await readPublishedAdmin(dir)).toBeNull();
  });

  it('publishes that there is no listener, without a token', async () => {
    await writeFile(join(dir, ADMIN_TOKEN_FILE), `${newAdminToken()}\n`, { mode: 0o600 });
    const remove = await publishAdmin(dir, null, newAdminToken());
    expect(await readPublishedAdmin(dir)).toEqual({ pid: process.pid, url: null });
    await expect(stat(join(dir, ADMIN_TOKEN_FILE))).rejects.toMatchObject({ code: 'ENOENT' });
    await remove();
    expect(await readPublishedAdmin(dir)).toBeNull();
  });

  it('refuses files that are not what fxgate writes', async () => {
    await writeFile(join(dir, ADMIN_ADDRESS_FILE), '{"pid":"1"}', { mode: 0o600 });
    await expect(readPublishedAdmin(dir)).rejects.toThrow(
      `refusing ${join(dir, ADMIN_ADDRESS_FILE)}: it is not what fxgate writes`,
    );
    await writeFile(join(dir, ADMIN_TOKEN_FILE), 'short\n', { mode: 0o600 });
    await chmod(join(dir, ADMIN_TOKEN_FILE), 0o600);
    await expect(readAdminToken(dir)).rejects.toThrow(
      `refusing ${join(dir, ADMIN_TOKEN_FILE)}: it is not what fxgate writes`,
    );
    await clearPublishedAdmin(dir);
  });

  it('names loopback addresses, and the local URL of a listener', () => {
    for (const address of ['127.0.0.1', '127.1.2.3', '::1', '::ffff:127.0.0.1'])
      expect(isLoopbackAddress(address)).toBe(true);
    for (const address of ['10.0.0.1', '0.0.0.0', '::', '::ffff:10.0.0.1', 'localhost', '128.0.0.1', ''])
      expect(isLoopbackAddress(address)).toBe(false);
    expect(localAdminUrl({ address: '0.0.0.0', family: 'IPv4', port: 81 })).toBe('http://127.0.0.1:81');
    expect(localAdminUrl({ address: '::', family: 'IPv6', port: 81 })).toBe('http://[::1]:81');
    expect(localAdminUrl({ address: '::1', family: 'IPv6', port: 81 })).toBe('http://[::1]:81');
    expect(localAdminUrl({ address: '10.0.0.5', family: 'IPv4', port: 81 })).toBe('http://10.0.0.5:81');
  });

  it('sends the token only to http on loopback', () => {
    expect(checkAdminUrl('http://127.0.0.1:8081', 1).origin).toBe('http://127.0.0.1:8081');
    expect(checkAdminUrl('http://[::1]:8081', 1).origin).toBe('http://[::1]:8081');
    for (const url of [
      'http://10.0.0.5:8081',
      'http://localhost:8081',
      'https://127.0.0.1:8081',
      'http://127.0.0.1:8081/x',
      'not a url',
      'http://127.0.0.1.example.com:1',
    ]) {
      expect(() => checkAdminUrl(url, 1)).toThrow('not an http:// URL of a loopback address');
    }
  });
});
