/**
 * Reference sections rendered from library sources: the v3 error catalog (docs/v3-api.md) and
 * the configuration schema (the README's configuration table). The docs command places them in
 * their files (generated-files.ts); a test fails when a committed file differs from what would
 * be generated. Part of the CLI's docs command: reads the catalog and the schema, writes nothing.
 */
import { z } from 'zod';

import { configSchema } from '../../lib/config.js';
import { ERROR_CATALOG, ERROR_CODES, type ErrorCatalogRow } from '../../lib/errors/v3-error-catalog.js';

const escapeCell = (text: string) => text.replaceAll('|', '\\|').replaceAll('\n', ' ');

function detailsFields(row: ErrorCatalogRow): string {
  if (!(row.details instanceof z.ZodObject)) return '';
  const keys = Object.keys(row.details.shape);
  return keys.length === 0 ? '' : keys.map((key) => `\`${key}\``).join(', ');
}

function retryText(row: ErrorCatalogRow): string {
  const strategy = row.retryStrategy;
  return typeof strategy === 'string' ? strategy : `${strategy.read} (reads), ${strategy.write} (writes)`;
}

export function renderErrorReference(): string {
  const lines = [
    `The v3 catalog has ${ERROR_CODES.length} codes. Origin "spec": a code of the v3 contract as first published; "fxgate": a code fxgate added.`,
    '',
    '| HTTP | code | type | retryStrategy | details | origin | message |',
    '|---|---|---|---|---|---|---|',
  ];
  const rows = [...ERROR_CODES].sort((a, b) => ERROR_CATALOG[a].status - ERROR_CATALOG[b].status || a.localeCompare(b));
  for (const code of rows) {
    const row: ErrorCatalogRow = ERROR_CATALOG[code];
    lines.push(`| ${row.status} | \`${code}\` | ${row.type} | ${retryText(row)} | ${detailsFields(row)} | ${row.origin} | ${escapeCell(row.message)} |`);
  }
  return lines.join('\n');
}

function defaultOf(schema: z.ZodType): string {
  if (schema instanceof z.ZodDefault) {
    const value: unknown = schema.def.defaultValue;
    // A list default is shown as the variable would be written: comma-separated.
    const text = Array.isArray(value) ? value.join(',') : String(value);
    return text === '' ? '(empty)' : `\`${text}\``;
  }
  return '(unset)';
}

export function renderConfigTable(): string {
  const lines = ['| variable | default | meaning |', '|---|---|---|'];
  for (const [name, schema] of Object.entries(configSchema.shape)) {
    lines.push(`| \`${name}\` | ${defaultOf(schema)} | ${escapeCell(schema.description ?? '')} |`);
  }
  return lines.join('\n');
}
