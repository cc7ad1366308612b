/**
 * The legacy reference generated from the loaded declarations (reference.ts): one row per
 * operation of each generation with its v3 calls and rules, v1's changes from v2, one table per
 * record with a row per field, the value maps, and one row per v3 error code. A few rows are
 * checked exactly; the counts prove nothing is left out or written twice.
 */
import { beforeAll, describe, expect, it } from 'vitest';

import { LEGACY_RECORDS } from '../../../../mappings/records.js';
import {
  LEGACY_GENERATIONS,
  LEGACY_OPERATIONS,
} from '../../../../src/gateway/legacy/declarations/legacy-operations.js';
import {
  type LegacyMappings,
  loadLegacyMappings,
} from '../../../../src/gateway/legacy/declarations/mappings-loader.js';
import {
  renderLegacyErrors,
  renderLegacyOperations,
  renderLegacyRecords,
} from '../../../../src/gateway/legacy/generated-docs/legacy-reference.js';
import { ERROR_CODES } from '../../../../src/lib/errors/v3-error-catalog.js';

let mappings: LegacyMappings;
beforeAll(async () => {
  mappings = await loadLegacyMappings();
});

/** The lines of the table that follows `heading` (its header and separator included), up to the next blank line. */
function tableAfter(text: string, heading: string): string[] {
  const lines = text.split('\n');
  const start = lines.indexOf(heading);
  expect(start, heading).toBeGreaterThanOrEqual(0);
  const rest = lines.slice(start + 2);
  const end = rest.indexOf('');
  return end === -1 ? rest : rest.slice(0, end);
}

const rowsOf = (table: readonly string[]) => table.slice(2);

