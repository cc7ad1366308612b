/**
 * Configuration: every environment variable fxgate reads, validated once at start-up with zod.
 * A bad value stops the process with a message naming the variable, and so does a name starting
 * `FXGATE_` that is none of the known ones (this schema's, and the few declared below as read
 * elsewhere). The README's configuration table is generated from this schema (`npm run docs`),
 * so the two cannot drift.
 */
import { readFileSync } from 'node:fs';

import { isLosslessNumber, parse as parseLosslessJson } from 'lossless-json';
import { z } from 'zod';

import { ADMIN_TOKEN_MIN_LENGTH, ADMIN_TOKEN_PATTERN } from './admin/admin-token.js';
import { DEFAULT_JWT_ISSUERS } from './auth/credential-vocabulary.js';
import { DB_POOL_MODES } from './db/pool-mode.js';
import { ConfigError, TimeTextError } from './errors/internal-errors.js';
import { normaliseHostName, sandboxHostEntryProblem } from './http/host-names.js';
import { DEFAULT_REQUEST_TIMEOUT_MS } from './http/server-timeouts.js';
import { readNetworkList } from './net/allowed-networks.js';
import type { SealingKeyring } from './secrets/sealing-keyring.js';
import { keyEntriesOfFile, keyEntriesOfList, keyringOf } from './secrets/sealing-keys.js';
import { describeUnknownSetting, unknownSettings } from './setting-names.js';
import { readSentinelList, type SentinelAddress } from './store/sentinel-list.js';
import { parseInstant, parseIntervals, type TimeInterval } from './time-text.js';

/**
 * What a number setting takes, as its error says it in words: `a whole number of milliseconds
 * from 1000 to 600000`. `whole: false` is a share such as 0.25; `lowest` says what the lowest
 * value means when it is special (`0 (any free port)`); `or` is a word taken besides (`off`).
 */
export interface NumberRange {
  readonly min: number;
  readonly max: number;
  readonly whole: boolean;
  readonly unit?: string;
  readonly lowest?: string;
  readonly or?: string;
}

/** The range of every number setting's schema, so that a test can feed each one bad values. */
export const numberRanges = z.registry<NumberRange>();

function describeRange(range: NumberRange): string {
  const number = `${range.whole ? 'a whole number' : 'a number'}${range.unit === undefined ? '' : ` of ${range.unit}`}`;
  const from = `${range.min}${range.lowest === undefined ? '' : ` (${range.lowest})`}`;
  return `${range.or === undefined ? '' : `${range.or} or `}${number} from ${from} to ${range.max}${range.whole ? '' : ', such as 0.25'}`;
}

/** A bad value is echoed as written, cut short: it goes into a log line. */
const SHOWN_INPUT_LENGTH = 32;
function shownInput(text: string): string {
  return JSON.stringify(text.length > SHOWN_INPUT_LENGTH ? `${text.slice(0, SHOWN_INPUT_LENGTH)}...` : text);
}

/** Digits only (a decimal part for a share): `1e3`, `0x10`, `+5` and `5.0` for a whole number are typos, not numbers. */
const WHOLE_TEXT = /^[0-9]+$/;
const SHARE_TEXT = /^([0-9]+(\.[0-9]*)?|\.[0-9]+)$/;

/** A number setting: its text read strictly, its range in words when it is refused. */
function numberSetting(range: NumberRange) {
  const schema = z.string().transform((text, ctx): number => {
    const trimmed = text.trim();
    const value = (range.whole ? WHOLE_TEXT : SHARE_TEXT).test(trimmed) ? Number(trimmed) : Number.NaN;
    if (
      Number.isFinite(value) &&
      (!range.whole || Number.isSafeInteger(value)) &&
      value >= range.min &&
      value <= range.max
    )
      return value;
    ctx.addIssue({ code: 'custom', message: `must be ${describeRange(range)}, got ${shownInput(text)}` });
    return z.NEVER;
  });
  numberRanges.add(schema, range);
  return schema;
}

const wholeNumber = (min: number, max: number, more: Omit<NumberRange, 'min' | 'max' | 'whole'> = {}) =>
  numberSetting({ min, max, whole: true, ...more });
const milliseconds = (min: number, max: number) => wholeNumber(min, max, { unit: 'milliseconds' });
/** A share of something, 0 to 1. */
const share = () => numberSetting({ min: 0, max: 1, whole: false });

const PORT_RANGE = { min: 0, max: 65535, whole: true, lowest: 'any free port' } as const;
const port = numberSetting(PORT_RANGE);
/** Per 10 s; the GCRA cell counts in whole microseconds, so 10 million is the finest it resolves. */
const rateLimit = () => wholeNumber(1, 10_000_000);
/** The longest an upstream wait may be set to: ten minutes, as for a request's arrival. */
const MAX_UPSTREAM_WAIT_MS = 600_000;
/** The longest a cached or locked entry may live: an hour; a revocation takes effect within the key cache's. */
const MAX_ENTRY_LIFETIME_MS = 3_600_000;
/** The longest a trade may stay reversible: a year. */
const MAX_REVERSAL_WINDOW_SECONDS = 31_536_000;
const optionalUrl = (protocols: string[]) =>
  z
    .url()
    .refine(
      (value) => protocols.some((p) => value.startsWith(`${p}://`)),
      `must start with ${protocols.map((p) => `${p}://`).join(' or ')}`,
    )
    .optional();
/** Same shape the currencies table enforces. */
const CURRENCY_CODE = /^[A-Z]{3,5}$/;
/** Unsigned plain decimal text (no exponent, sign or spaces). */
const PRICE_TEXT = /^(0|[1-9][0-9]*)(\.[0-9]+)?$/;

/**
 * FXGATE_RATES: inline JSON or `@file`, read here so a bad table stops start-up naming the
 * variable. JSON is parsed losslessly: a price written as a JSON number is caught by its text
 * and refused, rather than passing through a JS number (money never does).
 */
const rateTable = z.string().transform((text, ctx): Record<string, string> => {
  const problems: string[] = [];
  const table = readRateTable(text, problems);
  for (const message of problems) ctx.addIssue({ code: 'custom', message });
  return problems.length === 0 && table !== null ? table : z.NEVER;
});

