import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import { request } from 'undici';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { RecordingUpstream } from '../../gateway/recording-upstream.js';
import { expectRawLegacyError, expectRawV3Error, rawExchange } from '../../support/raw-http.js';
import { killAllCliProcesses, startCli } from '../cli-process.js';
import { fxgate, stopInProcessServers } from '../in-process-cli.js';

describe('fxgate gateway', () => {
  let upstream: RecordingUpstream;
  /** The stand-alone gateway's own registry (PGlite) and key folder live here. */
  let dataDir: string;
  beforeAll(async () => {
    upstream = await RecordingUpstream.start();
    dataDir = await mkdtemp(join(tmpdir(), 'fxgate-gateway-'));
  });
  afterAll(async () => {
    await killAllCliProcesses();
    await stopInProcessServers();
    await upstream?.close();
    if (dataDir) await rm(dataDir, { recursive: true, force: true });
  });

  it('fronts the upstream named by FXGATE_UPSTREAM_URL, and stops cleanly on SIGTERM', async () => {
    const gateway = startCli(['gateway'], {
      FXGATE_UPSTREAM_URL: upstream.url,
      FXGATE_DATA_DIR: dataDir,
      HOST: '127.0.0.1',
      PORT: '0',
      FXGATE_REQUEST_TIMEOUT_MS: '1500',
    });
    const [, url] = await gateway.waitFor(/^fxgate gateway: listening on (http:\/\/\S+), in front of (\S+)$/m);
    const response = await request(`${url}/v3/fx/trades?limit=10&cursor=a%2Bb`);
    expect(response.statusCode).toBe(200);
    expect(await response.body.text()).toBe('{"data":[]}');
    // FXGATE_REQUEST_TIMEOUT_MS bounds a request's arrival; what the parser refuses is in the envelope of the generation its line names.
    const [silent, garbled] = await Promise.all([
      rawExchange(url!, { steps: [] }),
      rawExchange(url!, { steps: ['G@T /v1/brokerage/o/balances HTTP/1.1\r\nHost: fxgate\r\n\r\n'] }),
    ]);
    expectRawV3Error(silent, 'REQUEST_TIMEOUT');
    expect(silent.answeredAfterMs).toBeGreaterThanOrEqual(1_480);
    expect(silent.answeredAfterMs).toBeLessThanOrEqual(2_500);
    expectRawLegacyError(garbled, 'v1', 400, 'Query validation failed');
    expect(upstream.requests.map((r) => r.url)).toEqual(['/v3/fx/trades?limit=10&cursor=a%2Bb']);
    expect((await gateway.stop('SIGTERM')).code).toBe(0);
  });

  it('ends with exit 1 and a message when its port is taken', async () => {
    const port = new URL(upstream.url).port;
    const result = await fxgate(['gateway', '--upstream', upstream.url], {
      FXGATE_DATA_DIR: dataDir,
      HOST: '127.0.0.1',
      PORT: port,
    });
    expect(result.code).toBe(1);
    expect(result.stderr).toContain(`fxgate: the gateway cannot listen on 127.0.0.1:${port}: the port is taken (PORT)`);
  });

  it.each([
    [[], /^fxgate: the gateway needs a v3 service to front: pass --upstream URL or set FXGATE_UPSTREAM_URL$/m],
    [
      ['--upstream', 'http://127.0.0.1:1/base'],
      /^fxgate: invalid upstream http:\/\/127\.0\.0\.1:1\/base: must be an origin only/m,
    ],
    [['--upstream', 'ftp://127.0.0.1'], /--upstream <url>.*Expected an http:\/\/ or https:\/\/ URL/],
  ])('refuses to start without a usable upstream (%j): exit 2', async (args, message) => {
    const result = await fxgate(['gateway', ...args], { FXGATE_DATA_DIR: dataDir, PORT: '0' });
    expect(result.code).toBe(2);
    expect(result.stderr).toMatch(message);
  });

  it('refuses to start with a shadow URL the destination policy refuses, saying why and how to allow it: exit 2', async () => {
    const env = { FXGATE_DATA_DIR: dataDir, PORT: '0', HOST: '127.0.0.1' };
    const refused = await fxgate(['gateway', '--upstream', upstream.url], {
      ...env,
      FXGATE_SHADOW_URL: 'http://169.254.169.254/legacy',
    });
    expect(refused.code).toBe(2);
    expect(refused.stderr).toContain(
      'fxgate: invalid legacy service URL http://169.254.169.254/legacy: 169.254.169.254 is a link-local address (cloud metadata); the legacy service (FXGATE_SHADOW_URL) must be at a public or loopback address, or in a network of FXGATE_WEBHOOK_ALLOWED_NETWORKS',
    );
    const internal = await fxgate(['gateway', '--upstream', upstream.url], {
      ...env,
      FXGATE_SHADOW_URL: 'http://10.0.0.1:8080',
    });
    expect(internal.code).toBe(2);
    expect(internal.stderr).toContain('10.0.0.1 is a private address');
  });
});
