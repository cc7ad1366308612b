import { randomBytes } from 'node:crypto';
import { readdirSync, readFileSync } from 'node:fs';
import { chmod, mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';

import { POSTGRES_DEFAULTS } from '../../src/cli/db/postgres-database.js';
import { CORE_DEFAULTS } from '../../src/core/app.js';
import { WEBHOOK_WORKER_DEFAULTS } from '../../src/core/events/webhook-worker.js';
import { SIMULATED_RAIL_DEFAULTS, SimulatedPaymentRail } from '../../src/core/money-movement/payment-rails.js';
import { TRADING_DEFAULTS } from '../../src/core/trading/trading-context.js';
import { GATEWAY_DEFAULTS, LEGACY_GATEWAY_DEFAULTS } from '../../src/gateway/app.js';
import { PAGE_TOTALS_MODES, PAGE_WALKER_DEFAULTS } from '../../src/gateway/legacy/runtime/page-walker.js';
import { SHADOW_DEFAULTS } from '../../src/gateway/shadow/shadow-mode.js';
import { V3_CLIENT_DEFAULTS } from '../../src/gateway/upstream/v3-client.js';
import { DELIVERY_WORKER_DEFAULTS } from '../../src/gateway/webhooks/delivery-worker.js';
import {
  configSchema,
  configuredAdminToken,
  configuredKeyring,
  DEFAULT_JWT_ISSUERS,
  DEFAULT_SHUTDOWN_GRACE_MS,
  DEFAULT_UPSTREAM_DEADLINE_MS,
  drainDelayMs,
  KNOWN_SETTING_NAMES,
  loadConfig,
  NAMES_READ_OUTSIDE_THE_SCHEMA,
  type NumberRange,
  numberRanges,
  PRODUCTION_DRAIN_DELAY_MS,
  RENAMED_SETTINGS,
  sandboxSeeded,
  signingIssuer,
} from '../../src/lib/config.js';
import { DB_POOL_MODES } from '../../src/lib/db/pool-mode.js';
import { ConfigError, INTERNAL_ERRORS } from '../../src/lib/errors/internal-errors.js';
import { DEFAULT_REQUEST_TIMEOUT_MS } from '../../src/lib/http/server-timeouts.js';
import { KEY_REGISTRY_DEFAULTS } from '../../src/lib/keys/key-registry.js';
import { keyIdOf } from '../../src/lib/secrets/sealing-keyring.js';

/** The problems loadConfig reports for `env`, or a failure when it accepted it. */
function problems(env: Record<string, string>): readonly string[] {
  try {
    loadConfig(env);
  } catch (error) {
    if (error instanceof ConfigError) return error.problems;
    throw error;
  }
  throw new Error(`accepted ${JSON.stringify(env)}`);
}

describe('loadConfig basics', () => {
  it('gives every default from an empty environment', () => {
    const config = loadConfig({});
    expect(config).toMatchObject({
      PORT: 8080,
      HOST: '127.0.0.1',
      FXGATE_SPREAD_BPS: 20,
      FXGATE_REVERSAL_WINDOW_SECONDS: 1800,
      FXGATE_TRUSTED_PROXIES: [],
    });
    expect(config.FXGATE_RATES).toBeUndefined();
    expect(config.DATABASE_URL).toBeUndefined();
  });

  it('treats empty strings as unset and ignores unrelated variables', () => {
    const config = loadConfig({ PORT: '', FXGATE_RATES: '', FXGATE_SPREAD_BPS: '', UNRELATED: 'x' });
    expect(config.PORT).toBe(8080);
    expect(config.FXGATE_RATES).toBeUndefined();
    expect(config.FXGATE_SPREAD_BPS).toBe(20);
  });

  it('refuses PORT=abc, naming PORT, with a stable code', () => {
    let caught: unknown;
    try {
      loadConfig({ PORT: 'abc' });
    } catch (error) {
      caught = error;
    }
    expect(caught).toBeInstanceOf(ConfigError);
    expect(caught).toMatchObject({ code: 'FXGATE_CONFIG_INVALID' });
    expect((caught as ConfigError).problems).toHaveLength(1);
    expect((caught as ConfigError).problems[0]).toMatch(/^PORT: /);
    expect((caught as ConfigError).message).toMatch(/^invalid configuration:\n {2}- PORT: /);
  });

  it('parses the trusted proxy list and refuses a database URL of another scheme', () => {
    expect(loadConfig({ FXGATE_TRUSTED_PROXIES: ' 10.0.0.1, ,10.1.0.0/16 ' }).FXGATE_TRUSTED_PROXIES).toEqual([
      '10.0.0.1',
      '10.1.0.0/16',
    ]);
    expect(problems({ DATABASE_URL: 'mysql://localhost/x' })[0]).toMatch(/^DATABASE_URL: .*postgres:\/\//);
  });

  it('reports every bad variable at once', () => {
    const found = problems({ PORT: '70000', FXGATE_SPREAD_BPS: 'x', FXGATE_RATES: '[]' });
    expect(found.map((p) => p.split(':')[0]).sort()).toEqual(['FXGATE_RATES', 'FXGATE_SPREAD_BPS', 'PORT']);
  });
});

describe('FXGATE_SPREAD_BPS', () => {
  it.each([
    ['0', 0],
    ['20', 20],
    ['1000', 1000],
  ])('accepts %s', (value, expected) => {
    expect(loadConfig({ FXGATE_SPREAD_BPS: value }).FXGATE_SPREAD_BPS).toBe(expected);
  });

  it.each(['-1', '1001', '2.5', 'abc', '20bps'])('refuses %s, naming the variable', (value) => {
    expect(problems({ FXGATE_SPREAD_BPS: value })).toEqual([expect.stringMatching(/^FXGATE_SPREAD_BPS: /)]);
  });
});

describe('FXGATE_JWT_ISSUER', () => {
  it("defaults to fxgate's own issuer, then the legacy service's, and signs with the first", () => {
    const config = loadConfig({});
    expect(config.FXGATE_JWT_ISSUER).toEqual(['fx-service', 'openfx']);
    expect(config.FXGATE_JWT_ISSUER).toEqual(DEFAULT_JWT_ISSUERS);
    expect(signingIssuer(config)).toBe('fx-service');
  });

  it('reads a comma-separated list, trimmed, in its order', () => {
    const config = loadConfig({ FXGATE_JWT_ISSUER: ' openfx , acme-fx,fx-service ' });
    expect(config.FXGATE_JWT_ISSUER).toEqual(['openfx', 'acme-fx', 'fx-service']);
    expect(signingIssuer(config)).toBe('openfx');
    expect(loadConfig({ FXGATE_JWT_ISSUER: 'acme-fx' }).FXGATE_JWT_ISSUER).toEqual(['acme-fx']);
  });

  it.each([
    ['fx-service,,openfx', /entry 2 is empty/],
    ['fx-service,', /entry 2 is empty/],
    [',fx-service', /entry 1 is empty/],
    [' , ', /entry 1 is empty/],
    ['fx-service,openfx, fx-service', /"fx-service" is listed twice/],
  ])('refuses %j, naming the variable and the entry', (value, message) => {
    const found = problems({ FXGATE_JWT_ISSUER: value });
    expect(found.length).toBeGreaterThan(0);
    for (const problem of found) expect(problem).toMatch(/^FXGATE_JWT_ISSUER: /);
    expect(found.join('\n')).toMatch(message);
  });
});

describe('FXGATE_REVERSAL_WINDOW_SECONDS', () => {
  it('accepts a positive whole number of seconds', () => {
    expect(loadConfig({ FXGATE_REVERSAL_WINDOW_SECONDS: '60' }).FXGATE_REVERSAL_WINDOW_SECONDS).toBe(60);
  });

  it.each(['0', '-5', '1.5', 'half an hour'])('refuses %s, naming the variable', (value) => {
    expect(problems({ FXGATE_REVERSAL_WINDOW_SECONDS: value })).toEqual([
      expect.stringMatching(/^FXGATE_REVERSAL_WINDOW_SECONDS: /),
    ]);
  });
});

describe('FXGATE_UPSTREAM_DEADLINE_MS', () => {
  it('defaults to the named default, above both timeouts it contains', () => {
    const config = loadConfig({});
    expect(config.FXGATE_UPSTREAM_DEADLINE_MS).toBe(DEFAULT_UPSTREAM_DEADLINE_MS);
    expect(config.FXGATE_UPSTREAM_DEADLINE_MS).toBeGreaterThanOrEqual(config.FXGATE_UPSTREAM_TIMEOUT_MS);
    expect(config.FXGATE_UPSTREAM_DEADLINE_MS).toBeGreaterThanOrEqual(config.FXGATE_UPSTREAM_CONNECT_TIMEOUT_MS);
  });

  it('accepts a deadline equal to the timeout', () => {
    expect(
      loadConfig({ FXGATE_UPSTREAM_TIMEOUT_MS: '3000', FXGATE_UPSTREAM_DEADLINE_MS: '3000' })
        .FXGATE_UPSTREAM_DEADLINE_MS,
    ).toBe(3000);
  });

  it('refuses a deadline shorter than a timeout it contains, naming both', () => {
    expect(problems({ FXGATE_UPSTREAM_DEADLINE_MS: '5000' })).toEqual([
      'FXGATE_UPSTREAM_DEADLINE_MS: must be at least FXGATE_UPSTREAM_TIMEOUT_MS (10000)',
    ]);
    expect(
      problems({
        FXGATE_UPSTREAM_DEADLINE_MS: '3000',
        FXGATE_UPSTREAM_TIMEOUT_MS: '1000',
        FXGATE_UPSTREAM_CONNECT_TIMEOUT_MS: '4000',
      }),
    ).toEqual(['FXGATE_UPSTREAM_DEADLINE_MS: must be at least FXGATE_UPSTREAM_CONNECT_TIMEOUT_MS (4000)']);
  });

  it.each(['0', '-1', '1.5', 'soon'])('refuses %s, naming the variable', (value) => {
    expect(problems({ FXGATE_UPSTREAM_DEADLINE_MS: value })).toEqual([
      expect.stringMatching(/^FXGATE_UPSTREAM_DEADLINE_MS: /),
    ]);
  });
});

describe('FXGATE_DB_POOL_MODE', () => {
  it("defaults to session, the driver's own default", () => {
    expect(loadConfig({}).FXGATE_DB_POOL_MODE).toBe('session');
    expect(loadConfig({}).FXGATE_DB_POOL_MODE).toBe(POSTGRES_DEFAULTS.poolMode);
  });

  it('accepts every mode the driver has', () => {
    for (const mode of DB_POOL_MODES) expect(loadConfig({ FXGATE_DB_POOL_MODE: mode }).FXGATE_DB_POOL_MODE).toBe(mode);
  });

  it.each(['Transaction', 'statement', 'pgbouncer'])('refuses %s, naming the variable', (value) => {
    expect(problems({ FXGATE_DB_POOL_MODE: value })).toEqual([expect.stringMatching(/^FXGATE_DB_POOL_MODE: /)]);
  });
});

describe("the defaults of the options modules also take on their own are the schema's", () => {
  const config = loadConfig({});

  it.each([
    ['FXGATE_SPREAD_BPS', config.FXGATE_SPREAD_BPS, TRADING_DEFAULTS.spreadBps],
    ['FXGATE_REVERSAL_WINDOW_SECONDS', config.FXGATE_REVERSAL_WINDOW_SECONDS * 1000, TRADING_DEFAULTS.reversalWindowMs],
    ['FXGATE_KEY_CACHE_TTL_MS', config.FXGATE_KEY_CACHE_TTL_MS, KEY_REGISTRY_DEFAULTS.cacheTtlMs],
    ['FXGATE_RAIL_SIMULATION_DELAY_MS', config.FXGATE_RAIL_SIMULATION_DELAY_MS, SIMULATED_RAIL_DEFAULTS.delayMs],
    [
      'FXGATE_RAIL_SIMULATION_DELAY_MS (the rail built without one)',
      config.FXGATE_RAIL_SIMULATION_DELAY_MS,
      new SimulatedPaymentRail().delayMs,
    ],
    [
      'FXGATE_RAIL_SIMULATION_FAILURE_RATE',
      config.FXGATE_RAIL_SIMULATION_FAILURE_RATE,
      SIMULATED_RAIL_DEFAULTS.failureRate,
    ],
    ['FXGATE_RATE_LIMIT_READS', config.FXGATE_RATE_LIMIT_READS, CORE_DEFAULTS.rateLimits.reads],
    ['FXGATE_RATE_LIMIT_WRITES', config.FXGATE_RATE_LIMIT_WRITES, CORE_DEFAULTS.rateLimits.writes],
    ['FXGATE_LEGACY_RATE_LIMIT_READS', config.FXGATE_LEGACY_RATE_LIMIT_READS, LEGACY_GATEWAY_DEFAULTS.rateLimits.reads],
    [
      'FXGATE_LEGACY_RATE_LIMIT_WRITES',
      config.FXGATE_LEGACY_RATE_LIMIT_WRITES,
      LEGACY_GATEWAY_DEFAULTS.rateLimits.writes,
    ],
    ['FXGATE_WEBHOOK_POLL_MS (the core)', config.FXGATE_WEBHOOK_POLL_MS, WEBHOOK_WORKER_DEFAULTS.pollIntervalMs],
    ['FXGATE_WEBHOOK_POLL_MS (the gateway)', config.FXGATE_WEBHOOK_POLL_MS, DELIVERY_WORKER_DEFAULTS.pollIntervalMs],
    ['FXGATE_SHADOW_SAMPLE', config.FXGATE_SHADOW_SAMPLE, SHADOW_DEFAULTS.sample],
    ['FXGATE_SHADOW_SERVE', config.FXGATE_SHADOW_SERVE, SHADOW_DEFAULTS.serve],
    [
      'FXGATE_UPSTREAM_CONNECT_TIMEOUT_MS',
      config.FXGATE_UPSTREAM_CONNECT_TIMEOUT_MS,
      GATEWAY_DEFAULTS.connectTimeoutMs,
    ],
    ['FXGATE_UPSTREAM_TIMEOUT_MS', config.FXGATE_UPSTREAM_TIMEOUT_MS, GATEWAY_DEFAULTS.timeoutMs],
    ['FXGATE_UPSTREAM_DEADLINE_MS (the gateway)', config.FXGATE_UPSTREAM_DEADLINE_MS, GATEWAY_DEFAULTS.deadlineMs],
    ['FXGATE_UPSTREAM_DEADLINE_MS (the v3 client)', config.FXGATE_UPSTREAM_DEADLINE_MS, V3_CLIENT_DEFAULTS.deadlineMs],
    [
      'FXGATE_IDEMPOTENCY_LOCK_TTL_MS (the core)',
      config.FXGATE_IDEMPOTENCY_LOCK_TTL_MS,
      CORE_DEFAULTS.idempotencyLockTtlMs,
    ],
    [
      'FXGATE_IDEMPOTENCY_LOCK_TTL_MS (the gateway)',
      config.FXGATE_IDEMPOTENCY_LOCK_TTL_MS,
      LEGACY_GATEWAY_DEFAULTS.idempotencyLockTtlMs,
    ],
  ])('%s', (_name, schema, module) => {
    expect(module).toBe(schema);
  });
});

describe('FXGATE_LEGACY_PAGE_TOTALS', () => {
  it('defaults to bounded, the page walker default', () => {
    expect(loadConfig({}).FXGATE_LEGACY_PAGE_TOTALS).toBe('bounded');
    expect(loadConfig({}).FXGATE_LEGACY_PAGE_TOTALS).toBe(PAGE_WALKER_DEFAULTS.totals);
  });

  it('accepts every mode the page walker has', () => {
    for (const mode of PAGE_TOTALS_MODES)
      expect(loadConfig({ FXGATE_LEGACY_PAGE_TOTALS: mode }).FXGATE_LEGACY_PAGE_TOTALS).toBe(mode);
  });

  it.each(['Exact', 'approximate', 'true', ' bounded'])('refuses %s, naming the variable', (value) => {
    expect(problems({ FXGATE_LEGACY_PAGE_TOTALS: value })).toEqual([
      expect.stringMatching(/^FXGATE_LEGACY_PAGE_TOTALS: /),
    ]);
  });
});

describe('FXGATE_RATES inline', () => {
  it('reads a JSON object of price strings, keeping their text exactly', () => {
    const config = loadConfig({ FXGATE_RATES: ' {"EUR":"1.09", "CHF":"1.123456789012345678901234567890"} ' });
    expect(config.FXGATE_RATES).toEqual({ EUR: '1.09', CHF: '1.123456789012345678901234567890' });
  });

  it('accepts an empty object and a USD price of 1', () => {
    expect(loadConfig({ FXGATE_RATES: '{}' }).FXGATE_RATES).toEqual({});
    expect(loadConfig({ FXGATE_RATES: '{"USD":"1.00"}' }).FXGATE_RATES).toEqual({ USD: '1.00' });
  });

  it('refuses a JSON number, telling the operator to quote it, with its text intact', () => {
    const [problem] = problems({ FXGATE_RATES: '{"EUR":1.0900000000000000000001}' });
    expect(problem).toBe(
      'FXGATE_RATES: EUR: 1.0900000000000000000001 is a JSON number; quote it ("1.0900000000000000000001"): prices are decimal strings, money is never a JS number',
    );
  });

  it.each([
    [
      '{"EUR":"1.09"',
      /^FXGATE_RATES: the inline value is not valid JSON .*\{"EUR":"1\.09"\} or @\/path\/to\/file\.json$/,
    ],
    ['EUR=1.09', /^FXGATE_RATES: the inline value is not valid JSON/],
    ['{"EUR":"1.09","EUR":"1.10"}', /^FXGATE_RATES: the inline value is not valid JSON \(Duplicate key 'EUR'/],
    ['["EUR","1.09"]', /^FXGATE_RATES: the inline value must be a JSON object of currency code to USD price string/],
    ['"1.09"', /^FXGATE_RATES: the inline value must be a JSON object/],
    ['null', /^FXGATE_RATES: the inline value must be a JSON object/],
    ['{"eur":"1.09"}', /^FXGATE_RATES: "eur": currency codes are 3 to 5 uppercase letters$/],
    ['{"EUR":true}', /^FXGATE_RATES: EUR: the price must be a decimal string such as "1\.09"$/],
    ['{"EUR":"1,09"}', /^FXGATE_RATES: EUR: "1,09" is not a plain decimal such as "1\.09"$/],
    ['{"EUR":"1e0"}', /^FXGATE_RATES: EUR: "1e0" is not a plain decimal/],
    ['{"EUR":"-1.09"}', /^FXGATE_RATES: EUR: "-1\.09" is not a plain decimal/],
    ['{"EUR":"0.00"}', /^FXGATE_RATES: EUR: the price must be positive$/],
    ['{"USD":"1.01"}', /^FXGATE_RATES: USD: prices are in USD, so the price of USD is 1, not 1\.01$/],
  ])('refuses %s', (value, message) => {
    expect(problems({ FXGATE_RATES: value })).toEqual([expect.stringMatching(message)]);
  });

  it('lists every bad entry of one table', () => {
    expect(problems({ FXGATE_RATES: '{"EUR":1.09,"GBP":"0","JPY":"0.0066"}' })).toHaveLength(2);
  });
});

describe('FXGATE_RATES from a file', () => {
  let dir: string;
  beforeAll(async () => {
    dir = await mkdtemp(path.join(os.tmpdir(), 'fxgate-config-'));
  });
  afterAll(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  it('reads @path at load time', async () => {
    const file = path.join(dir, 'rates.json');
    await writeFile(file, '{\n  "EUR": "1.095",\n  "JPY": "0.00655"\n}\n');
    expect(loadConfig({ FXGATE_RATES: `@${file}` }).FXGATE_RATES).toEqual({ EUR: '1.095', JPY: '0.00655' });
  });

  it('ignores a byte order mark', async () => {
    const file = path.join(dir, 'bom.json');
    await writeFile(file, '\uFEFF{"GBP":"1.3"}');
    expect(loadConfig({ FXGATE_RATES: `@${file}` }).FXGATE_RATES).toEqual({ GBP: '1.3' });
  });

  it('names the variable and the file when the file cannot be read', () => {
    const file = path.join(dir, 'missing.json');
    const [problem] = problems({ FXGATE_RATES: `@${file}` });
    expect(problem).toMatch(
      new RegExp(`^FXGATE_RATES: cannot read the rate file ${file.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}: ENOENT`),
    );
    expect(problems({ FXGATE_RATES: `@${dir}` })[0]).toMatch(/^FXGATE_RATES: cannot read the rate file .*EISDIR/);
  });

  it('names the file when its content is invalid', async () => {
    const file = path.join(dir, 'numbers.json');
    await writeFile(file, '{"EUR": 1.09}');
    expect(problems({ FXGATE_RATES: `@${file}` })).toEqual([
      expect.stringMatching(/^FXGATE_RATES: EUR: 1\.09 is a JSON number; quote it/),
    ]);
    const broken = path.join(dir, 'broken.json');
    await writeFile(broken, '{"EUR": "1.09",}');
    expect(problems({ FXGATE_RATES: `@${broken}` })[0]).toContain(`FXGATE_RATES: ${broken} is not valid JSON`);
  });
});

describe('FXGATE_SECRETS_KEY and FXGATE_SECRETS_KEY_FILE', () => {
  const [a, b] = [randomBytes(32), randomBytes(32)];
  let dir: string;
  beforeAll(async () => {
    dir = await mkdtemp(path.join(os.tmpdir(), 'fxgate-config-keys-'));
  });
  afterAll(async () => {
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  it('are unset by default: no key is configured', () => {
    expect(configuredKeyring(loadConfig({}))).toBeUndefined();
  });

  it('give a keyring, the first key sealing, from the list or from the file', async () => {
    const fromList = configuredKeyring(
      loadConfig({ FXGATE_SECRETS_KEY: `${b.toString('base64url')},${a.toString('base64')}` }),
    );
    expect(fromList?.keyIds).toEqual([keyIdOf(b), keyIdOf(a)]);
    const file = path.join(dir, 'keys');
    await writeFile(file, `# rotating\n${b.toString('base64url')}\n${a.toString('base64url')}\n`, { mode: 0o600 });
    const fromFile = configuredKeyring(loadConfig({ FXGATE_SECRETS_KEY_FILE: file }));
    expect(fromFile?.sealingKeyId).toBe(keyIdOf(b));
    expect(fromFile?.keyIds).toEqual([keyIdOf(b), keyIdOf(a)]);
  });

  it('refuse both at once, a bad key, a repeat, an unreadable or empty file: naming the setting, showing no key', async () => {
    const file = path.join(dir, 'one');
    await writeFile(file, `${a.toString('base64url')}\n`, { mode: 0o600 });
    expect(problems({ FXGATE_SECRETS_KEY: a.toString('base64url'), FXGATE_SECRETS_KEY_FILE: file })).toEqual([
      'FXGATE_SECRETS_KEY_FILE: FXGATE_SECRETS_KEY is set too; give the keys in one of them only',
    ]);
    const short = randomBytes(31).toString('base64url');
    const found = problems({ FXGATE_SECRETS_KEY: `${a.toString('base64url')},${short},${a.toString('base64')}` });
    expect(found).toEqual([
      expect.stringMatching(/^FXGATE_SECRETS_KEY: key 2 is 31 bytes \(42 characters\); a key is 32 random bytes/),
      'FXGATE_SECRETS_KEY: key 3 is the same key as key 1; give each key once',
    ]);
    for (const text of found) {
      expect(text).not.toContain(short.slice(0, 10));
      expect(text).not.toContain(a.toString('base64url').slice(0, 10));
    }
    const missing = path.join(dir, 'missing');
    expect(problems({ FXGATE_SECRETS_KEY_FILE: missing })).toEqual([
      expect.stringMatching(new RegExp(`^FXGATE_SECRETS_KEY_FILE: cannot read the key file ${missing}: ENOENT`)),
    ]);
    const empty = path.join(dir, 'empty');
    await writeFile(empty, '# no key yet\n', { mode: 0o600 });
    expect(problems({ FXGATE_SECRETS_KEY_FILE: empty })).toEqual([`FXGATE_SECRETS_KEY_FILE: ${empty} holds no key`]);
    const bad = path.join(dir, 'bad');
    await writeFile(bad, `${a.toString('base64url')}\nsecret-looking-text\n`, { mode: 0o600 });
    expect(problems({ FXGATE_SECRETS_KEY_FILE: bad })).toEqual([
      expect.stringMatching(
        new RegExp(`^FXGATE_SECRETS_KEY_FILE: line 2 of ${bad} is 14 bytes \\(19 characters\\); a key is`),
      ),
    ]);
    if (process.getuid?.() !== 0) {
      await chmod(file, 0o000);
      expect(problems({ FXGATE_SECRETS_KEY_FILE: file })[0]).toMatch(/cannot read the key file .*: EACCES/);
    }
  });
});

describe('FXGATE_ADMIN_TOKEN and FXGATE_ADMIN_TOKEN_FILE', () => {
  const TOKEN = 'Xk2Rj8Vn4Lq6Tz0Wb3Hc7Md5Fs9Gp1Ya';
  let dir: string;
  beforeAll(async () => {
    dir = await mkdtemp(path.join(os.tmpdir(), 'fxgate-config-admin-token-'));
  });
  afterAll(async () => {
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  it('are unset by default: no token is asked for', () => {
    expect(configuredAdminToken(loadConfig({}))).toBeUndefined();
  });

  it('give the token from the setting, or from the file without the line break that ends it', async () => {
    expect(configuredAdminToken(loadConfig({ FXGATE_ADMIN_TOKEN: TOKEN }))).toBe(TOKEN);
    for (const [name, text] of [
      ['bare', TOKEN],
      ['echoed', `${TOKEN}\n`],
      ['from-windows', `${TOKEN}\r\n`],
    ] as const) {
      const file = path.join(dir, name);
      await writeFile(file, text, { mode: 0o600 });
      expect(configuredAdminToken(loadConfig({ FXGATE_ADMIN_TOKEN_FILE: file })), name).toBe(TOKEN);
    }
  });

  it('refuse both at once, an unreadable file, a short token, a second line: naming the setting, showing no token', async () => {
    const file = path.join(dir, 'token');
    await writeFile(file, `${TOKEN}\n`, { mode: 0o600 });
    expect(problems({ FXGATE_ADMIN_TOKEN: TOKEN, FXGATE_ADMIN_TOKEN_FILE: file })).toEqual([
      'FXGATE_ADMIN_TOKEN_FILE: FXGATE_ADMIN_TOKEN is set too; give the token in one of them only',
    ]);
    const missing = path.join(dir, 'missing');
    expect(problems({ FXGATE_ADMIN_TOKEN_FILE: missing })).toEqual([
      expect.stringMatching(new RegExp(`^FXGATE_ADMIN_TOKEN_FILE: cannot read the token file ${missing}: ENOENT`)),
    ]);
    const short = path.join(dir, 'short');
    await writeFile(short, `${TOKEN.slice(0, 31)}\n`, { mode: 0o600 });
    const twoLines = path.join(dir, 'two-lines');
    await writeFile(twoLines, `${TOKEN}\n${TOKEN}\n`, { mode: 0o600 });
    const found = [...problems({ FXGATE_ADMIN_TOKEN_FILE: short }), ...problems({ FXGATE_ADMIN_TOKEN_FILE: twoLines })];
    expect(found).toEqual([
      `FXGATE_ADMIN_TOKEN_FILE: the token in ${short} must be at least 32 characters`,
      `FXGATE_ADMIN_TOKEN_FILE: the token in ${twoLines} must be visible ASCII without spaces, one \`Bearer\` credential`,
    ]);
    for (const text of found) expect(text).not.toContain(TOKEN.slice(0, 10));
  });
});

describe('FXGATE_REQUEST_TIMEOUT_MS', () => {
  it("defaults to the apps' own default of 10 s", () => {
    expect(loadConfig({}).FXGATE_REQUEST_TIMEOUT_MS).toBe(DEFAULT_REQUEST_TIMEOUT_MS);
    expect(DEFAULT_REQUEST_TIMEOUT_MS).toBe(10_000);
  });

  it('takes a whole number of ms from 1000 to 600000', () => {
    expect(loadConfig({ FXGATE_REQUEST_TIMEOUT_MS: '1500' }).FXGATE_REQUEST_TIMEOUT_MS).toBe(1500);
    expect(loadConfig({ FXGATE_REQUEST_TIMEOUT_MS: '600000' }).FXGATE_REQUEST_TIMEOUT_MS).toBe(600_000);
  });

  it.each(['0', '-1', '999', '600001', '1.5e3x', 'ten', '1500.5'])('refuses %j, naming the variable', (value) => {
    const found = problems({ FXGATE_REQUEST_TIMEOUT_MS: value });
    expect(found).toHaveLength(1);
    expect(found[0]).toMatch(/^FXGATE_REQUEST_TIMEOUT_MS: /);
  });
});

describe('FXGATE_DRAIN_DELAY_MS and FXGATE_SHUTDOWN_GRACE_MS', () => {
  const POSTGRES = { DATABASE_URL: 'postgres://127.0.0.1:5432/test' };

  it('drain 5 s in production (DATABASE_URL set) and not at all on the embedded default, within a grace of 10 s', () => {
    expect(PRODUCTION_DRAIN_DELAY_MS).toBe(5_000);
    expect(DEFAULT_SHUTDOWN_GRACE_MS).toBe(10_000);
    const embedded = loadConfig({});
    expect([embedded.FXGATE_DRAIN_DELAY_MS, drainDelayMs(embedded), embedded.FXGATE_SHUTDOWN_GRACE_MS]).toEqual([
      undefined,
      0,
      10_000,
    ]);
    const production = loadConfig(POSTGRES);
    expect([drainDelayMs(production), production.FXGATE_SHUTDOWN_GRACE_MS]).toEqual([5_000, 10_000]);
  });

  it('take whole numbers of ms, the drain delay set on either database', () => {
    expect(drainDelayMs(loadConfig({ ...POSTGRES, FXGATE_DRAIN_DELAY_MS: '0' }))).toBe(0);
    expect(drainDelayMs(loadConfig({ FXGATE_DRAIN_DELAY_MS: '2500' }))).toBe(2_500);
    const config = loadConfig({ FXGATE_DRAIN_DELAY_MS: '20000', FXGATE_SHUTDOWN_GRACE_MS: '45000' });
    expect([drainDelayMs(config), config.FXGATE_SHUTDOWN_GRACE_MS]).toEqual([20_000, 45_000]);
  });

  it.each([
    ['FXGATE_DRAIN_DELAY_MS', '-1'],
    ['FXGATE_DRAIN_DELAY_MS', '600001'],
    ['FXGATE_DRAIN_DELAY_MS', '1.5'],
    ['FXGATE_SHUTDOWN_GRACE_MS', '999'],
    ['FXGATE_SHUTDOWN_GRACE_MS', '600001'],
    ['FXGATE_SHUTDOWN_GRACE_MS', 'soon'],
  ])('refuses %s=%j, naming the variable', (name, value) => {
    const found = problems({ [name]: value });
    expect(found).toHaveLength(1);
    expect(found[0]).toMatch(new RegExp(`^${name}: `));
  });

  it('refuses a grace that is not more than the drain delay it contains, the default delay on PostgreSQL included', () => {
    expect(problems({ FXGATE_DRAIN_DELAY_MS: '3000', FXGATE_SHUTDOWN_GRACE_MS: '3000' })).toEqual([
      'FXGATE_SHUTDOWN_GRACE_MS: must be more than the drain delay (3000 ms, FXGATE_DRAIN_DELAY_MS), which it contains',
    ]);
    expect(problems({ ...POSTGRES, FXGATE_SHUTDOWN_GRACE_MS: '4000' })).toEqual([
      'FXGATE_SHUTDOWN_GRACE_MS: must be more than the drain delay (5000 ms, the default of FXGATE_DRAIN_DELAY_MS with DATABASE_URL set), which it contains',
    ]);
    // Embedded, the delay is 0: a short grace is fine.
    expect(loadConfig({ FXGATE_SHUTDOWN_GRACE_MS: '1000' }).FXGATE_SHUTDOWN_GRACE_MS).toBe(1_000);
  });
});

describe('shadow mode and the admin listener', () => {
  const ORG = '0190C5A8-7d2e-7c1a-9f3b-2a4d6e8f0b1c';

  it('are off by default: no legacy service, the gateway serving, every read sampled once on, no admin port', () => {
    const config = loadConfig({});
    expect(config).toMatchObject({
      FXGATE_SHADOW_SAMPLE: 1,
      FXGATE_SHADOW_SERVE: 'gateway',
      FXGATE_CUTOVER_ORGS: [],
      FXGATE_ADMIN_HOST: '127.0.0.1',
    });
    expect(config.FXGATE_SHADOW_URL).toBeUndefined();
    expect(config.FXGATE_ADMIN_PORT).toBeUndefined();
  });

  it('read the legacy service, the sample, who serves and the cut-over orgs (lower case, once each)', () => {
    const config = loadConfig({
      FXGATE_SHADOW_URL: 'https://legacy.example.com/api',
      FXGATE_SHADOW_SAMPLE: '0.25',
      FXGATE_SHADOW_SERVE: 'legacy',
      FXGATE_CUTOVER_ORGS: ` ${ORG}, ${ORG.toLowerCase()},`,
    });
    expect(config).toMatchObject({
      FXGATE_SHADOW_URL: 'https://legacy.example.com/api',
      FXGATE_SHADOW_SAMPLE: 0.25,
      FXGATE_SHADOW_SERVE: 'legacy',
      FXGATE_CUTOVER_ORGS: [ORG.toLowerCase()],
    });
  });

  it('read the admin port as a port or off', () => {
    expect(loadConfig({ FXGATE_ADMIN_PORT: '9091', FXGATE_ADMIN_HOST: '10.0.0.5' })).toMatchObject({
      FXGATE_ADMIN_PORT: 9091,
      FXGATE_ADMIN_HOST: '10.0.0.5',
    });
    expect(loadConfig({ FXGATE_ADMIN_PORT: 'off' }).FXGATE_ADMIN_PORT).toBe('off');
    expect(problems({ FXGATE_ADMIN_PORT: '70000' })).toEqual([expect.stringMatching(/^FXGATE_ADMIN_PORT: /)]);
  });

  it.each([
    [{ FXGATE_SHADOW_SAMPLE: '1.5' }, /^FXGATE_SHADOW_SAMPLE: /],
    [{ FXGATE_SHADOW_SAMPLE: '-0.1' }, /^FXGATE_SHADOW_SAMPLE: /],
    [{ FXGATE_SHADOW_SERVE: 'both' }, /^FXGATE_SHADOW_SERVE: /],
    [{ FXGATE_SHADOW_URL: 'ftp://legacy' }, /^FXGATE_SHADOW_URL: /],
    [
      { FXGATE_SHADOW_URL: 'http://legacy', FXGATE_SHADOW_SERVE: 'legacy', FXGATE_CUTOVER_ORGS: 'acme' },
      /^FXGATE_CUTOVER_ORGS: "acme" is not an org id/,
    ],
    // The legacy service cannot serve without its URL.
    [{ FXGATE_SHADOW_SERVE: 'legacy' }, /^FXGATE_SHADOW_SERVE: legacy needs FXGATE_SHADOW_URL/],
    // A cut-over list while the gateway serves everyone would move nobody, silently.
    [
      { FXGATE_SHADOW_URL: 'http://legacy', FXGATE_CUTOVER_ORGS: ORG },
      /^FXGATE_CUTOVER_ORGS: lists the orgs served by the gateway while the rest get the legacy answer: set FXGATE_SHADOW_SERVE=legacy/,
    ],
  ])('refuse %j', (env, message) => {
    expect(problems(env)).toEqual([expect.stringMatching(message)]);
  });
});

describe('FXGATE_WEBHOOK_ALLOWED_NETWORKS', () => {
  it('is empty by default, and reads a comma-separated list of networks, canonical and once each', () => {
    expect(loadConfig({}).FXGATE_WEBHOOK_ALLOWED_NETWORKS).toEqual([]);
    expect(
      loadConfig({ FXGATE_WEBHOOK_ALLOWED_NETWORKS: ' 10.0.0.0/8, ,FD00::/8,10.20.30.40,10.0.0.0/8' })
        .FXGATE_WEBHOOK_ALLOWED_NETWORKS,
    ).toEqual(['10.0.0.0/8', 'fd00::/8', '10.20.30.40/32']);
  });

  it('names each bad entry, and refuses networks that could only open the door wide', () => {
    expect(
      problems({ FXGATE_WEBHOOK_ALLOWED_NETWORKS: '10.0.0.0/8,10.0.0.0/33,intranet,10.1.2.3/16,0.0.0.0/0' }),
    ).toEqual([
      'FXGATE_WEBHOOK_ALLOWED_NETWORKS: "10.0.0.0/33" has a prefix longer than 32 bits',
      'FXGATE_WEBHOOK_ALLOWED_NETWORKS: "intranet" is not a network: write a CIDR such as 10.0.0.0/8 or fd00::/8, or a single address',
      'FXGATE_WEBHOOK_ALLOWED_NETWORKS: "10.1.2.3/16" has bits set past its prefix: the network is 10.1.0.0/16',
      expect.stringMatching(/^FXGATE_WEBHOOK_ALLOWED_NETWORKS: "0\.0\.0\.0\/0" spans addresses of different kinds/),
    ]);
  });
});

describe('FXGATE_REDIS_KEY_PREFIX', () => {
  it('is read as given, and unset by default', () => {
    expect(loadConfig({ FXGATE_REDIS_KEY_PREFIX: 'staging:' }).FXGATE_REDIS_KEY_PREFIX).toBe('staging:');
    expect(loadConfig({}).FXGATE_REDIS_KEY_PREFIX).toBeUndefined();
  });

  it('refuses braces and spaces, naming why', () => {
    for (const prefix of ['{staging}:', 'my prefix:'])
      expect(problems({ FXGATE_REDIS_KEY_PREFIX: prefix })).toEqual([
        'FXGATE_REDIS_KEY_PREFIX: may not contain braces or spaces: the store puts its own `{...}` hash tags after it',
      ]);
  });
});

describe('Redis through Sentinel', () => {
  const sentinels = { FXGATE_REDIS_SENTINELS: '10.0.0.1:26379, [fd00::2]:26379', FXGATE_REDIS_SENTINEL_NAME: 'fxgate' };

  it('reads the Sentinels, the group name, both passwords, the user and TLS', () => {
    const config = loadConfig({
      ...sentinels,
      FXGATE_REDIS_SENTINEL_PASSWORD: 'sentinel-secret',
      FXGATE_REDIS_USERNAME: 'fxgate-app',
      FXGATE_REDIS_PASSWORD: 'data-secret',
      FXGATE_REDIS_TLS: 'on',
    });
    expect(config).toMatchObject({
      FXGATE_REDIS_SENTINELS: [
        { host: '10.0.0.1', port: 26379 },
        { host: 'fd00::2', port: 26379 },
      ],
      FXGATE_REDIS_SENTINEL_NAME: 'fxgate',
      FXGATE_REDIS_SENTINEL_PASSWORD: 'sentinel-secret',
      FXGATE_REDIS_USERNAME: 'fxgate-app',
      FXGATE_REDIS_PASSWORD: 'data-secret',
      FXGATE_REDIS_TLS: 'on',
    });
    expect(config.REDIS_URL).toBeUndefined();
  });

  it('needs the group name, and refuses REDIS_URL beside the Sentinels: its host would be ignored', () => {
    expect(problems({ FXGATE_REDIS_SENTINELS: '10.0.0.1:26379' })).toEqual([
      'FXGATE_REDIS_SENTINEL_NAME: is required with FXGATE_REDIS_SENTINELS: the name of the primary the Sentinels watch',
    ]);
    expect(problems({ ...sentinels, REDIS_URL: 'redis://:secret@10.0.0.5:6379' })).toEqual([
      'REDIS_URL: FXGATE_REDIS_SENTINELS is set too; unset REDIS_URL (through Sentinel, the password and TLS are FXGATE_REDIS_PASSWORD and FXGATE_REDIS_TLS)',
    ]);
  });

  it('names each bad Sentinel address', () => {
    expect(problems({ ...sentinels, FXGATE_REDIS_SENTINELS: '10.0.0.1,10.0.0.2:99999' })).toEqual([
      'FXGATE_REDIS_SENTINELS: "10.0.0.1" is not host:port (an IPv6 address goes in brackets: [::1]:26379)',
      'FXGATE_REDIS_SENTINELS: "10.0.0.2:99999": the port must be 1 to 65535',
    ]);
  });

  it('refuses a user without a password, and words with spaces', () => {
    expect(problems({ ...sentinels, FXGATE_REDIS_USERNAME: 'fxgate-app' })).toEqual([
      "FXGATE_REDIS_USERNAME: needs FXGATE_REDIS_PASSWORD, the user's password",
    ]);
    expect(problems({ ...sentinels, FXGATE_REDIS_SENTINEL_NAME: 'my group' })).toEqual([
      'FXGATE_REDIS_SENTINEL_NAME: must be one word, without spaces',
    ]);
    expect(problems({ ...sentinels, FXGATE_REDIS_TLS: 'yes' })[0]).toMatch(/^FXGATE_REDIS_TLS: /);
  });

  it('refuses the Sentinel-only settings without Sentinels, pointing a REDIS_URL user at the URL', () => {
    expect(problems({ FXGATE_REDIS_SENTINEL_NAME: 'fxgate', FXGATE_REDIS_TLS: 'off' })).toEqual([
      'FXGATE_REDIS_SENTINEL_NAME: is read only with FXGATE_REDIS_SENTINELS',
      'FXGATE_REDIS_TLS: is read only with FXGATE_REDIS_SENTINELS',
    ]);
    expect(problems({ REDIS_URL: 'redis://10.0.0.5:6379', FXGATE_REDIS_PASSWORD: 'secret' })).toEqual([
      'FXGATE_REDIS_PASSWORD: is read only with FXGATE_REDIS_SENTINELS; with REDIS_URL, the user, password and TLS (rediss://) go in the URL',
    ]);
  });
});

describe('unknown FXGATE_ names', () => {
  /** The error loadConfig throws for `env`, or a failure when it accepted it. */
  function refusal(env: Record<string, string>): ConfigError {
    try {
      loadConfig(env, { warn: (line) => expect.fail(`warned instead of refusing: ${line}`) });
    } catch (error) {
      if (error instanceof ConfigError) return error;
      throw error;
    }
    throw new Error(`accepted ${JSON.stringify(env)}`);
  }

  it('stop start-up, naming the name and the setting it is nearest to, and saying what to do', () => {
    const error = refusal({ FXGATE_V1_BROWNOUT: '2026-12-10T15:00:00Z/PT1H' });
    expect(error.problems).toEqual([
      'FXGATE_V1_BROWNOUT is not a setting fxgate knows (did you mean FXGATE_V1_BROWNOUTS?)',
    ]);
    expect(error.message).toBe(
      [
        'invalid configuration:',
        '  - FXGATE_V1_BROWNOUT is not a setting fxgate knows (did you mean FXGATE_V1_BROWNOUTS?)',
        'Unset the unknown names or correct them (README.md lists every setting), or set FXGATE_ALLOW_UNKNOWN_SETTINGS=1 to start with a warning instead.',
      ].join('\n'),
    );
  });

  it('are all listed in one error, beside the bad values, a name near nothing without a suggestion', () => {
    expect(refusal({ FXGATE_BROWNOUTS_V1: 'x', FXGATE_PORT: '8080', FXGATE_ZZZ: '1', PORT: 'abc' }).problems).toEqual([
      'FXGATE_BROWNOUTS_V1 is not a setting fxgate knows (did you mean FXGATE_V1_BROWNOUTS?)',
      'FXGATE_PORT is not a setting fxgate knows (did you mean PORT?)',
      'FXGATE_ZZZ is not a setting fxgate knows',
      'PORT: must be a whole number from 0 (any free port) to 65535, got "abc"',
    ]);
  });

  it('leave the advice out when only values are bad', () => {
    expect(refusal({ PORT: 'abc' }).message).not.toContain('FXGATE_ALLOW_UNKNOWN_SETTINGS');
  });

  it('every setting, former name and name read outside the schema is known', () => {
    const names = [
      ...Object.keys(configSchema.shape),
      ...Object.keys(RENAMED_SETTINGS),
      ...Object.keys(NAMES_READ_OUTSIDE_THE_SCHEMA),
    ];
    expect([...KNOWN_SETTING_NAMES].sort()).toEqual([...new Set(names)].sort());
    const env = Object.fromEntries(
      [...Object.keys(RENAMED_SETTINGS), ...Object.keys(NAMES_READ_OUTSIDE_THE_SCHEMA)].map((name) => [
        name,
        name === 'FXGATE_MIGRATION_GUIDE_URL' ? 'https://docs.example.com/migrate' : '1',
      ]),
    );
    expect(() => loadConfig(env, { warn: (line) => expect.fail(line) })).not.toThrow();
  });

  it('with FXGATE_ALLOW_UNKNOWN_SETTINGS=1, start with one warning line naming the same names and suggestions', () => {
    const warnings: string[] = [];
    const config = loadConfig(
      { FXGATE_ALLOW_UNKNOWN_SETTINGS: '1', FXGATE_V1_BROWNOUT: 'x', FXGATE_ZZZ: '1', FXGATE_SPREAD_BPS: '30' },
      { warn: (line) => warnings.push(line) },
    );
    expect(config.FXGATE_SPREAD_BPS).toBe(30);
    expect(warnings).toEqual([
      'fxgate: warning: FXGATE_V1_BROWNOUT is not a setting fxgate knows (did you mean FXGATE_V1_BROWNOUTS?); FXGATE_ZZZ is not a setting fxgate knows; started all the same, as FXGATE_ALLOW_UNKNOWN_SETTINGS=1',
    ]);
  });

  it('with FXGATE_ALLOW_UNKNOWN_SETTINGS=1, still refuse a bad value, and warn of nothing when every name is known', () => {
    expect(problems({ FXGATE_ALLOW_UNKNOWN_SETTINGS: '1', FXGATE_ZZZ: '1', PORT: 'abc' })).toEqual([
      'PORT: must be a whole number from 0 (any free port) to 65535, got "abc"',
    ]);
    const warnings: string[] = [];
    loadConfig({ FXGATE_ALLOW_UNKNOWN_SETTINGS: '1' }, { warn: (line) => warnings.push(line) });
    expect(warnings).toEqual([]);
  });

  it('FXGATE_ALLOW_UNKNOWN_SETTINGS is 0 or 1; 0 refuses as unset does', () => {
    expect(problems({ FXGATE_ALLOW_UNKNOWN_SETTINGS: 'yes' })).toEqual([
      expect.stringMatching(/^FXGATE_ALLOW_UNKNOWN_SETTINGS: .*"0".*"1"/),
    ]);
    expect(refusal({ FXGATE_ALLOW_UNKNOWN_SETTINGS: '0', FXGATE_ZZZ: '1' }).problems).toEqual([
      'FXGATE_ZZZ is not a setting fxgate knows',
    ]);
  });
});

describe('every FXGATE_ name written in the code is known', () => {
  const ROOT = fileURLToPath(new URL('../../', import.meta.url));

  /** Every file under `folder` of the repository ending in one of `extensions`, with its text. */
  function filesOf(folder: string, extensions: readonly string[]): { file: string; text: string }[] {
    return readdirSync(path.join(ROOT, folder), { recursive: true, encoding: 'utf8' })
      .filter((file) => extensions.some((extension) => file.endsWith(extension)))
      .map((file) => ({ file: `${folder}/${file}`, text: readFileSync(path.join(ROOT, folder, file), 'utf8') }));
  }

  const NAME = /FXGATE_[A-Z0-9_]*/g;
  const source = filesOf('src', ['.ts']);

  /** Internal error codes (src/lib/errors/internal-errors.ts) share the prefix, but name no setting. */
  const errorCodes: ReadonlySet<string> = new Set(Object.keys(INTERNAL_ERRORS));

  it('in src/: a setting, a former or an outside name, or an error code; a prefix such as FXGATE_V1_* begins a setting', () => {
    expect(errorCodes).toContain('FXGATE_CONFIG_INVALID');
    const unknown = source.flatMap(({ file, text }) =>
      [...text.matchAll(NAME)]
        .map((match) => match[0])
        .filter((name) =>
          name.endsWith('_')
            ? ![...KNOWN_SETTING_NAMES].some((known) => known.startsWith(name))
            : !KNOWN_SETTING_NAMES.has(name) && !errorCodes.has(name),
        )
        .map((name) => `${file}: ${name}`),
    );
    expect(unknown).toEqual([]);
    // No error code may be a setting's name: the two would be confused in a message.
    expect([...errorCodes].filter((code) => KNOWN_SETTING_NAMES.has(code))).toEqual([]);
  });

  /** The names the test suite and the deployment's scripts read from their environment. */
  const readElsewhere = new Set(
    [
      ...filesOf('test', ['.ts']),
      { file: 'vitest.config.ts', text: readFileSync(path.join(ROOT, 'vitest.config.ts'), 'utf8') },
      ...filesOf('deploy', ['.sh']),
    ].flatMap(({ file, text }) =>
      (file.endsWith('.sh')
        ? [/\$\{?(FXGATE_[A-Z0-9_]+)/g]
        : [
            /process\.env\.(FXGATE_[A-Z0-9_]+)/g,
            /process\.env\[['"](FXGATE_[A-Z0-9_]+)['"]\]/g,
            // A constant naming an environment variable (`RECORDINGS_ENV = 'FXGATE_...'`) or a project's `env: { ... }`.
            /\w*_ENV\s*=\s*[{']([^;}]*)/g,
            /\benv:\s*\{([^}]*)\}/g,
          ]
      ).flatMap((pattern) =>
        [...text.matchAll(pattern)].flatMap((match) =>
          [...match[1]!.matchAll(NAME)].map((name) => name[0]).filter((name) => !name.endsWith('_')),
        ),
      ),
    ),
  );

  it('read by the test suite or the deployment: known, and each name read outside the schema is still read somewhere', () => {
    expect(readElsewhere).toContain('FXGATE_TEST_BACKEND');
    expect(readElsewhere).toContain('FXGATE_TEST_PG_TEMPLATE');
    const settings = new Set(Object.keys(configSchema.shape));
    expect([...readElsewhere].filter((name) => !KNOWN_SETTING_NAMES.has(name))).toEqual([]);
    expect(Object.keys(NAMES_READ_OUTSIDE_THE_SCHEMA).filter((name) => !readElsewhere.has(name))).toEqual([]);
    expect(Object.keys(NAMES_READ_OUTSIDE_THE_SCHEMA).filter((name) => settings.has(name))).toEqual([]);
  });
});

describe('number settings', () => {
  /** The range a setting's schema was made with, under its default or optional. */
  function rangeOf(name: string): NumberRange | undefined {
    let schema: z.ZodType = configSchema.shape[name as keyof typeof configSchema.shape];
    while (schema instanceof z.ZodDefault || schema instanceof z.ZodOptional)
      schema = schema.def.innerType as z.ZodType;
    return numberRanges.get(schema);
  }

  const numeric = Object.keys(configSchema.shape).flatMap((name) => {
    const range = rangeOf(name);
    return range === undefined ? [] : [[name, range] as const];
  });

  it('are every setting whose value is a number, each with its range', () => {
    const defaults = loadConfig({});
    const numberValued = Object.entries(defaults)
      .filter(([, value]) => typeof value === 'number')
      .map(([name]) => name);
    // Unset by default, numbers when set.
    const numberWhenSet = ['FXGATE_DRAIN_DELAY_MS', 'FXGATE_ADMIN_PORT'];
    expect(numeric.map(([name]) => name).sort()).toEqual([...numberValued, ...numberWhenSet].sort());
    expect(numeric.length).toBeGreaterThanOrEqual(20);
  });

  /** Out of range, a share, a sign, not a number, exponent and hex forms, and a long value, which is cut in the message. */
  function badValues(range: NumberRange): string[] {
    const whole = range.whole ? ['1.5', '1e3', '0x10', '+5'] : ['2', '1e-1'];
    return [
      'abc',
      '-1',
      ...whole,
      range.max.toString().concat('0'),
      ...(range.min > 0 ? [(range.min - 1).toString()] : []),
      '9'.repeat(60),
    ];
  }

  describe.each(numeric)('%s', (name, range) => {
    it.each(badValues(range))(
      'refuses %j, naming the variable, the range in words and the value as written',
      (value) => {
        const found = problems({ [name]: value });
        expect(found).toHaveLength(1);
        const [message] = found as [string];
        expect(message.startsWith(`${name}: must be `)).toBe(true);
        expect(message).toContain(range.whole ? 'a whole number' : 'a number');
        expect(message).toContain(`from ${range.min}`);
        expect(message).toContain(`to ${range.max}`);
        expect(message).not.toMatch(/NaN|expected|received/);
        const shown = value.length > 32 ? `"${value.slice(0, 32)}..."` : `"${value}"`;
        expect(message.endsWith(`, got ${shown}`)).toBe(true);
      },
    );

    it('takes its lowest and highest values, and spaces around them', () => {
      const schema = configSchema.shape[name as keyof typeof configSchema.shape];
      for (const value of [range.min, range.max])
        expect(schema.safeParse(` ${value} `)).toEqual({ success: true, data: value });
    });
  });

  it.each([
    ['PORT', 'abc', 'PORT: must be a whole number from 0 (any free port) to 65535, got "abc"'],
    [
      'FXGATE_ADMIN_PORT',
      'of',
      'FXGATE_ADMIN_PORT: must be `off` or a whole number from 0 (any free port) to 65535, got "of"',
    ],
    ['FXGATE_RATE_LIMIT_READS', '0', 'FXGATE_RATE_LIMIT_READS: must be a whole number from 1 to 10000000, got "0"'],
    [
      'FXGATE_REQUEST_TIMEOUT_MS',
      '10s',
      'FXGATE_REQUEST_TIMEOUT_MS: must be a whole number of milliseconds from 1000 to 600000, got "10s"',
    ],
    [
      'FXGATE_SPREAD_BPS',
      '0.2%',
      'FXGATE_SPREAD_BPS: must be a whole number of basis points from 0 to 1000, got "0.2%"',
    ],
    [
      'FXGATE_REVERSAL_WINDOW_SECONDS',
      '30m',
      'FXGATE_REVERSAL_WINDOW_SECONDS: must be a whole number of seconds from 1 to 31536000, got "30m"',
    ],
    ['FXGATE_SHADOW_SAMPLE', '50%', 'FXGATE_SHADOW_SAMPLE: must be a number from 0 to 1, such as 0.25, got "50%"'],
  ])('say it in words: %s=%s', (name, value, message) => {
    expect(problems({ [name]: value })).toEqual([message]);
  });

  it('read a share with or without its leading zero', () => {
    expect(loadConfig({ FXGATE_SHADOW_SAMPLE: '.25' }).FXGATE_SHADOW_SAMPLE).toBe(0.25);
    expect(loadConfig({ FXGATE_RAIL_SIMULATION_FAILURE_RATE: '0.05' }).FXGATE_RAIL_SIMULATION_FAILURE_RATE).toBe(0.05);
  });
});

describe('FXGATE_SANDBOX_SEED', () => {
  it.each([
    [{}, true],
    [{ FXGATE_SANDBOX_SEED: 'off' }, false],
    [{ DATABASE_URL: 'postgres://fxgate@127.0.0.1:5432/fxgate' }, false],
    [{ DATABASE_URL: 'postgres://fxgate@127.0.0.1:5432/fxgate', FXGATE_SANDBOX_SEED: 'on' }, true],
  ])('with %j, `fxgate all` provides a sandbox: %s (by default on the embedded database only)', (env, seeded) => {
    expect(sandboxSeeded(loadConfig(env))).toBe(seeded);
  });

  it('takes on or off only', () => {
    expect(() => loadConfig({ FXGATE_SANDBOX_SEED: 'yes' })).toThrow(/FXGATE_SANDBOX_SEED: /);
  });
});
