/**
 * The generation diff's judgement of one legacy answer (compareLegacyAnswer), on the shipped
 * declarations and v3 records held in memory: a faithful answer agrees field by field, and each
 * way an answer can be wrong (a value, a JSON type, an extra field, a missing one, a record v3
 * does not have, a page or a list that is not v3's) fails exactly the field or list concerned.
 */
import { beforeAll, describe, expect, it } from 'vitest';

import {
  type AnswerUnderTest,
  type AnswerVerdict,
  compareLegacyAnswer,
  type FieldVerdict,
  type V3ReadBack,
  type V3Record,
} from '../../../src/gateway/compare/generation-diff.js';
import { parseLegacyAnswer } from '../../../src/gateway/compare/legacy-values.js';
import type { EndpointMapping, V3Call } from '../../../src/gateway/legacy/declarations/endpoint-mappings.js';
import { type LegacyMappings, loadLegacyMappings } from '../../../src/gateway/legacy/declarations/mappings-loader.js';
import { V3_OPERATIONS, V3_RECORD_READS } from '../../../src/gateway/legacy/v3-contract/operations.js';
import type { V3RecordKind } from '../../../src/gateway/legacy/v3-contract/v3-records.js';

let mappings: LegacyMappings;
beforeAll(async () => {
  mappings = await loadLegacyMappings();
});

const ORG = '01a21584-d052-72ad-8a77-77d01a39ae4d';
const KEY_ID = '01a21584-d052-72ad-8a77-77d01a39ae4e';

const DEPOSIT = {
  object: 'deposit',
  id: 'dep_01a215856a2b7c3d8e9f0a1b2c3d4e5f',
  currency: 'USD',
  amount: '125.50',
  network: null,
  assetType: 'FIAT',
  status: 'FAILED',
  transactionHash: null,
  referenceId: 'wire-1',
  comments: null,
  createdAt: '2026-11-26T01:42:47.974Z',
  completedAt: null,
};
const DEPOSIT_UUID = '01a21585-6a2b-7c3d-8e9f-0a1b2c3d4e5f';

/** The legacy deposit the gateway builds from DEPOSIT. */
const LEGACY_DEPOSIT = `{"id":"${DEPOSIT_UUID}","orgId":"${ORG}","currency":"USD","amount":125.50,"status":"ERROR","network":"FIAT","transactionHash":null,"comments":null,"referenceId":"wire-1","createdAt":"2026-11-26T01:42:47.974Z","completedAt":null}`;

const TRADE = {
  object: 'trade',
  id: 'trd_01a2158530007000800000000000000a',
  quoteId: 'qte_01a2158530007000800000000000000b',
  buyCurrency: 'EUR',
  sellCurrency: 'USD',
  buyAmount: '250.00',
  sellAmount: '270.54',
  referencedCurrency: 'EUR',
  referencedAmount: '250.00',
  status: 'REVERSED',
  clientReferenceId: 'ref-1',
  originalTradeId: 'trd_01a2158530007000800000000000000c',
  source: 'API',
  createdAt: '2026-11-26T01:42:59.838Z',
  updatedAt: '2026-11-26T01:42:59.838Z',
};
const LEGACY_TRADE_RESULT = `{"id":"01a21585-3000-7000-8000-00000000000a","buy":"EUR","sell":"USD","referencedUnit":"EUR","referencedAmount":250.00,"referenceAmount":250.00,"amount":270.54,"status":"REVERSED","transactedAt":"2026-11-26T01:42:59.838Z","quoteId":"01a21585-3000-7000-8000-00000000000b","clientReferenceId":"ref-1","originalTradeId":"01a21585-3000-7000-8000-00000000000c"}`;

const QUOTE = {
  object: 'quote',
  id: 'qte_01a2158530007000800000000000000b',
  buyCurrency: 'EUR',
  sellCurrency: 'USD',
  buyAmount: '250.00',
  sellAmount: '270.54',
  amountCurrency: 'EUR',
  rate: '1.08216',
  reversesTradeId: null,
  createdAt: '2026-11-26T01:42:47.974Z',
  expiresAt: '2026-11-26T01:43:47.974Z',
};
const LEGACY_QUOTE = `{"id":"01a21585-3000-7000-8000-00000000000b","userId":"${KEY_ID}","buy":"EUR","sell":"USD","referencedUnit":"EUR","referencedAmount":250.00,"quoteAmount":270.54,"createdAt":"2026-11-26T01:42:47.974Z","expiryTimeinSeconds":60}`;

