import { configDefaults, defineConfig } from 'vitest/config';

/**
 * Four projects. `services` runs every suite on the real PostgreSQL and Redis. `embedded` runs
 * the v3 API suites again on what `npm start` uses by default, PGlite and the in-process store
 * (the harness reads FXGATE_TEST_BACKEND), so both back ends pass the same tests: PGlite has
 * one connection, and a query made outside an open transaction would wait on it forever.
 * `pgbouncer` runs the suites where sessions and connections matter again through a real
 * PgBouncer in transaction pooling, with a few server connections per database
 * (test/support/pgbouncer-setup.ts), the databases opened in FXGATE_DB_POOL_MODE=transaction.
 * `openapi-coverage` runs once the others have finished (groupOrder 1): it reads the answers their
 * harnesses held against the OpenAPI documents (test/support/openapi-recordings.ts).
 */
const OPENAPI_COVERAGE = 'test/openapi-coverage.test.ts';

/**
 * What a pooler that hands each transaction to any server session could break: trading and
 * withdrawals with their concurrency suites, idempotency, both webhook workers' claim modes,
 * concurrent migrations, the key registry, the legacy operations end to end.
 */
const PGBOUNCER_SUITES = [
  'test/core/trading/{trades,trade-concurrency,trade-crash-safety,reversals,settlements,exposure}.test.ts',
  'test/core/money-movement/{withdrawals,withdrawal-concurrency,deposits}.test.ts',
  'test/core/http/idempotency.test.ts',
  'test/core/events/webhooks.test.ts',
  'test/gateway/webhooks/delivery-worker.test.ts',
  'test/gateway/legacy/e2e/{operations,idempotency,webhooks}.test.ts',
  'test/cli/db/migrate.test.ts',
  'test/lib/keys/key-registry.test.ts',
];

const shared = {
  globalSetup: ['test/support/global-setup.ts', 'test/support/openapi-recordings-setup.ts'],
  testTimeout: 30_000,
  hookTimeout: 120_000,
  pool: 'forks' as const,
  // A worker runs its files in one module cache instead of importing the source again for each:
  // the import was the larger part of most files' time. The suites hold no state in modules
  // (servers, databases and stores are made per file and closed); a test that patches a module
  // (vi.mock, nock) says so where it does.
  isolate: false,
};

export default defineConfig({
  test: {
    // Two test processes at a time on any machine: vitest's default (one fewer than the cores) is
    // one on 2 cores, which leaves a core idle while a suite waits on a socket; a third adds only
    // contention, the suite being bound by the CPU.
    maxWorkers: 2,
    projects: [
      {
        test: {
          ...shared,
          name: 'services',
          include: ['test/**/*.test.ts'],
          exclude: [...configDefaults.exclude, OPENAPI_COVERAGE],
        },
      },
      {
        test: {
          ...shared,
          name: 'embedded',
          include: [
            'test/core/{http,routes,trading,money-movement,ledger,events,metrics}/**/*.test.ts',
            // The gateway in front of the core as `npm start` runs them (the crash test names its own back end).
            'test/gateway/legacy/e2e/{operations,idempotency,errors-and-security,webhooks}.test.ts',
            // The gateway's metrics (webhook outcomes and backlog through the leased outbox on PGlite).
            'test/gateway/metrics/gateway-metrics.test.ts',
            // The legacy contract suite: a client written from the public contract, on both back ends.
            'test/gateway/legacy/contract/**/*.test.ts',
          ],
          env: { FXGATE_TEST_BACKEND: 'embedded' },
        },
      },
      {
        test: {
          ...shared,
          globalSetup: [...shared.globalSetup, 'test/support/pgbouncer-setup.ts'],
          name: 'pgbouncer',
          include: PGBOUNCER_SUITES,
          env: { FXGATE_TEST_BACKEND: 'pgbouncer' },
        },
      },
      // It reads files only: the recordings folder is all its setup needs.
      {
        test: {
          ...shared,
          globalSetup: ['test/support/openapi-recordings-setup.ts'],
          name: 'openapi-coverage',
          include: [OPENAPI_COVERAGE],
          sequence: { groupOrder: 1 },
        },
      },
    ],
  },
});