function readRateTable(text: string, problems: string[]): Record<string, string> | null {
  let json = text.trim();
  let origin = 'the inline value';
  if (json.startsWith('@')) {
    const file = json.slice(1);
    origin = file;
    try {
      // A BOM is what some editors write at the start of a file; it is not part of the JSON.
      json = readFileSync(file, 'utf8').replace(/^\uFEFF/, '');
    } catch (error) {
      problems.push(`cannot read the rate file ${file}: ${error instanceof Error ? error.message : String(error)}`);
      return null;
    }
  }
  let parsed: unknown;
  try {
    parsed = parseLosslessJson(json);
  } catch (error) {
    problems.push(
      `${origin} is not valid JSON (${error instanceof Error ? error.message : String(error)}); expected an object such as {"EUR":"1.09"} or @/path/to/file.json`,
    );
    return null;
  }
  if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) {
    problems.push(`${origin} must be a JSON object of currency code to USD price string, such as {"EUR":"1.09"}`);
    return null;
  }
  const table: Record<string, string> = {};
  for (const [code, value] of Object.entries(parsed)) {
    const shown = JSON.stringify(code.slice(0, 16));
    if (!CURRENCY_CODE.test(code)) {
      problems.push(`${shown}: currency codes are 3 to 5 uppercase letters`);
    } else if (isLosslessNumber(value)) {
      problems.push(
        `${code}: ${value.toString()} is a JSON number; quote it ("${value.toString()}"): prices are decimal strings, money is never a JS number`,
      );
    } else if (typeof value !== 'string') {
      problems.push(`${code}: the price must be a decimal string such as "1.09"`);
    } else if (!PRICE_TEXT.test(value)) {
      problems.push(`${code}: ${JSON.stringify(value.slice(0, 64))} is not a plain decimal such as "1.09"`);
    } else if (/^[0.]+$/.test(value)) {
      problems.push(`${code}: the price must be positive`);
    } else if (code === 'USD' && !/^1(\.0+)?$/.test(value)) {
      problems.push(`USD: prices are in USD, so the price of USD is 1, not ${value}`);
    } else {
      table[code] = value;
    }
  }
  return table;
}

const list = z.string().transform((value) =>
  value
    .split(',')
    .map((item) => item.trim())
    .filter(Boolean),
);

/** The `iss` values tokens may carry (auth/credential-vocabulary.ts, where the v3 client finds them too). */
export { DEFAULT_JWT_ISSUERS };

/**
 * FXGATE_JWT_ISSUER: a comma-separated list, at least one entry. Unlike FXGATE_TRUSTED_PROXIES,
 * an empty entry or a repeat is refused rather than dropped: either is a typo in a list that
 * decides who is let in, and the first entry is what every token fxgate signs carries.
 */
const issuerList = z.string().transform((text, ctx): [string, ...string[]] => {
  const entries = text.split(',').map((entry) => entry.trim());
  const problems: string[] = [];
  entries.forEach((entry, index) => {
    if (entry === '')
      problems.push(
        `entry ${index + 1} is empty; write the issuers separated by single commas, such as fx-service,openfx`,
      );
    else if (entries.indexOf(entry) !== index)
      problems.push(`${JSON.stringify(entry)} is listed twice; name each issuer once`);
  });
  for (const message of problems) ctx.addIssue({ code: 'custom', message });
  const [first, ...rest] = entries;
  return problems.length === 0 && first !== undefined ? [first, ...rest] : z.NEVER;
});

/**
 * FXGATE_SANDBOX_HOSTS: host names, comma-separated, each checked (a typo would leave unchanged
 * clients on live), stored as compared: lower case, without a trailing dot.
 */
const hostList = z.string().transform((text, ctx): string[] => {
  const entries = text
    .split(',')
    .map((entry) => entry.trim())
    .filter(Boolean);
  const names: string[] = [];
  for (const entry of entries) {
    const problem = sandboxHostEntryProblem(entry);
    if (problem === null) names.push(normaliseHostName(entry)!);
    else ctx.addIssue({ code: 'custom', message: problem });
  }
  return [...new Set(names)];
});

/** A UUID in any case, as org ids are written; compared in lower case, as the registry stores them. */
const ORG_ID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

/** FXGATE_CUTOVER_ORGS: org ids, comma-separated, each a UUID; a typo would silently leave an org where it was. */
const orgList = z.string().transform((text, ctx): string[] => {
  const entries = text
    .split(',')
    .map((entry) => entry.trim().toLowerCase())
    .filter(Boolean);
  for (const entry of entries) {
    if (!ORG_ID.test(entry))
      ctx.addIssue({
        code: 'custom',
        message: `${JSON.stringify(entry.slice(0, 64))} is not an org id (a UUID such as 0190c5a8-7d2e-7c1a-9f3b-2a4d6e8f0b1c)`,
      });
  }
  return [...new Set(entries)];
});

/** FXGATE_GATEWAY_WEBHOOK_URL: v3 appends `/<orgId>/<mode>`, so a query, a fragment or credentials could only break the URL. */
const webhookBaseUrl = z
  .url()
  .refine((value) => value.startsWith('http://') || value.startsWith('https://'), 'must start with http:// or https://')
  .refine(
    (value) => URL.canParse(value) && new URL(value).search === '' && new URL(value).hash === '',
    'must have no query or fragment: the org and mode are appended to its path',
  )
  .refine(
    (value) => URL.canParse(value) && new URL(value).username === '' && new URL(value).password === '',
    'must not contain credentials: deliveries are authenticated by their signature',
  )
  .transform((value) => value.replace(/\/+$/, ''));

/** FXGATE_WEBHOOK_ALLOWED_NETWORKS: CIDRs, comma-separated, each checked; a typo would open or close a door silently. */
const networkList = z.string().transform((text, ctx): string[] => {
  const { networks, problems } = readNetworkList(
    text
      .split(',')
      .map((entry) => entry.trim())
      .filter(Boolean),
  );
  for (const message of problems) ctx.addIssue({ code: 'custom', message });
  return problems.length === 0 ? networks : z.NEVER;
});

/**
 * FXGATE_SECRETS_KEY: sealing keys, comma-separated, the first sealing. The messages name a key
 * by its place in the list and never show any of it.
 */
const sealingKeyList = z.string().transform((text, ctx): SealingKeyring => {
  const { entries, problems } = keyEntriesOfList(text);
  const made = problems.length === 0 ? keyringOf(entries) : { problems };
  if ('keyring' in made) return made.keyring;
  for (const message of made.problems) ctx.addIssue({ code: 'custom', message });
  return z.NEVER;
});

/** The text of a setting's file; null, with an issue naming the file, when it cannot be read. */
function settingFile(path: string, what: string, ctx: { addIssue(issue: { code: 'custom'; message: string }): void }) {
  try {
    return readFileSync(path, 'utf8');
  } catch (error) {
    ctx.addIssue({
      code: 'custom',
      message: `cannot read the ${what} ${path}: ${error instanceof Error ? error.message : String(error)}`,
    });
    return null;
  }
}

/** FXGATE_SECRETS_KEY_FILE: a file of sealing keys, one a line, read here so that a bad file stops start-up naming the setting. */
const sealingKeyFile = z.string().transform((path, ctx): SealingKeyring => {
  const text = settingFile(path, 'key file', ctx);
  if (text === null) return z.NEVER;
  const made = keyringOf(keyEntriesOfFile(text, path));
  if ('keyring' in made) return made.keyring;
  for (const message of made.problems)
    ctx.addIssue({ code: 'custom', message: message === 'holds no key' ? `${path} holds no key` : message });
  return z.NEVER;
});

/** FXGATE_REDIS_SENTINELS: Sentinel addresses, each checked; a typo would leave the store without a primary. */
const sentinelList = z.string().transform((text, ctx): SentinelAddress[] => {
  const { addresses, problems } = readSentinelList(text);
  for (const message of problems) ctx.addIssue({ code: 'custom', message });
  return problems.length === 0 ? addresses : z.NEVER;
});

/** A Sentinel group name or a user name: one word, as Redis's configuration file takes it. */
const redisWord = z.string().regex(/^\S+$/, 'must be one word, without spaces');