const BALANCES = {
  data: [
    {
      object: 'balance',
      id: 'bal_01a2158530007000800000000000000d',
      currency: 'EUR',
      amount: '250.00',
      withdrawableAmount: '250.00',
      usdValue: '270.00',
      withdrawableUsdValue: '270.00',
      createdAt: '2026-11-26T01:42:59.838Z',
      updatedAt: '2026-11-26T01:42:59.838Z',
    },
    {
      object: 'balance',
      id: 'bal_01a2158530007000800000000000000e',
      currency: 'USD',
      amount: '-270.54',
      withdrawableAmount: '0.00',
      usdValue: '-270.54',
      withdrawableUsdValue: '0.00',
      createdAt: '2026-11-26T01:42:59.838Z',
      updatedAt: '2026-11-26T01:42:59.838Z',
    },
  ],
  totals: { netPositiveUsd: '270.00', netNegativeUsd: '-270.54', netUsd: '-0.54' },
};
const EXPOSURE = { data: { creditLine: '1000000.00', committedAmount: '270.54' } };

const PAIRS = {
  data: [
    { symbol: 'EUR/USD', baseCurrency: 'EUR', quoteCurrency: 'USD', minAmount: '1.00', maxAmount: '1000000.00' },
    { symbol: 'USD/EUR', baseCurrency: 'USD', quoteCurrency: 'EUR', minAmount: '1.00', maxAmount: '1000000.00' },
  ],
};

/** v3 held in memory: records by kind, and whole answers by path (with query). */
function memoryV3(
  records: Partial<Record<V3RecordKind, readonly V3Record[]>>,
  answers: Readonly<Record<string, V3Record>> = {},
): V3ReadBack & { reads: string[] } {
  const reads: string[] = [];
  const pathOf = (call: V3Call) => {
    const query = new URLSearchParams(call.query ?? {}).toString();
    return query === '' ? call.path : `${call.path}?${query}`;
  };
  return {
    reads,
    async record(kind, key) {
      reads.push(`${kind} ${key}`);
      const found = records[kind]?.find((record) => record[V3_RECORD_READS[kind]!.key] === key);
      return found ? { ok: true, value: found } : { ok: false, problem: `v3 has no ${kind} ${key} (404)` };
    },
    async call(call) {
      const answer = answers[pathOf(call)];
      return answer ? { ok: true, value: answer } : { ok: false, problem: `no answer for ${pathOf(call)}` };
    },
    async list(call, count) {
      reads.push(`list ${pathOf(call)} ${count}`);
      const answer = answers[pathOf(call)];
      return answer
        ? { ok: true, value: { records: answer.data as V3Record[], complete: true } }
        : { ok: false, problem: `no list at ${pathOf(call)}` };
    },
  };
}

function mappingOf(generation: 'v1' | 'v2', operation: string): EndpointMapping {
  return (mappings.endpoints[generation] as Readonly<Record<string, EndpointMapping>>)[operation]!;
}

async function judge(
  generation: 'v1' | 'v2',
  operation: string,
  body: string,
  v3: V3ReadBack,
  extra: Partial<AnswerUnderTest> = {},
): Promise<AnswerVerdict> {
  return compareLegacyAnswer(
    {
      operation,
      mapping: mappingOf(generation, operation),
      records: mappings.records,
      maps: mappings.maps,
      body: parseLegacyAnswer(body),
      context: { orgId: ORG, keyId: KEY_ID },
      ...extra,
    },
    v3,
  );
}

const failing = (verdict: AnswerVerdict): FieldVerdict[] =>
  verdict.fields.filter((field) => !['agrees', 'answer-only'].includes(field.verdict));
const fieldOf = (verdict: AnswerVerdict, name: string): FieldVerdict =>
  verdict.fields.find((field) => field.field === name)!;

