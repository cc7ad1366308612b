/**
 * `fxgate docs`: regenerates (`--write`) or checks (`--check`) the README sections generated
 * from the error catalog and the configuration schema. Runs from a checkout.
 */
import { readFile, writeFile } from 'node:fs/promises';
import type { Command } from 'commander';
import { regenerateReadme } from '../../lib/docs/reference.js';
import { CliError, EXIT_CODES } from '../exit.js';

export function registerDocsCommand(program: Command): void {
  program
    .command('docs')
    .description('Regenerate or check the README sections generated from the error catalog and the configuration schema.')
    .option('--readme <file>', 'the README to update', 'README.md')
    .option('--write', 'rewrite the generated sections in place')
    .option('--check', 'exit 1 when the generated sections are stale')
    .action(async (options: { readme: string; write?: boolean; check?: boolean }) => {
      if (options.write === options.check) throw new CliError('give exactly one of --write and --check', EXIT_CODES.usage);
      const current = await readFile(options.readme, 'utf8');
      const generated = regenerateReadme(current);
      if (options.write) {
        await writeFile(options.readme, generated);
        console.log(generated === current ? `${options.readme}: up to date` : `${options.readme}: regenerated`);
      } else if (generated !== current) {
        throw new CliError(`${options.readme} is stale: run \`npm run docs\``, EXIT_CODES.failure);
      } else {
        console.log(`${options.readme}: up to date`);
      }
    });
}
