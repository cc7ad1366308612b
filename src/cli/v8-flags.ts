/**
 * V8 settings for fxgate's processes, applied when this module is evaluated. It has no imports
 * of ours, so an entry point that imports it first (src/cli/main.ts, the bench's server entry)
 * sets them before any other module of the product has run: `npm start`, the `fxgate` bin and
 * the Docker image all get them without a node command-line flag each.
 *
 * `--no-allocation-site-pretenuring`. V8 watches which allocation sites' objects survive young
 * collections and, past a threshold, allocates that site's objects straight in the old space,
 * where only a mark-compact frees them. In the gateway the sites it picked include zod's parse
 * path, which runs at start-up over the configuration and the mapping tables (kept for good) and
 * then over every v3 answer (garbage within a millisecond): sampled with the inspector's heap
 * profiler, zod's parse output was the largest share of the bytes that outlived a scavenge, and
 * with the flag it no longer was. In two runs of `trade-get-half-peak` (README,
 * Benchmarks), one on V8's default and one with the flag, the gateway had 11 mark-compacts and 5
 * incremental-marking steps against 1 and none, and its scavenges of 1 ms or more took 376 ms in
 * all against 147; the core's mark-compacts went from 3 to 1. In a third run, on the default, two
 * of the v1 row's three bursts of slow requests began at a mark-compact of the gateway's.
 * Saturated throughput did not move.
 *
 * Node documents flags changed after start as unsupported in general; this one is read by the
 * garbage collector each time it weighs a site, so setting it before any of our code has
 * allocated is the same as passing it to node (test/cli/v8-flags.test.ts checks that it takes).
 */
import { setFlagsFromString } from 'node:v8';

const PROCESS_V8_FLAGS: readonly string[] = ['--no-allocation-site-pretenuring'];

for (const flag of PROCESS_V8_FLAGS) setFlagsFromString(flag);