/** The settings that only mean something with FXGATE_REDIS_SENTINELS (REDIS_URL carries its own). */
const SENTINEL_ONLY_SETTINGS = [
  'FXGATE_REDIS_SENTINEL_NAME',
  'FXGATE_REDIS_SENTINEL_PASSWORD',
  'FXGATE_REDIS_USERNAME',
  'FXGATE_REDIS_PASSWORD',
  'FXGATE_REDIS_TLS',
] as const;

/** FXGATE_ADMIN_PORT: a port, or `off`. */
const ADMIN_PORT_RANGE: NumberRange = { ...PORT_RANGE, or: '`off`' };
const adminPort = z.string().transform((text, ctx): 'off' | number => {
  if (text.trim() === 'off') return 'off';
  const parsed = port.safeParse(text);
  if (parsed.success) return parsed.data;
  ctx.addIssue({ code: 'custom', message: `must be ${describeRange(ADMIN_PORT_RANGE)}, got ${shownInput(text)}` });
  return z.NEVER;
});
numberRanges.add(adminPort, ADMIN_PORT_RANGE);

/** FXGATE_ADMIN_TOKEN: one `Bearer` credential of visible ASCII, too long to guess. */
const adminToken = z
  .string()
  .min(ADMIN_TOKEN_MIN_LENGTH, `must be at least ${ADMIN_TOKEN_MIN_LENGTH} characters`)
  .regex(ADMIN_TOKEN_PATTERN, 'must be visible ASCII without spaces, one `Bearer` credential');

/**
 * FXGATE_ADMIN_TOKEN_FILE: the token from a file (a Docker or Kubernetes secret), read here so
 * that a bad file stops start-up naming the setting. The line break an editor or `echo` ends the
 * file with is not part of the token; the messages never show any of it.
 */
const adminTokenFile = z.string().transform((file, ctx): string => {
  const text = settingFile(file, 'token file', ctx);
  if (text === null) return z.NEVER;
  const parsed = adminToken.safeParse(text.replace(/\r?\n$/, ''));
  if (parsed.success) return parsed.data;
  for (const issue of parsed.error.issues)
    ctx.addIssue({ code: 'custom', message: `the token in ${file} ${issue.message}` });
  return z.NEVER;
});

/** A server's drain delay unless configured, when DATABASE_URL is set: a readiness probe's few periods. */
export const PRODUCTION_DRAIN_DELAY_MS = 5_000;
/** How long a server may take to stop, from the signal, unless configured. */
export const DEFAULT_SHUTDOWN_GRACE_MS = 10_000;
/** The longest drain delay and grace: ten minutes, as for a request's arrival. */
const MAX_STOP_MS = 600_000;

/** The gateway's total bound on one upstream call unless configured (its programmatic default too). */
export const DEFAULT_UPSTREAM_DEADLINE_MS = 15_000;
/**
 * The defaults of the options a module also takes on its own (in tests, in embedding code): stated
 * here once, for the schema's `.default()` and the module's fallback alike, so the two cannot differ.
 */
export const DEFAULT_SPREAD_BPS = 20;
export const DEFAULT_REVERSAL_WINDOW_SECONDS = 1800;
export const DEFAULT_KEY_CACHE_TTL_MS = 5000;
export const DEFAULT_IDEMPOTENCY_LOCK_TTL_MS = 30_000;
export const DEFAULT_UPSTREAM_CONNECT_TIMEOUT_MS = 2000;
export const DEFAULT_UPSTREAM_TIMEOUT_MS = 10_000;
export const DEFAULT_RAIL_SIMULATION_DELAY_MS = 2000;
export const DEFAULT_RAIL_SIMULATION_FAILURE_RATE = 0;
export const DEFAULT_RATE_LIMIT_READS = 100;
export const DEFAULT_RATE_LIMIT_WRITES = 20;
export const DEFAULT_LEGACY_RATE_LIMIT_READS = 100;
export const DEFAULT_LEGACY_RATE_LIMIT_WRITES = 20;
export const DEFAULT_WEBHOOK_POLL_MS = 1000;
export const DEFAULT_SHADOW_SAMPLE = 1;

/**
 * Where v1's and v2's deprecation and sunset `Link` point unless configured: the guides the
 * gateway serves itself, root-relative (RFC 8288 lets a client resolve them against the request's
 * URL; the gateway has no trusted public origin to make them absolute with).
 */
export const DEFAULT_MIGRATION_URL = '/docs/migrate/v1-to-v2';
export const DEFAULT_V2_MIGRATION_URL = '/docs/migrate/v2-to-v3';
/** v1's dates unless configured: deprecated at the start of 2026, retired at its end. */
export const DEFAULT_V1_DEPRECATED_AT = '2026-01-01T00:00:00Z';
export const DEFAULT_V1_SUNSET_AT = '2026-12-31T23:59:59Z';

/** Settings renamed: the old name is still read when the new one is unset. */
export const RENAMED_SETTINGS = { FXGATE_MIGRATION_GUIDE_URL: 'FXGATE_MIGRATION_URL' } as const;

/**
 * The `FXGATE_` names that are read, but not by the schema, each with who reads it. They are
 * known names all the same: the test suite's CLI children inherit its environment, and a shell
 * that ran the tests or make-secrets.sh may still hold them when it starts fxgate. A test holds
 * every `FXGATE_` name of src/ and every one the test suite reads to this list and the schema.
 */
export const NAMES_READ_OUTSIDE_THE_SCHEMA: Readonly<Record<string, string>> = Object.freeze({
  FXGATE_TEST_BACKEND:
    'the test suite: the database back end its harness runs on (a vitest project of vitest.config.ts)',
  FXGATE_TEST_PG_TEMPLATE: 'the test suite: the migrated PostgreSQL template its global setup hands the test files',
  FXGATE_TEST_PGLITE_TEMPLATE: 'the test suite: the migrated PGlite template its global setup hands the test files',
  FXGATE_TEST_RUN:
    'the test suite: the id of the run its databases, Redis keys and temp folder are named after (removed at its end)',
  FXGATE_TEST_PGBOUNCER_URL: 'the test suite: the PgBouncer its pgbouncer project starts',
  FXGATE_OPENAPI_RECORDINGS: 'the test suite: the folder of the answers it records for the OpenAPI coverage check',
  FXGATE_PRINT_TIMINGS: 'the test suite: `1` prints how long each webhook delivery took',
  FXGATE_PRINT_BOUNDS: 'the test suite: prints how long each request to a misbehaving upstream took',
  FXGATE_INTERNAL_TLS_HOSTS: "deploy/compose/make-secrets.sh: the names on the gateways' internal certificate",
});

/** An ISO 8601 instant with its zone, kept as written; the gateway reads it with time-text.ts. */
const instant = z.string().superRefine((text, ctx) => {
  try {
    parseInstant(text);
  } catch (error) {
    if (!(error instanceof TimeTextError)) throw error;
    ctx.addIssue({ code: 'custom', message: error.message });
  }
});

