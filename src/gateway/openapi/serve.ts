/**
 * Serves the reference on the gateway: GET /v2/openapi.json and /v1/openapi.json (no
 * authentication, each with its generation's headers; another method is that generation's
 * "Route not found", from the legacy routes' fallback), and the /docs page over the three
 * documents (v3's through the /v3 passthrough). A gateway without the legacy generations lists
 * v3 only; with them, the migration guides too (migration-guide-pages.ts). Part of the gateway;
 * the page itself is lib's.
 */
import type { FastifyInstance } from 'fastify';

import { type MetricsRouteConfig, OPENAPI_DOCUMENT_OPERATION } from '../../lib/metrics/series.js';
import { documentPath, type Generation } from '../../lib/openapi/document.js';
import { registerReferencePage } from '../../lib/openapi/reference-page.js';
import { randomHex } from '../../lib/random.js';
import { LEGACY_GENERATIONS } from '../legacy/declarations/legacy-operations.js';
import type { LegacyMappings } from '../legacy/declarations/mappings-loader.js';
import { generationHeaders, type LegacyReplyOptions } from '../legacy/runtime/reply.js';
import { buildLegacyDocument } from './legacy-document.js';
import { registerMigrationGuides } from './migration-guide-pages.js';
import { loadV3Snapshot } from './v3-snapshot.js';

export interface GatewayReferenceOptions {
  readonly mappings: LegacyMappings;
  /** Whether this gateway serves v1 and v2; without them only v3 is listed. */
  readonly legacy: boolean;
  /** The deprecation headers each generation's answers carry. */
  readonly reply: LegacyReplyOptions;
}

export async function registerGatewayReference(app: FastifyInstance, options: GatewayReferenceOptions): Promise<void> {
  const generations: Generation[] = ['v3'];
  if (options.legacy) {
    const config: MetricsRouteConfig = { metricsOperation: OPENAPI_DOCUMENT_OPERATION };
    for (const generation of LEGACY_GENERATIONS) {
      // Built now: the declarations are validated already, and a broken document should stop start-up like a broken table.
      const body = JSON.stringify(buildLegacyDocument(options.mappings, generation));
      app.get(documentPath(generation), { config }, async (request, reply) =>
        reply
          .headers({
            'x-request-id': request.id,
            'x-trace-id': randomHex(16),
            ...generationHeaders(generation, options.reply),
          })
          .header('content-type', 'application/json; charset=utf-8')
          .send(body),
      );
    }
    registerMigrationGuides(app, options.mappings, await loadV3Snapshot());
    generations.push('v2', 'v1');
  }
  await registerReferencePage(app, {
    documents: generations.map((generation) => ({ title: generation, url: documentPath(generation) })),
  });
}
