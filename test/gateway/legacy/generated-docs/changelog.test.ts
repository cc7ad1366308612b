/**
 * The generated part of CHANGELOG.md (changelog.ts), from the loaded declarations: every
 * v2 operation with its v3 calls, the request and record fields v3 names or computes otherwise
 * (and none that v3 names the same), the words, the error statuses v2 keeps, the webhooks, and
 * each of v1's declared changes from v2; every entry with its source and reason.
 */
import { beforeAll, describe, expect, it } from 'vitest';

import { V1_ENDPOINTS } from '../../../../mappings/endpoints.v1.js';
import { LEGACY_OPERATIONS } from '../../../../src/gateway/legacy/declarations/legacy-operations.js';
import {
  type LegacyMappings,
  loadLegacyMappings,
} from '../../../../src/gateway/legacy/declarations/mappings-loader.js';
import { renderGenerationChangelog } from '../../../../src/gateway/legacy/generated-docs/changelog.js';

let mappings: LegacyMappings;
let text: string;
beforeAll(async () => {
  mappings = await loadLegacyMappings();
  text = renderGenerationChangelog(mappings);
});

/** The list items under a bold heading, up to the next blank line after them. */
function itemsAfter(heading: string, within: string = text): string[] {
  const lines = within.split('\n');
  const start = lines.findIndex((line) => line.startsWith(`**${heading}**`));
  expect(start, heading).toBeGreaterThanOrEqual(0);
  const rest = lines.slice(start + 2);
  const end = rest.indexOf('');
  return end === -1 ? rest : rest.slice(0, end);
}

describe('the generated changelog of the legacy generations', () => {
  it('puts v2 against v3 first, then v1 against v2', () => {
    expect(text.indexOf('### v2, against v3')).toBe(0);
    expect(text.indexOf('### v1, against v2')).toBeGreaterThan(0);
  });

  it('lists every v2 operation once, on the v3 calls its mapping names', () => {
    const v2 = text.slice(0, text.indexOf('### v1'));
    const items = itemsAfter('Operations', v2);
    expect(items).toHaveLength(LEGACY_OPERATIONS.v2.length);
    expect(items).toContain(
      '- `POST trade`: Execute a quote; answers the trade, the balances after it and the credit used. On `POST /v3/fx/trades`, then `GET /v3/fx/balances`, then `GET /v3/fx/exposure`.',
    );
    expect(items).toContain('- `POST trade/settle`: Settle an executed trade. On `POST /v3/fx/trades/{id}/settle`.');
  });

  it('lists the request fields v3 names otherwise, once for the operations sharing a declaration', () => {
    const items = itemsAfter('Request fields named otherwise than in v3');
    expect(items).toContain('- `generate_quote`: `buy`: sent as `buyCurrency` — both: The currency to buy.');
    expect(items).toContain(
      '- `trade/reverse-quote`, `trade/reverse`, `trade/settle`: `tradeId`: checked, not sent (v3 takes it in the path) — spec: The trade, by its legacy UUID; v3 takes it in the path.',
    );
    expect(items.some((item) => item.includes('`quoteId`: sent as `quoteId`'))).toBe(false);
  });

  it('lists a record field only where it is not the v3 field of its name', () => {
    const items = itemsAfter('Record fields v3 names or computes otherwise');
    expect(items).toContain('- `trade.createdAtUtc`: v3 `createdAt` — doc: The v1 name of createdAt.');
    expect(items).toContain(
      '- `trade.orderType`: always `MARKET` — doc: Every v3 trade executes a quote at once: the legacy market order.',
    );
    const plain = Object.entries(mappings.records).flatMap(([record, shape]) =>
      Object.entries(shape.fields)
        .filter(([name, field]) => 'from' in field && field.from === name && !field.map && !field.convert)
        .map(([name]) => `- \`${record}.${name}\`:`),
    );
    expect(plain.length).toBeGreaterThan(0);
    for (const prefix of plain)
      expect(
        items.some((item) => item.startsWith(prefix)),
        prefix,
      ).toBe(false);
  });

  it('lists the words each map changes, and only those', () => {
    const items = itemsAfter('Words');
    expect(items).toContain(
      '- depositStatus: `FAILED` is `ERROR` — client: The v2 client knows PENDING, COMPLETED and ERROR; v3 calls a failed deposit FAILED.',
    );
  });

  it("lists every code whose v2 status is not v3's, with the basis and the note", () => {
    const items = itemsAfter("Error statuses other than v3's");
    expect(items).toContain(
      '- `AUTH_INSUFFICIENT_SCOPE`: v3 403, v2 401 "The authorization key provided is either invalid or expired, please try again" — closest: v2 has no 403; a key without the scope is not valid for the operation: 401.',
    );
    expect(items.some((item) => item.startsWith('- `VALIDATION_BODY_FAILED`:'))).toBe(false);
    expect(items.find((item) => item.startsWith('- `REVERSE_QUOTE_INVALID`:'))).toContain(
      'on `trade/reverse` 404 "Trade not found"',
    );
  });

  it("lists each of v1's declared endpoint changes and its error changes with their reasons", () => {
    const v1 = text.slice(text.indexOf('### v1'));
    const changes = itemsAfter('Operations and idempotency', v1);
    expect(changes).toHaveLength(V1_ENDPOINTS.changes.length);
    expect(changes[0]).toBe(
      '- no `trade/reverse-quote` — doc: The v1 documentation has no reversal or settlement section; v2 added them.',
    );
    const errors = itemsAfter('Error answers', v1);
    expect(errors).toHaveLength(mappings.v1ErrorChanges.length);
    expect(errors).toContain(
      "- `ROUTE_NOT_FOUND`: v2 `404 Route not found`, v1 `400 Route not found` — v1 has no 404: a business refusal or not-found is v1's 400.",
    );
    expect(errors.find((item) => item.startsWith('- `IDEMPOTENCY_MISMATCH`:'))).toMatch(
      /^- `IDEMPOTENCY_MISMATCH`: v1 answers as v2, `422 /,
    );
  });
});
