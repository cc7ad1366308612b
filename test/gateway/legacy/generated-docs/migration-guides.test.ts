/**
 * The migration guides as generated: a section per operation of each generation, anchored by its
 * id, whose rows come from the declarations and v3's document (the body fields and their v3
 * names and types, the pages that become cursors, v1's answer copied at the top, the error
 * answers that differ, each error's v3 status and v2 answer); prose from the declarations
 * escaped; a v3 path the document lacks named with the fix; and the docs files are exactly the
 * rendering (the `docs --check` test holds them fresh).
 */
import { readFile } from 'node:fs/promises';

import { beforeAll, describe, expect, it } from 'vitest';

import { coreV3Document } from '../../../../src/core/openapi/declared-operations.js';
import type { EndpointMapping } from '../../../../src/gateway/legacy/declarations/endpoint-mappings.js';
import { LEGACY_OPERATIONS } from '../../../../src/gateway/legacy/declarations/legacy-operations.js';
import {
  type LegacyMappings,
  loadLegacyMappings,
} from '../../../../src/gateway/legacy/declarations/mappings-loader.js';
import {
  guideFile,
  guideSection,
  MIGRATION_GUIDES,
  operationAnchor,
  renderMigrationGuide,
  renderV1ToV2Guide,
  renderV2ToV3Guide,
} from '../../../../src/gateway/legacy/generated-docs/migration-guides.js';
import { ERROR_CATALOG } from '../../../../src/lib/errors/v3-error-catalog.js';
import type { OpenApiDocument } from '../../../../src/lib/openapi/document.js';

let mappings: LegacyMappings;
let v3: OpenApiDocument;
beforeAll(async () => {
  mappings = await loadLegacyMappings();
  v3 = coreV3Document();
});

/** The section of one operation: from its anchor to the next anchor. */
function section(guide: string, operation: string): string {
  const from = guide.indexOf(operationAnchor(operation));
  expect(from, operation).toBeGreaterThan(-1);
  const next = guide.indexOf('<a id="', from + 1);
  return guide.slice(from, next === -1 ? undefined : next);
}

describe('the v1 → v2 guide', () => {
  it('has one anchored section per v1 operation, in the catalog order, and none for what v1 lacks', () => {
    const guide = renderV1ToV2Guide(mappings, v3);
    const anchors = [...guide.matchAll(/<a id="([^"]+)"><\/a>/g)].map((match) => match[1]);
    expect(anchors).toEqual([...LEGACY_OPERATIONS.v1]);
    expect(guide).not.toContain('### `trade/settle`');
    expect(guide).toContain('v2 adds `trade/settle`, which v1 never had');
  });

  it('says where v1 answered at the top of the body and v2 under data only', () => {
    const trade = section(renderV1ToV2Guide(mappings, v3), 'trade');
    expect(trade).toContain('v1 also wrote the fields of `data` at the top of the body');
    expect(section(renderV1ToV2Guide(mappings, v3), 'balances')).toContain('the same fields in the same places');
  });

  it('lists exactly the error answers that change, each as the tables answer it, and the key v2 requires', () => {
    const trade = section(renderV1ToV2Guide(mappings, v3), 'trade');
    const rows = [...trade.matchAll(/^\| `([A-Z_]+)` \| (.*) \| (.*) \|$/gm)];
    expect(rows.length).toBeGreaterThan(0);
    for (const [, code, v1, v2] of rows) {
      const v1Row = mappings.errors.v1.byCode[code as keyof typeof ERROR_CATALOG];
      const v2Row = mappings.errors.v2.byCode[code as keyof typeof ERROR_CATALOG];
      expect(v1, code).toMatch(new RegExp(`^${v1Row.status} `));
      expect(v2, code).toMatch(new RegExp(`^${v2Row.status} `));
      expect(`${v1Row.status} ${v1Row.message}`).not.toBe(`${v2Row.status} ${v2Row.message}`);
    }
    expect(trade).toMatch(/v1: `Idempotency-Key` optional.*v2: `Idempotency-Key` required/);
    const [before, after] = trade.split('After (v2):');
    expect(before).not.toContain('Idempotency-Key: ');
    expect(after).toContain('Idempotency-Key: trade-7f3a');
  });
});

