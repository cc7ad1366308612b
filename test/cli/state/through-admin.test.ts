/**
 * The state commands while `fxgate all` holds the embedded data folder: both run in this process
 * (startAll is what the all command runs), and the commands go through its admin listener. Every
 * command prints what it prints directly, with the same exit code; the discovery files and the
 * token are checked before use; a server without an admin listener, and a stale lock, are handled.
 */
import { spawn } from 'node:child_process';
import { generateKeyPairSync } from 'node:crypto';
import { chmod, chown, mkdir, mkdtemp, readFile, rm, stat, symlink, unlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import { request } from 'undici';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { Closers } from '../../../src/cli/closers.js';
import { startAll, type StartedAll } from '../../../src/cli/commands/all.js';
import { PGLITE_LOCK_FILE } from '../../../src/cli/database.js';
import { Drain } from '../../../src/cli/drain.js';
import { ADMIN_ADDRESS_FILE, ADMIN_TOKEN_FILE } from '../../../src/cli/state/admin-discovery.js';
import { openState } from '../../../src/cli/state/session.js';
import { loadConfig } from '../../../src/lib/config.js';
import { newUuid } from '../../../src/lib/ids.js';
import { keyFileSchema, readKeyFile } from '../../../src/lib/keys/key-file.js';
import { legacyToken } from '../../support/independent-signing.js';
import { fxgate as runFxgate, type InProcessResult } from '../in-process-cli.js';

const UNKNOWN_ORG = '0190c5a8-0000-7c1a-9f3b-2a4d6e8f0b1c';
const NO_ACCOUNT = `wac_${'0'.repeat(32)}`;

let dataDir: string;

beforeAll(async () => {
  dataDir = await mkdtemp(join(tmpdir(), 'fxgate-state-'));
});
afterAll(async () => {
  if (dataDir) await rm(dataDir, { recursive: true, force: true });
});

/** A command on the embedded data folder, in process: no DATABASE_URL, so it finds the server that holds the folder. */
function fxgate(...args: string[]): Promise<InProcessResult> {
  return runFxgate(args, { FXGATE_DATA_DIR: dataDir, LOG_LEVEL: 'silent' });
}

interface Server {
  readonly started: StartedAll;
  stop(): Promise<void>;
}

async function startServer(env: Record<string, string> = {}): Promise<Server> {
  const config = loadConfig({ FXGATE_DATA_DIR: dataDir, HOST: '127.0.0.1', PORT: '0', LOG_LEVEL: 'silent', ...env });
  const closers = new Closers();
  try {
    // Nothing may warn: the in-process store needs no Redis.
    return {
      started: await startAll(config, closers, new Drain(closers), (line) => {
        throw new Error(line);
      }),
      stop: () => closers.closeAll(),
    };
  } catch (error) {
    await closers.closeAll();
    throw error;
  }
}

const exists = (path: string): Promise<boolean> =>
  stat(path).then(
    () => true,
    () => false,
  );

function publicPem(): string {
  return generateKeyPairSync('ec', { namedCurve: 'P-256' })
    .publicKey.export({ type: 'spki', format: 'pem' })
    .toString();
}

/** The key import files of one run of the script: one that imports, one that conflicts with it, one invalid. */
async function importFiles(
  dir: string,
  orgId: string,
): Promise<{ good: string; conflicting: string; invalid: string }> {
  // In the data folder, so kept its owner's only as fxgate keeps it (it would tighten them, and say so).
  await mkdir(dir, { recursive: true, mode: 0o700 });
  const name = `org/${orgId}/apiKey/${newUuid()}`;
  const record = (publicKey: string) =>
    JSON.stringify({
      name,
      orgId,
      publicKey,
      scopes: ['View', 'Trade'],
      mode: 'Live',
      ipAllowlist: ['198.51.100.0/24'],
    });
  const files = {
    good: join(dir, 'good.jsonl'),
    conflicting: join(dir, 'conflicting.json'),
    invalid: join(dir, 'invalid.json'),
  };
  await writeFile(files.good, `${record(publicPem())}\n`, { mode: 0o600 });
  await writeFile(files.conflicting, record(publicPem()), { mode: 0o600 });
  await writeFile(
    files.invalid,
    JSON.stringify({ name, orgId, publicKey: publicPem(), privateKey: 'x', scopes: ['view'], mode: 'live' }),
    { mode: 0o600 },
  );
  return files;
}

interface Transcript {
  readonly text: string;
  readonly results: InProcessResult[];
}

/** Every state command, with its failures; what they change in the sandbox org's book is undone by the end, so the script runs twice alike. */
async function script(input: {
  dir: string;
  org: string;
  webhookOrg: string;
  sandboxOrg: string;
  account: string;
}): Promise<Transcript> {
  const { dir, org, webhookOrg, sandboxOrg, account } = input;
  const results: InProcessResult[] = [];
  let text = '';
  const run = async (...args: string[]): Promise<InProcessResult> => {
    const result = await fxgate(...args);
    results.push(result);
    text += `$ fxgate ${args.join(' ')}\n[exit ${result.code}]\n${result.stdout}${result.stderr === '' ? '' : `[stderr]\n${result.stderr}`}`;
    return result;
  };
  const files = await importFiles(dir, org);

  const created = await run(
    'keys',
    'create',
    '--org',
    org,
    '--mode',
    'live',
    '--scopes',
    'trade,view',
    '--ip',
    '203.0.113.0/24',
    '--label',
    'ci',
  );
  const name = /^name: (\S+)$/m.exec(created.stdout)?.[1] ?? 'none';
  await run('keys', 'create', '--org', org, '--mode', 'sandbox', '--scopes', 'view', '--out', join(dir, 'mine.json'));
  await run('keys', 'create', '--org', org, '--mode', 'sandbox', '--scopes', 'view', '--out', join(dir, 'mine.json'));
  await run('keys', 'create', '--org', 'not-a-uuid', '--mode', 'sandbox', '--scopes', 'view');
  await run('keys', 'list', '--org', org);
  await run('keys', 'revoke', name);
  await run('keys', 'revoke', name);
  await run('keys', 'import', files.good);
  await run('keys', 'import', files.good);
  await run('keys', 'import', files.conflicting);
  await run('keys', 'import', files.invalid, files.good);
  await run('keys', 'list', '--org', org);

  await run('orgs', 'show', org);
  await run('orgs', 'set-credit-line', org, '250000.50');
  await run('orgs', 'trading', org, '--mode', 'live', '--disable');
  await run('orgs', 'currency', org, 'USDC', '--mode', 'sandbox', '--disable');
  await run('orgs', 'currency', org, 'XYZ', '--mode', 'sandbox', '--disable');
  await run('orgs', 'pair', org, 'EUR/USD', '--mode', 'sandbox', '--disable');
  await run('orgs', 'pair', org, 'EUR/USD', '--mode', 'sandbox', '--disable', '--enable');
  await run('orgs', 'show', org, '--mode', 'sandbox');
  await run('orgs', 'show', UNKNOWN_ORG);
  await run('orgs', 'trading', UNKNOWN_ORG, '--mode', 'live', '--enable');

  await run('accounts', 'list', sandboxOrg);
  await run('accounts', 'list', org);
  await run('accounts', 'list', UNKNOWN_ORG, '--mode', 'live');
  await run('accounts', 'disable', sandboxOrg, account, '--mode', 'sandbox');
  await run('accounts', 'withdrawals', sandboxOrg, account, '--mode', 'sandbox', '--disable');
  await run('accounts', 'list', sandboxOrg, '--mode', 'sandbox');
  await run('accounts', 'withdrawals', sandboxOrg, account, '--mode', 'sandbox', '--enable');
  await run('accounts', 'verify', sandboxOrg, account, '--mode', 'sandbox');
  await run('accounts', 'verify', sandboxOrg, NO_ACCOUNT, '--mode', 'sandbox');
  await run('accounts', 'disable', UNKNOWN_ORG, NO_ACCOUNT, '--mode', 'live');

  const added = await run(
    'webhooks',
    'add',
    '--org',
    webhookOrg,
    '--mode',
    'sandbox',
    '--url',
    'http://127.0.0.1:9/hooks',
  );
  const subscription = /^id: (\S+)$/m.exec(added.stdout)?.[1] ?? 'none';
  await run(
    'webhooks',
    'add',
    '--org',
    webhookOrg,
    '--mode',
    'sandbox',
    '--url',
    'https://example.com/hooks',
    '--events',
    'deposits,failed-withdrawals',
    '--json',
  );
  await run('webhooks', 'add', '--org', webhookOrg, '--mode', 'live', '--url', 'http://example.com/hooks');
  await run(
    'webhooks',
    'add',
    '--org',
    webhookOrg,
    '--mode',
    'sandbox',
    '--url',
    'https://example.com/x',
    '--events',
    'trades',
  );
  await run('webhooks', 'list', '--org', webhookOrg);
  await run('webhooks', 'list', '--org', webhookOrg, '--json');
  await run('webhooks', 'remove', subscription);
  await run('webhooks', 'remove', subscription, '--json');

  await run('usage');
  await run('usage', '--generation', 'v2', '--since', '7d', '--format', 'json');
  await run('usage', '--format', 'csv');
  await run('usage', '--generation', 'v3');
  await run('usage', '--since', 'yesterday');
  return { text, results };
}

/**
 * Ids, times and secrets by their order of appearance, so two runs of the script compare. The
 * running gateway registers with v3 on its own schedule; a list shows its endpoint, or pending.
 */
function normalise(text: string, dir: string): string {
  const labels = new Map<string, string>();
  const label = (value: string): string => {
    if (!labels.has(value)) labels.set(value, `<id${labels.size + 1}>`);
    return labels.get(value)!;
  };
  return text
    .replaceAll(dir, '<dir>')
    .replace(/\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z/g, '<time>')
    .replace(/whsec_[A-Za-z0-9_-]{43}/g, '<secret>')
    .replace(/\bwhe_[0-9a-f]{32}\b/g, 'pending')
    .replace(/"v3EndpointId":"pending"/g, '"v3EndpointId":null')
    .replace(/[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}/g, label);
}

/** What reading commands print about the state the script left. */
async function reads(orgs: { org: string; webhookOrg: string; sandboxOrg: string }): Promise<InProcessResult[]> {
  const results: InProcessResult[] = [];
  for (const args of [
    ['keys', 'list', '--org', orgs.org],
    ['orgs', 'show', orgs.org],
    ['accounts', 'list', orgs.sandboxOrg],
    ['webhooks', 'list', '--org', orgs.webhookOrg, '--json'],
    ['usage', '--format', 'json'],
  ]) {
    const result = await fxgate(...args);
    results.push({
      ...result,
      stdout: result.stdout.replace(/"v3EndpointId":"whe_[0-9a-f]{32}"/g, '"v3EndpointId":null'),
    });
  }
  return results;
}

describe('state commands while fxgate all holds the embedded data folder', () => {
  let server: Server | null = null;
  let sandboxOrg: string;
  let account: string;
  let remote: Transcript;
  let remoteReads: InProcessResult[];
  const orgs = { org: newUuid(), webhookOrg: newUuid() };

  afterAll(async () => {
    await server?.stop();
  });

  it('runs every command through the admin listener', { timeout: 180_000 }, async () => {
    server = await startServer();
    sandboxOrg = server.started.sandbox!.orgId;
    account = /^(wac_[0-9a-f]{32})/.exec(server.started.seeded!.accounts[0]!)![1]!;
    expect(server.started.adminUrl).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
    const published = JSON.parse(await readFile(join(dataDir, ADMIN_ADDRESS_FILE), 'utf8')) as unknown;
    expect(published).toEqual({ pid: process.pid, url: server.started.adminUrl });
    for (const file of [ADMIN_ADDRESS_FILE, ADMIN_TOKEN_FILE])
      expect((await stat(join(dataDir, file))).mode & 0o777).toBe(0o600);
    expect(await readFile(join(dataDir, ADMIN_TOKEN_FILE), 'utf8')).toMatch(/^[0-9a-f]{64}\n$/);

    // One legacy request, counted and written (GET /admin/usage writes the pending counts), for `usage` to report.
    const sandboxKey = await readKeyFile(server.started.sandbox!.path);
    const legacy = await request(`${server.started.url}/v2/brokerage/${sandboxOrg}/balances`, {
      headers: { authorization: `Bearer ${legacyToken(sandboxKey)}`, 'x-app-mode': 'SANDBOX' },
    });
    expect(legacy.statusCode).toBe(200);
    await legacy.body.dump();
    expect(
      ((await (await request(`${server.started.adminUrl}/admin/usage`)).body.json()) as { rows: unknown[] }).rows,
    ).toHaveLength(1);

    remote = await script({ dir: join(dataDir, 'remote'), ...orgs, sandboxOrg, account });
    // The exit codes the script expects: each command's own, as directly.
    expect(remote.results.map((result) => result.code)).toEqual([
      0,
      0,
      2,
      2,
      0,
      0,
      1,
      0,
      0,
      1,
      2,
      0, // keys
      0,
      0,
      0,
      0,
      2,
      0,
      2,
      0,
      1,
      1, // orgs
      0,
      0,
      1,
      0,
      0,
      0,
      0,
      0,
      1,
      1, // accounts
      0,
      0,
      2,
      2,
      0,
      0,
      0,
      1, // webhooks
      0,
      0,
      0,
      2,
      2, // usage
    ]);
    expect(remote.text).not.toContain('in use');

    // The key file is the CLI's own, where it is written directly, with the private key.
    const [, keyName, keyPath] = /^name: (\S+)\nfile: (\S+)$/m.exec(remote.results[0]!.stdout)!;
    expect(keyPath).toBe(join(dataDir, 'keys', `${keyName!.split('/')[3]}.json`));
    expect((await stat(keyPath!)).mode & 0o777).toBe(0o600);
    expect(keyFileSchema.parse(JSON.parse(await readFile(keyPath!, 'utf8')))).toMatchObject({
      name: keyName,
      orgId: orgs.org,
      mode: 'live',
    });
  });

  it('refuses a wrong token, or none, and a request for an unknown route', async () => {
    const url = server!.started.adminUrl!;
    const body = JSON.stringify({ org: orgs.org });
    const headers = { 'content-type': 'application/json' };
    const none = await request(`${url}/admin/cli/keys/list`, { method: 'POST', headers, body });
    expect(none.statusCode).toBe(401);
    expect(none.headers['www-authenticate']).toBe('Bearer');
    await none.body.dump();
    const wrong = await request(`${url}/admin/cli/keys/list`, {
      method: 'POST',
      headers: { ...headers, authorization: `Bearer ${'0'.repeat(64)}` },
      body,
    });
    expect(wrong.statusCode).toBe(401);
    await wrong.body.dump();
    const token = (await readFile(join(dataDir, ADMIN_TOKEN_FILE), 'utf8')).trim();
    const right = await request(`${url}/admin/cli/keys/list`, {
      method: 'POST',
      headers: { ...headers, authorization: `Bearer ${token}` },
      body,
    });
    expect(right.statusCode).toBe(200);
    expect(((await right.body.json()) as unknown[]).length).toBe(3);
    // The public listener has none of these routes.
    const publicAnswer = await request(`${server!.started.url}/admin/cli/keys/list`, {
      method: 'POST',
      headers: { ...headers, authorization: `Bearer ${token}` },
      body,
    });
    expect(publicAnswer.statusCode).toBe(404);
    await publicAnswer.body.dump();

    // The CLI holding a token the server did not issue says what to do.
    const tokenPath = join(dataDir, ADMIN_TOKEN_FILE);
    await writeFile(tokenPath, `${'1'.repeat(64)}\n`, { mode: 0o600 });
    try {
      const refused = await fxgate('keys', 'list', '--org', orgs.org);
      expect(refused).toEqual({
        code: 1,
        stdout: '',
        stderr: `fxgate: the admin listener of fxgate (pid ${process.pid}) at ${url} refused the token in the data folder: stop that process and start it again, which writes a new one\n`,
      });
    } finally {
      await writeFile(tokenPath, `${token}\n`, { mode: 0o600 });
    }
  });

  it("refuses a token or address file that others can open, that is not the user's, or is a link", async () => {
    const tokenPath = join(dataDir, ADMIN_TOKEN_FILE);
    const addressPath = join(dataDir, ADMIN_ADDRESS_FILE);
    const refusal = (path: string, reason: string) => ({
      code: 1,
      stdout: '',
      stderr: `fxgate: refusing ${path}: ${reason}. Stop the running fxgate and start it again, which writes it afresh\n`,
    });
    for (const [path, mode] of [
      [tokenPath, 0o644],
      [tokenPath, 0o640],
      [tokenPath, 0o602],
      [addressPath, 0o666],
    ] as const) {
      await chmod(path, mode);
      try {
        expect(await fxgate('keys', 'list', '--org', orgs.org)).toEqual(
          refusal(path, `its mode is ${mode.toString(8).padStart(4, '0')}, open to other users; it must be 0600`),
        );
      } finally {
        await chmod(path, 0o600);
      }
    }
    // Only root can give a file away; elsewhere the owner check is the unit test's.
    if (process.getuid!() === 0) {
      await chown(tokenPath, 65_534, 65_534);
      try {
        expect(await fxgate('keys', 'list', '--org', orgs.org)).toEqual(
          refusal(tokenPath, 'it belongs to user 65534, not to you (0)'),
        );
      } finally {
        await chown(tokenPath, 0, 0);
      }
    }
    const token = await readFile(tokenPath, 'utf8');
    const elsewhere = join(dataDir, 'elsewhere.token');
    await writeFile(elsewhere, token, { mode: 0o600 });
    await unlink(tokenPath);
    await symlink(elsewhere, tokenPath);
    try {
      expect(await fxgate('keys', 'list', '--org', orgs.org)).toEqual(refusal(tokenPath, 'it is a symbolic link'));
    } finally {
      await unlink(tokenPath);
      await writeFile(tokenPath, token, { mode: 0o600 });
    }
    expect((await fxgate('keys', 'list', '--org', orgs.org)).code).toBe(0);
  });

  it('sends the token to loopback addresses only', async () => {
    const addressPath = join(dataDir, ADMIN_ADDRESS_FILE);
    const original = await readFile(addressPath, 'utf8');
    try {
      for (const url of [
        'http://10.1.2.3:8081',
        'http://localhost:8081',
        'https://127.0.0.1:8081',
        'http://example.com:8081',
      ]) {
        await writeFile(addressPath, JSON.stringify({ pid: process.pid, url }), { mode: 0o600 });
        expect(await fxgate('keys', 'list', '--org', orgs.org)).toEqual({
          code: 1,
          stdout: '',
          stderr: `fxgate: the admin listener of fxgate (pid ${process.pid}) is at ${url}, not an http:// URL of a loopback address: the CLI sends its token only over loopback. Restart that process with FXGATE_ADMIN_HOST=127.0.0.1, or stop it and run the command again\n`,
        });
      }
    } finally {
      await writeFile(addressPath, original, { mode: 0o600 });
    }
  });

  it(
    'prints what the commands print directly: the same state read both ways, and the script run again on new orgs',
    { timeout: 300_000 },
    async () => {
      remoteReads = await reads({ ...orgs, sandboxOrg });
      await server!.stop();
      server = null;
      // A clean shutdown takes back what it published, and the lock.
      for (const file of [ADMIN_ADDRESS_FILE, ADMIN_TOKEN_FILE, PGLITE_LOCK_FILE])
        expect(await exists(join(dataDir, file))).toBe(false);

      expect(await reads({ ...orgs, sandboxOrg })).toEqual(remoteReads);
      expect(remoteReads.every((result) => result.code === 0 && result.stderr === '')).toBe(true);

      const direct = await script({
        dir: join(dataDir, 'direct'),
        org: newUuid(),
        webhookOrg: newUuid(),
        sandboxOrg,
        account,
      });
      expect(normalise(direct.text, join(dataDir, 'direct'))).toBe(normalise(remote.text, join(dataDir, 'remote')));
    },
  );

  it('says how to fix a server without an admin listener', { timeout: 120_000 }, async () => {
    server = await startServer({ FXGATE_ADMIN_PORT: 'off' });
    expect(server.started.adminUrl).toBeNull();
    expect(JSON.parse(await readFile(join(dataDir, ADMIN_ADDRESS_FILE), 'utf8'))).toEqual({
      pid: process.pid,
      url: null,
    });
    expect(await exists(join(dataDir, ADMIN_TOKEN_FILE))).toBe(false);
    expect(await fxgate('keys', 'list')).toEqual({
      code: 1,
      stdout: '',
      stderr:
        `fxgate: ${dataDir} (FXGATE_DATA_DIR) is in use by fxgate (pid ${process.pid}), which runs without an admin listener, so this command cannot go through it. ` +
        'Stop that process and run the command again, or restart it with an admin listener (FXGATE_ADMIN_PORT unset for `fxgate all`, which then listens on PORT+1, ' +
        'or a port number), or set DATABASE_URL so that several processes share PostgreSQL.\n',
    });
    await server.stop();
    server = null;
    expect(await exists(join(dataDir, ADMIN_ADDRESS_FILE))).toBe(false);
  });

  it('takes over a stale lock, and removes what its process published', async () => {
    const dead = spawn(process.execPath, ['-e', '0'], { stdio: 'ignore' });
    const deadPid = await new Promise<number>((resolve) => dead.once('exit', () => resolve(dead.pid!)));
    await writeFile(join(dataDir, PGLITE_LOCK_FILE), `${deadPid}\n`);
    await writeFile(join(dataDir, ADMIN_ADDRESS_FILE), JSON.stringify({ pid: deadPid, url: 'http://127.0.0.1:9' }), {
      mode: 0o600,
    });
    await writeFile(join(dataDir, ADMIN_TOKEN_FILE), `${'2'.repeat(64)}\n`, { mode: 0o600 });
    const listed = await fxgate('keys', 'list', '--org', orgs.org);
    expect(listed).toEqual(remoteReads[0]);
    for (const file of [ADMIN_ADDRESS_FILE, ADMIN_TOKEN_FILE, PGLITE_LOCK_FILE])
      expect(await exists(join(dataDir, file))).toBe(false);
  });

  it('waits a while for a holder that has published nothing, then says so', async () => {
    const holder = spawn(process.execPath, ['-e', 'setTimeout(() => {}, 60_000)'], { stdio: 'ignore' });
    const closers = new Closers();
    try {
      await writeFile(join(dataDir, PGLITE_LOCK_FILE), `${holder.pid}\n`);
      const config = loadConfig({ FXGATE_DATA_DIR: dataDir, LOG_LEVEL: 'silent' });
      const started = Date.now();
      const waiting: string[] = [];
      await expect(
        openState(config, closers, { publishWaitMs: 600, warn: (line) => waiting.push(line) }),
      ).rejects.toThrow(
        `${dataDir} (FXGATE_DATA_DIR) is in use by another fxgate process (pid ${holder.pid}), which published no admin listener within 0.6 s ` +
          '(it may still be starting, or not be a server). Run the command again once it has started, or stop it first, or set DATABASE_URL so that several processes share PostgreSQL.',
      );
      expect(Date.now() - started).toBeGreaterThanOrEqual(600);
      // The notice comes after a second of waiting; this wait ended before it.
      expect(waiting).toEqual([]);
    } finally {
      await closers.closeAll();
      const exited = new Promise((resolve) => holder.once('exit', resolve));
      holder.kill('SIGKILL');
      await exited;
      await unlink(join(dataDir, PGLITE_LOCK_FILE)).catch(() => undefined);
    }
  });
});

describe('fxgate all with FXGATE_ADMIN_TOKEN', () => {
  const TOKEN = 'b9Hq2Lm7Xc4Vt1Nz8Kr5Wp3Ys6Fd0Gj2';
  let server: Server | null = null;

  afterAll(async () => {
    await server?.stop();
  });

  it(
    'asks every operator route for the token, leaves the state routes to their own, and its commands send what they need',
    { timeout: 120_000 },
    async () => {
      server = await startServer({ FXGATE_ADMIN_TOKEN: TOKEN });
      const adminUrl = server.started.adminUrl!;
      for (const path of ['/metrics', '/admin/usage', '/admin/shadow/report']) {
        for (const authorization of [undefined, `Bearer ${'x'.repeat(32)}`, `Bearer ${TOKEN.slice(1)}`]) {
          const refused = await request(`${adminUrl}${path}`, {
            headers: authorization === undefined ? {} : { authorization },
          });
          expect([path, refused.statusCode, refused.headers['www-authenticate']]).toEqual([path, 401, 'Bearer']);
          expect(await refused.body.json()).toMatchObject({ status: 401, error: 'unauthorized' });
        }
        const served = await request(`${adminUrl}${path}`, { headers: { authorization: `Bearer ${TOKEN}` } });
        expect([path, served.statusCode]).toEqual([path, 200]);
        await served.body.dump();
      }

      // The state commands (usage included) go through the state routes with the token of the data folder only.
      const listed = await fxgate('keys', 'list', '--org', server.started.sandbox!.orgId);
      expect(listed.code, listed.stderr).toBe(0);
      expect(listed.stdout).toContain(server.started.sandbox!.keyName);
      const usage = await fxgate('usage', '--format', 'json');
      expect(usage.code, usage.stderr).toBe(0);

      // `fxgate diff report` sends FXGATE_ADMIN_TOKEN from its environment, and says what is wrong without it.
      const withToken = await runFxgate(['diff', 'report', '--url', adminUrl, '--json'], {
        FXGATE_DATA_DIR: dataDir,
        FXGATE_ADMIN_TOKEN: TOKEN,
      });
      expect(withToken.code, withToken.stderr).toBe(0);
      expect(JSON.parse(withToken.stdout)).toEqual({ since: null, operations: [] });
      const without = await runFxgate(['diff', 'report', '--url', adminUrl], { FXGATE_DATA_DIR: dataDir });
      expect(without).toEqual({
        code: 1,
        stdout: '',
        stderr: `fxgate: ${adminUrl}/admin/shadow/report answered 401: the admin listener has a token; set FXGATE_ADMIN_TOKEN to it\n`,
      });
      const wrong = await runFxgate(['diff', 'report', '--url', adminUrl], {
        FXGATE_DATA_DIR: dataDir,
        FXGATE_ADMIN_TOKEN: 'y'.repeat(32),
      });
      expect(wrong.code).toBe(1);
      expect(wrong.stderr).toContain("FXGATE_ADMIN_TOKEN is not the admin listener's token");
      await server.stop();
      server = null;
    },
  );

  it('refuses to start with the admin listener off loopback and no token, before it opens the data folder', async () => {
    // A TEST-NET address no interface has: were the refusal missing, binding it would fail rather than expose anything.
    const refused = await runFxgate(['all'], {
      FXGATE_DATA_DIR: dataDir,
      HOST: '127.0.0.1',
      PORT: '0',
      FXGATE_ADMIN_HOST: '192.0.2.1',
      LOG_LEVEL: 'silent',
    });
    expect(refused.code).toBe(2);
    expect(refused.stdout).toBe('');
    expect(refused.stderr).toContain(
      'fxgate: the admin listener would bind 192.0.2.1, which is not a loopback address, and FXGATE_ADMIN_TOKEN is not set',
    );
    expect(await exists(join(dataDir, PGLITE_LOCK_FILE))).toBe(false);
  });
});
