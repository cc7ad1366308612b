/**
 * Serves the v3 reference on the core: GET /v3/openapi.json (no authentication; another method
 * is the v3 405) and the /docs page over it. The gateway passes /v3/openapi.json through like
 * any /v3 path. Part of the core; the page itself is lib's.
 */
import type { FastifyInstance } from 'fastify';

import { type MetricsRouteConfig, OPENAPI_DOCUMENT_OPERATION } from '../../lib/metrics/series.js';
import { documentPath } from '../../lib/openapi/document.js';
import { registerReferencePage } from '../../lib/openapi/reference-page.js';
import type { Operation } from '../http/operation.js';
import { registerMethodNotAllowedRoutes } from '../http/routing.js';
import { buildV3Document } from './v3-document.js';

/** The path of the v3 document. */
export const V3_DOCUMENT_PATH = documentPath('v3');

export async function registerV3Reference(app: FastifyInstance, operations: readonly Operation[]): Promise<void> {
  // Built on the first request, then kept: most processes are never asked, and a build takes a tenth of a second.
  let body: string | null = null;
  const config: MetricsRouteConfig = { metricsOperation: OPENAPI_DOCUMENT_OPERATION };
  app.get(V3_DOCUMENT_PATH, { config }, async (_request, reply) => {
    body ??= JSON.stringify(buildV3Document(operations));
    return reply.header('content-type', 'application/json; charset=utf-8').send(body);
  });
  registerMethodNotAllowedRoutes(app, [{ method: 'GET', path: V3_DOCUMENT_PATH }]);
  await registerReferencePage(app, { documents: [{ title: 'v3', url: V3_DOCUMENT_PATH }] });
}
