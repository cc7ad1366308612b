/**
 * `npm run bench`: runs every case of cases.ts (or those named in BENCH_CASES) one after the
 * other, each against its own server process(es), with autocannon in this process as the load
 * generator, and prints the report. Exits non-zero when any case failed (an exception, or any
 * request of a measured run without a 2xx answer), since its numbers would then mean nothing.
 *
 * Progress goes to stderr, the report to stdout.
 */
import os from 'node:os';

import { BARE_CASE, BENCH_CASES, type BenchCase, type CaseContext } from './cases.js';
import { buildServers, launchServer } from './launcher.js';
import { measure, probe } from './load.js';
import { type CaseReport, failuresOf, formatReport } from './report.js';
import { CleanupStack } from './resources.js';
import { type BenchSettings, readSettings } from './settings.js';

/** The cases of this run: those BENCH_CASES names (every one when unset), the PgBouncer ones only with BENCH_PGBOUNCER=1. */
function selectCases(filter: readonly string[], pgbouncer: boolean): readonly BenchCase[] {
  const unknown = filter.filter((name) => !BENCH_CASES.some((benchCase) => benchCase.name === name));
  if (unknown.length > 0)
    throw new Error(
      `BENCH_CASES names unknown cases: ${unknown.join(', ')} (known: ${BENCH_CASES.map((c) => c.name).join(', ')})`,
    );
  const gated = BENCH_CASES.filter((benchCase) => benchCase.needsPgBouncer && filter.includes(benchCase.name));
  if (!pgbouncer && gated.length > 0)
    throw new Error(
      `BENCH_CASES names ${gated.map((c) => c.name).join(', ')}, which start a PgBouncer: set BENCH_PGBOUNCER=1`,
    );
  return BENCH_CASES.filter(
    (benchCase) => (filter.length === 0 || filter.includes(benchCase.name)) && (pgbouncer || !benchCase.needsPgBouncer),
  );
}

function contextFor(settings: BenchSettings, cleanup: CleanupStack, reports: readonly CaseReport[]): CaseContext {
  return {
    settings,
    cleanup,
    earlierReport: (name) => reports.find((report) => report.name === name),
    async launch(app, config) {
      const server = await launchServer(app, config);
      cleanup.defer(`stopping the ${app} server (pid ${server.pid})`, () => server.stop());
      return server;
    },
  };
}

/** One case, start to cleanup; the servers are gone before the next case starts, so cases do not compete. */
async function runCase(
  benchCase: BenchCase,
  settings: BenchSettings,
  cleanup: CleanupStack,
  earlier: readonly CaseReport[],
): Promise<CaseReport> {
  const target = await benchCase.start(contextFor(settings, cleanup, earlier));
  await probe(target.url, target.plan);
  console.error(`[bench] ${benchCase.name}: warming up, then ${settings.durationSeconds} s measured`);
  const measurement = await measure(target.url, target.plan, settings);
  const servers = await Promise.all(
    target.servers.map(async (server) => ({ app: server.app, pid: server.pid, ...(await server.memory()) })),
  );
  return {
    name: benchCase.name,
    description: benchCase.description,
    targetRatioToBare: benchCase.targetRatioToBare,
    targetRate: benchCase.targetRate,
    rowComparisons: benchCase.rowComparisons ?? [],
    rssTarget: benchCase.rssTarget,
    addedLatencyTarget: benchCase.addedLatencyTarget,
    measurement,
    servers,
  };
}

async function main(): Promise<number> {
  const settings = readSettings();
  const cases = selectCases(settings.caseFilter, settings.pgbouncer);
  const loadAverage = os.loadavg();
  const reports: CaseReport[] = [];
  const errors: string[] = [];

  // An interrupted run still stops its servers, drops its database and deletes its Redis keys.
  let current: CleanupStack | null = null;
  for (const signal of ['SIGINT', 'SIGTERM'] as const) {
    process.once(signal, () => {
      console.error(`[bench] ${signal}: cleaning up`);
      void (current?.runAll() ?? Promise.resolve([])).finally(() => process.exit(signal === 'SIGINT' ? 130 : 143));
    });
  }

  console.error('[bench] compiling the servers');
  await buildServers();
  for (const benchCase of cases) {
    const cleanup = new CleanupStack();
    current = cleanup;
    console.error(`[bench] ${benchCase.name}: starting`);
    try {
      reports.push(await runCase(benchCase, settings, cleanup, reports));
    } catch (error) {
      errors.push(`${benchCase.name}: ${error instanceof Error ? error.message : String(error)}`);
      console.error(`[bench] ${benchCase.name} failed:`, error);
    } finally {
      current = null;
      for (const failure of await cleanup.runAll()) {
        errors.push(`${benchCase.name} cleanup: ${failure}`);
        console.error(`[bench] ${benchCase.name} cleanup failed: ${failure}`);
      }
    }
  }

  console.log(`\n${formatReport(reports, BARE_CASE, settings, loadAverage)}`);
  if (errors.length > 0) console.log(['', 'Errors:', ...errors.map((error) => `  ${error}`)].join('\n'));
  const failed = errors.length > 0 || reports.some((report) => failuresOf(report).length > 0);
  return failed ? 1 : 0;
}

main().then(
  (code) => process.exit(code),
  (error: unknown) => {
    console.error(error);
    process.exit(1);
  },
);
