/**
 * The conventions every legacy operation shares (mappings/conventions.ts): the shipped page
 * defaults and mode-header values, the validator's refusal of defaults outside their bounds and
 * of malformed declarations, and declaredMode, which reads the mode header by them (any case,
 * production for live, absent for live, anything else, prototype names included, unknown).
 * The shadow mode's volatile fields: each a path of the operations it names (of some operation
 * when it names none), with its reason.
 */
import { describe, expect, it } from 'vitest';

import { LEGACY_CONVENTIONS } from '../../../../mappings/conventions.js';
import { legacyFieldIndex } from '../../../../src/gateway/compare/legacy-fields.js';
import {
  declaredMode,
  type LegacyConventions,
  validateConventions,
  validateShadowVolatile,
  volatilePathsOf,
} from '../../../../src/gateway/legacy/declarations/conventions.js';
import type { EndpointMapping } from '../../../../src/gateway/legacy/declarations/endpoint-mappings.js';
import { loadLegacyMappings } from '../../../../src/gateway/legacy/declarations/mappings-loader.js';
import type { RecordTable } from '../../../../src/gateway/legacy/declarations/record-shapes.js';
import { LegacyMappingError } from '../../../../src/lib/errors/internal-errors.js';

const CONVENTIONS: LegacyConventions = LEGACY_CONVENTIONS;

/** The paths of an operation's answer, as the gateway gives them to the validator. */
const pathsOfAnswers =
  (records: RecordTable) =>
  (mapping: EndpointMapping): Iterable<string> =>
    legacyFieldIndex(mapping, records).keys();

/** A JSON copy of the shipped conventions with `edits` applied (dotted path -> new value, undefined deletes). */
function edited(edits: Readonly<Record<string, unknown>>): unknown {
  const copy = JSON.parse(JSON.stringify(LEGACY_CONVENTIONS)) as Record<string, unknown>;
  for (const [path, value] of Object.entries(edits)) {
    const keys = path.split('.');
    const last = keys.pop()!;
    const node = keys.reduce((parent, key) => parent[key] as Record<string, unknown>, copy);
    if (value === undefined) delete node[last];
    else node[last] = value;
  }
  return copy;
}

function problemsOf(value: unknown): readonly string[] {
  try {
    validateConventions(value);
  } catch (error) {
    expect(error).toBeInstanceOf(LegacyMappingError);
    expect((error as LegacyMappingError).table).toBe('mappings/conventions');
    return (error as LegacyMappingError).problems;
  }
  throw new Error('expected a LegacyMappingError');
}

describe('the shipped conventions', () => {
  it('pass the validator', () => {
    expect(validateConventions(LEGACY_CONVENTIONS)).toEqual(LEGACY_CONVENTIONS);
  });

  it('page from 1 (default 1), limit from 1 to 50 (default 10)', () => {
    expect(CONVENTIONS.pagination.page).toEqual({ default: 1, min: 1 });
    expect(CONVENTIONS.pagination.limit).toEqual({ default: 10, min: 1, max: 50 });
  });

  it('SANDBOX is the sandbox; LIVE, PRODUCTION and no header at all are live', () => {
    expect(CONVENTIONS.appModes.values).toEqual({ SANDBOX: 'sandbox', LIVE: 'live', PRODUCTION: 'live' });
    expect(CONVENTIONS.appModes.absent).toBe('live');
  });
});

describe('validateConventions refuses', () => {
  it.each([
    [
      'a page default below the page minimum',
      { 'pagination.page': { default: 1, min: 2 } },
      ['pagination: page.default must be at least page.min'],
    ],
    [
      'a limit default above the limit maximum',
      { 'pagination.limit.default': 51 },
      ['pagination: limit.default must lie from limit.min to limit.max'],
    ],
    [
      'a limit default below the limit minimum',
      { 'pagination.limit': { default: 5, min: 10, max: 50 } },
      ['pagination: limit.default must lie from limit.min to limit.max'],
    ],
    [
      'a limit maximum below its minimum',
      { 'pagination.limit': { default: 10, min: 20, max: 5 } },
      ['pagination: limit.default must lie from limit.min to limit.max'],
    ],
    ['a page minimum of 0', { 'pagination.page.min': 0 }, [expect.stringMatching(/^pagination\.page\.min: Too small/)]],
    [
      'a limit that is no whole number',
      { 'pagination.limit.max': 50.5 },
      [expect.stringMatching(/^pagination\.limit\.max: Invalid input: expected int/)],
    ],
    [
      'a missing limit maximum',
      { 'pagination.limit.max': undefined },
      [expect.stringMatching(/^pagination\.limit\.max: Invalid input: expected number/)],
    ],
    [
      'a header value that is not an upper-case word',
      { 'appModes.values.Sandbox': 'sandbox' },
      ['appModes.values.Sandbox: Invalid key in record'],
    ],
    [
      'a header value naming no mode',
      { 'appModes.values.TEST': 'staging' },
      [expect.stringMatching(/^appModes\.values\.TEST: Invalid option: expected one of "sandbox"\|"live"/)],
    ],
    [
      'an absent mode that is no mode',
      { 'appModes.absent': 'none' },
      [expect.stringMatching(/^appModes\.absent: Invalid option/)],
    ],
    ['a blank reason', { 'appModes.reason': ' ' }, ['appModes.reason: must not be empty']],
    [
      'an unknown source',
      { 'pagination.source': 'forum' },
      [expect.stringMatching(/^pagination\.source: Invalid option/)],
    ],
    ['an unknown key', { 'pagination.limit.step': 10 }, ['pagination.limit: Unrecognized key: "step"']],
    ['a missing part', { appModes: undefined }, [expect.stringMatching(/^appModes: Invalid input: expected object/)]],
    [
      'a volatile path that is not normalised',
      { 'shadow.volatile': [{ paths: ['data.0.amount'], source: 'ours', reason: 'r' }] },
      [expect.stringMatching(/^shadow\.volatile\.0\.paths\.0: a normalised path/)],
    ],
    [
      'a volatile field of an operation no generation has',
      { 'shadow.volatile': [{ paths: ['data[].amount'], operations: ['refunds'], source: 'ours', reason: 'r' }] },
      ['shadow.volatile.0.operations.0: not a legacy operation'],
    ],
    [
      'a volatile field without its reason',
      { 'shadow.volatile': [{ paths: ['data[].amount'], source: 'ours', reason: '' }] },
      ['shadow.volatile.0.reason: must not be empty'],
    ],
    [
      'a volatile path declared twice',
      {
        'shadow.volatile': [
          { paths: ['data[].amount'], source: 'ours', reason: 'r' },
          { paths: ['data[].amount'], source: 'ours', reason: 'r' },
        ],
      },
      ['shadow.volatile: a path is declared twice'],
    ],
    ['no shadow part', { shadow: undefined }, [expect.stringMatching(/^shadow: Invalid input: expected object/)]],
  ])('%s', (_rule, edits, expected) => {
    expect(problemsOf(edited(edits))).toEqual(expected);
  });

  it('input that is no object', () => {
    for (const input of [null, [], 'conventions']) expect(problemsOf(input)).toHaveLength(1);
  });
});

