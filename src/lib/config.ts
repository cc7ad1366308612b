/**
 * Configuration: every environment variable fxgate reads, validated once at start-up with zod.
 * A bad value stops the process with a message naming the variable. The README's configuration
 * table is generated from this schema (`npm run docs`), so the two cannot drift.
 */
import { z } from 'zod';

const port = z.coerce.number().int().min(0).max(65535);
const positiveInt = z.coerce.number().int().positive();
/** Per 10 s; the GCRA cell counts in whole microseconds, so 10 million is the finest it resolves. */
const rateLimit = positiveInt.max(10_000_000);
const optionalUrl = (protocols: string[]) =>
  z
    .url()
    .refine((value) => protocols.some((p) => value.startsWith(`${p}://`)), `must start with ${protocols.map((p) => `${p}://`).join(' or ')}`)
    .optional();
const list = z
  .string()
  .transform((value) => value.split(',').map((item) => item.trim()).filter(Boolean));

export const configSchema = z.object({
  PORT: port.default(8080).describe('Port the public listener binds (the gateway in `all`, the core in `core`).'),
  HOST: z.string().min(1).default('127.0.0.1').describe('Address to bind; the Docker image sets 0.0.0.0.'),
  DATABASE_URL: optionalUrl(['postgres', 'postgresql']).describe('PostgreSQL connection string. Unset: embedded PGlite in FXGATE_DATA_DIR.'),
  REDIS_URL: optionalUrl(['redis', 'rediss']).describe('Redis for idempotency records, nonces, rate limits and cursor cache. Unset: the in-process store (one process only).'),
  FXGATE_DATA_DIR: z.string().min(1).default('./data').describe('Folder of the embedded database and of the key files `npm start` writes.'),
  FXGATE_JWT_ISSUER: z.string().min(1).default('fx-service').describe('The `iss` claim API tokens must carry.'),
  FXGATE_RATE_LIMIT_READS: rateLimit.default(100).describe('Reads (GET, HEAD) allowed per API key per 10 s.'),
  FXGATE_RATE_LIMIT_WRITES: rateLimit.default(20).describe('Writes allowed per API key per 10 s.'),
  FXGATE_TRUSTED_PROXIES: list.default([]).describe('Comma-separated addresses or CIDRs of proxies whose X-Forwarded-For is believed. Empty: the socket address is the client.'),
  FXGATE_KEY_CACHE_TTL_MS: positiveInt.default(5000).describe('How long a process caches an API key lookup; a revocation takes effect within it.'),
  FXGATE_IDEMPOTENCY_LOCK_TTL_MS: positiveInt.default(30_000).describe('Lifetime of an in-flight idempotency lock whose owner died.'),
  FXGATE_UPSTREAM_URL: optionalUrl(['http', 'https']).describe('The v3 service the gateway fronts (`fxgate gateway`; `--upstream` overrides).'),
  FXGATE_UPSTREAM_CONNECT_TIMEOUT_MS: positiveInt.default(2000).describe('Gateway: time to connect to the upstream.'),
  FXGATE_UPSTREAM_TIMEOUT_MS: positiveInt.default(10_000).describe('Gateway: time for the upstream response headers, and again for its body.'),
  LOG_LEVEL: z.enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']).default('info').describe('pino log level.'),
});

export type Config = z.infer<typeof configSchema>;

export class ConfigError extends Error {
  readonly code = 'FXGATE_CONFIG_INVALID';
  constructor(readonly problems: string[]) {
    super(`invalid configuration:\n${problems.map((p) => `  - ${p}`).join('\n')}`);
    this.name = 'ConfigError';
  }
}

/** Reads the configuration from an environment (process.env by default); empty strings count as unset. */
export function loadConfig(env: Readonly<Record<string, string | undefined>> = process.env): Config {
  const relevant = Object.fromEntries(
    Object.keys(configSchema.shape)
      .map((name) => [name, env[name]] as const)
      .filter(([, value]) => value !== undefined && value !== ''),
  );
  const parsed = configSchema.safeParse(relevant);
  if (!parsed.success) {
    throw new ConfigError(parsed.error.issues.map((issue) => `${issue.path.join('.')}: ${issue.message}`));
  }
  return parsed.data;
}
