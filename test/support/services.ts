/**
 * Where the real PostgreSQL and Redis of the test run are. test/support/global-setup.ts makes
 * sure they answer before any suite runs (starting throwaway servers when needed) and passes
 * their addresses on through these environment variables.
 */
export interface TestServices {
  readonly databaseUrl: string;
  readonly redisUrl: string;
}

export const TEST_SERVICE_DEFAULTS: TestServices = {
  databaseUrl: 'postgres://127.0.0.1:5432/test',
  redisUrl: 'redis://127.0.0.1:6379',
};

export function testServices(): TestServices {
  return {
    databaseUrl: process.env.DATABASE_URL ?? TEST_SERVICE_DEFAULTS.databaseUrl,
    redisUrl: process.env.REDIS_URL ?? TEST_SERVICE_DEFAULTS.redisUrl,
  };
}
