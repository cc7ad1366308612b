import { readFile } from 'node:fs/promises';
import { describe, expect, it } from 'vitest';
import { readmeSections } from '../../../src/cli/commands/docs.js';
import { configSchema } from '../../../src/lib/config.js';
import { MissingMarkerError, regenerateReadme, renderConfigTable, renderErrorReference } from '../../../src/lib/docs/reference.js';
import { ERROR_CODES } from '../../../src/lib/errors/catalog.js';

describe('generated README sections', () => {
  it('the committed README is what `npm run docs` generates', async () => {
    const readme = await readFile(new URL('../../../README.md', import.meta.url), 'utf8');
    expect(regenerateReadme(readme, await readmeSections()), 'README is stale: run `npm run docs`').toBe(readme);
  });

  it('the error reference has one row per catalog code', () => {
    const table = renderErrorReference();
    for (const code of ERROR_CODES) expect(table).toContain(`| \`${code}\` |`);
    expect(table.split('\n').filter((line) => /^\| \d{3} \|/.test(line))).toHaveLength(65);
    expect(table).toContain('| 500 | `INTERNAL_ERROR` | INTERNAL_ERROR | RETRY_WITH_BACKOFF (reads), CHECK_STATE_THEN_RETRY (writes) | `resourceId` |');
  });

  it('the configuration table names every variable with its default', () => {
    const table = renderConfigTable();
    for (const name of Object.keys(configSchema.shape)) expect(table).toContain(`| \`${name}\` |`);
    expect(table).toContain('| `PORT` | `8080` |');
    expect(table).toContain('| `DATABASE_URL` | (unset) |');
  });

  it('refuses a README without markers instead of dropping a section', () => {
    expect(() => regenerateReadme('# no markers')).toThrow(MissingMarkerError);
  });
});
