/**
 * A generation written as its changes from another (mappings/endpoints.v1.ts against v2) and
 * applyGenerationChanges: each kind of change does what it says and nothing more, in order,
 * without touching the base table; a change that does not apply (an operation the base lacks, a
 * key left without a lifetime) and a malformed change are refused, naming the change. The record
 * kinds of the same format (applyRecordChanges) change one field of one record each; its error
 * kinds (v1's error answers, error-tables.test.ts) are refused among the endpoint changes.
 */
import { describe, expect, it } from 'vitest';

import { V1_ENDPOINTS } from '../../../../mappings/endpoints.v1.js';
import { V2_ENDPOINTS } from '../../../../mappings/endpoints.v2.js';
import { LEGACY_RECORDS } from '../../../../mappings/records.js';
import type { EndpointMapping } from '../../../../src/gateway/legacy/declarations/endpoint-mappings.js';
import {
  applyGenerationChanges,
  applyRecordChanges,
  type GenerationChange,
  recordChangesOf,
} from '../../../../src/gateway/legacy/declarations/generation-changes.js';
import type { RecordTable } from '../../../../src/gateway/legacy/declarations/record-shapes.js';
import { LegacyMappingError } from '../../../../src/lib/errors/internal-errors.js';

const V2: Readonly<Record<string, EndpointMapping>> = V2_ENDPOINTS;
const GETS = Object.keys(V2).filter((operation) => V2[operation]!.method === 'GET');
const POSTS = Object.keys(V2).filter((operation) => V2[operation]!.method === 'POST');
const WHY = { source: 'ours', reason: 'A test change.' } as const;

const apply = (...changes: GenerationChange[]) => applyGenerationChanges('v1', V2, { base: 'v2', changes });

function problemsOf(run: () => unknown): { table: string; problems: readonly string[] } {
  try {
    run();
  } catch (error) {
    expect(error).toBeInstanceOf(LegacyMappingError);
    const { table, problems } = error as LegacyMappingError;
    return { table, problems };
  }
  throw new Error('expected a LegacyMappingError');
}

describe('applyGenerationChanges: each kind of change', () => {
  it('operation-removed drops the operation and leaves every other mapping as it is', () => {
    const { table } = apply({ kind: 'operation-removed', operation: 'trade/settle', ...WHY });
    expect(Object.keys(table)).toEqual(Object.keys(V2).filter((operation) => operation !== 'trade/settle'));
    for (const [operation, mapping] of Object.entries(table)) expect(mapping).toBe(V2[operation]);
  });

  it('idempotency none: every operation of the method takes no key; the other method keeps its rule', () => {
    const { table } = apply({ kind: 'idempotency', method: 'GET', becomes: 'none', ...WHY });
    for (const operation of GETS)
      expect([operation, table[operation]]).toEqual([operation, { ...V2[operation], idempotency: { kind: 'none' } }]);
    for (const operation of POSTS) expect(table[operation]).toBe(V2[operation]);
  });

  it("idempotency honoured-if-sent keeps each operation's lifetime", () => {
    const { table } = apply({ kind: 'idempotency', method: 'POST', becomes: 'honoured-if-sent', ...WHY });
    for (const operation of POSTS) {
      const base = V2[operation]!.idempotency;
      expect(base.kind).toBe('required');
      expect([operation, table[operation]!.idempotency]).toEqual([
        operation,
        { kind: 'honoured-if-sent', lifetimeSeconds: base.kind === 'none' ? null : base.lifetimeSeconds },
      ]);
    }
    for (const operation of GETS) expect(table[operation]).toBe(V2[operation]);
  });

  it('idempotency none applies to writes too', () => {
    const { table } = apply({ kind: 'idempotency', method: 'POST', becomes: 'none', ...WHY });
    for (const operation of POSTS) expect(table[operation]!.idempotency).toEqual({ kind: 'none' });
  });

  it("data-also-at-root adds the change's provenance to that operation's response only", () => {
    const { table } = apply({ kind: 'data-also-at-root', operation: 'trade', ...WHY });
    expect(table.trade).toEqual({ ...V2.trade, response: { ...V2.trade!.response, dataAlsoAtRoot: WHY } });
    for (const operation of Object.keys(V2).filter((name) => name !== 'trade'))
      expect(table[operation]).toBe(V2[operation]);
  });

  it('returns the base and the changes as declared, and leaves the base table untouched', () => {
    const before = JSON.stringify(V2);
    const applied = applyGenerationChanges('v1', V2, V1_ENDPOINTS);
    expect(applied.base).toBe('v2');
    expect(applied.changes).toEqual(V1_ENDPOINTS.changes);
    expect(JSON.stringify(V2)).toBe(before);
    expect(applied.table).not.toBe(V2);
  });

  it('no changes: the base table as it is', () => {
    expect(apply().table).toEqual(V2);
  });
});

