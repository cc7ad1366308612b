/**
 * src/cli/main.ts as it ships: the built dist/cli/main.js run as a process, the way the `fxgate`
 * bin, `npm start` and the Docker image run it (every command's behaviour is tested in process
 * through runCli, in program.test.ts and test/cli/commands/). What only the process shows: the
 * version and help, an exit code 2 that reaches the shell, a state command on the embedded
 * database with the migrations the build copied, and a server that loads the built mappings,
 * serves, and stops on SIGTERM with 0; and what a command loads: `sign` and `--help` load no
 * other command's modules, no server, driver or database. dist/ is rebuilt first when it is older
 * than its sources.
 */
import { execFile } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { access, mkdtemp, readFile, rm, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';

import { request } from 'undici';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { V3RequestSigner } from '../../src/lib/auth/request-signer.js';
import { newUuid } from '../../src/lib/ids.js';
import { generateKeyFile, readKeyFile, writeKeyFile } from '../../src/lib/keys/key-file.js';
import { legacyToken } from '../support/independent-signing.js';
import { TEST_ISSUER } from '../support/v3-harness.js';
import { BUILT_ENTRY, ensureBuiltCli } from './built-cli.js';
import { CLI_TIMEOUT_MS, killAllCliProcesses, runCli, startBuiltCli } from './cli-process.js';

const VERSION = (
  JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as { version: string }
).version;
const COMMANDS = [
  'all',
  'core',
  'gateway',
  'keys',
  'orgs',
  'accounts',
  'webhooks',
  'migrate',
  'sign',
  'usage',
  'diff',
  'docs',
  'openapi',
];

const built = (args: readonly string[], env: Record<string, string> = {}) => runCli(args, env, CLI_TIMEOUT_MS, 'built');

let dataDir: string;

beforeAll(async () => {
  await ensureBuiltCli();
  dataDir = await mkdtemp(join(tmpdir(), 'fxgate-built-'));
}, 300_000);
afterAll(async () => {
  await killAllCliProcesses();
  if (dataDir) await rm(dataDir, { recursive: true, force: true });
});

describe('the built fxgate', () => {
  it('prints the package version with --version, exit 0', async () => {
    expect(await built(['--version'])).toMatchObject({ code: 0, stdout: `${VERSION}\n`, stderr: '' });
  });

  it('lists every command with --help, exit 0', async () => {
    const help = await built(['--help']);
    expect(help).toMatchObject({ code: 0, stderr: '' });
    expect(help.stdout).toMatch(/^Usage: fxgate \[options\] \[command\]/);
    for (const command of COMMANDS) expect(help.stdout).toMatch(new RegExp(`^ {2}${command}\\b`, 'm'));
  });

  it('ends a usage error with exit 2 and the message on stderr', async () => {
    const refused = await built(['keys', 'create', '--mode', 'live', '--scopes', 'view']);
    expect(refused).toMatchObject({ code: 2, stdout: '', signal: null });
    expect(refused.stderr).toBe("error: required option '--org <uuid>' not specified\n");
  });

  // PGlite's first start creates its database cluster (initdb), which takes seconds on a busy machine.
  it('creates a key on the embedded database, migrated from the built migrations', { timeout: 120_000 }, async () => {
    const created = await built(['keys', 'create', '--org', newUuid(), '--mode', 'sandbox', '--scopes', 'view'], {
      FXGATE_DATA_DIR: dataDir,
    });
    expect(created.stderr).toBe('');
    expect(created.code).toBe(0);
    const [, name, path] = /^name: (\S+)\nfile: (\S+)\n$/.exec(created.stdout)!;
    expect(path).toBe(join(dataDir, 'keys', `${name!.split('/')[3]}.json`));
    expect((await stat(path!)).mode & 0o777).toBe(0o600);
  });

  it(
    'serves v3 and the legacy generations with `fxgate all`, and stops on SIGTERM with 0',
    { timeout: 120_000 },
    async () => {
      const server = startBuiltCli(['all'], { FXGATE_DATA_DIR: dataDir, HOST: '127.0.0.1', PORT: '0' });
      const [, url] = await server.waitFor(/^fxgate: listening on (http:\/\/\S+) \(v1, v2 and v3\)$/m);
      const [, keyPath] = server.stdout.match(/^fxgate: sandbox key (?:created|reused): (\S+)$/m)!;
      const key = await readKeyFile(keyPath!);

      const headers = await new V3RequestSigner(key, { issuer: TEST_ISSUER }).headers({
        method: 'GET',
        pathAndQuery: '/v3/fx/pairs',
      });
      const pairs = await request(`${url}/v3/fx/pairs`, { headers });
      expect(pairs.statusCode).toBe(200);
      await pairs.body.dump();
      // Translated by the declarations of the built mappings/.
      const balances = await request(`${url}/v2/brokerage/${key.file.orgId}/balances`, {
        headers: { authorization: `Bearer ${legacyToken(key)}`, 'x-app-mode': 'SANDBOX' },
      });
      expect(balances.statusCode).toBe(200);
      expect(((await balances.body.json()) as { status: string }).status).toBe('success');
      // The migration guide, generated from the built mappings/ and the v3 snapshot the build copied to dist/assets/.
      const guide = await request(`${url}/docs/migrate/v2-to-v3`);
      expect(guide.statusCode).toBe(200);
      expect(await guide.body.text()).toContain('<a id="trade/reverse"></a>');

      const stopped = await server.stop('SIGTERM');
      expect(stopped).toMatchObject({ code: 0, signal: null });
      expect(stopped.stdout).toContain('fxgate: SIGTERM received, shutting down\n');
      await expect(access(join(dataDir, 'pglite.lock'))).rejects.toMatchObject({ code: 'ENOENT' });
    },
  );
});

/**
 * Loader hooks that append the URL of every module the ESM loader loads to a file: a package's
 * entry, ESM or CommonJS, is among them (the CommonJS files it requires in turn are not).
 */
function recordingPreload(out: string): string {
  const hooks = [
    "import { appendFileSync } from 'node:fs';",
    'let out;',
    'export function initialize(data) { out = data.out; }',
    "export async function load(url, context, next) { appendFileSync(out, url + '\\n'); return next(url, context); }",
  ].join('\n');
  const preload = [
    "import { register } from 'node:module';",
    `register(${JSON.stringify(`data:text/javascript,${encodeURIComponent(hooks)}`)}, { data: { out: ${JSON.stringify(out)} } });`,
  ].join('\n');
  return `data:text/javascript,${encodeURIComponent(preload)}`;
}

const REPO_ROOT = fileURLToPath(new URL('../../', import.meta.url));
/** What only a server, or a command on the database or the store, needs. */
const HEAVY_PACKAGES = ['fastify', 'pg', '@electric-sql/pglite', 'ioredis', 'undici', 'prom-client', 'pino'];

/** The modules a node process loaded running `args` (after node's own options), as paths from the repository. */
async function loadedModules(name: string, args: readonly string[]): Promise<string[]> {
  const out = join(dataDir, `${name}.loads`);
  await promisify(execFile)(process.execPath, ['--import', recordingPreload(out), ...args], {
    cwd: REPO_ROOT,
    env: { PATH: process.env.PATH ?? '', HOME: dataDir },
  });
  return (await readFile(out, 'utf8'))
    .split('\n')
    .filter((url) => url.startsWith('file:'))
    .map((url) => fileURLToPath(url).slice(REPO_ROOT.length));
}

function heavyPackagesIn(modules: readonly string[]): string[] {
  return HEAVY_PACKAGES.filter((name) => modules.some((path) => path.startsWith(`node_modules/${name}/`)));
}

describe('what a command of the built fxgate loads', () => {
  it('control: the recorder sees each of the heavy packages when they are loaded', async () => {
    const script = HEAVY_PACKAGES.map((name) => `await import(${JSON.stringify(name)});`).join(' ');
    const modules = await loadedModules('control', ['--input-type=module', '-e', script]);
    expect(heavyPackagesIn(modules)).toEqual(HEAVY_PACKAGES);
  });

  it('`sign` loads its own command only: no server, driver, database or store client', async () => {
    const file = generateKeyFile({ orgId: newUuid(), keyId: newUuid(), scopes: ['view'], mode: 'sandbox' });
    const keyPath = join(dataDir, 'loads-key.json');
    await writeKeyFile(keyPath, file);
    const modules = await loadedModules('sign', [
      BUILT_ENTRY,
      'sign',
      '--key',
      keyPath,
      '--method',
      'GET',
      '--path',
      '/v3/fx/pairs',
    ]);
    expect(modules).toContain('dist/cli/commands/sign.js');
    expect(heavyPackagesIn(modules)).toEqual([]);
    expect(modules.filter((path) => path.startsWith('dist/cli/commands/'))).toEqual(['dist/cli/commands/sign.js']);
    expect(modules.filter((path) => path.startsWith('dist/core/'))).toEqual([]);
  });

  it('`--help` loads the declarations of the commands and none of their work', async () => {
    const modules = await loadedModules('help', [BUILT_ENTRY, '--help']);
    expect(modules).toContain('dist/cli/definitions/sign.js');
    expect(heavyPackagesIn(modules)).toEqual([]);
    expect(modules.filter((path) => path.startsWith('dist/cli/commands/'))).toEqual([]);
  });
});