/** FXGATE_V1_BROWNOUTS: ISO 8601 intervals, comma-separated. */
const brownoutWindows = z.string().transform((text, ctx): TimeInterval[] => {
  try {
    return parseIntervals(text);
  } catch (error) {
    if (!(error instanceof TimeTextError)) throw error;
    ctx.addIssue({ code: 'custom', message: error.message });
    return z.NEVER;
  }
});

export const configSchema = z
  .object({
    PORT: port.default(8080).describe('Port the public listener binds (the gateway in `all`, the core in `core`).'),
    HOST: z.string().min(1).default('127.0.0.1').describe('Address to bind; the Docker image sets 0.0.0.0.'),
    FXGATE_REQUEST_TIMEOUT_MS: milliseconds(1000, 600_000)
      .default(DEFAULT_REQUEST_TIMEOUT_MS)
      .describe(
        "Time a client has to send a whole request, headers and body, from its first byte (and a new connection to send its first), on every listener of the core and the gateway; 1000 to 600000 ms. Past it: 408 in the envelope of the request's generation, and the connection is closed. A request that arrived whole is never cut, however long its answer takes.",
      ),
    FXGATE_DRAIN_DELAY_MS: milliseconds(0, MAX_STOP_MS)
      .optional()
      .describe(
        `After SIGTERM (or SIGINT), how long a server goes on serving while its \`/readyz\` answers 503, so that the load balancer takes it out before it stops accepting; 0 to 600000 ms. Its answers meanwhile carry \`Connection: close\`. Unset: ${PRODUCTION_DRAIN_DELAY_MS} in production, that is whenever DATABASE_URL is set, and 0 on the embedded default.`,
      ),
    FXGATE_SHUTDOWN_GRACE_MS: milliseconds(1000, MAX_STOP_MS)
      .default(DEFAULT_SHUTDOWN_GRACE_MS)
      .describe(
        'The most a server takes to stop after SIGTERM (or SIGINT), counted from the signal, the drain delay included, so more than FXGATE_DRAIN_DELAY_MS; 1000 to 600000 ms. Within it every request received is answered, the workers stop and hand back what they hold, the usage and shadow counts are written, and the process exits 0; past it, it exits 1 naming what was still open.',
      ),
    DATABASE_URL: optionalUrl(['postgres', 'postgresql']).describe(
      'PostgreSQL connection string. Unset: embedded PGlite in FXGATE_DATA_DIR.',
    ),
    FXGATE_DB_POOL_MODE: z
      .enum(DB_POOL_MODES)
      .default('session')
      .describe(
        "How DATABASE_URL's connections behave. `session`: each connection is one PostgreSQL session (a direct connection, or a pooler in session pooling), so every statement is prepared once per connection and the statement timeout is a connection parameter; start-up is refused when two connections are seen sharing one server session. `transaction`: the connections go through a pooler in transaction pooling (PgBouncer `pool_mode = transaction`), which hands each transaction to any server session: statements run unnamed (parsed and planned every time), and the statement timeout is set in each transaction; lone statements take the database role's own `statement_timeout`. No effect on the embedded database.",
      ),
    REDIS_URL: optionalUrl(['redis', 'rediss']).describe(
      'Redis for idempotency records, nonces, rate limits and cursor cache, one server; `rediss://` for TLS, user, password and database in the URL. Unset: FXGATE_REDIS_SENTINELS, or without it the in-process store (one process only).',
    ),
    FXGATE_REDIS_KEY_PREFIX: z
      .string()
      .regex(/^[^{}\s]*$/, 'may not contain braces or spaces: the store puts its own `{...}` hash tags after it')
      .optional()
      .describe(
        'Put before every key the store writes in Redis (REDIS_URL or FXGATE_REDIS_SENTINELS), e.g. `staging:`, so that deployments sharing one Redis keep apart; every process of a deployment needs the same one. Changing it loses what is stored (idempotency records, nonces, rate-limit counters) as an emptied Redis does. Unset: no prefix.',
      ),
    FXGATE_REDIS_SENTINELS: sentinelList
      .optional()
      .describe(
        'Redis through Sentinel instead of REDIS_URL: the Sentinels, comma-separated `host:port` (an IPv6 address in brackets, `[::1]:26379`); any one that answers names the primary, and more are learnt from it. The store follows the primary through a failover without a restart: writes answer 503 until a new primary is elected ([Redis Sentinel](docs/operations.md#redis-sentinel)). Needs FXGATE_REDIS_SENTINEL_NAME; not together with REDIS_URL.',
      ),
    FXGATE_REDIS_SENTINEL_NAME: redisWord
      .optional()
      .describe(
        'With FXGATE_REDIS_SENTINELS: the name of the primary the Sentinels watch (`sentinel monitor <name> ...` in their configuration).',
      ),
    FXGATE_REDIS_SENTINEL_PASSWORD: z
      .string()
      .min(1)
      .optional()
      .describe("With FXGATE_REDIS_SENTINELS: the Sentinels' own password (their `requirepass`). Unset: none is sent."),
    FXGATE_REDIS_USERNAME: redisWord
      .optional()
      .describe(
        'With FXGATE_REDIS_SENTINELS: the ACL user of the primary (and of every replica that may become it). Needs FXGATE_REDIS_PASSWORD. Unset: the `default` user. With REDIS_URL the user goes in the URL.',
      ),
    FXGATE_REDIS_PASSWORD: z
      .string()
      .min(1)
      .optional()
      .describe(
        "With FXGATE_REDIS_SENTINELS: the password of the primary (and of every replica that may become it), the data nodes' `requirepass` or the user's. Unset: none is sent. With REDIS_URL the password goes in the URL.",
      ),
    FXGATE_REDIS_TLS: z
      .enum(['off', 'on'])
      .optional()
      .describe(
        "With FXGATE_REDIS_SENTINELS: `on` speaks TLS to the Sentinels and to the primary, checking their certificates against the system's CAs (`NODE_EXTRA_CA_CERTS` adds a private CA). Unset: `off`. With REDIS_URL, `rediss://` does it.",
      ),
    FXGATE_DATA_DIR: z
      .string()
      .min(1)
      .default('./data')
      .describe('Folder of the embedded database and of the key files `npm start` writes.'),
    FXGATE_SANDBOX_SEED: z
      .enum(['on', 'off'])
      .optional()
      .describe(
        '`fxgate all`: `on` provides a sandbox org on start, with deposits, verified withdrawal accounts and a key of every scope written to `<FXGATE_DATA_DIR>/keys/` (reused on later starts), so a newcomer can call the API at once; `off` provides none. Unset: `on` on the embedded database (`npm start`), `off` with DATABASE_URL. The Docker image sets `off`. `fxgate core` and `fxgate gateway` never seed.',
      ),
    FXGATE_SECRETS_KEY: sealingKeyList
      .optional()
      .describe(
        'The keys webhook signing secrets are sealed with in the database (AES-256-GCM), kept out of it so that a copy of the database opens none: comma-separated, each 32 random bytes in base64 or base64url (`fxgate secrets generate-key` makes one). The first seals; the others only open what they sealed (rotation: the new key first, then the old, then `fxgate secrets reseal`). Unset: FXGATE_SECRETS_KEY_FILE; without either, the embedded default makes and keeps one in `<FXGATE_DATA_DIR>/secrets.key`, and on PostgreSQL the servers and the commands that seal refuse to start.',
      ),
    FXGATE_SECRETS_KEY_FILE: sealingKeyFile
      .optional()
      .describe(
        'A file holding the keys of FXGATE_SECRETS_KEY instead, one a line, the first sealing; blank lines and `#` comments are ignored. Read at start-up (relative to the working directory). Not together with FXGATE_SECRETS_KEY.',
      ),
    FXGATE_JWT_ISSUER: issuerList
      .default([...DEFAULT_JWT_ISSUERS])
      .describe(
        "Comma-separated `iss` values API tokens may carry (v3 and v1/v2); a token with any one of them is accepted. The first is the issuer of every token fxgate signs itself (the gateway's upstream calls, `fxgate sign`). `openfx` is the legacy service's name, which existing legacy clients send.",
      ),
    FXGATE_RATE_LIMIT_READS: rateLimit()
      .default(DEFAULT_RATE_LIMIT_READS)
      .describe('Reads (GET, HEAD) allowed per API key per 10 s.'),
    FXGATE_RATE_LIMIT_WRITES: rateLimit()
      .default(DEFAULT_RATE_LIMIT_WRITES)
      .describe('Writes allowed per API key per 10 s.'),
    FXGATE_LEGACY_RATE_LIMIT_READS: rateLimit()
      .default(DEFAULT_LEGACY_RATE_LIMIT_READS)
      .describe(
        'Gateway: v1/v2 reads (GET) allowed per legacy API key per 10 s, before any v3 call, counted in the store (across every gateway on one Redis). A request whose token proves no key is counted per client address instead.',
      ),
    FXGATE_LEGACY_RATE_LIMIT_WRITES: rateLimit()
      .default(DEFAULT_LEGACY_RATE_LIMIT_WRITES)
      .describe('Gateway: v1/v2 writes (POST) allowed per legacy API key per 10 s, counted as the reads are.'),
    FXGATE_TRUSTED_PROXIES: list
      .default([])
      .describe(
        'Comma-separated addresses or CIDRs of proxies whose X-Forwarded-For is believed. Empty: the socket address is the client.',
      ),
    FXGATE_KEY_CACHE_TTL_MS: milliseconds(1, MAX_ENTRY_LIFETIME_MS)
      .default(DEFAULT_KEY_CACHE_TTL_MS)
      .describe('How long a process caches an API key lookup, 1 to 3600000 ms; a revocation takes effect within it.'),
    FXGATE_IDEMPOTENCY_LOCK_TTL_MS: milliseconds(1, MAX_ENTRY_LIFETIME_MS)
      .default(DEFAULT_IDEMPOTENCY_LOCK_TTL_MS)
      .describe('Lifetime of an in-flight idempotency lock whose owner died, 1 to 3600000 ms.'),
    FXGATE_UPSTREAM_URL: optionalUrl(['http', 'https']).describe(
      'The v3 service the gateway fronts (`fxgate gateway`; `--upstream` overrides).',
    ),
    FXGATE_UPSTREAM_CONNECT_TIMEOUT_MS: milliseconds(1, MAX_UPSTREAM_WAIT_MS)
      .default(DEFAULT_UPSTREAM_CONNECT_TIMEOUT_MS)
      .describe('Gateway: time to connect to the upstream, 1 to 600000 ms.'),
    FXGATE_UPSTREAM_TIMEOUT_MS: milliseconds(1, MAX_UPSTREAM_WAIT_MS)
      .default(DEFAULT_UPSTREAM_TIMEOUT_MS)
      .describe(
        'Gateway: time for the upstream response headers, and again between two chunks of its body, 1 to 600000 ms.',
      ),
    FXGATE_UPSTREAM_DEADLINE_MS: milliseconds(1, MAX_UPSTREAM_WAIT_MS)
      .default(DEFAULT_UPSTREAM_DEADLINE_MS)
      .describe(
        'Gateway: the most an upstream call may take, from sending it to the last byte of the answer, whatever the timeouts above allow (an answer that trickles in a byte at a time meets only this one). The v3 calls of one legacy request (a page walk, a trade and the reads its answer composes) share one such deadline, from the first call on. At least FXGATE_UPSTREAM_TIMEOUT_MS and FXGATE_UPSTREAM_CONNECT_TIMEOUT_MS, at most 600000 ms.',
      ),
    FXGATE_UPSTREAM_KEYS_DIR: z
      .string()
      .min(1)
      .optional()
      .describe(
        'Gateway: folder of its own v3 key files, `<orgId>.<mode>.json`, one per org and mode it serves (`fxgate gateway`; `fxgate all` creates them itself). Unset: `<FXGATE_DATA_DIR>/gateway-keys`.',
      ),
    FXGATE_MIGRATION_URL: z
      .url()
      .optional()
      .describe(
        `Gateway: v1's migration guide, an absolute URL: the target of the \`Link\` header (\`rel="deprecation"\`, \`rel="sunset"\`) on every v1 answer, and named in the 410 of brownouts and of the sunset. v1 only: v2's is FXGATE_V2_MIGRATION_URL. Unset: the gateway's own guide, \`${DEFAULT_MIGRATION_URL}\` (root-relative). Formerly \`FXGATE_MIGRATION_GUIDE_URL\`, still read when this one is unset.`,
      ),
    FXGATE_V2_MIGRATION_URL: z
      .url()
      .optional()
      .describe(
        `Gateway: v2's migration guide, an absolute URL: the target of the \`Link\` header on v2 answers once v2 has dates (FXGATE_V2_DEPRECATED_AT, FXGATE_V2_SUNSET_AT). Unset: the gateway's own guide, \`${DEFAULT_V2_MIGRATION_URL}\` (root-relative).`,
      ),
    FXGATE_V1_DEPRECATED_AT: instant
      .default(DEFAULT_V1_DEPRECATED_AT)
      .describe(
        'Gateway: when v1 was deprecated, an ISO 8601 instant with its zone; every v1 answer carries it as `Deprecation: @<unix seconds>` (RFC 9745).',
      ),
    FXGATE_V1_SUNSET_AT: instant
      .default(DEFAULT_V1_SUNSET_AT)
      .describe(
        'Gateway: when v1 is retired, an ISO 8601 instant with its zone, not before FXGATE_V1_DEPRECATED_AT; every v1 answer carries it as `Sunset: <HTTP-date>` (RFC 8594). From that instant on, v1 requests get 410 (see FXGATE_V1_AFTER_SUNSET).',
      ),
    FXGATE_V1_AFTER_SUNSET: z
      .enum(['refuse', 'serve'])
      .default('refuse')
      .describe(
        'Gateway: v1 after FXGATE_V1_SUNSET_AT. `refuse`: every v1 request, once its token is checked, gets 410 naming the sunset and the migration guide. `serve`: v1 goes on being served (with its headers), for a sunset that has to move after the date.',
      ),
    FXGATE_V1_BROWNOUTS: brownoutWindows
      .default([])
      .describe(
        'Gateway: scheduled v1 brownouts before the sunset: comma-separated ISO 8601 intervals, start/duration or start/end (`2026-12-10T15:00:00Z/PT1H,2026-12-17T15:00:00Z/2026-12-17T17:00:00Z`; durations in weeks, days, hours, minutes, seconds). Inside one (its start included, its end not), every v1 request, once its token is checked, gets 410 naming the sunset and the migration guide.',
      ),
    FXGATE_V1_BROWNOUT_EXEMPT: orgList
      .default([])
      .describe(
        "Gateway: comma-separated org ids whose v1 requests are served during the brownouts all the same (the org of the request's key decides). Not an exemption from the sunset.",
      ),
    FXGATE_V2_DEPRECATED_AT: instant
      .optional()
      .describe(
        'Gateway: when v2 was (or will be) deprecated, an ISO 8601 instant; once set, every v2 answer carries `Deprecation` and a `Link` to FXGATE_V2_MIGRATION_URL. Unset: none.',
      ),
    FXGATE_V2_SUNSET_AT: instant
      .optional()
      .describe(
        'Gateway: when v2 is to be retired, an ISO 8601 instant, not before FXGATE_V2_DEPRECATED_AT; once set, every v2 answer carries `Sunset` and a `Link`. It announces only: v2 is not refused after it. Unset: none.',
      ),
    FXGATE_SANDBOX_HOSTS: hostList
      .default([])
      .describe(
        "Gateway: comma-separated host names (`sandbox.api.example.com`) on which a v1/v2 request that sends no `X-App-Mode` works on the sandbox book, as the legacy service's sandbox host did; a live key there is refused (the legacy 401), and so is `X-App-Mode: live`. Compared with the request's `Host` (from FXGATE_TRUSTED_PROXIES, their `X-Forwarded-Host`) without its port, in any case, a trailing dot ignored. Elsewhere no header means live. Empty: none.",
      ),
    FXGATE_LEGACY_PAGE_TOTALS: z
      .enum(['bounded', 'exact'])
      .default('bounded')
      .describe(
        'Gateway: `meta.pagination.total` of v1/v2 lists. `bounded`: a cold request (no cached snapshot of the list) for page N costs at most ceil(N*limit/100) v3 calls; the total is exact once some request has reached the end of the list, until then the records walked so far plus one (a lower bound, so a next page always shows). `exact`: a cold request walks the whole list, max(1, ceil(total/100)) v3 calls, and the total is always exact.',
      ),
    FXGATE_RATES: rateTable
      .optional()
      .describe(
        'USD prices of currencies, merged over the built-in table (`DEFAULT_USD_PRICES` in `src/core/trading/rate-source.ts`). Inline JSON such as `{"EUR":"1.09","JPY":"0.0066"}`, or `@` and a JSON file path (read at start-up, relative to the working directory). Prices are quoted decimal strings; a JSON number is refused.',
      ),
    FXGATE_SPREAD_BPS: wholeNumber(0, 1000, { unit: 'basis points' })
      .default(DEFAULT_SPREAD_BPS)
      .describe('Spread added to the mid rate in every quote, in basis points (20 = 0.20%), 0 to 1000.'),
    FXGATE_REVERSAL_WINDOW_SECONDS: wholeNumber(1, MAX_REVERSAL_WINDOW_SECONDS, { unit: 'seconds' })
      .default(DEFAULT_REVERSAL_WINDOW_SECONDS)
      .describe('How long after execution a trade can still be reversed, in seconds, 1 to 31536000 (a year).'),
    FXGATE_RAIL_SIMULATION_DELAY_MS: milliseconds(0, 86_400_000)
      .default(DEFAULT_RAIL_SIMULATION_DELAY_MS)
      .describe(
        'Live withdrawals go out through a simulated payment rail (no real bank or chain is reachable): time from submission to its outcome, in ms. Sandbox withdrawals wait for the sandbox complete/fail endpoints instead.',
      ),
    FXGATE_RAIL_SIMULATION_FAILURE_RATE: share()
      .default(DEFAULT_RAIL_SIMULATION_FAILURE_RATE)
      .describe(
        'Share of live withdrawals the simulated payment rail fails, 0 to 1 (0: none). Sandbox withdrawals are never failed by it.',
      ),
    FXGATE_WEBHOOK_WORKER: z
      .enum(['on', 'off'])
      .default('on')
      .describe(
        '`on`: this process delivers webhooks from its outbox: the core its v3 deliveries, the gateway its legacy ones (any number of processes may; PostgreSQL row locks keep them apart). `off`: it only records events, for deployments that run delivery elsewhere.',
      ),
    FXGATE_WEBHOOK_POLL_MS: milliseconds(1, 3_600_000)
      .default(DEFAULT_WEBHOOK_POLL_MS)
      .describe(
        "How often a webhook worker (the core's, the gateway's) looks for due deliveries when the last round was not a full batch, in ms.",
      ),
    FXGATE_GATEWAY_WEBHOOK_URL: webhookBaseUrl
      .optional()
      .describe(
        "Gateway: the URL at which v3 reaches the gateway's legacy webhook receiver, without `/<orgId>/<mode>`, which is appended; each org and mode with a legacy webhook subscription is registered with v3 there. Give every gateway of a deployment the same one (its load balancer's): gateways on one database register at one URL, kept while any running gateway advertises it, and one advertising another logs both. Unset: `fxgate all` uses its own listener (`http://127.0.0.1:<PORT>/_fxgate/webhooks/v3`); a stand-alone `fxgate gateway` registers at the URL its fleet uses, if any, else nothing (events it has stored are still delivered).",
      ),
    FXGATE_WEBHOOK_ALLOWED_NETWORKS: networkList
      .default([])
      .describe(
        "Private networks outbound calls may reach besides public addresses, comma-separated CIDRs (IPv4 and IPv6; a single address is its own network): in-house webhook receivers, a stand-alone gateway's legacy webhook receiver (set on the core), a legacy service on the internal network (FXGATE_SHADOW_URL). It applies to v3 webhook endpoints and legacy webhook subscriptions in both modes, and to the shadow URL; with it set, names under `.internal` are accepted too (their addresses are still checked when connecting). Empty: live webhooks reach only public addresses, sandbox webhooks public and loopback ones, the shadow URL public and loopback ones.",
      ),
    FXGATE_ADMIN_HOST: z
      .string()
      .min(1)
      .default('127.0.0.1')
      .describe(
        'Address the admin listener binds (`GET /metrics`; the migration schedule, the shadow and usage reports, `/admin/...`), apart from the public one. Keep it off the public network. The Docker image sets 0.0.0.0, so its containers start only with FXGATE_ADMIN_TOKEN or FXGATE_ADMIN_TOKEN_FILE (or with this set to 127.0.0.1).',
      ),
    FXGATE_ADMIN_PORT: adminPort
      .optional()
      .describe(
        'Port of the admin listener, or `off`. Unset: off in `fxgate gateway` and `fxgate core`, PORT+1 in `fxgate all` (0 when PORT is 0). It answers only its own routes (`GET /metrics`, `GET /admin/schedule`, `GET /admin/shadow/report`, `GET /admin/usage`, `GET /admin/readiness`), and the public listener answers none of them. The Docker image sets 8081, in every role. The gateway and the core keep their Prometheus metrics only when it is on.',
      ),
    FXGATE_ADMIN_TOKEN: adminToken
      .optional()
      .describe(
        `Bearer token of the admin listener, at least ${ADMIN_TOKEN_MIN_LENGTH} characters (\`openssl rand -base64 32\`); never logged. Set: every request to it needs \`Authorization: Bearer <token>\` (401 otherwise), except the CLI's state routes, which take the token the process publishes in its data folder. Unset: FXGATE_ADMIN_TOKEN_FILE, or without it none is asked for. Required when FXGATE_ADMIN_HOST is not a loopback address: start-up is refused without it. The CLI's \`fxgate diff report\` sends it from its environment.`,
      ),
    FXGATE_ADMIN_TOKEN_FILE: adminTokenFile
      .optional()
      .describe(
        'A file holding FXGATE_ADMIN_TOKEN instead (a Docker or Kubernetes secret mounted as a file), the whole file one token; a final line break is not part of it. Read at start-up (relative to the working directory). Not together with FXGATE_ADMIN_TOKEN.',
      ),
    FXGATE_SHADOW_URL: optionalUrl(['http', 'https']).describe(
      'Gateway: base URL of the legacy v1/v2 service to run beside (shadow mode). Unset: shadow mode off. Sampled v1/v2 reads are sent there as they came, after the client has its answer, and the two answers compared; writes never are.',
    ),
    FXGATE_SHADOW_SAMPLE: share()
      .default(DEFAULT_SHADOW_SAMPLE)
      .describe('Gateway, shadow mode: the share of v1/v2 reads mirrored and compared, 0 to 1.'),
    FXGATE_SHADOW_SERVE: z
      .enum(['gateway', 'legacy'])
      .default('gateway')
      .describe(
        'Gateway, shadow mode: whose answer clients get. `gateway`: the translation, with the legacy service asked in the background. `legacy`: every v1/v2 request (reads and writes) is proxied to the legacy service as it came and its answer relayed as it came, while sampled reads are translated in the background and compared; orgs of FXGATE_CUTOVER_ORGS excepted.',
      ),
    FXGATE_CUTOVER_ORGS: orgList
      .default([])
      .describe(
        'Gateway, with FXGATE_SHADOW_SERVE=legacy: comma-separated org ids served by the gateway (translated, their reads still compared) while every other org gets the legacy answer. Removing an org moves it back.',
      ),
    LOG_LEVEL: z
      .enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'])
      .default('info')
      .describe('pino log level.'),
    FXGATE_ALLOW_UNKNOWN_SETTINGS: z
      .enum(['0', '1'])
      .default('0')
      .describe(
        "`0`: an environment variable starting `FXGATE_` that is not one of these settings stops start-up, naming it and the setting it is nearest to (FXGATE_V1_BROWNOUTS one letter short would otherwise leave the brownouts off without a word). `1`: fxgate starts all the same and prints one warning line on stderr naming them, for an environment shared with other programs' `FXGATE_` variables.",
      ),
  })
  .superRefine((config, ctx) => {
    // One way to Redis: a URL whose host would be ignored, or a setting that would not be read, is an operator's mistake.
    if (config.FXGATE_REDIS_SENTINELS !== undefined) {
      if (config.REDIS_URL !== undefined) {
        ctx.addIssue({
          code: 'custom',
          path: ['REDIS_URL'],
          message:
            'FXGATE_REDIS_SENTINELS is set too; unset REDIS_URL (through Sentinel, the password and TLS are FXGATE_REDIS_PASSWORD and FXGATE_REDIS_TLS)',
        });
      }
      if (config.FXGATE_REDIS_SENTINEL_NAME === undefined) {
        ctx.addIssue({
          code: 'custom',
          path: ['FXGATE_REDIS_SENTINEL_NAME'],
          message: 'is required with FXGATE_REDIS_SENTINELS: the name of the primary the Sentinels watch',
        });
      }
      if (config.FXGATE_REDIS_USERNAME !== undefined && config.FXGATE_REDIS_PASSWORD === undefined) {
        ctx.addIssue({
          code: 'custom',
          path: ['FXGATE_REDIS_USERNAME'],
          message: "needs FXGATE_REDIS_PASSWORD, the user's password",
        });
      }
    } else {
      for (const name of SENTINEL_ONLY_SETTINGS) {
        if (config[name] === undefined) continue;
        ctx.addIssue({
          code: 'custom',
          path: [name],
          message: `is read only with FXGATE_REDIS_SENTINELS${config.REDIS_URL === undefined ? '' : '; with REDIS_URL, the user, password and TLS (rediss://) go in the URL'}`,
        });
      }
    }
    // Two tokens would leave which one the listener asks for to chance.
    if (config.FXGATE_ADMIN_TOKEN !== undefined && config.FXGATE_ADMIN_TOKEN_FILE !== undefined) {
      ctx.addIssue({
        code: 'custom',
        path: ['FXGATE_ADMIN_TOKEN_FILE'],
        message: 'FXGATE_ADMIN_TOKEN is set too; give the token in one of them only',
      });
    }
    // Two sources of keys would leave which one seals to chance.
    if (config.FXGATE_SECRETS_KEY !== undefined && config.FXGATE_SECRETS_KEY_FILE !== undefined) {
      ctx.addIssue({
        code: 'custom',
        path: ['FXGATE_SECRETS_KEY_FILE'],
        message: 'FXGATE_SECRETS_KEY is set too; give the keys in one of them only',
      });
    }
    // The deadline contains the waits it bounds; a shorter one would make them meaningless.
    for (const name of ['FXGATE_UPSTREAM_TIMEOUT_MS', 'FXGATE_UPSTREAM_CONNECT_TIMEOUT_MS'] as const) {
      // A value already refused on its own is not compared as well.
      const compared = [config.FXGATE_UPSTREAM_DEADLINE_MS, config[name]].every(
        (value) => Number.isInteger(value) && value > 0,
      );
      if (compared && config.FXGATE_UPSTREAM_DEADLINE_MS < config[name]) {
        ctx.addIssue({
          code: 'custom',
          path: ['FXGATE_UPSTREAM_DEADLINE_MS'],
          message: `must be at least ${name} (${config[name]})`,
        });
      }
    }
    // The grace contains the drain delay: a shorter one would end every stop with 1. A value
    // already refused on its own is not compared as well.
    const drainDelay = drainDelayMs(config);
    const compared = [drainDelay, config.FXGATE_SHUTDOWN_GRACE_MS].every(
      (value) => Number.isInteger(value) && value >= 0 && value <= MAX_STOP_MS,
    );
    if (compared && config.FXGATE_SHUTDOWN_GRACE_MS <= drainDelay) {
      ctx.addIssue({
        code: 'custom',
        path: ['FXGATE_SHUTDOWN_GRACE_MS'],
        message: `must be more than the drain delay (${drainDelay} ms${config.FXGATE_DRAIN_DELAY_MS === undefined ? ', the default of FXGATE_DRAIN_DELAY_MS with DATABASE_URL set' : ', FXGATE_DRAIN_DELAY_MS'}), which it contains`,
      });
    }
    // Who serves an org must be what the operator meant: legacy needs its URL, and a cutover list only means something when the rest stay on legacy.
    if (config.FXGATE_SHADOW_SERVE === 'legacy' && config.FXGATE_SHADOW_URL === undefined) {
      ctx.addIssue({
        code: 'custom',
        path: ['FXGATE_SHADOW_SERVE'],
        message: 'legacy needs FXGATE_SHADOW_URL, the legacy service to serve from',
      });
    }
    // A sunset before the deprecation would announce a retirement before its notice.
    for (const generation of ['V1', 'V2'] as const) {
      const [deprecated, sunset] = [
        config[`FXGATE_${generation}_DEPRECATED_AT`],
        config[`FXGATE_${generation}_SUNSET_AT`],
      ];
      if (deprecated === undefined || sunset === undefined) continue;
      const [from, to] = [instantOrNull(deprecated), instantOrNull(sunset)];
      if (from !== null && to !== null && to < from) {
        ctx.addIssue({
          code: 'custom',
          path: [`FXGATE_${generation}_SUNSET_AT`],
          message: `${sunset} is before FXGATE_${generation}_DEPRECATED_AT (${deprecated}); the sunset must not come before the deprecation`,
        });
      }
    }
    if (config.FXGATE_CUTOVER_ORGS.length > 0 && config.FXGATE_SHADOW_SERVE !== 'legacy') {
      ctx.addIssue({
        code: 'custom',
        path: ['FXGATE_CUTOVER_ORGS'],
        message:
          'lists the orgs served by the gateway while the rest get the legacy answer: set FXGATE_SHADOW_SERVE=legacy (and FXGATE_SHADOW_URL) too',
      });
    }
  });

