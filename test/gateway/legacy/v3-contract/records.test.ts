/**
 * The v3 records the gateway reads, tied to the published v3 document (docs/openapi/v3.json):
 * they agree now, and a document that drops a field a legacy record reads, makes it optional,
 * changes its type or its pattern, or loses a read's GET, fails the check naming it.
 */
import { describe, expect, it } from 'vitest';

import { parseV3Document, V3_DOCUMENT, type V3Document } from '../../../../src/gateway/legacy/v3-contract/document.js';
import { V3_RECORD_SCHEMAS, v3RecordProblems } from '../../../../src/gateway/legacy/v3-contract/records.js';
import { V3_RECORDS } from '../../../../src/gateway/legacy/v3-contract/v3-records.js';
import { DECIMAL_PATTERN } from '../../../../src/lib/money.js';

/** A copy of the shipped document with `edit` applied. */
function edited(
  edit: (document: {
    paths: Record<string, Record<string, unknown>>;
    components: {
      schemas: Record<string, { properties: Record<string, Record<string, unknown>>; required: string[] }>;
    };
  }) => void,
): V3Document {
  const copy = JSON.parse(JSON.stringify(V3_DOCUMENT)) as Parameters<typeof edit>[0];
  edit(copy);
  return parseV3Document(copy);
}

describe('the v3 records the gateway reads', () => {
  it('are schemas of the document, every field read a required property of the types and pattern read', () => {
    expect(Object.keys(V3_RECORD_SCHEMAS).sort()).toEqual(Object.keys(V3_RECORDS).sort());
    expect(v3RecordProblems(V3_DOCUMENT)).toEqual([]);
  });

  it('fail the check when the document drops a field a legacy record reads', () => {
    const document = edited(({ components }) => {
      const trade = components.schemas.Trade!;
      delete trade.properties.referencedAmount;
      trade.required = trade.required.filter((field) => field !== 'referencedAmount');
    });
    expect(v3RecordProblems(document)).toEqual([
      'trade.referencedAmount (Trade.referencedAmount): not in the document',
    ]);
  });

  it('fail the check when a field read becomes optional, a number (no longer a decimal string), nullable or of another pattern', () => {
    const document = edited(({ components }) => {
      const { Quote: quote, Balance: balance, Pair: pair, WithdrawalAccount: account } = components.schemas;
      quote!.required = quote!.required.filter((field) => field !== 'expiresAt');
      balance!.properties.amount = { type: 'number' };
      account!.properties.verified = { type: ['boolean', 'null'] };
      pair!.properties.minAmount = { ...pair!.properties.minAmount, pattern: '^[0-9]+$' };
    });
    expect(v3RecordProblems(document)).toEqual([
      'quote.expiresAt (Quote.expiresAt): read as always present, optional in the document',
      'balance.amount (Balance.amount): the document allows number, the gateway reads string',
      `balance.amount (Balance.amount): read with the pattern ${DECIMAL_PATTERN.source}, which the document does not state`,
      `pair.minAmount (Pair.minAmount): read with the pattern ${DECIMAL_PATTERN.source}, which the document does not state`,
      'withdrawalAccount.verified (WithdrawalAccount.verified): the document allows null, the gateway reads boolean',
    ]);
  });

  it('fail the check when the document loses a schema or the GET a record is read again by', () => {
    const document = edited(({ paths, components }) => {
      delete components.schemas.ReversalDetails;
      delete paths['/v3/fx/deposits/{id}']!.get;
    });
    expect(v3RecordProblems(document)).toEqual([
      'reversalDetails: the document has no schema ReversalDetails',
      'deposit: read again by GET /v3/fx/deposits/:id, which the document does not have',
    ]);
  });
});