function depositsBody(record: string, pagination = '{"total":1,"start":0,"end":1,"page":1,"limit":5}'): string {
  return `{"status":"success","message":"Data fetched successfully","data":[${record}],"meta":{"pagination":${pagination}}}`;
}

describe('a faithful answer', () => {
  it('agrees field by field: maps, derived values, the context, ids through the id function, the envelope and the page', async () => {
    const v3 = memoryV3({ deposit: [DEPOSIT] }, { '/v3/fx/deposits': { data: [DEPOSIT] } });
    const verdict = await judge('v2', 'deposits', depositsBody(LEGACY_DEPOSIT), v3, { page: { page: 1, limit: 5 } });
    expect(failing(verdict)).toEqual([]);
    expect(verdict.agrees).toBe(true);
    expect(verdict.fields.map((field) => field.field)).toEqual([
      'status',
      'message',
      ...Object.keys(mappings.records.deposit!.fields).map((field) => `data[].${field}`),
      ...['total', 'start', 'end', 'page', 'limit'].map((field) => `meta.pagination.${field}`),
    ]);
    expect(verdict.compared).toBe(verdict.fields.length);
    expect(verdict.declared).toBe(0);
    expect(fieldOf(verdict, 'data[].status')).toMatchObject({
      verdict: 'agrees',
      values: 1,
      declaration: 'deposit.status: v3 deposit.status through depositStatus (string)',
    });
    expect(verdict.lists).toEqual([
      { list: 'data[]', check: "the page is v3's records 0 to 1, in v3's order (by id)", ok: true },
    ]);
    expect(v3.reads).toEqual([`deposit ${DEPOSIT.id}`, 'list /v3/fx/deposits 2']);
  });

  it('takes an amount with other digits for the same value, an id in upper case and a timestamp written otherwise', async () => {
    const record = LEGACY_DEPOSIT.replace('125.50', '125.5')
      .replace(DEPOSIT_UUID, DEPOSIT_UUID.toUpperCase())
      .replace('"createdAt":"2026-11-26T01:42:47.974Z"', '"createdAt":"2026-11-26T02:42:47.974+01:00"');
    const verdict = await judge(
      'v2',
      'deposits',
      depositsBody(record),
      memoryV3({ deposit: [DEPOSIT] }, { '/v3/fx/deposits': { data: [DEPOSIT] } }),
      { page: { page: 1, limit: 5 } },
    );
    expect(failing(verdict)).toEqual([]);
  });

  it('reports the reversal details as answer only, with their declared reason, and reads the trade back', async () => {
    const body = `{"status":"success","message":"Trade reversed successfully","data":{"trade":${LEGACY_TRADE_RESULT},"reversalDetails":{"direction":"DEBIT","differentialAmount":0.43,"currency":"USD"}}}`;
    const verdict = await judge('v2', 'trade/reverse', body, memoryV3({ trade: [TRADE] }));
    expect(failing(verdict)).toEqual([]);
    expect(verdict.declared).toBe(3);
    expect(fieldOf(verdict, 'data.reversalDetails.differentialAmount')).toMatchObject({
      verdict: 'answer-only',
      values: 1,
      answerOnly: {
        source: 'spec',
        reason: 'v3 answers the reversal details once, with the reversal; no v3 read serves them again.',
      },
    });
  });

  it('compares the trade with the balances and the credit read again, v1 at the top of the body too', async () => {
    const balances = '{"EUR":250.00,"USD":-270.54}';
    const data = `{"balances":${balances},"trade":${LEGACY_TRADE_RESULT},"userCreditLimit":1000000.00,"userCreditUsed":270.54}`;
    const body = `{"status":"success","message":"Trade executed successfully","data":${data},${data.slice(1, -1)}}`;
    const v3 = memoryV3({ trade: [TRADE] }, { '/v3/fx/balances': BALANCES, '/v3/fx/exposure': EXPOSURE });
    const verdict = await judge('v1', 'trade', body, v3);
    expect(failing(verdict)).toEqual([]);
    expect(fieldOf(verdict, 'balances.*')).toMatchObject({ verdict: 'agrees', values: 2 });
    expect(fieldOf(verdict, 'trade.amount')).toMatchObject({
      verdict: 'agrees',
      declaration: 'tradeResult.amount: derived counterAmount of the v3 trade (amount)',
    });

    const wrong = await judge('v1', 'trade', body.replace('"userCreditUsed":270.54}', '"userCreditUsed":270.55}'), v3);
    expect(failing(wrong).map((field) => [field.field, field.problems])).toEqual([
      ['data.userCreditUsed', [{ path: 'data.userCreditUsed', kind: 'differs', expected: '270.54', actual: '270.55' }]],
    ]);
  });

  it('matches a market pair without a key by its position in v3, and the limits by symbol', async () => {
    const body =
      '{"status":"success","message":"Data fetched successfully","data":{"tradingPairs":[{"buy":"EUR","sell":"USD"},{"buy":"USD","sell":"EUR"}],"tradeLimits":[{"EUR/USD":{"minTradeLimit":1,"maxTradeLimit":1000000}},{"USD/EUR":{"minTradeLimit":1.00,"maxTradeLimit":1000000.00}}]}}';
    const v3 = memoryV3({ pair: PAIRS.data }, { '/v3/fx/pairs': PAIRS });
    expect(failing(await judge('v2', 'available_markets', body, v3))).toEqual([]);

    const swapped = await judge(
      'v2',
      'available_markets',
      body.replace(
        '[{"buy":"EUR","sell":"USD"},{"buy":"USD","sell":"EUR"}]',
        '[{"buy":"USD","sell":"EUR"},{"buy":"EUR","sell":"USD"}]',
      ),
      v3,
    );
    expect(failing(swapped).map((field) => field.field)).toEqual([
      'data.tradingPairs[].buy',
      'data.tradingPairs[].sell',
    ]);
    const short = await judge(
      'v2',
      'available_markets',
      body.replace(',{"USD/EUR":{"minTradeLimit":1.00,"maxTradeLimit":1000000.00}}', ''),
      v3,
    );
    expect(short.lists.filter((check) => !check.ok).map((check) => [check.list, check.check, check.detail])).toEqual([
      ['data.tradeLimits[]', 'one record per v3 record (2)', 'the answer has 1'],
      [
        'data.tradeLimits[]',
        "the records are v3's, in v3's order (by symbol)",
        'v3: EUR/USD, USD/EUR; the answer: EUR/USD',
      ],
    ]);
    expect(short.agrees).toBe(false);
  });

  it('derives the quote validity and compares the caller key id', async () => {
    const body = `{"status":"success","message":"Quote generated successfully","data":{"quote":${LEGACY_QUOTE}}}`;
    const v3 = memoryV3({ quote: [QUOTE] });
    expect(failing(await judge('v2', 'generate_quote', body, v3))).toEqual([]);
    const other = await judge(
      'v2',
      'generate_quote',
      body.replace('"expiryTimeinSeconds":60', '"expiryTimeinSeconds":30').replace(KEY_ID, ORG),
      v3,
    );
    expect(
      failing(other).map((field) => [field.field, field.problems[0]?.expected, field.problems[0]?.actual]),
    ).toEqual([
      ['data.quote.userId', `"${KEY_ID}"`, `"${ORG}"`],
      ['data.quote.expiryTimeinSeconds', '60', '30'],
    ]);
  });
});

