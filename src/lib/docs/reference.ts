/**
 * Reference sections of the README generated from their single sources: the error catalog and
 * the configuration schema. `npm run docs` rewrites them in place between markers; a test fails
 * when the committed README differs from what would be generated.
 */
import { z } from 'zod';
import { configSchema } from '../config.js';
import { ERROR_CATALOG, ERROR_CODES, type ErrorCatalogRow } from '../errors/catalog.js';

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
    `The v3 catalog has ${ERROR_CODES.length} codes. "spec" codes are named by the interface spec; "fxgate" codes are ours (DESIGN 3.2).`,
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

export const GENERATED_SECTIONS = {
  errors: renderErrorReference,
  config: renderConfigTable,
} as const;

/** A README section: its marker name and how to render it. */
export type SectionRenderers = Readonly<Record<string, () => string>>;

export class MissingMarkerError extends Error {
  readonly code = 'FXGATE_DOCS_MARKER_MISSING';
  constructor(readonly section: string) {
    super(`README has no <!-- generated:${section} --> ... <!-- /generated:${section} --> markers`);
    this.name = 'MissingMarkerError';
  }
}

/**
 * Returns the README with every generated section replaced by its current rendering. The
 * gateway adds its own sections (the legacy reference), which this library module cannot import.
 */
export function regenerateReadme(readme: string, sections: SectionRenderers = GENERATED_SECTIONS): string {
  let out = readme;
  for (const [section, render] of Object.entries(sections)) {
    const start = `<!-- generated:${section} -->`;
    const end = `<!-- /generated:${section} -->`;
    const from = out.indexOf(start);
    const to = out.indexOf(end);
    if (from === -1 || to === -1 || to < from) throw new MissingMarkerError(section);
    out = `${out.slice(0, from + start.length)}\n${render()}\n${out.slice(to)}`;
  }
  return out;
}
