/**
 * `fxgate sign`, in process: the command line as runCli runs it (its output captured), and the
 * function behind it. `--legacy` prints the headers of a v1/v2 request; its token is checked by
 * the project's verifier with the legacy lifetime and, independently, by jose.
 */
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import { decodeProtectedHeader, importSPKI, jwtVerify } from 'jose';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { signedHeaderLines } from '../../../src/cli/commands/sign.js';
import { CliRun } from '../../../src/cli/io.js';
import { JWT_AUDIENCE, verifyApiToken } from '../../../src/lib/auth/jwt.js';
import { verifyRequestSignature } from '../../../src/lib/auth/request-signature.js';
import { DEFAULT_JWT_ISSUERS } from '../../../src/lib/config.js';
import { EXIT_CODES } from '../../../src/lib/errors/internal-errors.js';
import { newUuid } from '../../../src/lib/ids.js';
import {
  generateKeyFile,
  type KeyFile,
  type LoadedKey,
  loadKey,
  writeKeyFile,
} from '../../../src/lib/keys/key-file.js';
import { CapturedIo, fxgate, type InProcessResult } from '../in-process-cli.js';

const LEGACY_LIFETIME_SECONDS = 120;

let dir: string;
let sandboxPath: string;
let sandbox: LoadedKey;
let livePath: string;
let live: LoadedKey;

async function keyFileAt(name: string, file: KeyFile): Promise<string> {
  const path = join(dir, name);
  await writeKeyFile(path, file);
  return path;
}

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'fxgate-sign-'));
  const sandboxFile = generateKeyFile({
    orgId: newUuid(),
    keyId: newUuid(),
    scopes: ['view', 'trade'],
    mode: 'sandbox',
  });
  const liveFile = generateKeyFile({ orgId: newUuid(), keyId: newUuid(), scopes: ['view'], mode: 'live' });
  sandboxPath = await keyFileAt('sandbox.json', sandboxFile);
  livePath = await keyFileAt('live.json', liveFile);
  sandbox = loadKey(sandboxFile);
  live = loadKey(liveFile);
});
afterAll(async () => {
  if (dir) await rm(dir, { recursive: true, force: true });
});
/** Runs `fxgate sign ARGS` as the CLI does; what it printed, its last line end taken off, once it has ended with 0. */
async function runSign(args: readonly string[], env: Record<string, string> = {}): Promise<string> {
  const result: InProcessResult = await fxgate(['sign', ...args], env);
  expect(result, 'fxgate sign').toMatchObject({ code: 0, stderr: '' });
  expect(result.stdout.endsWith('\n')).toBe(true);
  return result.stdout.slice(0, -1);
}

/** `Name: value` lines as a map, checking that no header is printed twice. */
function headersOf(output: string): Map<string, string> {
  const lines = output.split('\n');
  const headers = new Map(
    lines.map((line) => [line.slice(0, line.indexOf(': ')), line.slice(line.indexOf(': ') + 2)] as const),
  );
  expect(headers.size).toBe(lines.length);
  return headers;
}

function tokenOf(headers: Map<string, string>): string {
  const match = /^Bearer (\S+)$/.exec(headers.get('Authorization') ?? '');
  expect(match).not.toBeNull();
  return match![1]!;
}

/** The token as the legacy authenticator checks it: the project's verifier with the 120 s bound. */
function verifyLegacy(token: string, key: LoadedKey, maxLifetimeSeconds = LEGACY_LIFETIME_SECONDS) {
  return verifyApiToken(token, {
    issuers: DEFAULT_JWT_ISSUERS,
    maxLifetimeSeconds,
    resolveKey: async (name) => (name === key.file.name ? key.publicKey : null),
  });
}

