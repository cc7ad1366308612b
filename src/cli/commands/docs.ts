/**
 * `fxgate docs`: regenerates (`--write`, `npm run docs`) or checks (`--check`) the generated
 * sections of the manual: the README's configuration table, docs/v3-api.md (the v3 operations
 * and the error catalog), docs/legacy-api.md (the legacy operations, records, errors and
 * webhooks), the migration guides docs/migrate-v1-to-v2.md and docs/migrate-v2-to-v3.md (from
 * the same declarations and the core's v3 document), the currencies' decimals in
 * docs/legacy-gateway.md (from the migrations' seed) and the generated part of CHANGELOG.md.
 * Each file names its sections here; the
 * mechanism is src/cli/docs/generated-files.ts. Works on the checkout it runs from, whatever the
 * working folder (`--root` names another); reads the declarations and writes only the files it
 * names.
 */
import { coreV3Document } from '../../core/openapi/declared-operations.js';
import { renderV3ApiReference } from '../../core/openapi/v3-reference.js';
import { loadLegacyMappings } from '../../gateway/legacy/declarations/mappings-loader.js';
import { renderGenerationChangelog } from '../../gateway/legacy/generated-docs/changelog.js';
import {
  renderLegacyErrors,
  renderLegacyOperations,
  renderLegacyRecords,
} from '../../gateway/legacy/generated-docs/legacy-reference.js';
import {
  guideFile,
  guideSection,
  MIGRATION_GUIDES,
  renderMigrationGuide,
} from '../../gateway/legacy/generated-docs/migration-guides.js';
import { renderLegacyWebhooks } from '../../gateway/webhooks/webhook-reference.js';
import { CliError, EXIT_CODES } from '../../lib/errors/internal-errors.js';
import { renderCurrencyDecimals, seededCurrencyDecimals } from '../docs/currency-decimals.js';
import { renderConfigTable, renderErrorReference } from '../docs/error-and-config-reference.js';
import { type GeneratedFile, isStale, renderGeneratedFiles, writeGeneratedFiles } from '../docs/generated-files.js';
import type { CliRun } from '../io.js';
import { checkoutRoot, missingFiles } from '../repository.js';

/** Every file with generated sections, by its path from the repository root, and what each section is rendered from. */
export async function generatedFiles(): Promise<GeneratedFile[]> {
  const [mappings, currencies] = await Promise.all([loadLegacyMappings(), seededCurrencyDecimals()]);
  return [
    { path: 'README.md', sections: { config: renderConfigTable } },
    {
      path: 'docs/v3-api.md',
      sections: {
        'v3-operations': () => renderV3ApiReference(),
        errors: renderErrorReference,
      },
    },
    {
      path: 'docs/legacy-api.md',
      sections: {
        'legacy-operations': () => renderLegacyOperations(mappings),
        'legacy-records': () => renderLegacyRecords(mappings),
        'legacy-errors': () => renderLegacyErrors(mappings),
        'legacy-webhooks': () => renderLegacyWebhooks(mappings),
      },
    },
    { path: 'docs/legacy-gateway.md', sections: { 'currency-decimals': () => renderCurrencyDecimals(currencies) } },
    ...MIGRATION_GUIDES.map((guide) => ({
      path: guideFile(guide),
      sections: { [guideSection(guide)]: () => renderMigrationGuide(guide, mappings, coreV3Document()) },
    })),
    { path: 'CHANGELOG.md', sections: { generations: () => renderGenerationChangelog(mappings) } },
  ];
}

/** `fxgate docs --write | --check` (declared in definitions/docs.ts). */
export async function runDocsCommand(
  run: CliRun,
  options: { write?: boolean; check?: boolean; root?: string },
): Promise<void> {
  if (options.write === options.check) throw new CliError('give exactly one of --write and --check', EXIT_CODES.usage);
  const root = options.root === undefined ? checkoutRoot('docs') : run.path(options.root);
  const files = await generatedFiles();
  const missing = missingFiles(
    root,
    files.map((file) => file.path),
  );
  if (missing.length > 0)
    throw new CliError(
      `${root} has no ${missing.join(', ')}: give --root a checkout of the fxgate repository`,
      EXIT_CODES.usage,
    );
  const states = await renderGeneratedFiles(root, files);
  if (options.write) {
    const written = new Set((await writeGeneratedFiles(root, states)).map((state) => state.path));
    for (const state of states) run.out(`${state.path}: ${written.has(state.path) ? 'regenerated' : 'up to date'}`);
    return;
  }
  const stale = states.filter(isStale);
  for (const state of states) run.out(`${state.path}: ${isStale(state) ? 'stale' : 'up to date'}`);
  if (stale.length > 0)
    throw new CliError(
      `${stale.map((state) => state.path).join(', ')} ${stale.length === 1 ? 'is' : 'are'} stale: run \`npm run docs\``,
      EXIT_CODES.failure,
    );
}
