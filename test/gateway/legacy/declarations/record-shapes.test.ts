/**
 * The legacy records and value maps (mappings/records.ts, mappings/value-maps.ts) and their
 * validators (validateRecords, validateValueMaps): every shipped field says its type, source,
 * reason and exactly one value source, and every name it uses exists; each bad form of a field,
 * a record or a map is refused with a problem naming exactly what is wrong.
 */
import { describe, expect, it } from 'vitest';

import { LEGACY_RECORDS } from '../../../../mappings/records.js';
import { VALUE_MAPS } from '../../../../mappings/value-maps.js';
import { LEGACY_WEBHOOKS } from '../../../../mappings/webhooks.js';
import { SHIPPED_CODE } from '../../../../src/gateway/legacy/declarations/mappings-loader.js';
import {
  FIELD_TYPES,
  type LegacyField,
  type RecordShape,
  SOURCES,
  validateRecords,
  validateValueMaps,
} from '../../../../src/gateway/legacy/declarations/record-shapes.js';
import { CONVERTERS, DERIVED_FIELDS } from '../../../../src/gateway/legacy/transforms/derived-fields.js';
import { V3_RECORD_KINDS, v3FieldsOf } from '../../../../src/gateway/legacy/v3-contract/v3-records.js';
import { edited, mappingError } from '../declaration-edits.js';

const RECORDS: Readonly<Record<string, RecordShape>> = LEGACY_RECORDS;
const SENTENCE = /^\S[^\n]* [^\n]*\.$/;
const VALUE_SOURCES = ['from', 'derived', 'constant', 'context'];

const recordProblems = (edits: Readonly<Record<string, unknown>>) =>
  mappingError(() => validateRecords(edited(LEGACY_RECORDS, edits), VALUE_MAPS, SHIPPED_CODE)).problems;
const mapProblems = (edits: Readonly<Record<string, unknown>>) =>
  mappingError(() => validateValueMaps(edited(VALUE_MAPS, edits))).problems;

const FIELDS = Object.entries(RECORDS).flatMap(([record, shape]) =>
  Object.entries(shape.fields).map(([field, declared]) => [`${record}.${field}`, shape, declared] as const),
);

describe('the shipped records', () => {
  it('pass the validator with the shipped value maps and code', () => {
    expect(validateRecords(LEGACY_RECORDS, VALUE_MAPS, SHIPPED_CODE)).toEqual(LEGACY_RECORDS);
  });

  it('each is built from a v3 record kind and says what it is', () => {
    for (const [name, shape] of Object.entries(RECORDS)) {
      expect([name, V3_RECORD_KINDS.includes(shape.v3)]).toEqual([name, true]);
      expect([name, shape.summary]).toEqual([name, expect.stringMatching(SENTENCE)]);
      expect([name, Object.keys(shape.fields).length > 0]).toEqual([name, true]);
    }
  });

  it.each(FIELDS)(
    '%s declares its type, a known source, a one-line reason and exactly one value source',
    (_where, _shape, field) => {
      expect(FIELD_TYPES).toContain(field.type);
      expect(Object.keys(SOURCES)).toContain(field.source);
      expect(field.reason).toMatch(SENTENCE);
      expect(VALUE_SOURCES.filter((key) => Object.hasOwn(field, key))).toHaveLength(1);
    },
  );

  it.each(FIELDS)(
    '%s names only what exists: a field of its v3 record, a value map, a converter, a derived field of its kind',
    (_where, shape, field: LegacyField) => {
      if ('from' in field) {
        expect(v3FieldsOf(shape.v3)).toContain(field.from);
        if (field.convert !== undefined) expect(Object.keys(CONVERTERS)).toContain(field.convert);
      }
      if ('derived' in field)
        expect(Object.keys((DERIVED_FIELDS as Record<string, object | undefined>)[shape.v3] ?? {})).toContain(
          field.derived,
        );
      if (('from' in field || 'derived' in field) && field.map !== undefined)
        expect(Object.keys(VALUE_MAPS)).toContain(field.map);
      if ('constant' in field) expect(field.constant.trim()).not.toBe('');
      if ('context' in field) expect(['orgId', 'keyId']).toContain(field.context);
    },
  );

  it('every registered derived field and converter is used by some record (the webhook records count)', () => {
    const webhookFields = Object.values(LEGACY_WEBHOOKS.records as Record<string, RecordShape>).flatMap((shape) =>
      Object.values(shape.fields).map((field) => ['', shape, field] as const),
    );
    const used = [...FIELDS, ...webhookFields].flatMap(([, shape, field]) => [
      ...('derived' in field ? [`${shape.v3}.${field.derived}`] : []),
      ...('from' in field && field.convert !== undefined ? [`convert.${field.convert}`] : []),
    ]);
    const registered = [
      ...Object.entries(DERIVED_FIELDS).flatMap(([kind, fields]) =>
        Object.keys(fields).map((name) => `${kind}.${name}`),
      ),
      ...Object.keys(CONVERTERS).map((name) => `convert.${name}`),
    ];
    expect([...new Set(used)].sort()).toEqual(registered.sort());
  });
});

