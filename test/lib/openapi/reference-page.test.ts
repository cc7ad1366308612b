/**
 * The /docs page in a real headless browser: Debian's Chromium driven by playwright-core, on a
 * gateway in front of a core. The page renders from this origin alone (no request elsewhere, no
 * Content-Security-Policy violation), lists the three generations, and shows POST /v3/fx/trades
 * with its error codes; a screenshot is written under the test's temporary folder. One browser
 * for the file. Without Chromium the file fails, saying how to install it.
 */
import { existsSync, statSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import { type Browser, chromium, type Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { LegacyHarness } from '../../support/legacy-harness.js';

/** Debian's package; CI installs it when missing (.ci/run). */
const CHROMIUM = '/usr/bin/chromium';

describe('/docs in a headless browser', () => {
  let h: LegacyHarness;
  let browser: Browser;
  let folder: string;
  /** What a page said on its console, and every request it made elsewhere than the gateway. */
  const seen = { violations: [] as string[], elsewhere: [] as string[], errors: [] as string[] };

  beforeAll(async () => {
    if (!existsSync(CHROMIUM)) {
      throw new Error(
        `${CHROMIUM} is missing: the /docs test needs Debian's Chromium. Install it with: apt-get update && apt-get install -y --no-install-recommends chromium`,
      );
    }
    folder = await mkdtemp(join(tmpdir(), 'fxgate-docs-page-'));
    h = await LegacyHarness.start();
    browser = await chromium.launch({ executablePath: CHROMIUM });
  });
  afterAll(async () => {
    await browser?.close();
    await h?.close();
    if (folder !== undefined) await rm(folder, { recursive: true, force: true });
  });

  async function open(hash = ''): Promise<Page> {
    const page = await browser.newPage({ viewport: { width: 1400, height: 1000 } });
    page.on('console', (message) => {
      if (/Content Security Policy/i.test(message.text())) seen.violations.push(message.text());
    });
    page.on('pageerror', (error) => seen.errors.push(error.message));
    page.on('request', (request) => {
      if (!request.url().startsWith(h.gatewayUrl) && !request.url().startsWith('data:'))
        seen.elsewhere.push(request.url());
    });
    await page.goto(`${h.gatewayUrl}/docs${hash}`);
    return page;
  }

  it('renders from this origin alone and lists the three generations', async () => {
    const page = await open();
    await page.getByRole('heading', { name: 'fxgate v3' }).waitFor({ timeout: 20_000 });
    await page.getByRole('button', { name: 'v3', exact: true }).click();
    expect(await page.getByRole('option').allTextContents()).toEqual(['v3', 'v2', 'v1']);
    await page.getByRole('option', { name: 'v2' }).click();
    await page.getByRole('heading', { name: 'fxgate v2' }).waitFor({ timeout: 20_000 });
    // v2's own groups: markets and withdrawal addresses are legacy words, which v3 does not have.
    await page.getByRole('button', { name: /Group - Markets$/ }).waitFor({ timeout: 20_000 });
    expect(await page.getByRole('button', { name: /Group - Withdrawal addresses$/ }).count()).toBe(1);
    expect(seen).toEqual({ violations: [], elsewhere: [], errors: [] });
    await page.close();
  });

  it('shows POST /v3/fx/trades with its error codes, and a screenshot of it', async () => {
    const page = await open('#v3/tag/trades/POST/v3/fx/trades');
    const heading = page.getByRole('heading', { name: 'Execute a quote', exact: true });
    await heading.waitFor({ timeout: 20_000 });
    const operation = await heading.locator('xpath=ancestor::section[1]').innerText();
    expect(operation).toContain('POST');
    expect(operation).toContain('/v3/fx/trades');
    expect(operation).toContain('Idempotency-Key');
    for (const code of [
      'QUOTE_NOT_FOUND',
      'QUOTE_EXPIRED',
      'QUOTE_ALREADY_USED',
      'TRADE_CREDIT_LIMIT_EXCEEDED',
      'IDEMPOTENCY_MISMATCH',
      'TRADE_EXECUTION_FAILED',
      'AUTH_INSUFFICIENT_SCOPE',
    ]) {
      expect(operation, code).toContain(code);
    }
    for (const status of ['200', '404', '409', '422', '428', '500'])
      expect(operation).toMatch(new RegExp(`^${status}\\b`, 'm'));
    const screenshot = join(folder, 'post-v3-fx-trades.png');
    await page.screenshot({ path: screenshot });
    expect(statSync(screenshot).size).toBeGreaterThan(10_000);
    expect(seen).toEqual({ violations: [], elsewhere: [], errors: [] });
    await page.close();
  });
});
