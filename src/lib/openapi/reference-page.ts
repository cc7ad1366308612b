/**
 * The API reference page, `/docs`: Scalar's standalone renderer (`@scalar/api-reference`),
 * served by this process from its own files (no CDN), over the OpenAPI documents the process
 * serves, one entry per generation. Every answer carries a Content-Security-Policy that allows
 * only this origin: scripts are files (no inline script; the page's configuration is a JSON
 * data block the browser never runs), and the renderer's inline styles are the one allowance.
 * Part of lib: the core and the gateway mount it on their own apps.
 */
import { createReadStream, existsSync } from 'node:fs';
import { stat } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

import type { FastifyInstance, FastifyReply } from 'fastify';

export const REFERENCE_PAGE_PATH = '/docs';
const RENDERER_PATH = `${REFERENCE_PAGE_PATH}/scalar.js`;
const INIT_PATH = `${REFERENCE_PAGE_PATH}/init.js`;

/** Only this origin; inline styles because the renderer injects its own stylesheets at run time. */
export const REFERENCE_PAGE_CSP = [
  "default-src 'self'",
  "script-src 'self'",
  "style-src 'self' 'unsafe-inline'",
  "img-src 'self' data:",
  "font-src 'self' data:",
  "connect-src 'self'",
  "object-src 'none'",
  "base-uri 'none'",
  "form-action 'none'",
  "frame-ancestors 'none'",
].join('; ');

export interface ReferenceDocument {
  /** Shown in the page's document selector, e.g. `v3`. */
  readonly title: string;
  /** Where the process serves the document, e.g. `/v3/openapi.json`. */
  readonly url: string;
}

export interface ReferencePageOptions {
  /** In the order the selector lists them; the first is shown. */
  readonly documents: readonly ReferenceDocument[];
}

/**
 * The renderer's standalone bundle. A build copies it to `dist/assets/` (the renderer is a dev
 * dependency: its package tree is large and the page needs this one file); run from the sources,
 * it is read from node_modules.
 */
export function rendererBundlePath(): string {
  const built = fileURLToPath(new URL('../../assets/scalar-standalone.js', import.meta.url));
  if (existsSync(built)) return built;
  try {
    const main = createRequire(import.meta.url).resolve('@scalar/api-reference');
    return join(dirname(main), 'browser', 'standalone.js');
  } catch (error) {
    throw new Error(
      'the /docs renderer is missing: run `npm run build` (it copies it to dist/assets/), or `npm ci` in a checkout',
      { cause: error },
    );
  }
}

/** The page's own script: reads the JSON data block and starts the renderer with it. */
const INIT_SCRIPT = `'use strict';
(function () {
  var config = JSON.parse(document.getElementById('fxgate-reference-config').textContent);
  window.Scalar.createApiReference('#fxgate-reference', {
    sources: config.sources,
    showDeveloperTools: 'never',
    hideClientButton: true,
    withDefaultFonts: false,
    telemetry: false,
    agent: { disabled: true },
    mcp: { disabled: true },
    documentDownloadType: 'json'
  });
})();
`;

/** JSON safe inside a <script> element: no `<` can close it. */
function scriptJson(value: unknown): string {
  return JSON.stringify(value).replaceAll('<', '\\u003c');
}

function escapeHtml(text: string): string {
  return text.replaceAll('&', '&amp;').replaceAll('<', '&lt;').replaceAll('>', '&gt;').replaceAll('"', '&quot;');
}

export function referencePageHtml(options: ReferencePageOptions): string {
  const sources = options.documents.map((document, index) => ({
    title: document.title,
    slug: document.title,
    url: document.url,
    default: index === 0,
  }));
  const links = options.documents
    .map((document) => `<a href="${escapeHtml(document.url)}">${escapeHtml(document.title)}</a>`)
    .join(' · ');
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>fxgate API reference</title>
<link rel="icon" href="data:,">
</head>
<body>
<noscript>This reference needs JavaScript. The OpenAPI documents: ${links}</noscript>
<div id="fxgate-reference"></div>
<script id="fxgate-reference-config" type="application/json">${scriptJson({ sources })}</script>
<script src="${RENDERER_PATH}"></script>
<script src="${INIT_PATH}"></script>
</body>
</html>
`;
}

function secured(reply: FastifyReply, contentType: string): FastifyReply {
  return reply
    .header('content-type', contentType)
    .header('content-security-policy', REFERENCE_PAGE_CSP)
    .header('x-content-type-options', 'nosniff')
    .header('referrer-policy', 'no-referrer');
}

/** Mounts `/docs` and its two scripts; the renderer's bundle is found now, so a missing one stops start-up. */
export async function registerReferencePage(app: FastifyInstance, options: ReferencePageOptions): Promise<void> {
  const bundle = rendererBundlePath();
  await stat(bundle);
  const html = referencePageHtml(options);
  app.get(REFERENCE_PAGE_PATH, async (_request, reply) =>
    secured(reply, 'text/html; charset=utf-8').header('cache-control', 'no-cache').send(html),
  );
  app.get(INIT_PATH, async (_request, reply) =>
    secured(reply, 'text/javascript; charset=utf-8').header('cache-control', 'no-cache').send(INIT_SCRIPT),
  );
  app.get(RENDERER_PATH, async (_request, reply) =>
    secured(reply, 'text/javascript; charset=utf-8')
      .header('cache-control', 'public, max-age=3600')
      .send(createReadStream(bundle)),
  );
}

/** The paths registerReferencePage serves, for the route inventories. */
export const REFERENCE_PAGE_ROUTES = [REFERENCE_PAGE_PATH, INIT_PATH, RENDERER_PATH] as const;
