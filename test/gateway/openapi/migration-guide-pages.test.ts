/**
 * The migration guides on the gateway: both pages are HTML with a policy stricter than /docs'
 * (no script at all, the one inline stylesheet allowed by its hash), an anchor for every
 * operation of the generation each covers, and the Link of a v1 answer, and of a v2 answer once
 * v2 has dates, resolved against the request's URL as a client does, leads to the right page.
 */
import { createHash } from 'node:crypto';

import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { LEGACY_OPERATIONS } from '../../../src/gateway/legacy/declarations/legacy-operations.js';
import { GenerationLifecycle } from '../../../src/gateway/legacy/runtime/generation-lifecycle.js';
import {
  guideMarkdownHtml,
  MIGRATION_GUIDE_CSP,
  migrationGuidePath,
} from '../../../src/gateway/openapi/migration-guide-pages.js';
import type { LoadedKey } from '../../../src/lib/keys/key-file.js';
import { REFERENCE_PAGE_CSP } from '../../../src/lib/openapi/reference-page.js';
import { parseInstant } from '../../../src/lib/time-text.js';
import { linkRelations } from '../../support/http-date-grammar.js';
import { LegacyHarness } from '../../support/legacy-harness.js';
import { TEST_LIFECYCLE } from '../../support/legacy-lifecycle.js';

const PAGES = { v1: '/docs/migrate/v1-to-v2', v2: '/docs/migrate/v2-to-v3' } as const;

/** Every `id` attribute of a page, decoded as a browser reads it. */
function ids(html: string): string[] {
  return [...html.matchAll(/ id="([^"]*)"/g)].map((match) =>
    match[1]!.replaceAll('&quot;', '"').replaceAll('&lt;', '<').replaceAll('&gt;', '>').replaceAll('&amp;', '&'),
  );
}

describe('the migration guides served by the gateway', () => {
  let h: LegacyHarness;
  let key: LoadedKey;
  beforeAll(async () => {
    h = await LegacyHarness.start({
      gateway: {
        lifecycle: {
          ...TEST_LIFECYCLE,
          v2: { deprecatedAt: parseInstant('2026-03-01T00:00:00Z'), sunsetAt: parseInstant('2027-12-31T23:59:59Z') },
        },
      },
    });
    key = await h.createKey();
  });
  afterAll(async () => h?.close());

  it.each([
    ['v1-to-v2', 'v1'],
    ['v2-to-v3', 'v2'],
  ] as const)('serves %s as HTML with an anchor for every %s operation', async (guide, generation) => {
    const page = await h.send({ path: migrationGuidePath(guide) });
    expect(page.status).toBe(200);
    expect(page.headers['content-type']).toBe('text/html; charset=utf-8');
    expect(page.headers['x-content-type-options']).toBe('nosniff');
    expect(page.text).toMatch(/^<!doctype html>/);
    const anchors = new Set(ids(page.text));
    for (const operation of LEGACY_OPERATIONS[generation]) expect(anchors.has(operation), operation).toBe(true);
    // Rendered Markdown: tables and example requests, not the Markdown text.
    expect(page.text).toContain('<table>');
    expect(page.text).toContain('<pre><code class="language-http">');
    expect(page.text).not.toContain('| --- |');
  });

  it('has no script, and a policy stricter than /docs: no script source, the one stylesheet by its hash', async () => {
    const page = await h.send({ path: PAGES.v1 });
    expect(page.headers['content-security-policy']).toBe(MIGRATION_GUIDE_CSP);
    expect(page.text).not.toMatch(/<script/i);
    const directives = new Map(
      MIGRATION_GUIDE_CSP.split('; ').map((directive) => [directive.split(' ')[0]!, directive.split(' ').slice(1)]),
    );
    expect(directives.get('default-src')).toEqual(["'none'"]);
    expect(directives.has('script-src')).toBe(false);
    expect(MIGRATION_GUIDE_CSP).not.toContain('unsafe-inline');
    const styles = [...page.text.matchAll(/<style>(.*?)<\/style>/gs)].map((match) => match[1]!);
    expect(styles).toHaveLength(1);
    expect(directives.get('style-src')).toEqual([
      `'sha256-${createHash('sha256').update(styles[0]!).digest('base64')}'`,
    ]);
    for (const shared of ["base-uri 'none'", "form-action 'none'", "frame-ancestors 'none'"]) {
      expect(REFERENCE_PAGE_CSP).toContain(shared);
      expect(MIGRATION_GUIDE_CSP).toContain(shared);
    }
  });

  it.each(['v1', 'v2'] as const)(
    "links a %s answer to its generation's guide, which resolves against the request to the page",
    async (generation) => {
      const answer = await h.call(generation, key, { path: 'balances' });
      expect(answer.status).toBe(200);
      const links = linkRelations(answer.headers.link!);
      expect(links.map((link) => link.rel)).toEqual(['deprecation', 'sunset']);
      const requestUrl = new URL(`/${generation}/brokerage/${key.file.orgId}/balances`, h.gatewayUrl);
      for (const link of links) {
        const target = new URL(link.target!, requestUrl);
        expect(target.origin).toBe(requestUrl.origin);
        expect(target.pathname).toBe(PAGES[generation]);
        const page = await h.send({ path: target.pathname });
        expect(page.status).toBe(200);
        expect(page.headers['content-type']).toBe('text/html; charset=utf-8');
      }
    },
  );

  it('renders raw HTML other than the anchors as text', () => {
    const html = guideMarkdownHtml(
      '<a id="trade/{id}"></a>\n\n### x\n\nSee <img src=x onerror="alert(1)"> and <a href="https://elsewhere.test">here</a>.\n\n<iframe src="/"></iframe>',
    );
    expect(html).toContain('<a id="trade/{id}"></a>');
    expect(html).toContain('&lt;img src=x onerror=&quot;alert(1)&quot;&gt;');
    expect(html).toContain('&lt;a href=&quot;https://elsewhere.test&quot;&gt;');
    expect(html).toContain('&lt;iframe src=&quot;/&quot;&gt;&lt;/iframe&gt;');
    expect(html).not.toMatch(/<(img|iframe)|<a href/);
  });

  it("names v1's page in the 410 of its sunset", () => {
    const retired = new GenerationLifecycle({ now: () => parseInstant('2027-01-01T00:00:00Z') });
    expect(retired.refusal('v1', 'org')?.message).toMatch(/Migrate to a supported version: \/docs\/migrate\/v1-to-v2$/);
  });

  it('answers another guide name as no route', async () => {
    expect((await h.send({ path: '/docs/migrate/v1-to-v3' })).status).toBe(404);
  });
});