/** An instant already refused on its own is not compared as well. */
function instantOrNull(text: string): number | null {
  try {
    return parseInstant(text);
  } catch {
    return null;
  }
}

export type Config = z.infer<typeof configSchema>;

/** Every environment name fxgate knows: the schema's settings, their former names, and the names read outside the schema. */
export const KNOWN_SETTING_NAMES: ReadonlySet<string> = new Set([
  ...Object.keys(configSchema.shape),
  ...Object.keys(RENAMED_SETTINGS),
  ...Object.keys(NAMES_READ_OUTSIDE_THE_SCHEMA),
]);

/** What to do about unknown names, after the list of them. */
const UNKNOWN_SETTINGS_ADVICE =
  'Unset the unknown names or correct them (README.md lists every setting), or set FXGATE_ALLOW_UNKNOWN_SETTINGS=1 to start with a warning instead.';

/** The issuer of every token fxgate signs itself: the first of FXGATE_JWT_ISSUER. */
export function signingIssuer(config: Pick<Config, 'FXGATE_JWT_ISSUER'>): string {
  return config.FXGATE_JWT_ISSUER[0];
}

/** How long a server goes on serving after a stop signal (FXGATE_DRAIN_DELAY_MS, or its default for the database in use). */
export function drainDelayMs(config: {
  readonly FXGATE_DRAIN_DELAY_MS?: number | undefined;
  readonly DATABASE_URL?: string | undefined;
}): number {
  return config.FXGATE_DRAIN_DELAY_MS ?? (config.DATABASE_URL === undefined ? 0 : PRODUCTION_DRAIN_DELAY_MS);
}

