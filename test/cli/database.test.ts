/**
 * The embedded data folder as the CLI opens it: its owner's only, whatever the umask, from the
 * first start on and for everything written there later (the database's files, the key files,
 * the sandbox record, the secrets key, the gateway's keys); and a folder found open to others,
 * as an earlier version left it, tightened at start with one line on stderr saying so.
 */
import { chmod, lstat, mkdir, mkdtemp, readdir, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { PGLITE_FOLDER } from '../../src/cli/database.js';
import { EMBEDDED_KEY_FILE } from '../../src/cli/sealing.js';
import { entryCount, sharedEntries, withUmask } from '../support/file-modes.js';
import { fxgate, startFxgate, stopInProcessServers } from './in-process-cli.js';

const ORG = '0190c5a8-7d2e-7c1a-9f3b-2a4d6e8f0b1c';

describe.skipIf(process.platform === 'win32')('the embedded data folder', () => {
  let parent: string;
  beforeAll(async () => {
    parent = await mkdtemp(join(tmpdir(), 'fxgate-data-modes-'));
  });
  afterAll(async () => {
    await stopInProcessServers();
    if (parent) await rm(parent, { recursive: true, force: true });
  });

  it(
    "is made and kept its owner's only under umask 0022: the first start, keys, webhooks, more rows",
    { timeout: 120_000 },
    async () => {
      const dataDir = join(parent, 'fresh');
      const env = { FXGATE_DATA_DIR: dataDir, HOST: '127.0.0.1', PORT: '0' };
      await withUmask(0o022, async () => {
        const server = await startFxgate(['all'], env);
        // Through the running server's admin listener: a subscription (sealed with the secrets key).
        const added = await fxgate(
          ['webhooks', 'add', '--org', ORG, '--mode', 'sandbox', '--url', 'http://127.0.0.1:9/hook'],
          env,
        );
        expect(added.code, added.stderr).toBe(0);
        expect(await server.stop()).toMatchObject({ code: 0 });
        const files = await entryCount(dataDir);
        // Directly on the folder: key files, and enough new keys and orgs for the database to grow.
        for (let index = 0; index < 5; index++) {
          const created = await fxgate(
            ['keys', 'create', '--org', `${ORG.slice(0, -1)}${index}`, '--mode', 'live', '--scopes', 'view'],
            env,
          );
          expect(created.code, created.stderr).toBe(0);
        }
        const again = await startFxgate(['all'], env);
        expect(again.stderr).toBe('');
        expect(await again.stop()).toMatchObject({ code: 0 });
        expect(await entryCount(dataDir)).toBeGreaterThan(files);
      });
      expect((await readdir(dataDir)).sort()).toEqual(
        expect.arrayContaining(['gateway-keys', 'keys', PGLITE_FOLDER, 'sandbox.json', EMBEDDED_KEY_FILE]),
      );
      expect(await sharedEntries(dataDir)).toEqual([]);
    },
  );

  it(
    'found open to others (0777, files 0666), is tightened at start, and the start says so on stderr',
    { timeout: 120_000 },
    async () => {
      const dataDir = join(parent, 'wide');
      const env = { FXGATE_DATA_DIR: dataDir, HOST: '127.0.0.1', PORT: '0' };
      const first = await startFxgate(['all'], env);
      await first.stop();
      // As an earlier version left it: every folder 0777, every file 0666.
      await mkdir(join(dataDir, 'extra'), { recursive: true });
      await writeFile(join(dataDir, 'extra', 'note'), 'x');
      const entries = [dataDir, ...(await readdir(dataDir, { recursive: true })).map((entry) => join(dataDir, entry))];
      for (const path of entries) await chmod(path, (await lstat(path)).isDirectory() ? 0o777 : 0o666);
      expect((await sharedEntries(dataDir)).length).toBe(entries.length);

      const server = await startFxgate(['all'], env);
      expect(server.stderr).toBe(
        `fxgate: ${dataDir} (FXGATE_DATA_DIR) was open to other users: took group and other access off ${entries.length} entries under it; the data folder is its owner's only\n`,
      );
      expect(await sharedEntries(dataDir)).toEqual([]);
      await server.stop();
      const quiet = await fxgate(['keys', 'list'], env);
      expect(quiet).toMatchObject({ code: 0, stderr: '' });
    },
  );
});
