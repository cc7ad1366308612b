/** `fxgate openapi` as commander declares it; the documents (commands/openapi.ts) are built when it runs. */
import type { Command } from 'commander';

import type { CliRun } from '../io.js';
import { SNAPSHOT_DIRECTORY } from '../repository.js';

export function registerOpenApiCommand(program: Command, run: CliRun): void {
  program
    .command('openapi')
    .description(
      `Check or rewrite the committed OpenAPI snapshots (${SNAPSHOT_DIRECTORY}/v3.json, v2.json, v1.json) from the documents the code generates, and the v3 client's types generated from v3.json.`,
    )
    .option(
      '--write',
      'rewrite every stale snapshot (npm run openapi); refused when it breaks clients, unless --accept-breaking',
    )
    .option('--check', 'write nothing; exit 1 naming every stale snapshot and what it breaks')
    .option('--accept-breaking', 'with --write: the breaking changes listed are on purpose')
    .option('--root <dir>', 'the repository checkout holding the snapshots (default: the one this fxgate runs from)')
    .addHelpText(
      'after',
      '\nBreaking: a removed operation or success response, a removed or no longer required response field, a widened response type, a narrowed input, a new required input.',
    )
    .action(async (options: { write?: boolean; check?: boolean; acceptBreaking?: boolean; root?: string }) =>
      (await import('../commands/openapi.js')).runOpenApiCommand(run, options),
    );
}
