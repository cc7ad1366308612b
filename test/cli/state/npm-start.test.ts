/**
 * A newcomer's first steps: `fxgate all` (what `npm start` runs) as a process on the embedded
 * defaults, then `fxgate keys create` from another process (this one, through runCli) while it
 * runs. The key is
 * registered through the server's admin listener, works at once, and a revocation through it
 * takes effect at once; a clean shutdown removes what the server published.
 */
import { access, mkdtemp, rm, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import { request } from 'undici';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { ADMIN_ADDRESS_FILE, ADMIN_TOKEN_FILE } from '../../../src/cli/state/admin-discovery.js';
import { V3RequestSigner } from '../../../src/lib/auth/request-signer.js';
import { newUuid } from '../../../src/lib/ids.js';
import { readKeyFile } from '../../../src/lib/keys/key-file.js';
import { TEST_ISSUER } from '../../support/v3-harness.js';
import { killAllCliProcesses, startCli } from '../cli-process.js';
import { fxgate } from '../in-process-cli.js';

let dataDir: string;
let env: Record<string, string>;

beforeAll(async () => {
  dataDir = await mkdtemp(join(tmpdir(), 'fxgate-npm-start-'));
  env = { FXGATE_DATA_DIR: dataDir, HOST: '127.0.0.1', PORT: '0' };
});
afterAll(async () => {
  await killAllCliProcesses();
  if (dataDir) await rm(dataDir, { recursive: true, force: true });
});

async function pairsStatus(url: string, keyPath: string): Promise<number> {
  const key = await readKeyFile(keyPath);
  const headers = await new V3RequestSigner(key, { issuer: TEST_ISSUER }).headers({
    method: 'GET',
    pathAndQuery: '/v3/fx/pairs',
  });
  const response = await request(`${url}/v3/fx/pairs`, { headers });
  await response.body.dump();
  return response.statusCode;
}

describe('fxgate keys create while fxgate all runs', () => {
  it('registers the key through the running server, which accepts it at once', { timeout: 180_000 }, async () => {
    const server = startCli(['all'], env);
    const [, url] = await server.waitFor(/^fxgate: listening on (http:\/\/\S+) \(v1, v2 and v3\)$/m);

    const orgId = newUuid();
    const created = await fxgate(['keys', 'create', '--org', orgId, '--mode', 'live', '--scopes', 'view'], env);
    expect(created.stderr).toBe('');
    expect(created.code).toBe(0);
    const [, name, keyPath] = /^name: (\S+)\nfile: (\S+)\n$/.exec(created.stdout)!;
    expect(keyPath).toBe(join(dataDir, 'keys', `${name!.split('/')[3]}.json`));
    expect((await stat(keyPath!)).mode & 0o777).toBe(0o600);
    expect(await pairsStatus(url!, keyPath!)).toBe(200);

    const listed = await fxgate(['keys', 'list', '--org', orgId], env);
    expect(listed.code).toBe(0);
    expect(listed.stdout).toContain(`${name}  live  view`);

    // The server's own registry revoked it, so its key cache has forgotten it already.
    const revoked = await fxgate(['keys', 'revoke', name!], env);
    expect(revoked).toMatchObject({ code: 0, stdout: `revoked: ${name}\n` });
    expect(await pairsStatus(url!, keyPath!)).toBe(401);

    expect((await server.stop('SIGTERM')).code).toBe(0);
    for (const file of [ADMIN_ADDRESS_FILE, ADMIN_TOKEN_FILE, 'pglite.lock'])
      await expect(access(join(dataDir, file))).rejects.toMatchObject({ code: 'ENOENT' });
  });
});
