/**
 * V8 settings for fxgate's processes, applied when this module is evaluated. It has no imports
 * of ours, so an entry point that imports it first (src/cli/main.ts, the bench's server entry)
 * sets them before any other module of the product has run: `npm start`, the `fxgate` bin and
 * the Docker image all get them without a node command-line flag each.
 *
 * `--no-allocation-site-pretenuring`: V8 allocates the objects of a site whose objects tend to
 * survive straight in the old space, where only a mark-compact frees them. zod's parse path
 * qualifies at start-up (the configuration and mapping tables are kept for good), then parses
 * every v3 answer, garbage within a millisecond: without the flag that garbage brings on the
 * mark-compacts the gateway's slowest requests wait behind.
 *
 * Node documents flags changed after start as unsupported in general; this one is read by the
 * garbage collector each time it weighs a site, so setting it before any of our code has
 * allocated is the same as passing it to node (test/cli/v8-flags.test.ts checks that it takes).
 *
 * Flags V8 reads only as it starts are in node-start-flags.ts.
 */
import { setFlagsFromString } from 'node:v8';

const PROCESS_V8_FLAGS: readonly string[] = ['--no-allocation-site-pretenuring'];

for (const flag of PROCESS_V8_FLAGS) setFlagsFromString(flag);
