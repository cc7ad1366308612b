/**
 * Serves the migration guides as HTML beside /docs: `/docs/migrate/v1-to-v2` and
 * `/docs/migrate/v2-to-v3`, rendered once when the gateway starts (marked, GitHub-flavoured
 * Markdown) from the Markdown legacy/generated-docs/migration-guides.ts generates, which docs/migrate-*.md hold
 * too. The page has no script at all, and its one stylesheet is inline and allowed by its hash,
 * so the Content-Security-Policy is stricter than /docs'. Raw HTML in the Markdown is escaped
 * unless it is a guide's own anchor. Counted in the metrics as `migration_guide`. Part of the
 * gateway; reads the declarations and v3's OpenAPI snapshot, touches nothing else.
 */
import { createHash } from 'node:crypto';

import type { FastifyInstance } from 'fastify';
import { Marked } from 'marked';

import { type MetricsRouteConfig, MIGRATION_GUIDE_OPERATION } from '../../lib/metrics/series.js';
import type { OpenApiDocument } from '../../lib/openapi/document.js';
import { REFERENCE_PAGE_PATH } from '../../lib/openapi/reference-page.js';
import type { LegacyMappings } from '../legacy/declarations/mappings-loader.js';
import {
  MIGRATION_GUIDES,
  type MigrationGuide,
  renderMigrationGuide,
} from '../legacy/generated-docs/migration-guides.js';

/** A guide's page on the gateway: `/docs/migrate/v1-to-v2`. */
export const migrationGuidePath = (guide: MigrationGuide) => `${REFERENCE_PAGE_PATH}/migrate/${guide}`;

const TITLES: Readonly<Record<MigrationGuide, string>> = {
  'v1-to-v2': 'Migrating from v1 to v2',
  'v2-to-v3': 'Migrating from v2 to v3',
};

const STYLE = `body{font-family:system-ui,sans-serif;line-height:1.5;max-width:72rem;margin:0 auto;padding:1rem 2rem;color:#1f2328}
nav{margin-bottom:1rem}table{border-collapse:collapse;margin:.5rem 0 1rem}th,td{border:1px solid #d0d7de;padding:.25rem .5rem;vertical-align:top;text-align:left}
code{background:#f6f8fa;padding:0 .2rem;border-radius:3px}pre{background:#f6f8fa;padding:.75rem;overflow:auto}pre code{padding:0}h3{margin-top:2.5rem;border-top:1px solid #d0d7de;padding-top:1rem}`;

/** No script, no frame, no form: only this page's stylesheet (by its hash) and this origin's images. */
export const MIGRATION_GUIDE_CSP = [
  "default-src 'none'",
  `style-src 'sha256-${createHash('sha256').update(STYLE).digest('base64')}'`,
  "img-src 'self' data:",
  "base-uri 'none'",
  "form-action 'none'",
  "frame-ancestors 'none'",
].join('; ');

/**
 * The one raw HTML a guide writes: its anchors, `<a id="..."></a>`, which marked hands over
 * whole as a block or as its two tags inside a paragraph.
 */
const ANCHOR = /^(?:<a id="[^"<>]*"><\/a>|<a id="[^"<>]*">|<\/a>)\s*$/;

function escapeHtml(text: string): string {
  return text.replaceAll('&', '&amp;').replaceAll('<', '&lt;').replaceAll('>', '&gt;').replaceAll('"', '&quot;');
}

const markdown = new Marked({
  gfm: true,
  renderer: {
    // Anything else that reads as HTML is shown as text: the guide's prose is escaped already, this is the second guard.
    html: ({ text }) => (ANCHOR.test(text) ? text : escapeHtml(text)),
  },
});

/** A guide's Markdown as HTML: raw HTML other than the anchors is shown as text. */
export function guideMarkdownHtml(text: string): string {
  return markdown.parse(text, { async: false });
}

/** A guide's whole page: the rendered Markdown with a line of links to the other pages. */
export function migrationGuideHtml(guide: MigrationGuide, mappings: LegacyMappings, v3: OpenApiDocument): string {
  const body = guideMarkdownHtml(renderMigrationGuide(guide, mappings, v3));
  const links = [
    ...MIGRATION_GUIDES.map((other) => `<a href="${migrationGuidePath(other)}">${escapeHtml(TITLES[other])}</a>`),
    `<a href="${REFERENCE_PAGE_PATH}">API reference</a>`,
  ].join(' · ');
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>fxgate: ${escapeHtml(TITLES[guide])}</title>
<link rel="icon" href="data:,">
<style>${STYLE}</style>
</head>
<body>
<nav>${links}</nav>
<main>
${body}</main>
</body>
</html>
`;
}

/** Mounts both guides; each page is rendered now, so a declaration the guide cannot describe stops start-up. */
export function registerMigrationGuides(app: FastifyInstance, mappings: LegacyMappings, v3: OpenApiDocument): void {
  const config: MetricsRouteConfig = { metricsOperation: MIGRATION_GUIDE_OPERATION };
  for (const guide of MIGRATION_GUIDES) {
    const html = migrationGuideHtml(guide, mappings, v3);
    app.get(migrationGuidePath(guide), { config }, async (_request, reply) =>
      reply
        .header('content-type', 'text/html; charset=utf-8')
        .header('content-security-policy', MIGRATION_GUIDE_CSP)
        .header('x-content-type-options', 'nosniff')
        .header('referrer-policy', 'no-referrer')
        .header('cache-control', 'no-cache')
        .send(html),
    );
  }
}
