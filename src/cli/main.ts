#!/usr/bin/env -S node --max-semi-space-size=16
/**
 * fxgate's command line as a process (the `fxgate` bin, `npm start`, the Docker image): the
 * commands of src/cli/program.ts run on the process's own streams, environment, folder and
 * signals. Every command reads the configuration from the environment and, when DATABASE_URL and
 * REDIS_URL are unset, runs on the embedded defaults in FXGATE_DATA_DIR. On a Node outside
 * package.json's engines it first warns on stderr (node-support.ts), then runs all the same.
 */
// First: it sets V8 flags that must hold before any other module allocates. Those V8 reads only as
// it starts (node-start-flags.ts) are on the first line, as wherever node starts fxgate.
import './v8-flags.js';

import { EXIT_CODES } from '../lib/errors/internal-errors.js';
import { processIo } from './io.js';
import { enginesNodeRange, unsupportedNodeWarning } from './node-support.js';
import { runCli } from './program.js';

const nodeWarning = unsupportedNodeWarning(process.version, enginesNodeRange());
if (nodeWarning !== null) process.stderr.write(`${nodeWarning}\n`);
process.exitCode = await runCli(process.argv.slice(2), processIo());
// A failed run has said why and closed what it opened: nothing it left behind (a half-closed
// pool, a retrying client) may keep the process up. A server's run goes on until its signal.
if (process.exitCode !== EXIT_CODES.ok) process.exit();
