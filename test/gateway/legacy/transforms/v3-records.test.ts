import { describe, expect, it } from 'vitest';
import { V3ContractError } from '../../../../src/gateway/legacy/transforms/transform-types.js';
import { V3_ANSWERS, readV3, v3TradeSchema } from '../../../../src/gateway/legacy/transforms/v3-records.js';
import { TRADE, UUIDS } from './v3-samples.js';

describe('readV3', () => {
  it('returns the record with its ids as legacy UUIDs, accepting and dropping fields v3 added', () => {
    const trade = readV3(v3TradeSchema, { ...TRADE, newField: { nested: true } }, 'trade/{id}', 'answers[0].data');
    expect(trade).toMatchObject({ id: UUIDS.trade, quoteId: UUIDS.quote, originalTradeId: null, referencedAmount: '100.50' });
    expect(trade).not.toHaveProperty('newField');
    const list = readV3(V3_ANSWERS.tradeList, { data: [TRADE], pagination: { hasNext: false }, newTopLevel: 1 }, 'trades', 'answers[0]');
    expect(Object.keys(list)).toEqual(['data']);
  });

  it('throws a V3ContractError naming the operation and every problem, where it is', () => {
    let caught: unknown;
    try {
      readV3(V3_ANSWERS.tradeList, { data: [TRADE, { ...TRADE, id: 'trd_XYZ', sellAmount: 108.76 }] }, 'trades', 'answers[0]');
    } catch (error) {
      caught = error;
    }
    expect(caught).toBeInstanceOf(V3ContractError);
    const error = caught as V3ContractError;
    expect(error.code).toBe('FXGATE_V3_CONTRACT_VIOLATION');
    expect(error.operation).toBe('trades');
    expect(error.problems).toEqual(['answers[0].data[1].id: must be a trd_ id', 'answers[0].data[1].sellAmount: Invalid input: expected string, received number']);
    expect(error.message).toBe(`the v3 answer for trades breaks the v3 contract: ${error.problems.join('; ')}`);
  });

  it('locates problems without a prefix, and at the root', () => {
    expect(() => readV3(v3TradeSchema, { ...TRADE, buyAmount: '1e3' }, 'op', '')).toThrow('buyAmount: must be a decimal string');
    expect(() => readV3(v3TradeSchema, null, 'op', '')).toThrow('(answer): Invalid input: expected object, received null');
  });
});
