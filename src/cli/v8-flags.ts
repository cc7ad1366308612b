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
 * then over every v3 answer (garbage within a millisecond): zod's parse output was the largest
 * share of the bytes that outlived a scavenge. One run of `trade-get-half-peak` (README,
 * Benchmarks), gateway with the default: 11 mark-compacts and 5 incremental-marking steps, and
 * the v1 row's slowest requests clustered in the 30 to 40 ms after them; with it off: 1
 * mark-compact, and scavenges of 1 ms or more took 147 ms in all instead of 376. The core's
 * mark-compacts went from 3 to 1. Saturated throughput did not move.
 *
 * Node documents flags changed after start as unsupported in general; this one is read by the
 * garbage collector each time it weighs a site, so setting it before any of our code has
 * allocated is the same as passing it to node (test/cli/v8-flags.test.ts checks that it takes).
 */
import { setFlagsFromString } from 'node:v8';

export const PROCESS_V8_FLAGS: readonly string[] = ['--no-allocation-site-pretenuring'];

for (const flag of PROCESS_V8_FLAGS) setFlagsFromString(flag);