describe('the shipped value maps', () => {
  it('pass the validator', () => {
    expect(validateValueMaps(VALUE_MAPS)).toEqual(VALUE_MAPS);
  });

  it.each(Object.entries(VALUE_MAPS))(
    '%s says what it is, where it comes from and why, and gives each legacy word to one v3 value only',
    (_name, map) => {
      expect(map.summary).toMatch(SENTENCE);
      expect(Object.keys(SOURCES)).toContain(map.source);
      expect(map.reason).toMatch(SENTENCE);
      const words = Object.values(map.values).map((word) => word.toLowerCase());
      expect(words.length).toBeGreaterThan(0);
      expect(new Set(words).size).toBe(words.length);
    },
  );
});

describe('validateValueMaps refuses', () => {
  it.each([
    [
      'two v3 values on one legacy word',
      { 'networkName.values.ARBITRUM': 'Base' },
      ['networkName.values.ARBITRUM: Base is already the word for BASE'],
    ],
    [
      'two v3 values on one legacy word in another case',
      { 'addressStatus.values.EXPIRED': 'verified' },
      ['addressStatus.values.EXPIRED: verified is already the word for ACTIVE'],
    ],
    ['an empty legacy word', { 'networkName.values.ARBITRUM': '' }, ['networkName.values.ARBITRUM: must not be empty']],
    [
      'a blank legacy word',
      { 'networkName.values.ARBITRUM': '  ' },
      ['networkName.values.ARBITRUM: must not be empty'],
    ],
    ['an empty v3 value', { 'networkName.values.': 'Arbitrum' }, ['networkName.values: Invalid key in record']],
    ['an empty summary', { 'depositStatus.summary': '' }, ['depositStatus.summary: must not be empty']],
    ['a blank reason', { 'depositStatus.reason': ' ' }, ['depositStatus.reason: must not be empty']],
    [
      'a missing reason',
      { 'depositStatus.reason': undefined },
      [expect.stringMatching(/^depositStatus\.reason: Invalid input: expected string/)],
    ],
    [
      'an unknown source',
      { 'depositStatus.source': 'blog' },
      [
        expect.stringMatching(
          /^depositStatus\.source: Invalid option: expected one of "doc"\|"client"\|"both"\|"spec"\|"ours"/,
        ),
      ],
    ],
    ['an unknown key', { 'depositStatus.default': 'PENDING' }, ['depositStatus: Unrecognized key: "default"']],
    [
      'a map name that is no name',
      { 'deposit-status': VALUE_MAPS.depositStatus },
      ['deposit-status: Invalid key in record'],
    ],
  ])('%s', (_rule, edits, expected) => {
    expect(mapProblems(edits)).toEqual(expected);
  });

  it('nothing for the same word in two maps: a clash is within one map', () => {
    expect(() => validateValueMaps(edited(VALUE_MAPS, { 'addressStatus.values.FAILED': 'ERROR' }))).not.toThrow();
  });

  it('input that is no table, naming mappings/value-maps', () => {
    for (const input of [null, [], 'maps'])
      expect(mappingError(() => validateValueMaps(input)).table).toBe('mappings/value-maps');
  });
});