describe('applyGenerationChanges refuses', () => {
  it('an operation the base does not have', () => {
    expect(problemsOf(() => apply({ kind: 'operation-removed', operation: 'trade/cancel', ...WHY }))).toEqual({
      table: 'mappings/endpoints.v1',
      problems: ['changes[0].operation: v2 has no operation trade/cancel'],
    });
    expect(problemsOf(() => apply({ kind: 'data-also-at-root', operation: 'orders', ...WHY })).problems).toEqual([
      'changes[0].operation: v2 has no operation orders',
    ]);
  });

  it('the shipped v1 changes on a base that lacks an operation they name', () => {
    const { 'trade/settle': _dropped, ...base } = V2;
    expect(problemsOf(() => applyGenerationChanges('v1', base, V1_ENDPOINTS)).problems).toEqual([
      'changes[2].operation: v2 has no operation trade/settle',
    ]);
  });

  it('a change to an operation an earlier change removed (changes apply in order)', () => {
    const removed = { kind: 'operation-removed', operation: 'trade/reverse', ...WHY } as const;
    expect(
      problemsOf(() => apply(removed, { kind: 'data-also-at-root', operation: 'trade/reverse', ...WHY })).problems,
    ).toEqual(['changes[1].operation: v2 has no operation trade/reverse']);
    expect(problemsOf(() => apply(removed, removed)).problems).toEqual([
      'changes[1].operation: v2 has no operation trade/reverse',
    ]);
  });

  it('an error change among the endpoint changes: error changes sit with the error answers', () => {
    expect(problemsOf(() => apply({ kind: 'error-code-kept', code: 'IDEMPOTENCY_MISMATCH', ...WHY })).problems).toEqual(
      ['changes[0]: error changes are declared with the error answers (mappings/errors.v1)'],
    );
  });

  it('a change that makes a key honoured-if-sent where no lifetime is left to keep it for', () => {
    const problems = problemsOf(() =>
      apply(
        { kind: 'idempotency', method: 'GET', becomes: 'none', ...WHY },
        { kind: 'idempotency', method: 'GET', becomes: 'honoured-if-sent', ...WHY },
      ),
    ).problems;
    expect(problems).toEqual(GETS.map((operation) => `changes[1]: ${operation} has no lifetime to keep a key for`));
  });

  it.each([
    [
      'an unknown key on a change',
      { base: 'v2', changes: [{ kind: 'operation-removed', operation: 'trade/settle', note: 'x', ...WHY }] },
      ['changes.0: Unrecognized key: "note"'],
    ],
    [
      'an unknown kind of change',
      { base: 'v2', changes: [{ kind: 'operation-renamed', operation: 'trade/settle', ...WHY }] },
      [
        "changes.0.kind: Invalid discriminator value. Expected 'operation-removed' | 'idempotency' | 'data-also-at-root' | 'pagination' | 'field-renamed' | 'field-added' | 'field-removed' | 'field-retyped' | 'value-mapped' | 'status-downgraded' | 'error-code-kept' | 'error-answer-changed'",
      ],
    ],
    [
      'an idempotency change to an unknown rule',
      { base: 'v2', changes: [{ kind: 'idempotency', method: 'GET', becomes: 'required', ...WHY }] },
      [expect.stringMatching(/^changes\.0\.becomes: Invalid option/)],
    ],
    [
      'an idempotency change for an unknown method',
      { base: 'v2', changes: [{ kind: 'idempotency', method: 'PUT', becomes: 'none', ...WHY }] },
      [expect.stringMatching(/^changes\.0\.method: Invalid option/)],
    ],
    [
      'a change without a reason',
      { base: 'v2', changes: [{ kind: 'operation-removed', operation: 'trade/settle', source: 'doc', reason: '' }] },
      ['changes.0.reason: must not be empty'],
    ],
    [
      'a change of an unknown source',
      {
        base: 'v2',
        changes: [{ kind: 'operation-removed', operation: 'trade/settle', source: 'rumour', reason: 'Why.' }],
      },
      [expect.stringMatching(/^changes\.0\.source: Invalid option/)],
    ],
    ['an unknown base', { base: 'v3', changes: [] }, [expect.stringMatching(/^base: Invalid option/)]],
    [
      'an unknown key beside the changes',
      { base: 'v2', changes: [], comment: 'x' },
      [expect.stringMatching(/Unrecognized key: "comment"$/)],
    ],
    [
      'changes that are no list',
      { base: 'v2', changes: { 0: { kind: 'operation-removed', operation: 'trade/settle', ...WHY } } },
      [expect.stringMatching(/^changes: Invalid input: expected array/)],
    ],
  ])('%s', (_rule, changes, expected) => {
    expect(problemsOf(() => applyGenerationChanges('v1', V2, changes)).problems).toEqual(expected);
  });
});

