/**
 * A PgBouncer for a bench case (BENCH_PGBOUNCER=1): the test support's throwaway PgBouncer in
 * front of the bench's PostgreSQL, in transaction pooling, stopped when the case ends, with a
 * CPU clock read from /proc so that a side-by-side case can say what a request cost it too.
 */
import { startThrowawayPgBouncer, type ThrowawayPgBouncer } from '../support/throwaway-pgbouncer.js';
import type { CpuClock } from './load.js';
import { processCpuMicros } from './process-cpu.js';
import type { CleanupStack } from './resources.js';
import type { BenchSettings } from './settings.js';

export interface BenchPgBouncer {
  readonly pgbouncer: ThrowawayPgBouncer;
  readonly clock: CpuClock;
}

export async function startBenchPgBouncer(
  settings: BenchSettings,
  cleanup: CleanupStack,
  poolSize: number,
): Promise<BenchPgBouncer> {
  const pgbouncer = await startThrowawayPgBouncer({
    serverUrl: settings.databaseUrl,
    poolMode: 'transaction',
    poolSize,
    // PgBouncer's own default: a row's server connections outlive the other rows' rounds, as a direct pool's do.
    serverIdleTimeoutSeconds: 600,
  });
  cleanup.defer(`stopping PgBouncer (pid ${pgbouncer.pid})`, () => pgbouncer.stop());
  console.error(`[bench] ${pgbouncer.description}`);
  return { pgbouncer, clock: { app: 'pgbouncer', cpuMicros: () => processCpuMicros(pgbouncer.pid) } };
}
