/**
 * v3's published OpenAPI document as the gateway reads it: the snapshot `npm run openapi` writes
 * to docs/openapi/v3.json (a test keeps it equal to what the core serves). The gateway knows v3
 * through its contract only, never the core's code, so the migration guides it serves are
 * generated from this file. Running from source it is read at docs/openapi/v3.json; built, the
 * build copies it to dist/assets/v3-openapi.json. Reads that one file.
 */
import { readFile } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';

import type { OpenApiDocument } from '../../lib/openapi/document.js';

/** Where the snapshot is, seen from this module's own URL (source or built layout). */
export function v3SnapshotPath(moduleUrl: string = import.meta.url): string {
  return fileURLToPath(
    moduleUrl.endsWith('.ts')
      ? new URL('../../../docs/openapi/v3.json', moduleUrl)
      : new URL('../../assets/v3-openapi.json', moduleUrl),
  );
}

/** The error of a snapshot that cannot be read, naming the fix. */
export function v3SnapshotMissing(path: string, cause: unknown): Error {
  return new Error(
    `v3's OpenAPI snapshot is missing at ${path}: run \`npm run build\` (it copies docs/openapi/v3.json to dist/assets/), or \`npm run openapi\` in a checkout`,
    { cause },
  );
}

/** The snapshot, parsed; a missing or broken file stops start-up with the fix named. */
export async function loadV3Snapshot(path: string = v3SnapshotPath()): Promise<OpenApiDocument> {
  let text: string;
  try {
    text = await readFile(path, 'utf8');
  } catch (error) {
    throw v3SnapshotMissing(path, error);
  }
  const document = JSON.parse(text) as OpenApiDocument;
  if (typeof document.openapi !== 'string' || typeof document.paths !== 'object')
    throw new Error(`${path} is not an OpenAPI document: run \`npm run openapi\` to write it again`);
  return document;
}