/** Whether `fxgate all` provides the sandbox org and key (FXGATE_SANDBOX_SEED, by default only on the embedded database). */
export function sandboxSeeded(config: Pick<Config, 'FXGATE_SANDBOX_SEED' | 'DATABASE_URL'>): boolean {
  return (config.FXGATE_SANDBOX_SEED ?? (config.DATABASE_URL === undefined ? 'on' : 'off')) === 'on';
}

/** The sealing keys the configuration gives (FXGATE_SECRETS_KEY or FXGATE_SECRETS_KEY_FILE), or undefined. */
export function configuredKeyring(
  config: Pick<Config, 'FXGATE_SECRETS_KEY' | 'FXGATE_SECRETS_KEY_FILE'>,
): SealingKeyring | undefined {
  return config.FXGATE_SECRETS_KEY ?? config.FXGATE_SECRETS_KEY_FILE;
}

/** The admin listener's bearer token the configuration gives (FXGATE_ADMIN_TOKEN or FXGATE_ADMIN_TOKEN_FILE), or undefined. */
export function configuredAdminToken(
  config: Pick<Config, 'FXGATE_ADMIN_TOKEN' | 'FXGATE_ADMIN_TOKEN_FILE'>,
): string | undefined {
  return config.FXGATE_ADMIN_TOKEN ?? config.FXGATE_ADMIN_TOKEN_FILE;
}