describe('fxgate sign --legacy', () => {
  it('prints Authorization with the legacy token, X-App-Mode for a sandbox key, and Content-Type', async () => {
    const before = Math.floor(Date.now() / 1000);
    const headers = headersOf(await runSign(['--key', sandboxPath, '--legacy']));
    expect([...headers.keys()]).toEqual(['Authorization', 'X-App-Mode', 'Content-Type']);
    expect(headers.get('X-App-Mode')).toBe('SANDBOX');
    expect(headers.get('Content-Type')).toBe('application/json');

    const token = tokenOf(headers);
    const verified = await verifyLegacy(token, sandbox);
    expect(verified.keyName).toBe(sandbox.file.name);

    // jose, independently: exactly the legacy header and claims, nothing more.
    const { payload, protectedHeader } = await jwtVerify(token, await importSPKI(sandbox.file.publicKey, 'ES256'), {
      algorithms: ['ES256'],
      issuer: DEFAULT_JWT_ISSUERS[0],
      audience: JWT_AUDIENCE,
      subject: sandbox.file.name,
      typ: 'JWT',
      requiredClaims: ['iat', 'nbf', 'exp'],
    });
    expect(protectedHeader).toEqual({
      alg: 'ES256',
      typ: 'JWT',
      kid: sandbox.file.name,
      nonce: expect.stringMatching(/^[0-9a-f]{32}$/),
    });
    expect(protectedHeader.nonce).toBe(verified.nonce);
    expect(Object.keys(payload).sort()).toEqual(['aud', 'exp', 'iat', 'iss', 'nbf', 'sub']);
    expect(payload).toMatchObject({ iss: 'fx-service', sub: sandbox.file.name, aud: [JWT_AUDIENCE] });
    expect(payload.iat).toBeGreaterThanOrEqual(before);
    expect(payload.iat).toBeLessThanOrEqual(Math.floor(Date.now() / 1000));
    expect(payload.nbf).toBe(payload.iat);
    expect(payload.exp).toBe(payload.iat! + LEGACY_LIFETIME_SECONDS);
  });

  it("signs a live key's request without X-App-Mode, and adds Idempotency-Key when given", async () => {
    const headers = headersOf(await runSign(['--key', livePath, '--legacy', '--idempotency-key', 'order-42']));
    expect([...headers.keys()]).toEqual(['Authorization', 'Content-Type', 'Idempotency-Key']);
    expect(headers.get('Idempotency-Key')).toBe('order-42');
    await expect(verifyLegacy(tokenOf(headers), live)).resolves.toMatchObject({ keyName: live.file.name });
  });

  it('is a legacy token: 120 s, more than v3 allows, and a fresh nonce each time', async () => {
    const first = tokenOf(headersOf(await runSign(['--key', livePath, '--legacy'])));
    await expect(verifyLegacy(first, live, 60)).rejects.toMatchObject({ failure: 'LIFETIME_TOO_LONG' });
    const second = tokenOf(headersOf(await runSign(['--key', livePath, '--legacy'])));
    expect(decodeProtectedHeader(second).nonce).not.toBe(decodeProtectedHeader(first).nonce);
  });

  it('takes --method, --path and --body without binding the token to them', async () => {
    const headers = headersOf(
      await runSign([
        '--key',
        livePath,
        '--legacy',
        '--method',
        'POST',
        '--path',
        '/v2/brokerage/x/trade',
        '--body',
        '{"quoteId":"q"}',
      ]),
    );
    expect([...headers.keys()]).toEqual(['Authorization', 'Content-Type']);
  });

  it('signs with --issuer, or else with the first configured issuer', async () => {
    // The flag wins over the run's configuration.
    const run = new CliRun(new CapturedIo({ FXGATE_JWT_ISSUER: 'acme-fx' }).io);
    const withFlag = tokenOf(
      headersOf(await signedHeaderLines(run, { key: livePath, legacy: true, issuer: 'openfx' })),
    );
    expect((await jwtVerify(withFlag, await importSPKI(live.file.publicKey, 'ES256'))).payload.iss).toBe('openfx');

    // Without it, the first issuer of the run's environment.
    const configured = tokenOf(
      headersOf(await runSign(['--key', livePath, '--legacy'], { FXGATE_JWT_ISSUER: 'acme-fx, openfx' })),
    );
    expect((await jwtVerify(configured, await importSPKI(live.file.publicKey, 'ES256'))).payload.iss).toBe('acme-fx');
  });
});

describe('fxgate sign for v3', () => {
  it('still prints the signed v3 headers, the token bound to method, path and body by X-Request-Signature', async () => {
    const headers = headersOf(
      await runSign([
        '--key',
        sandboxPath,
        '--method',
        'post',
        '--path',
        '/v3/fx/quotes',
        '--body',
        '{"a":1}',
        '--idempotency-key',
        'q1',
      ]),
    );
    expect([...headers.keys()]).toEqual([
      'Authorization',
      'X-Request-Signature',
      'X-App-Mode',
      'Idempotency-Key',
      'Content-Type',
    ]);
    const verified = await verifyLegacy(tokenOf(headers), sandbox, 60);
    const check = await verifyRequestSignature(
      sandbox.publicKey,
      {
        method: 'POST',
        pathAndQuery: '/v3/fx/quotes',
        nonce: verified.nonce,
        idempotencyKey: 'q1',
        body: Buffer.from('{"a":1}'),
      },
      headers.get('X-Request-Signature')!,
    );
    expect(check).toBe('VALID');
  });

  it('refuses a key file with a key written twice, naming the key and its path, whatever the values', async () => {
    const text = await readFile(livePath, 'utf8');
    for (const [name, edited, path] of [
      ['another mode', text.replace(/\n}\s*$/, ',\n  "mode": "sandbox"\n}\n'), 'mode'],
      ['the same name', text.replace(/\n}\s*$/, `,\n  "name": ${JSON.stringify(live.file.name)}\n}\n`), 'name'],
    ] as const) {
      const twice = join(dir, `twice-${path}.json`);
      await writeFile(twice, edited, { mode: 0o600 });
      expect(JSON.parse(edited), name).toMatchObject({ orgId: live.file.orgId });
      const refused = await fxgate(['sign', '--key', twice, '--method', 'GET', '--path', '/v3/fx/pairs']);
      expect(refused, name).toMatchObject({
        code: EXIT_CODES.usage,
        stdout: '',
        stderr: expect.stringContaining(`is not an fxgate key file: ${path}: the key "${path}" appears more than once`),
      });
    }
  });

  it('refuses to sign a v3 request without --method and --path, as a usage error pointing to --legacy', async () => {
    for (const args of [
      ['--key', livePath],
      ['--key', livePath, '--method', 'GET'],
      ['--key', livePath, '--path', '/v3/fx/pairs'],
    ]) {
      const refused = await fxgate(['sign', ...args]);
      expect(refused).toMatchObject({
        code: EXIT_CODES.usage,
        stdout: '',
        stderr: expect.stringMatching(/^fxgate: a v3 request needs --method and --path.*add --legacy/),
      });
    }
  });

  it('refuses a method no route of the APIs takes, naming those they serve', async () => {
    for (const method of ['FETCH', 'put']) {
      const refused = await fxgate(['sign', '--key', livePath, '--method', method, '--path', '/v3/fx/pairs']);
      expect(refused).toMatchObject({
        code: EXIT_CODES.usage,
        stdout: '',
        stderr: `error: option '--method <method>' argument '${method}' is invalid. The APIs serve GET, HEAD, POST, DELETE; no route takes ${method.toUpperCase()}.\n`,
      });
    }
    expect(await fxgate(['sign', '--key', livePath, '--method', 'head', '--path', '/v3/fx/pairs'])).toMatchObject({
      code: 0,
    });
  });
});
