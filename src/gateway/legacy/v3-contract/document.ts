/**
 * The published v3 OpenAPI document, the one source of what the gateway relies on in v3 (its
 * operations here, its records checked against it): docs/openapi/v3.json in a checkout run from
 * src/, its copy dist/assets/v3-openapi.json (package.json's build) beside the built code, found
 * as the migration guides find it (openapi/v3-snapshot.ts). Read once, at start-up, synchronously
 * (the operations are a constant); only the parts the gateway derives from are checked. Part of
 * the v3 contract room; reads that one file.
 */
import { readFileSync } from 'node:fs';

import { z } from 'zod';

import { v3SnapshotMissing, v3SnapshotPath } from '../../openapi/v3-snapshot.js';

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

/** Reads the document, where the gateway's snapshot of it is (openapi/v3-snapshot.ts). */
export function loadV3Document(path: string = v3SnapshotPath()): V3Document {
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (error) {
    throw v3SnapshotMissing(path, error);
  }
  return parseV3Document(JSON.parse(text));
}

/** The document this process runs with, read at start-up. */
export const V3_DOCUMENT: V3Document = loadV3Document();