describe('validateRecords refuses', () => {
  const ID = { type: 'id', source: 'doc', reason: 'The id.' };

  it.each([
    [
      'a field without a value source',
      { 'trade.fields.id': ID },
      ['trade.fields.id: must declare exactly one of from, derived, constant or context'],
    ],
    [
      'a field with two value sources',
      { 'trade.fields.id': { ...ID, from: 'id', derived: 'tradingPair' } },
      [
        'trade.fields.id: must declare exactly one of from, derived, constant or context (it declares from and derived)',
      ],
    ],
    [
      'a field with a constant beside its v3 field',
      { 'trade.fields.orderType.from': 'source' },
      [
        'trade.fields.orderType: must declare exactly one of from, derived, constant or context (it declares from and constant)',
      ],
    ],
    [
      'a field that is no object',
      { 'trade.fields.id': 'id' },
      ['trade.fields.id: must declare exactly one of from, derived, constant or context'],
    ],
    [
      'a field without its type',
      { 'trade.fields.id.type': undefined },
      [expect.stringMatching(/^trade\.fields\.id\.type: Invalid option: expected one of "amount"\|"id"\|/)],
    ],
    [
      'a field of an unknown type',
      { 'trade.fields.id.type': 'uuid' },
      [expect.stringMatching(/^trade\.fields\.id\.type: Invalid option/)],
    ],
    [
      'a field without its source',
      { 'trade.fields.id.source': undefined },
      [expect.stringMatching(/^trade\.fields\.id\.source: Invalid option/)],
    ],
    [
      'a field of an unknown source',
      { 'trade.fields.id.source': 'blog' },
      [expect.stringMatching(/^trade\.fields\.id\.source: Invalid option/)],
    ],
    [
      'a field without its reason',
      { 'trade.fields.id.reason': undefined },
      [expect.stringMatching(/^trade\.fields\.id\.reason: Invalid input: expected string/)],
    ],
    ['a field with an empty reason', { 'trade.fields.id.reason': ' ' }, ['trade.fields.id.reason: must not be empty']],
    [
      'nullable other than true',
      { 'trade.fields.clientReferenceId.nullable': false },
      [expect.stringMatching(/^trade\.fields\.clientReferenceId\.nullable: Invalid input: expected true/)],
    ],
    [
      'an unknown key on a field',
      { 'trade.fields.id.default': null },
      ['trade.fields.id: Unrecognized key: "default"'],
    ],
    [
      'a converter on a derived field',
      { 'trade.fields.tradingPair.convert': 'coinUuid' },
      ['trade.fields.tradingPair: Unrecognized key: "convert"'],
    ],
    [
      'a map on a constant',
      { 'trade.fields.orderType.map': 'depositStatus' },
      ['trade.fields.orderType: Unrecognized key: "map"'],
    ],
    [
      'an empty constant',
      { 'trade.fields.orderType.constant': '' },
      ['trade.fields.orderType.constant: must not be empty'],
    ],
    [
      'an unknown context value',
      { 'deposit.fields.orgId.context': 'userId' },
      [expect.stringMatching(/^deposit\.fields\.orgId\.context: Invalid option: expected one of "orgId"\|"keyId"/)],
    ],
    [
      'a from that is no name',
      { 'trade.fields.amount.from': 'data.amount' },
      ['trade.fields.amount.from: a name of letters and digits'],
    ],
    [
      'a from naming no field of the v3 record',
      { 'trade.fields.amount.from': 'amount' },
      [`trade.fields.amount.from: the v3 trade record has no field amount (it has ${v3FieldsOf('trade').join(', ')})`],
    ],
    [
      'a map no value map defines',
      { 'deposit.fields.status.map': 'depositStatuses' },
      ['deposit.fields.status.map: no value map named depositStatuses'],
    ],
    [
      'a map on a derived field no value map defines',
      { 'withdrawalAddress.fields.status.map': 'accountStatus' },
      ['withdrawalAddress.fields.status.map: no value map named accountStatus'],
    ],
    [
      'a converter nothing registers',
      { 'withdrawalAddress.fields.coinId.convert': 'coinCode' },
      ['withdrawalAddress.fields.coinId.convert: no converter is registered as coinCode'],
    ],
    [
      'a map and a converter on one field',
      { 'withdrawalAddress.fields.coinId.map': 'networkName' },
      ['withdrawalAddress.fields.coinId.map: a map or a converter, not both'],
    ],
    [
      'a derived field nothing registers',
      { 'trade.fields.tradingPair.derived': 'pairName' },
      ['trade.fields.tradingPair.derived: no derived field pairName is registered for the v3 trade record'],
    ],
    [
      'a derived field registered for another v3 record',
      { 'trade.fields.computedAmount.derived': 'validitySeconds' },
      ['trade.fields.computedAmount.derived: no derived field validitySeconds is registered for the v3 trade record'],
    ],
    [
      'a field name that is no name',
      { 'trade.fields.trade id': { ...ID, from: 'id' } },
      ['trade.fields.trade id: Invalid key in record'],
    ],
    [
      'a record of an unknown v3 kind',
      { 'trade.v3': 'order' },
      [expect.stringMatching(/^trade\.v3: Invalid option: expected one of "quote"\|"trade"\|/)],
    ],
    ['a record without a summary', { 'trade.summary': '' }, ['trade.summary: must not be empty']],
    ['an unknown key on a record', { 'trade.version': 1 }, ['trade: Unrecognized key: "version"']],
    ['a record name that is no name', { 'trade-v1': LEGACY_RECORDS.trade }, ['trade-v1: Invalid key in record']],
  ])('%s', (_rule, edits, expected) => {
    expect(recordProblems(edits)).toEqual(expected);
  });

  it('every derived field and converter its registry lacks', () => {
    const expected = FIELDS.flatMap(([where, shape, field]) => {
      const at = where.replace('.', '.fields.');
      if ('derived' in field)
        return [`${at}.derived: no derived field ${field.derived} is registered for the v3 ${shape.v3} record`];
      if ('from' in field && field.convert !== undefined)
        return [`${at}.convert: no converter is registered as ${field.convert}`];
      return [];
    });
    expect(expected.length).toBeGreaterThan(0);
    expect(
      mappingError(() => validateRecords(LEGACY_RECORDS, VALUE_MAPS, { derived: {}, converters: [] })).problems,
    ).toEqual(expected);
  });

  it('a map the value maps lack, when given other maps', () => {
    const { depositStatus: _dropped, ...maps } = VALUE_MAPS;
    expect(mappingError(() => validateRecords(LEGACY_RECORDS, maps, SHIPPED_CODE)).problems).toEqual([
      'deposit.fields.status.map: no value map named depositStatus',
    ]);
  });

  it('input that is no table, naming mappings/records', () => {
    for (const input of [null, [], 'records'])
      expect(mappingError(() => validateRecords(input, VALUE_MAPS, SHIPPED_CODE)).table).toBe('mappings/records');
  });
});
