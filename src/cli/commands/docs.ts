/**
 * `fxgate docs`: regenerates (`--write`) or checks (`--check`) the README sections generated
 * from the error catalog, the configuration schema and the legacy mapping tables. Runs from a checkout.
 */
import { readFile, writeFile } from 'node:fs/promises';
import type { Command } from 'commander';
import { renderLegacyErrors, renderLegacyOperations, renderLegacyRecords } from '../../gateway/legacy/legacy-reference.js';
import { loadLegacyMappings } from '../../gateway/legacy/mappings-loader.js';
import { renderLegacyWebhooks } from '../../gateway/webhooks/webhook-reference.js';
import { GENERATED_SECTIONS, regenerateReadme, type SectionRenderers } from '../../lib/docs/reference.js';
import { CliError, EXIT_CODES } from '../exit.js';

/** Every generated section: the library's (errors, configuration) and the gateway's legacy reference. */
export async function readmeSections(): Promise<SectionRenderers> {
  const mappings = await loadLegacyMappings();
  return {
    ...GENERATED_SECTIONS,
    'legacy-operations': () => renderLegacyOperations(mappings),
    'legacy-records': () => renderLegacyRecords(mappings),
    'legacy-errors': () => renderLegacyErrors(mappings),
    'legacy-webhooks': () => renderLegacyWebhooks(mappings),
  };
}

export function registerDocsCommand(program: Command): void {
  program
    .command('docs')
    .description('Regenerate or check the README sections generated from the error catalog, the configuration schema and the legacy mapping tables.')
    .option('--readme <file>', 'the README to update', 'README.md')
    .option('--write', 'rewrite the generated sections in place')
    .option('--check', 'exit 1 when the generated sections are stale')
    .action(async (options: { readme: string; write?: boolean; check?: boolean }) => {
      if (options.write === options.check) throw new CliError('give exactly one of --write and --check', EXIT_CODES.usage);
      const current = await readFile(options.readme, 'utf8');
      const generated = regenerateReadme(current, await readmeSections());
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
