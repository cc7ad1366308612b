/**
 * What `fxgate diff generations` writes, from a report made by hand: the table with its summary
 * and the failing fields below it, and JUnit XML with one testcase per operation and generation,
 * a failure naming each field with expected and actual, an error for an operation that could not
 * be compared, and text XML cannot hold escaped.
 */
import { describe, expect, it } from 'vitest';

import { renderJson, renderJunit, renderTable } from '../../../src/cli/diff/reporters.js';
import type { DiffReport, OperationReport } from '../../../src/cli/diff/runner.js';

const agreeing: OperationReport = {
  generation: 'v1',
  operation: 'balances',
  result: 'agrees',
  fieldsCompared: 13,
  fieldsDeclared: 0,
  durationMs: 31,
  fields: [
    { field: 'status', verdict: 'agrees', declaration: 'the envelope: always "success"', values: 1, problems: [] },
  ],
  lists: [],
};

const differing: OperationReport = {
  generation: 'v2',
  operation: 'trade/{id}',
  result: 'differs',
  fieldsCompared: 20,
  fieldsDeclared: 0,
  durationMs: 12,
  fields: [
    {
      field: 'data.tradingPair',
      verdict: 'differs',
      declaration: 'trade.tradingPair: derived tradingPair of the v3 trade (string)',
      values: 1,
      problems: [{ path: 'data.tradingPair', kind: 'differs', expected: '"EUR/USD"', actual: '"<EUR & USD>"' }],
    },
    {
      field: 'data.fee',
      verdict: 'unaccounted',
      declaration: 'not in the declarations',
      values: 0,
      problems: [{ path: 'data.fee', kind: 'unaccounted', actual: '0', note: 'the trade record declares no fee' }],
    },
  ],
  lists: [],
};

const failed: OperationReport = {
  generation: 'v2',
  operation: 'trade/settle',
  result: 'error',
  fieldsCompared: 0,
  fieldsDeclared: 0,
  durationMs: 4,
  error: 'setup: v3 POST /v3/fx/trades answered 409 TRADE_CREDIT_LIMIT_EXCEEDED',
  fields: [],
  lists: [],
};

const report: DiffReport = {
  url: 'http://127.0.0.1:8080',
  orgId: '01a21584-d052-72ad-8a77-77d01a39ae4d',
  startedAt: '2026-11-26T01:42:47.974Z',
  durationMs: 1234,
  agrees: false,
  operations: [agreeing, differing, failed],
};

describe('the table', () => {
  it('has a row per operation, a summary, then every failure', () => {
    expect(renderTable(report)).toBe(
      [
        'operation     generation  fields compared  fields declared  result',
        '------------  ----------  ---------------  ---------------  -------',
        'balances      v1                       13                0  agrees',
        'trade/{id}    v2                       20                0  DIFFERS',
        'trade/settle  v2                        0                0  ERROR',
        '',
        '3 operations against http://127.0.0.1:8080: 1 agree, 1 differ, 1 could not be compared (1.23 s)',
        '',
        'v2 trade/{id} DIFFERS:',
        '  data.tradingPair: differs, expected "EUR/USD", actual "<EUR & USD>"',
        '  data.fee: unaccounted, actual 0 (the trade record declares no fee)',
        '',
        'v2 trade/settle ERROR:',
        '  setup: v3 POST /v3/fx/trades answered 409 TRADE_CREDIT_LIMIT_EXCEEDED',
      ].join('\n'),
    );
  });

  it('cuts a long list of failures short, pointing at the JSON', () => {
    const many = {
      ...differing,
      fields: [
        {
          ...differing.fields[0]!,
          problems: Array.from({ length: 25 }, (_, index) => ({
            path: `data[${index}].amount`,
            kind: 'differs' as const,
            expected: '1',
            actual: '2',
          })),
        },
      ],
    };
    const text = renderTable({ ...report, operations: [many] }, 20);
    expect(text).toContain('  data[19].amount: differs, expected 1, actual 2\n  ... and 5 more (see --json)');
    expect(text).not.toContain('data[20].amount');
  });
});

describe('JUnit XML', () => {
  it('writes a testsuite per generation and a testcase per operation, failures and errors with every field, escaped', () => {
    expect(renderJunit(report)).toBe(
      [
        '<?xml version="1.0" encoding="UTF-8"?>',
        '<testsuites name="fxgate diff generations" tests="3" failures="1" errors="1" time="1.23">',
        '  <testsuite name="fxgate diff generations v1" tests="1" failures="0" errors="0" time="0.03" timestamp="2026-11-26T01:42:47.974Z">',
        '    <testcase classname="fxgate.diff.v1" name="balances" time="0.03"/>',
        '  </testsuite>',
        '  <testsuite name="fxgate diff generations v2" tests="2" failures="1" errors="1" time="0.02" timestamp="2026-11-26T01:42:47.974Z">',
        '    <testcase classname="fxgate.diff.v2" name="trade/{id}" time="0.01">',
        '      <failure message="2 of the answer&apos;s fields or lists differ from v3" type="differs">data.tradingPair: differs, expected &quot;EUR/USD&quot;, actual &quot;&lt;EUR &amp; USD&gt;&quot;',
        'data.fee: unaccounted, actual 0 (the trade record declares no fee)</failure>',
        '    </testcase>',
        '    <testcase classname="fxgate.diff.v2" name="trade/settle" time="0.00">',
        '      <error message="setup: v3 POST /v3/fx/trades answered 409 TRADE_CREDIT_LIMIT_EXCEEDED" type="error">setup: v3 POST /v3/fx/trades answered 409 TRADE_CREDIT_LIMIT_EXCEEDED</error>',
        '    </testcase>',
        '  </testsuite>',
        '</testsuites>',
        '',
      ].join('\n'),
    );
  });

  it('replaces the control characters XML 1.0 cannot hold', () => {
    const control = { ...failed, error: 'bad \u0001 byte' };
    expect(renderJunit({ ...report, operations: [control] })).toContain('message="bad \uFFFD byte"');
  });
});

describe('the JSON', () => {
  it('is the report itself, every field of every operation', () => {
    expect(JSON.parse(renderJson(report))).toEqual(report);
  });
});