export interface LoadConfigOptions {
  /** Where the warning about unknown names goes with FXGATE_ALLOW_UNKNOWN_SETTINGS=1 (one line); stderr by default. */
  readonly warn?: (line: string) => void;
}

const warnOnStderr = (line: string) => {
  process.stderr.write(`${line}\n`);
};

/**
 * Reads the configuration from an environment (process.env by default); empty strings count as
 * unset. An unknown `FXGATE_` name is refused with the others, or only warned about when
 * FXGATE_ALLOW_UNKNOWN_SETTINGS=1.
 */
export function loadConfig(
  env: Readonly<Record<string, string | undefined>> = process.env,
  { warn = warnOnStderr }: LoadConfigOptions = {},
): Config {
  const relevant: Record<string, string | undefined> = Object.fromEntries(
    Object.keys(configSchema.shape)
      .map((name) => [name, env[name]] as const)
      .filter(([, value]) => value !== undefined && value !== ''),
  );
  // A renamed setting: its old name still works alone; with the new one, the two must agree.
  const renamed = new Map<string, string>();
  for (const [old, current] of Object.entries(RENAMED_SETTINGS)) {
    const value = env[old];
    if (value === undefined || value === '') continue;
    if (relevant[current] === undefined) {
      relevant[current] = value;
      renamed.set(current, old);
    } else if (relevant[current] !== value) {
      throw new ConfigError([`${old}: renamed ${current}, and both are set to different values; unset ${old}`]);
    }
  }
  const unknown = unknownSettings(env, KNOWN_SETTING_NAMES, Object.keys(configSchema.shape)).map(
    describeUnknownSetting,
  );
  const refused = relevant.FXGATE_ALLOW_UNKNOWN_SETTINGS !== '1' ? unknown : [];
  const parsed = configSchema.safeParse(relevant);
  const problems = [
    ...refused,
    ...(parsed.success ? [] : parsed.error.issues).map((issue) => {
      const name = issue.path.join('.');
      return `${renamed.has(name) ? `${renamed.get(name)!} (now ${name})` : name}: ${issue.message}`;
    }),
  ];
  if (problems.length > 0 || !parsed.success)
    throw new ConfigError(problems, refused.length > 0 ? UNKNOWN_SETTINGS_ADVICE : undefined);
  if (unknown.length > 0)
    warn(`fxgate: warning: ${unknown.join('; ')}; started all the same, as FXGATE_ALLOW_UNKNOWN_SETTINGS=1`);
  return parsed.data;
}
