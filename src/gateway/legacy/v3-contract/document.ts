/**
 * The published v3 OpenAPI document, the one source of what the gateway relies on in v3 (its
 * operations here, its records checked against it): docs/openapi/v3.json in a checkout run from
 * src/, its copy dist/assets/v3-openapi.json (package.json's build) beside the built code; the
 * migration guides (openapi/v3-snapshot.ts) take the same parsed JSON. Read once, at start-up,
 * synchronously (the operations are a constant); only the parts the gateway derives from are
 * checked. Part of the v3 contract room; reads that one file.
 */
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

import { z } from 'zod';

/** Where the document is, seen from this module's own URL (source or built layout). */
export function v3DocumentPath(moduleUrl: string = import.meta.url): string {
  return fileURLToPath(
    moduleUrl.endsWith('.ts')
      ? new URL('../../../../docs/openapi/v3.json', moduleUrl)
      : new URL('../../../assets/v3-openapi.json', moduleUrl),
  );
}

/** The error of a document that cannot be read, naming the fix. */
export function v3DocumentMissing(path: string, cause: unknown): Error {
  return new Error(
    `v3's OpenAPI snapshot is missing at ${path}: run \`npm run build\` (it copies docs/openapi/v3.json to dist/assets/), or \`npm run openapi\` in a checkout`,
    { cause },
  );
}

const jsonSchema = z.record(z.string(), z.unknown());

const operationShape = z.object({
  tags: z.array(z.string()).optional(),
  security: z.array(z.record(z.string(), z.array(z.string()))).optional(),
  parameters: z
    .array(z.union([z.object({ name: z.string(), in: z.string() }), z.object({ $ref: z.string() })]))
    .optional(),
  responses: z.record(
    z.string(),
    z.object({ content: z.record(z.string(), z.object({ schema: jsonSchema.optional() })).optional() }),
  ),
});
export type V3DocumentOperation = z.infer<typeof operationShape>;

const documentShape = z.object({
  openapi: z.string(),
  paths: z.record(z.string(), z.record(z.string(), z.unknown())),
  components: z.object({
    schemas: z.record(z.string(), jsonSchema),
    parameters: z.record(z.string(), z.object({ name: z.string(), in: z.string() })).optional(),
  }),
});
export type V3Document = z.infer<typeof documentShape>;

/** The HTTP methods of a path item (its other keys, parameters and summaries, are not operations). */
export const HTTP_METHODS = ['get', 'put', 'post', 'delete', 'options', 'head', 'patch', 'trace'] as const;

/** The operations of a document as [method in upper case, OpenAPI path, operation], in its order. */
export function documentOperations(document: V3Document): [string, string, V3DocumentOperation][] {
  return Object.entries(document.paths).flatMap(([path, item]) =>
    HTTP_METHODS.filter((method) => item[method] !== undefined).map((method): [string, string, V3DocumentOperation] => [
      method.toUpperCase(),
      path,
      operationShape.parse(item[method]),
    ]),
  );
}

/** An operation's parameters as name and place, a reference to a shared one resolved. */
export function parametersOf(
  document: V3Document,
  operation: V3DocumentOperation,
): { readonly name: string; readonly in: string }[] {
  return (operation.parameters ?? []).map((parameter) => {
    if (!('$ref' in parameter)) return parameter;
    const shared = document.components.parameters?.[parameter.$ref.replace('#/components/parameters/', '')];
    if (shared === undefined) throw new Error(`the v3 document refers to a parameter it lacks: ${parameter.$ref}`);
    return shared;
  });
}

/** A document as parsed JSON, checked for the parts the gateway reads. */
export function parseV3Document(value: unknown): V3Document {
  return documentShape.parse(value);
}

/** The document's JSON, unchecked; a file that cannot be read is v3DocumentMissing. */
export function readV3DocumentJson(path: string): unknown {
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (error) {
    throw v3DocumentMissing(path, error);
  }
  return JSON.parse(text);
}

/** The published document's JSON, read once at start-up for every reader of it (treat as read-only). */
export const PUBLISHED_V3_JSON: unknown = readV3DocumentJson(v3DocumentPath());

/** Reads the document. */
export function loadV3Document(path?: string): V3Document {
  return parseV3Document(path === undefined ? PUBLISHED_V3_JSON : readV3DocumentJson(path));
}

/** The document this process runs with, read at start-up. */
export const V3_DOCUMENT: V3Document = loadV3Document();