describe('an answer that is wrong', () => {
  const v3 = () => memoryV3({ deposit: [DEPOSIT] }, { '/v3/fx/deposits': { data: [DEPOSIT] } });
  const page = { page: { page: 1, limit: 5 } } as const;

  it.each([
    [
      'an amount with another value',
      LEGACY_DEPOSIT.replace('125.50', '125.501'),
      'data[].amount',
      { path: 'data[0].amount', kind: 'differs', expected: '125.50', actual: '125.501' },
    ],
    [
      'an amount rounded',
      LEGACY_DEPOSIT.replace('125.50', '126'),
      'data[].amount',
      { path: 'data[0].amount', kind: 'differs', expected: '125.50', actual: '126' },
    ],
    [
      'an amount written as a string',
      LEGACY_DEPOSIT.replace('125.50', '"125.50"'),
      'data[].amount',
      {
        path: 'data[0].amount',
        kind: 'differs',
        expected: '125.50',
        actual: '"125.50"',
        note: 'a JSON string where the declaration says a JSON number',
      },
    ],
    [
      'a v3 word the map translates, left as it was',
      LEGACY_DEPOSIT.replace('"ERROR"', '"FAILED"'),
      'data[].status',
      { path: 'data[0].status', kind: 'differs', expected: '"ERROR"', actual: '"FAILED"' },
    ],
    [
      'the wrong org',
      LEGACY_DEPOSIT.replace(`"orgId":"${ORG}"`, `"orgId":"${KEY_ID}"`),
      'data[].orgId',
      { path: 'data[0].orgId', kind: 'differs', expected: `"${ORG}"`, actual: `"${KEY_ID}"` },
    ],
    [
      'a null where the declaration allows none',
      LEGACY_DEPOSIT.replace('"network":"FIAT"', '"network":null'),
      'data[].network',
      {
        path: 'data[0].network',
        kind: 'differs',
        expected: '"FIAT"',
        actual: 'null',
        note: 'null where the declaration allows none',
      },
    ],
    [
      'a field the declarations do not name',
      LEGACY_DEPOSIT.replace('{"id"', '{"fee":0,"id"'),
      'data[].fee',
      { path: 'data[0].fee', kind: 'unaccounted', actual: '0', note: 'the deposit record declares no fee' },
    ],
    [
      'a declared field left out',
      LEGACY_DEPOSIT.replace(',"referenceId":"wire-1"', ''),
      'data[].referenceId',
      {
        path: 'data[0].referenceId',
        kind: 'missing',
        actual: '(absent)',
        note: 'the deposit record declares referenceId',
      },
    ],
  ])('fails %s, on that field alone', async (_case, record, field, problem) => {
    const verdict = await judge('v2', 'deposits', depositsBody(record), v3(), page);
    expect(verdict.agrees).toBe(false);
    expect(failing(verdict).map((failed) => [failed.field, failed.problems])).toEqual([[field, [problem]]]);
  });

  it('fails an id that names another v3 record: the record is read by that id and not found', async () => {
    const other = '01a21585-6a2b-7c3d-8e9f-0a1b2c3d4e50';
    const verdict = await judge(
      'v2',
      'deposits',
      depositsBody(LEGACY_DEPOSIT.replace(DEPOSIT_UUID, other)),
      v3(),
      page,
    );
    expect(fieldOf(verdict, 'data[].amount')).toMatchObject({
      verdict: 'unreadable',
      problems: [
        {
          path: 'data[0].amount',
          kind: 'unreadable',
          note: 'v3 has no deposit dep_01a215856a2b7c3d8e9f0a1b2c3d4e50 (404)',
        },
      ],
    });
    expect(verdict.lists).toEqual([
      {
        list: 'data[]',
        check: "the page is v3's records 0 to 1, in v3's order (by id)",
        ok: false,
        detail: `v3: ${DEPOSIT.id}; the answer: dep_01a215856a2b7c3d8e9f0a1b2c3d4e50`,
      },
    ]);
  });

  it('fails an extra field outside any record, and a declared one never present (an empty page)', async () => {
    const extra = await judge(
      'v2',
      'deposits',
      depositsBody(LEGACY_DEPOSIT).replace('"meta"', '"debug":{"took":3},"meta"'),
      v3(),
      page,
    );
    expect(failing(extra).map((field) => [field.field, field.verdict])).toEqual([['debug.took', 'unaccounted']]);
    const empty = await judge(
      'v2',
      'deposits',
      depositsBody('', '{"total":0,"start":0,"end":0,"page":1,"limit":5}'),
      v3(),
      page,
    );
    expect(failing(empty).map((field) => [field.field, field.verdict])).toEqual([
      ...Object.keys(mappings.records.deposit!.fields).map((field) => [`data[].${field}`, 'missing']),
      ['meta.pagination.total', 'differs'],
    ]);
    expect(fieldOf(empty, 'meta.pagination.total').problems[0]!.note).toBe(
      'v3 has records after the page (1 read), and total 0 shows none',
    );
  });

  it.each([
    [
      'a start that is not the offset of the page (and so an end past the total)',
      '{"total":1,"start":1,"end":2,"page":1,"limit":5}',
      ['meta.pagination.total', 'meta.pagination.start'],
    ],
    [
      'a total below the end of the page',
      '{"total":0,"start":0,"end":1,"page":1,"limit":5}',
      ['meta.pagination.total'],
    ],
    ['a total above what v3 has', '{"total":7,"start":0,"end":1,"page":1,"limit":5}', ['meta.pagination.total']],
    [
      'another page than the one asked for',
      '{"total":1,"start":0,"end":1,"page":2,"limit":5}',
      ['meta.pagination.page'],
    ],
    ['another limit', '{"total":1,"start":0,"end":1,"page":1,"limit":10}', ['meta.pagination.limit']],
  ])('fails %s', async (_case, pagination, fields) => {
    const verdict = await judge('v2', 'deposits', depositsBody(LEGACY_DEPOSIT, pagination), v3(), page);
    expect(failing(verdict).map((field) => field.field)).toEqual(fields);
  });

  it('fails values no v3 read serves when they are not declared answer only', async () => {
    const mapping = mappingOf('v2', 'trade/reverse');
    const undeclared = JSON.parse(JSON.stringify(mapping)) as EndpointMapping & {
      response: { data: { object: { reversalDetails: { answerOnly?: unknown } } } };
    };
    delete undeclared.response.data.object.reversalDetails.answerOnly;
    const body = `{"status":"success","message":"Trade reversed successfully","data":{"trade":${LEGACY_TRADE_RESULT},"reversalDetails":{"direction":"DEBIT","differentialAmount":0.43,"currency":"USD"}}}`;
    const verdict = await judge('v2', 'trade/reverse', body, memoryV3({ trade: [TRADE] }), { mapping: undeclared });
    expect(failing(verdict).map((field) => [field.field, field.verdict])).toEqual([
      ['data.reversalDetails.direction', 'unreadable'],
      ['data.reversalDetails.differentialAmount', 'unreadable'],
      ['data.reversalDetails.currency', 'unreadable'],
    ]);
    expect(failing(verdict)[0]!.problems[0]!.note).toBe(
      'no v3 read serves the v3 reversalDetails record again; declare the node answerOnly with its reason if v3 answers it only once',
    );
  });

  it('fails an entry of the balances that v3 does not have, and a v3 balance the answer leaves out', async () => {
    const data = `{"balances":{"EUR":250.00,"GBP":1.00},"trade":${LEGACY_TRADE_RESULT},"userCreditLimit":1000000.00,"userCreditUsed":270.54}`;
    const verdict = await judge(
      'v2',
      'trade',
      `{"status":"success","message":"Trade executed successfully","data":${data}}`,
      memoryV3({ trade: [TRADE] }, { '/v3/fx/balances': BALANCES, '/v3/fx/exposure': EXPOSURE }),
    );
    expect(fieldOf(verdict, 'data.balances.*').problems).toEqual([
      {
        path: 'data.balances.GBP',
        kind: 'differs',
        expected: '(absent)',
        actual: '1.00',
        note: 'no v3 balance record has currency GBP',
      },
      {
        path: 'data.balances.USD',
        kind: 'missing',
        expected: '-270.54',
        actual: '(absent)',
        note: 'v3 has a balance record with currency USD',
      },
    ]);
  });

  it('fails the envelope: another status or message', async () => {
    const verdict = await judge(
      'v2',
      'deposits',
      depositsBody(LEGACY_DEPOSIT).replace('"Data fetched successfully"', '"OK"'),
      v3(),
      page,
    );
    expect(
      failing(verdict).map((field) => [field.field, field.problems[0]?.expected, field.problems[0]?.actual]),
    ).toEqual([['message', '"Data fetched successfully"', '"OK"']]);
  });
});

describe('the v3 reads the diff relies on', () => {
  it('names a GET of the contract, under the view scope, for every record kind but the reversal details', () => {
    for (const [kind, read] of Object.entries(V3_RECORD_READS)) {
      if (read === null) {
        expect(kind).toBe('reversalDetails');
        continue;
      }
      const operation = V3_OPERATIONS.find((candidate) => candidate.method === 'GET' && candidate.path === read.path);
      expect([kind, operation?.scope, operation?.list ?? null]).toEqual([
        kind,
        'view',
        read.read === 'one' ? null : 'bounded',
      ]);
    }
  });
});
