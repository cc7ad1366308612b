/** `fxgate docs` as commander declares it; the renderers (commands/docs.ts) are imported when it runs. */
import type { Command } from 'commander';

import type { CliRun } from '../io.js';

export function registerDocsCommand(program: Command, run: CliRun): void {
  program
    .command('docs')
    .description(
      'Regenerate or check the generated sections of the manual: the configuration table of README.md, docs/v3-api.md, docs/legacy-api.md and the generated part of CHANGELOG.md, rendered from the configuration schema, the v3 operation declarations, the error catalog and mappings/.',
    )
    .option('--write', 'rewrite every stale generated section in place (npm run docs)')
    .option('--check', 'write nothing; exit 1 naming every file whose generated sections are stale')
    .option('--root <dir>', 'the repository checkout holding the files (default: the one this fxgate runs from)')
    .addHelpText(
      'after',
      '\nText outside the <!-- generated:NAME --> and <!-- /generated:NAME --> markers is written by hand and kept.',
    )
    .action(async (options: { write?: boolean; check?: boolean; root?: string }) =>
      (await import('../commands/docs.js')).runDocsCommand(run, options),
    );
}