describe('the pagination kind', () => {
  it('changes how one operation pages, and nothing else', () => {
    const { table } = apply({ kind: 'pagination', operation: 'trades', becomes: 'none', ...WHY });
    expect(table['trades']).toEqual({ ...V2['trades'], pagination: 'none' });
    expect(table['deposits']).toBe(V2['deposits']);
    expect(
      problemsOf(() => apply({ kind: 'pagination', operation: 'nothing', becomes: 'none', ...WHY })).problems,
    ).toEqual(['changes[0].operation: v2 has no operation nothing']);
  });
});

describe('applyRecordChanges: each record kind changes one field of one record', () => {
  const RECORDS: RecordTable = LEGACY_RECORDS;
  const applyRecords = (...changes: GenerationChange[]) => applyRecordChanges(RECORDS, changes, 'test');
  const pair = RECORDS.tradingPair!;

  it('field-renamed keeps the value and the place, under the change’s provenance', () => {
    const { tradingPair } = applyRecords({
      kind: 'field-renamed',
      record: 'tradingPair',
      field: 'buy',
      to: 'base',
      ...WHY,
    });
    expect(Object.keys(tradingPair!.fields)).toEqual(['base', 'sell']);
    expect(tradingPair!.fields['base']).toEqual({ ...pair.fields['buy'], ...WHY });
  });

  it('field-added puts the field after the one named, else last; field-removed drops it', () => {
    const added = applyRecords(
      {
        kind: 'field-added',
        record: 'tradingPair',
        field: 'symbol',
        after: 'buy',
        value: { type: 'string', from: 'symbol' },
        ...WHY,
      },
      {
        kind: 'field-added',
        record: 'tradingPair',
        field: 'kind',
        value: { type: 'string', constant: 'PAIR' },
        ...WHY,
      },
    );
    expect(Object.keys(added.tradingPair!.fields)).toEqual(['buy', 'symbol', 'sell', 'kind']);
    expect(added.tradingPair!.fields['kind']).toEqual({ type: 'string', constant: 'PAIR', ...WHY });
    const removed = applyRecords({ kind: 'field-removed', record: 'tradingPair', field: 'sell', ...WHY });
    expect(Object.keys(removed.tradingPair!.fields)).toEqual(['buy']);
  });

  it('field-retyped and value-mapped change the type and the map only; the base table is untouched', () => {
    const table = applyRecords(
      { kind: 'field-retyped', record: 'deposit', field: 'comments', type: 'string', nullable: false, ...WHY },
      { kind: 'value-mapped', record: 'withdrawal', field: 'status', map: 'depositStatus', ...WHY },
    );
    expect(table.deposit!.fields['comments']).toEqual({ type: 'string', from: 'comments', ...WHY });
    expect(table.withdrawal!.fields['status']).toEqual({
      ...RECORDS.withdrawal!.fields['status'],
      ...WHY,
      map: 'depositStatus',
    });
    expect(RECORDS.deposit!.fields['comments']).toHaveProperty('nullable', true);
    expect(table.balance).toBe(RECORDS.balance);
    const kept = applyRecords({ kind: 'field-retyped', record: 'deposit', field: 'comments', type: 'id', ...WHY });
    expect(kept.deposit!.fields['comments']).toEqual({ type: 'id', nullable: true, from: 'comments', ...WHY });
  });

  it('refuses a change that does not apply, naming it', () => {
    expect(
      problemsOf(() =>
        applyRecords(
          { kind: 'field-renamed', record: 'tradingPair', field: 'buy', to: 'sell', ...WHY },
          { kind: 'field-removed', record: 'nothing', field: 'buy', ...WHY },
          {
            kind: 'field-added',
            record: 'tradingPair',
            field: 'x',
            after: 'y',
            value: { type: 'string', constant: 'X' },
            ...WHY,
          },
          { kind: 'value-mapped', record: 'withdrawalAddress', field: 'coinId', map: 'networkName', ...WHY },
        ),
      ).problems,
    ).toEqual([
      'record changes[0] (field-renamed): tradingPair already has a field sell',
      'record changes[1] (field-removed): no record named nothing',
      'record changes[2] (field-added): tradingPair has no field y to add x after',
      'record changes[3] (value-mapped): withdrawalAddress.coinId is not read from a v3 field or a derived value a map can apply to',
    ]);
  });

  it('only the record kinds count: a list of endpoint changes changes no record', () => {
    expect(recordChangesOf(V1_ENDPOINTS.changes)).toEqual([]);
    expect(applyRecordChanges(RECORDS, V1_ENDPOINTS.changes, 'test')).toEqual(RECORDS);
  });
});
