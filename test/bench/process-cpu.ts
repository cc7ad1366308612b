/**
 * CPU time of processes the bench did not start as bench servers, read from Linux's /proc: the
 * PgBouncer a case runs, and the PostgreSQL server processes serving a case's database. A
 * side-by-side case reads them around every round as it reads its servers' (load.ts CpuClock).
 */
import { execFileSync } from 'node:child_process';
import { readFile } from 'node:fs/promises';

import pg from 'pg';

import type { CpuClock } from './load.js';

let ticksPerSecond: number | undefined;

/** The kernel's clock ticks per second, which /proc counts CPU time in. */
function clockTicks(): number {
  ticksPerSecond ??= Number(execFileSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }).trim());
  return ticksPerSecond;
}

/** User and system time of a process so far, in microseconds (fields 14 and 15 of /proc/<pid>/stat); 0 once it has exited. */
export async function processCpuMicros(pid: number): Promise<number> {
  let stat: string;
  try {
    stat = await readFile(`/proc/${pid}/stat`, 'utf8');
  } catch {
    return 0;
  }
  // The command name (field 2) is in parentheses and may hold spaces: count the fields after it.
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return ((Number(fields[11]) + Number(fields[12])) / clockTicks()) * 1_000_000;
}

/**
 * The PostgreSQL server processes connected to one database, summed: what its statements cost
 * the server. The processes are looked up at every reading, through `adminUrl`'s own database;
 * one that ends between two readings takes its time with it, which a pool's long-lived
 * connections make rare.
 */
export function postgresClock(app: string, adminUrl: string, database: string): CpuClock {
  return {
    app,
    async cpuMicros() {
      const client = new pg.Client({ connectionString: adminUrl });
      await client.connect();
      try {
        const { rows } = await client.query<{ pid: number }>('SELECT pid FROM pg_stat_activity WHERE datname = $1', [
          database,
        ]);
        let micros = 0;
        for (const { pid } of rows) micros += await processCpuMicros(pid);
        return micros;
      } finally {
        await client.end();
      }
    },
  };
}
