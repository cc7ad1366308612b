/**
 * v3's published OpenAPI document as the gateway reads it: the snapshot `npm run openapi` writes
 * to docs/openapi/v3.json (a test keeps it equal to what the core serves). The gateway knows v3
 * through its contract only, never the core's code, so the migration guides it serves are
 * generated from this file, found where the v3 contract reads it (legacy/v3-contract/document.ts).
 * Reads that one file.
 */
import { readFile } from 'node:fs/promises';

import type { OpenApiDocument } from '../../lib/openapi/document.js';
import { v3DocumentMissing, v3DocumentPath } from '../legacy/v3-contract/document.js';

/** The snapshot, parsed; a missing or broken file stops start-up with the fix named. */
export async function loadV3Snapshot(path: string = v3DocumentPath()): Promise<OpenApiDocument> {
  let text: string;
  try {
    text = await readFile(path, 'utf8');
  } catch (error) {
    throw v3DocumentMissing(path, error);
  }
  const document = JSON.parse(text) as OpenApiDocument;
  if (typeof document.openapi !== 'string' || typeof document.paths !== 'object')
    throw new Error(`${path} is not an OpenAPI document: run \`npm run openapi\` to write it again`);
  return document;
}