describe('declaredMode', () => {
  it.each([
    ['SANDBOX', 'sandbox'],
    ['sandbox', 'sandbox'],
    ['Sandbox', 'sandbox'],
    ['LIVE', 'live'],
    ['live', 'live'],
    ['production', 'live'],
    ['PRODUCTION', 'live'],
    [undefined, 'live'],
    ['staging', null],
    ['', null],
    [' live', null],
    ['sandbox,live', null],
    [['sandbox'], null],
    [['live', 'sandbox'], null],
  ] as const)('%j -> %s', (header, mode) => {
    expect(declaredMode(CONVENTIONS, header)).toBe(mode);
  });

  it.each(['__proto__', '__PROTO__', 'constructor', 'CONSTRUCTOR', 'toString', 'hasOwnProperty', 'valueOf'])(
    '%s is no mode (null), never a property the values object inherits',
    (header) => {
      expect(declaredMode(CONVENTIONS, header)).toBeNull();
    },
  );

  it('follows the conventions it is given, absent included', () => {
    const sandboxFirst: LegacyConventions = {
      ...CONVENTIONS,
      appModes: { ...CONVENTIONS.appModes, values: { TEST: 'sandbox' }, absent: 'sandbox' },
    };
    expect(declaredMode(sandboxFirst, 'test')).toBe('sandbox');
    expect(declaredMode(sandboxFirst, undefined)).toBe('sandbox');
    expect(declaredMode(sandboxFirst, 'live')).toBeNull();
  });
});

describe("the shadow mode's volatile fields", () => {
  it('are the USD valuations of balances, each a path of that operation in both generations', async () => {
    const mappings = await loadLegacyMappings();
    expect(() =>
      validateShadowVolatile(CONVENTIONS, mappings.endpoints, pathsOfAnswers(mappings.records)),
    ).not.toThrow();
    const answerPaths = new Set(['data[].amount', 'data[].totalBalanceInUSD', 'netBalanceInUSD']);
    expect([...volatilePathsOf(CONVENTIONS, 'balances', answerPaths)].sort()).toEqual([
      'data[].totalBalanceInUSD',
      'netBalanceInUSD',
    ]);
    expect([...volatilePathsOf(CONVENTIONS, 'trades', answerPaths)]).toEqual([]);
    for (const field of CONVENTIONS.shadow.volatile) expect(field.reason.trim()).not.toBe('');
  });

  it('are refused when a path is not in an operation they name, or in any operation when they name none', async () => {
    const mappings = await loadLegacyMappings();
    const declare = (volatile: LegacyConventions['shadow']['volatile']): LegacyConventions => ({
      ...CONVENTIONS,
      shadow: { volatile },
    });
    const problems = (volatile: LegacyConventions['shadow']['volatile']): readonly string[] => {
      try {
        validateShadowVolatile(declare(volatile), mappings.endpoints, pathsOfAnswers(mappings.records));
      } catch (error) {
        expect(error).toBeInstanceOf(LegacyMappingError);
        return (error as LegacyMappingError).problems;
      }
      return [];
    };
    expect(
      problems([
        { paths: ['data[].amount'], operations: ['trades', 'available_markets'], source: 'ours', reason: 'r' },
      ]),
    ).toEqual([
      'shadow.volatile.0: data[].amount: v1 available_markets has no such path',
      'shadow.volatile.0: data[].amount: v2 available_markets has no such path',
    ]);
    expect(problems([{ paths: ['data[].noSuchField'], source: 'ours', reason: 'r' }])).toEqual([
      "shadow.volatile.0: data[].noSuchField: no operation's answer has this path",
    ]);
    expect(problems([{ paths: ['data[].amount'], source: 'ours', reason: 'r' }])).toEqual([]);
  });
});
