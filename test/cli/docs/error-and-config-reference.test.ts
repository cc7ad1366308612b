import { describe, expect, it } from 'vitest';

import { renderConfigTable, renderErrorReference } from '../../../src/cli/docs/error-and-config-reference.js';
import { configSchema } from '../../../src/lib/config.js';
import { ERROR_CODES } from '../../../src/lib/errors/v3-error-catalog.js';

describe('reference sections rendered from library sources', () => {
  it('the error reference has one row per catalog code', () => {
    const table = renderErrorReference();
    for (const code of ERROR_CODES) expect(table).toContain(`| \`${code}\` |`);
    expect(table.split('\n').filter((line) => /^\| \d{3} \|/.test(line))).toHaveLength(ERROR_CODES.length);
    expect(table).toContain('| 500 | `INTERNAL_ERROR` | INTERNAL_ERROR | RETRY_WITH_BACKOFF (reads), CHECK_STATE_THEN_RETRY (writes) | `resourceId` |');
  });

  it('the configuration table names every variable with its default', () => {
    const table = renderConfigTable();
    for (const name of Object.keys(configSchema.shape)) expect(table).toContain(`| \`${name}\` |`);
    expect(table).toContain('| `PORT` | `8080` |');
    expect(table).toContain('| `DATABASE_URL` | (unset) |');
  });
});