describe('renderLegacyOperations', () => {
  it.each(LEGACY_GENERATIONS)('%s: one row per operation, in order, each once', (generation) => {
    const rows = rowsOf(
      tableAfter(
        renderLegacyOperations(mappings),
        `**${generation}** (${LEGACY_OPERATIONS[generation].length} operations)`,
      ),
    );
    expect(rows.map((row) => /^\| `(?:GET|POST) …\/([^`]+)` \|/.exec(row)?.[1])).toEqual([
      ...LEGACY_OPERATIONS[generation],
    ]);
  });

  it('writes the v3 calls, scope, idempotency, query, body and answer of each operation', () => {
    const v2 = rowsOf(tableAfter(renderLegacyOperations(mappings), '**v2** (15 operations)'));
    const v1 = rowsOf(tableAfter(renderLegacyOperations(mappings), '**v1** (12 operations)'));
    expect(v2).toContain(
      '| `POST …/trade` | `POST /v3/fx/trades` + `GET /v3/fx/balances` + `GET /v3/fx/exposure` | trade | required, kept 24 h |  | `quoteId`, `clientReferenceId`? | `data.balances`, `data.trade`: tradeResult, `data.userCreditLimit`, `data.userCreditUsed` | Execute a quote; answers the trade, the balances after it and the credit used. |',
    );
    expect(v1).toContain(
      '| `POST …/trade` | `POST /v3/fx/trades` + `GET /v3/fx/balances` + `GET /v3/fx/exposure` | trade | honoured if sent, kept 24 h |  | `quoteId`, `clientReferenceId`? | `data.balances`, `data.trade`: tradeResult, `data.userCreditLimit`, `data.userCreditUsed`, the fields of `data` at the top too | Execute a quote; answers the trade, the balances after it and the credit used. |',
    );
    expect(v2).toContain(
      '| `POST …/generate_quote` | `POST /v3/fx/quotes` | trade | required, kept 30 min |  | `amount`, `buy`, `sell`, `referencedUnit`, `quoteForSeconds`? | `data.quote`: quote | A quote, answered under data.quote. |',
    );
    expect(v2).toContain(
      '| `POST …/withdrawal` | `POST /v3/fx/withdrawals` | withdraw | required, kept 7 d |  | `amount`, `currency`, `withdrawalAddressId` | `data`: withdrawal | A stablecoin withdrawal to an address. |',
    );
    expect(v1).toContain(
      '| `GET …/deposits` | `GET /v3/fx/deposits` | view | none | `page`, `limit`, `currency` |  | `data[]`: deposit | Fiat and stablecoin deposits, newest first, page by page. |',
    );
    expect(v2).toContain(
      '| `GET …/fiat_withdrawal_addresses` | `GET /v3/fx/withdrawal-accounts?assetType=FIAT&status=ACTIVE&verified=true` | view | honoured if sent, kept 24 h | `page`, `limit`, `verified`, `status`, `currency` |  | `data[]`: fiatWithdrawalAddress | Approved fiat withdrawal accounts, page by page. |',
    );
    expect(v2).toContain(
      '| `GET …/available_markets` | `GET /v3/fx/pairs` | view | honoured if sent, kept 24 h |  |  | `data.tradingPairs[]`: tradingPair, `data.tradeLimits[]`: {symbol: tradeLimit} | The tradable currency pairs and the trade limits of each. |',
    );
    expect(v2).toContain(
      '| `GET …/balances` | `GET /v3/fx/balances` | view | honoured if sent, kept 24 h |  |  | `data[]`: balance, `netPositiveBalanceInUSD`, `netNegativeBalanceInUSD`, `netBalanceInUSD` | Balances with their USD values, and the net USD totals. |',
    );
  });

  it("lists v1's changes from v2, one row each, as declared", () => {
    const rows = rowsOf(tableAfter(renderLegacyOperations(mappings), '**v1 as declared: its changes from v2**'));
    expect(rows).toHaveLength(mappings.v1Changes.length);
    expect(rows).toEqual([
      '| no `trade/reverse-quote` | doc | The v1 documentation has no reversal or settlement section; v2 added them. |',
      '| no `trade/reverse` | doc | The v1 documentation has no reversal or settlement section; v2 added them. |',
      '| no `trade/settle` | doc | The v1 documentation has no reversal or settlement section; v2 added them. |',
      '| GET: idempotency none | spec | v1 reads never took an Idempotency-Key. |',
      "| POST: idempotency honoured-if-sent | ours | v1 had no idempotency: without a key each write is new, as it always was; a key sent is honoured with v2's lifetimes. |",
      '| `trade`: data also at the top of the body | doc | The v1 documentation lists the trade result at the top of the body; clients also read it under data. |',
    ]);
  });

  it('marks the answer-only values in the answer column, and lists each with its source and reason', () => {
    const text = renderLegacyOperations(mappings);
    expect(rowsOf(tableAfter(text, '**v2** (15 operations)'))).toContain(
      '| `POST …/trade/reverse` | `POST /v3/fx/trades/:id/reverse` | trade | required, kept 24 h |  | `tradeId`, `quoteId`, `clientReferenceId`? | `data.trade`: tradeResult, `data.reversalDetails`: reversalDetails (answer only) | Reverse a trade with an approved reverse quote. |',
    );
    const heading =
      '**Answer only**: values no v3 read serves again, which `fxgate diff generations` reports instead of comparing';
    expect(rowsOf(tableAfter(text, heading))).toEqual([
      '| v2 | `trade/reverse` | `data.reversalDetails` | spec | v3 answers the reversal details once, with the reversal; no v3 read serves them again. |',
    ]);
  });

  it('escapes a pipe in a summary, so a row keeps its columns', () => {
    const balances = { ...mappings.endpoints.v2.balances!, summary: 'Balances | totals' };
    const text = renderLegacyOperations({
      ...mappings,
      endpoints: { ...mappings.endpoints, v2: { ...mappings.endpoints.v2, balances } },
    });
    expect(text).toContain('| Balances \\| totals |');
  });
});

describe('renderLegacyRecords', () => {
  it.each(Object.keys(LEGACY_RECORDS))('%s: a table with one row per field, in order', (name) => {
    const shape = mappings.records[name]!;
    const table = tableAfter(renderLegacyRecords(mappings), `**${name}** (from the v3 ${shape.v3}): ${shape.summary}`);
    expect(table.slice(0, 2)).toEqual(['| field | type | from v3 | source | reason |', '|---|---|---|---|---|']);
    expect(rowsOf(table).map((row) => /^\| `([^`]+)` \|/.exec(row)?.[1])).toEqual(Object.keys(shape.fields));
  });

  it('writes each way a field gets its value', () => {
    const text = renderLegacyRecords(mappings);
    for (const row of [
      '| `id` | id | `id` | doc | Legacy ids are UUIDs: the same 128 bits as the v3 id, without its prefix. |',
      '| `originalTradeId` | id or null | `originalTradeId` | spec | For a reversal, the trade it reversed; else null. |',
      '| `orderType` | string | always `MARKET` | doc | Every v3 trade executes a quote at once: the legacy market order. |',
      "| `userId` | id | the caller's keyId | both | Legacy quotes belonged to the user (API key) that asked; the key id of the caller. |",
      '| `status` | string | `status` via depositStatus | client | PENDING, COMPLETED or ERROR. |',
      '| `coinId` | id | `currency` via coinUuid | doc | A stable UUID of the currency, the same on every call and instance. |',
      '| `status` | string | derived: verificationStatus via addressStatus | doc | Verified, Pending (an active address not yet verified counts as pending) or Disabled. |',
      '| `expiryTimeinSeconds` | integer | derived: validitySeconds | both | The quote\'s real validity in seconds (lower-case "in", as clients read it). |',
    ]) {
      expect(text.split('\n')).toContain(row);
    }
  });

  it('lists every value map with its words', () => {
    const lines = renderLegacyRecords(mappings)
      .split('\n')
      .filter((line) => line.startsWith('- **'));
    expect(lines.map((line) => /^- \*\*(\w+)\*\*/.exec(line)?.[1])).toEqual(Object.keys(mappings.maps));
    expect(lines).toContain(
      '- **depositStatus** (client): `PENDING` → `PENDING`, `COMPLETED` → `COMPLETED`, `FAILED` → `ERROR`. The v2 client knows PENDING, COMPLETED and ERROR; v3 calls a failed deposit FAILED.',
    );
  });
});