describe('the v2 → v3 guide', () => {
  it('has one anchored section per v2 operation, then every record the answers use', () => {
    const guide = renderV2ToV3Guide(mappings, v3);
    const anchors = [...guide.matchAll(/<a id="([^"]+)"><\/a>/g)].map((match) => match[1]);
    expect(anchors.slice(0, LEGACY_OPERATIONS.v2.length)).toEqual([...LEGACY_OPERATIONS.v2]);
    expect(anchors[LEGACY_OPERATIONS.v2.length]).toBe('records');
    expect(anchors).toContain('record-trade');
  });

  it('maps each body field to its v3 name and type: amounts become decimal strings', () => {
    const quote = section(renderV2ToV3Guide(mappings, v3), 'generate_quote');
    expect(quote).toContain('→ `POST /v3/fx/quotes`');
    expect(quote).toMatch(/^\| `amount` \| JSON number \| `amount` \| string \(decimal\), required \|/m);
    expect(quote).toMatch(/^\| `buy` \| currency \| `buyCurrency` \|/m);
    expect(quote).toContain('"amount": "250.5"');
    expect(quote).toContain('"amount": 250.5');
  });

  it("turns pages into cursors with v3's limit, and says which filters v3 lacks", () => {
    const trades = section(renderV2ToV3Guide(mappings, v3), 'trades');
    expect(trades).toContain('| `page`, `limit` | `limit` (integer 1 to 100), `startingAfter`, `endingBefore` |');
    const addresses = section(renderV2ToV3Guide(mappings, v3), 'withdrawal_addresses');
    expect(addresses).toMatch(/\| `verified` \| none \| v3 has no such filter/);
  });

  it("gives every error of the operation's v3 calls: the catalog's status and the v2 answer", () => {
    const reverse = section(renderV2ToV3Guide(mappings, v3), 'trade/reverse');
    expect(reverse).toContain(
      `| \`TRADE_NOT_FOUND\` | ${ERROR_CATALOG.TRADE_NOT_FOUND.status} | 404 Trade not found |`,
    );
    const read = section(renderV2ToV3Guide(mappings, v3), 'trade/{id}');
    expect(read).toContain(`| \`TRADE_NOT_FOUND\` | ${ERROR_CATALOG.TRADE_NOT_FOUND.status} | 400 Trade not found |`);
    expect(read).toContain('`:id` in the v3 path: the v2 path parameter `id`, as a `trd_` id.');
  });

  it("names each record field's v3 source, and says where there is none", () => {
    const records = renderV2ToV3Guide(mappings, v3).slice(renderV2ToV3Guide(mappings, v3).indexOf('<a id="records">'));
    expect(records).toMatch(/^\| `createdAtUtc` \| timestamp \| `createdAt` \|/m);
    expect(records).toMatch(/^\| `orderType` \| string \| none: it was always `MARKET` \|/m);
  });
});

describe('both guides', () => {
  it('escape the prose they take from the declarations', () => {
    const balances = mappings.endpoints.v2.balances!;
    const hostile: EndpointMapping = { ...balances, summary: 'Balances <script>alert(1)</script> & totals' };
    const patched = {
      ...mappings,
      endpoints: {
        v1: { ...mappings.endpoints.v1, balances: hostile },
        v2: { ...mappings.endpoints.v2, balances: hostile },
      },
    } as LegacyMappings;
    for (const guide of MIGRATION_GUIDES) {
      const text = renderMigrationGuide(guide, patched, v3);
      expect(text).toContain('Balances &lt;script&gt;alert(1)&lt;/script&gt; &amp; totals');
      expect(text).not.toContain('<script>');
    }
  });

  it("name the fix when v3's document lacks a path a mapping calls", () => {
    const { ['/v3/fx/quotes']: _gone, ...paths } = v3.paths!;
    expect(() => renderV2ToV3Guide(mappings, { ...v3, paths })).toThrow(
      'the v3 document has no POST /v3/fx/quotes: regenerate it (`npm run openapi`) or fix the mapping',
    );
  });

  it.each(MIGRATION_GUIDES)('%s: the docs file holds exactly the rendering, between its markers', async (guide) => {
    const text = await readFile(new URL(`../../../../${guideFile(guide)}`, import.meta.url), 'utf8');
    const start = `<!-- generated:${guideSection(guide)} -->\n`;
    const body = text.slice(
      text.indexOf(start) + start.length,
      text.indexOf(`\n<!-- /generated:${guideSection(guide)} -->`),
    );
    expect(body).toBe(renderMigrationGuide(guide, mappings, v3));
  });
});
