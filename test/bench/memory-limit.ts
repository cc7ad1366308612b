/**
 * BENCH_SERVER_MEMORY_MB: each server process in a memory cgroup of its own with that limit, as
 * a container with a memory limit runs it. Node sizes V8's heap from the memory the process may
 * use (the cgroup's limit, else the machine's), the young generation included, and the young
 * generation is most of a busy server's RSS: without a limit, the figures are those of a process
 * that may have the whole machine, not of one deployed with a limit.
 *
 * Needs a writable memory cgroup (Linux, root): cgroup v2 (`memory.max`) or v1's memory
 * controller (`memory.limit_in_bytes`). The server joins it before node starts (a shell writes
 * its own pid, then execs node), since V8 reads the limit once, when the process starts.
 */
import { existsSync, readFileSync } from 'node:fs';
import { mkdir, rmdir, writeFile } from 'node:fs/promises';

const CGROUP_ROOT = '/sys/fs/cgroup';

/** The memory limit of one server process: its command wrapped to join the cgroup, and its removal. */
export interface ServerMemoryLimit {
  readonly command: string;
  readonly args: readonly string[];
  /** Removes the cgroup; call once the process has exited (a cgroup with a process cannot go). */
  release(): Promise<void>;
}

/** BENCH_SERVER_MEMORY_MB in bytes, or undefined when unset. */
export function serverMemoryLimitBytes(): number | undefined {
  const text = process.env.BENCH_SERVER_MEMORY_MB;
  if (text === undefined || text === '') return undefined;
  const megabytes = Number(text);
  if (!Number.isInteger(megabytes) || megabytes < 64)
    throw new Error(
      `BENCH_SERVER_MEMORY_MB must be a whole number of megabytes, 64 or more, not ${JSON.stringify(text)}`,
    );
  return megabytes * 1024 * 1024;
}

/** Where memory cgroups are made, and the file that sets a group's limit. */
function memoryHierarchy(): { readonly parent: string; readonly limitFile: string } {
  const v2Controllers = `${CGROUP_ROOT}/cgroup.controllers`;
  if (existsSync(v2Controllers) && readFileSync(v2Controllers, 'utf8').split(/\s+/).includes('memory'))
    return { parent: CGROUP_ROOT, limitFile: 'memory.max' };
  if (existsSync(`${CGROUP_ROOT}/memory/memory.limit_in_bytes`))
    return { parent: `${CGROUP_ROOT}/memory`, limitFile: 'memory.limit_in_bytes' };
  throw new Error(
    `BENCH_SERVER_MEMORY_MB needs a memory cgroup, and ${CGROUP_ROOT} has neither cgroup v2's memory controller nor v1's: unset it, or run on Linux with one`,
  );
}

let groups = 0;

/** Makes the server's cgroup with the limit and wraps `node args` to start inside it. */
export async function limitServerMemory(
  app: string,
  limitBytes: number,
  node: string,
  args: readonly string[],
): Promise<ServerMemoryLimit> {
  const { parent, limitFile } = memoryHierarchy();
  groups += 1;
  const group = `${parent}/fxgate-bench-${process.pid}-${groups}-${app}`;
  try {
    await mkdir(group);
    await writeFile(`${group}/${limitFile}`, String(limitBytes));
  } catch (error) {
    await rmdir(group).catch(() => undefined);
    throw new Error(
      `BENCH_SERVER_MEMORY_MB: could not make the memory cgroup ${group} (${(error as Error).message}); it needs root`,
    );
  }
  return {
    command: '/bin/sh',
    // $0 is the group's procs file, "$@" the node command: the shell joins, then becomes node.
    args: ['-c', 'echo $$ > "$0" && exec "$@"', `${group}/cgroup.procs`, node, ...args],
    release: () => rmdir(group).catch(() => undefined),
  };
}
