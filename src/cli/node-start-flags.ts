/**
 * The V8 flags node must be given as it starts, since V8 reads them only when it sets its heap
 * up, before any module runs (the rest are set by v8-flags.ts). A module cannot give them to its
 * own process, so they are written where node is started: the bin's first line
 * (src/cli/main.ts), `npm start`, the Docker image's ENTRYPOINT and the bench's servers;
 * test/cli/node-start-flags.test.ts and test/dockerfile.test.ts check them against this list.
 * No imports and no effects: the bench's load process reads it too.
 *
 * `--max-semi-space-size=16`: each half of the young generation 16 MB at most, the size Node
 * 20's V8 used on any machine. Node 24's V8 sizes it from the memory the process may use: from
 * the machine's when nothing limits it, where under load it grows until it is most of the RSS,
 * and from the container's limit when one is set, where at 512 MiB it stays so small that
 * scavenges, and the promotions they cause, add over 40% to a read's CPU
 * (docs/benchmarks.md#memory).
 */
export const NODE_START_FLAGS: readonly string[] = ['--max-semi-space-size=16'];
