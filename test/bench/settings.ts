/**
 * What a bench run measures and against which services, from the environment with defaults.
 * Read once in the load process (run.ts); server processes get what they need explicitly.
 */
import os from 'node:os';

export interface BenchSettings {
  /** Seconds of each measured run (BENCH_DURATION). */
  readonly durationSeconds: number;
  /** Seconds of the warm-up run before it (BENCH_WARMUP). */
  readonly warmupSeconds: number;
  /** Rounds a side-by-side case splits each row's measured seconds into (BENCH_ROUNDS; load.ts measureSideBySide). */
  readonly rounds: number;
  /** Concurrent connections of the load generator (BENCH_CONNECTIONS). */
  readonly connections: number;
  /** One request in flight per connection: latency then reflects the server, not a queue in the socket. */
  readonly pipelining: 1;
  /** Only these cases, by name (BENCH_CASES, comma-separated); all when empty. */
  readonly caseFilter: readonly string[];
  /** PostgreSQL server; the bench makes its own database there (DATABASE_URL). */
  readonly databaseUrl: string;
  /** Redis server; the bench uses its own key prefix there (REDIS_URL). */
  readonly redisUrl: string;
  /** A folder for each fixed-rate row's per-request samples (BENCH_SAMPLES_DIR, paced-load.ts); none by default. */
  readonly samplesDir: string | undefined;
  /** Run the cases that start a PgBouncer in front of the database too (BENCH_PGBOUNCER=1); off by default. */
  readonly pgbouncer: boolean;
}

export const BENCH_DEFAULTS = {
  durationSeconds: 10,
  warmupSeconds: 3,
  rounds: 5,
  connections: 50,
  databaseUrl: 'postgres://127.0.0.1:5432/test',
  redisUrl: 'redis://127.0.0.1:6379',
} as const;

function positiveNumber(name: string, fallback: number): number {
  const text = process.env[name];
  if (text === undefined || text === '') return fallback;
  const value = Number(text);
  if (!Number.isFinite(value) || value <= 0)
    throw new Error(`${name} must be a positive number, not ${JSON.stringify(text)}`);
  return value;
}

/**
 * A URL without a user name gets the login user, as psql does: node-postgres reads only $USER
 * and $PGUSER, which root shells in containers often lack (test/support/global-setup.ts does the same).
 */
function withLoginUser(url: string): string {
  const parsed = new URL(url);
  if (parsed.username !== '' || process.env.PGUSER || process.env.USER) return url;
  parsed.username = encodeURIComponent(os.userInfo().username);
  return parsed.toString();
}

export function readSettings(): BenchSettings {
  return {
    durationSeconds: positiveNumber('BENCH_DURATION', BENCH_DEFAULTS.durationSeconds),
    warmupSeconds: positiveNumber('BENCH_WARMUP', BENCH_DEFAULTS.warmupSeconds),
    rounds: Math.round(positiveNumber('BENCH_ROUNDS', BENCH_DEFAULTS.rounds)),
    connections: Math.round(positiveNumber('BENCH_CONNECTIONS', BENCH_DEFAULTS.connections)),
    pipelining: 1,
    caseFilter: (process.env.BENCH_CASES ?? '')
      .split(',')
      .map((name) => name.trim())
      .filter((name) => name !== ''),
    databaseUrl: withLoginUser(process.env.DATABASE_URL ?? BENCH_DEFAULTS.databaseUrl),
    redisUrl: process.env.REDIS_URL ?? BENCH_DEFAULTS.redisUrl,
    samplesDir: process.env.BENCH_SAMPLES_DIR || undefined,
    pgbouncer: process.env.BENCH_PGBOUNCER === '1',
  };
}
