/**
 * v3's published OpenAPI document as the gateway reads it: the snapshot `npm run openapi` writes
 * to docs/openapi/v3.json (a test keeps it equal to what the core serves). The gateway knows v3
 * through its contract only, never the core's code, so the migration guides it serves are
 * generated from this file, found where the v3 contract reads it (legacy/v3-contract/document.ts).
 * Reads that one file.
 */
import type { OpenApiDocument } from '../../lib/openapi/document.js';
import { PUBLISHED_V3_JSON, readV3DocumentJson, v3DocumentPath } from '../legacy/v3-contract/document.js';

/** The snapshot, parsed (the published one as the v3 contract read it); a missing or broken file stops start-up with the fix named. */
export async function loadV3Snapshot(path?: string): Promise<OpenApiDocument> {
  const document = (path === undefined ? PUBLISHED_V3_JSON : readV3DocumentJson(path)) as OpenApiDocument;
  if (typeof document.openapi !== 'string' || typeof document.paths !== 'object')
    throw new Error(
      `${path ?? v3DocumentPath()} is not an OpenAPI document: run \`npm run openapi\` to write it again`,
    );
  return document;
}