describe('renderLegacyErrors', () => {
  it('one row per v3 error code, in code order', () => {
    const rows = renderLegacyErrors(mappings).split('\n').slice(2);
    expect(rows.map((row) => /^\| `([A-Z_]+)` \|/.exec(row)?.[1])).toEqual([...ERROR_CODES].sort());
  });

  it("writes v1's and v2's answers, v2's per-operation answers and both bases", () => {
    const rows = renderLegacyErrors(mappings).split('\n');
    expect(rows[0]).toBe('| v3 code | v1 | v2 | v2 per operation | basis (v1 / v2) |');
    for (const row of [
      '| `IDEMPOTENCY_KEY_MISSING` | 500 An internal error has occurred | 400 Idempotency key is required (`IDEMPOTENCY_KEY_REQUIRED`) |  | closest / spec |',
      '| `IDEMPOTENCY_MISMATCH` | 422 Idempotency key reused with different parameters (`IDEMPOTENCY_MISMATCH`) | 422 Idempotency key reused with different parameters (`IDEMPOTENCY_MISMATCH`) |  | closest / spec |',
      '| `TRADE_NOT_FOUND` | 400 Trade not found | 400 Trade not found | trade/reverse: 404 Trade not found; trade/reverse-quote: 404 Trade not found; trade/settle: 404 Trade not found | spec / spec |',
      '| `WITHDRAWAL_ADDRESS_NOT_VERIFIED` | 400 Withdrawal address is not active or verified | 400 Withdrawal address is not active or verified | fiat_withdrawal: 400 Withdrawal account is not active or verified | spec / spec |',
    ]) {
      expect(rows).toContain(row);
    }
  });
});
