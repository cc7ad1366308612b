/**
 * `fxgate usage`: the usage report printed from the database, in process, in its three formats
 * (an aligned table, the admin route's JSON, RFC 4180 CSV with a header row), its options
 * checked as the admin route checks its query, on a fixed clock; and once through the whole
 * command line (runCli) on PostgreSQL, configured by its environment.
 */
import { Command, CommanderError } from 'commander';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { csvField, type UsageSource } from '../../../src/cli/commands/usage.js';
import { registerUsageCommand } from '../../../src/cli/definitions/usage.js';
import { CliRun } from '../../../src/cli/io.js';
import { NO_OPERATION, readUsage, UsageRecorder, type UsageReport } from '../../../src/gateway/usage/usage-recorder.js';
import { CliError, EXIT_CODES } from '../../../src/lib/errors/internal-errors.js';
import { newUuid } from '../../../src/lib/ids.js';
import { createTestPglite, createTestPostgres, type TestDatabase } from '../../support/databases.js';
import { CapturedIo, fxgate } from '../in-process-cli.js';

const NOW = Date.UTC(2026, 11, 20, 12);
const DAY = 24 * 3_600_000;
const ORG = newUuid();
const KEY = `org/${ORG}/apiKey/${newUuid()}`;
const OTHER_ORG = newUuid();
const OTHER_KEY = `org/${OTHER_ORG}/apiKey/${newUuid()}`;

/** RFC 4180 records: fields split on commas outside quotes, `""` inside quotes is one quote, records end in CRLF. */
function parseCsv(text: string): string[][] {
  expect(text.endsWith('\r\n')).toBe(true);
  const records: string[][] = [];
  let field = '';
  let record: string[] = [];
  let quoted = false;
  for (let i = 0; i < text.length; i += 1) {
    const char = text[i]!;
    if (quoted) {
      if (char === '"' && text[i + 1] === '"') {
        field += '"';
        i += 1;
      } else if (char === '"') quoted = false;
      else field += char;
    } else if (char === '"' && field === '') quoted = true;
    else if (char === ',') {
      record.push(field);
      field = '';
    } else if (char === '\r' && text[i + 1] === '\n') {
      record.push(field);
      records.push(record);
      record = [];
      field = '';
      i += 1;
    } else {
      expect(char, `a bare ${JSON.stringify(char)} at ${i}`).not.toMatch(/[\r\n"]/);
      field += char;
    }
  }
  return records;
}

async function seed(database: TestDatabase): Promise<void> {
  const at = (ms: number) => () => ms;
  const old = new UsageRecorder(database.db, { flushIntervalMs: 3_600_000, now: at(NOW - 30 * DAY) });
  old.seen({
    generation: 'v1',
    operation: 'balances',
    caller: { orgId: OTHER_ORG, keyName: OTHER_KEY },
    address: '203.0.113.9',
  });
  await old.close();
  const recent = new UsageRecorder(database.db, { flushIntervalMs: 3_600_000, now: at(NOW - DAY) });
  for (let n = 0; n < 3; n += 1)
    recent.seen({
      generation: 'v1',
      operation: 'trades',
      caller: { orgId: ORG, keyName: KEY },
      address: '2001:db8::7',
    });
  recent.seen({
    generation: 'v1',
    operation: 'trades',
    caller: { orgId: ORG, keyName: KEY },
    address: '2001:db8::7',
    refused: 'brownout',
  });
  for (let n = 0; n < 2; n += 1)
    recent.seen({
      generation: 'v1',
      operation: 'trades',
      caller: { orgId: ORG, keyName: KEY },
      address: '2001:db8::7',
      refused: 'rate_limit',
    });
  recent.seen({ generation: 'v1', operation: 'trades', caller: null, address: '198.51.100.1' });
  recent.seen({
    generation: 'v2',
    operation: 'trade/{id}',
    caller: { orgId: ORG, keyName: KEY },
    address: '10.0.0.1',
    refused: 'sunset',
  });
  // Not an operation the gateway has: text that CSV must quote.
  recent.seen({ generation: 'v2', operation: 'odd, "quoted"\r\nname', caller: null, address: '10.0.0.2' });
  await recent.close();
}

describe('fxgate usage, in process', () => {
  let database: TestDatabase;
  const source = (): UsageSource => ({ report: (query) => readUsage(database.db, query), now: () => NOW });

  async function usage(...args: string[]): Promise<string> {
    const captured = new CapturedIo();
    const program = new Command('fxgate').exitOverride();
    program.configureOutput({ writeErr: () => undefined, writeOut: () => undefined });
    registerUsageCommand(program, new CliRun(captured.io), source());
    await program.parseAsync(['usage', ...args], { from: 'user' });
    return captured.stdout;
  }

  beforeAll(async () => {
    database = await createTestPglite();
    await seed(database);
  });
  afterAll(async () => database?.drop());

  it('prints a table for people: one row per org, key (by its id) and operation, the unattributed without org or key', async () => {
    const text = await usage('--generation', 'v1');
    const lines = text.trimEnd().split('\n');
    expect(lines[0]).toBe('Legacy usage (counts since the first request counted)');
    expect(lines[2]).toMatch(
      /^GENERATION {2}ORG +KEY ID +OPERATION +COUNT {2}BROWNOUT 410 {2}SUNSET 410 {2}RATE LIMIT 429 {2}FIRST SEEN +LAST SEEN +LAST ADDRESS$/,
    );
    const rows = lines.slice(3).map((line) => line.split(/ {2,}/));
    // By org (the two orgs' ids sort either way), the unattributed last.
    const attributed = [
      [
        'v1',
        ORG,
        KEY.split('/').at(-1)!,
        'trades',
        '6',
        '1',
        '0',
        '2',
        new Date(NOW - DAY).toISOString(),
        new Date(NOW - DAY).toISOString(),
        '2001:db8::7',
      ],
      [
        'v1',
        OTHER_ORG,
        OTHER_KEY.split('/').at(-1)!,
        'balances',
        '1',
        '0',
        '0',
        '0',
        new Date(NOW - 30 * DAY).toISOString(),
        new Date(NOW - 30 * DAY).toISOString(),
        '203.0.113.9',
      ],
    ].sort((a, b) => a[1]!.localeCompare(b[1]!));
    expect(rows).toEqual([
      ...attributed,
      [
        'v1',
        '(no key)',
        '-',
        'trades',
        '1',
        '0',
        '0',
        '0',
        new Date(NOW - DAY).toISOString(),
        new Date(NOW - DAY).toISOString(),
        '198.51.100.1',
      ],
    ]);
    // The columns line up: every row is as wide as the header up to its last column.
    const lastColumn = lines[2]!.indexOf('LAST ADDRESS');
    for (const line of lines.slice(3)) expect(line.slice(0, lastColumn).length).toBe(lastColumn);
  });

  it('says when nothing was counted', async () => {
    expect(await usage('--since', '1h')).toBe(
      `No legacy requests counted since ${new Date(NOW - 3_600_000).toISOString()}.\n`,
    );
  });

  it('prints what GET /admin/usage serves with --format json, since a duration back from now', async () => {
    const text = await usage('--format', 'json', '--since', '7d');
    const report = JSON.parse(text) as UsageReport;
    expect(report).toEqual(JSON.parse(JSON.stringify(await readUsage(database.db, { since: NOW - 7 * DAY }))));
    expect(report.since).toBe(new Date(NOW - 7 * DAY).toISOString());
    expect(report.rows.map((row) => `${row.generation} ${row.operation}`)).toEqual([
      'v1 trades',
      'v1 trades',
      'v2 trade/{id}',
      'v2 odd, "quoted"\r\nname',
    ]);
  });

  it('prints RFC 4180 CSV with a header row, nulls as empty fields, quoting what needs it', async () => {
    const text = await usage('--format', 'csv');
    const records = parseCsv(text);
    expect(records[0]).toEqual([
      'orgId',
      'keyName',
      'generation',
      'operation',
      'count',
      'refusedInBrownout',
      'refusedAfterSunset',
      'rateLimited',
      'firstSeen',
      'lastSeen',
      'lastAddress',
    ]);
    const { rows } = await readUsage(database.db);
    expect(records.slice(1)).toEqual(
      rows.map((row) => [
        row.orgId ?? '',
        row.keyName ?? '',
        row.generation,
        row.operation,
        String(row.count),
        String(row.refusedInBrownout),
        String(row.refusedAfterSunset),
        String(row.rateLimited),
        row.firstSeen,
        row.lastSeen,
        row.lastAddress ?? '',
      ]),
    );
    expect(records.slice(1).find((record) => record[3] === 'trade/{id}')).toEqual([
      ORG,
      KEY,
      'v2',
      'trade/{id}',
      '1',
      '0',
      '1',
      '0',
      expect.any(String),
      expect.any(String),
      '10.0.0.1',
    ]);
    expect(text).toContain(',"odd, ""quoted""\r\nname",');
  });

  it('quotes a field as RFC 4180 says, and only then', () => {
    expect(csvField('plain')).toBe('plain');
    expect(csvField(12)).toBe('12');
    expect(csvField(null)).toBe('');
    expect(csvField('a,b')).toBe('"a,b"');
    expect(csvField('say "hi"')).toBe('"say ""hi"""');
    expect(csvField('two\nlines')).toBe('"two\nlines"');
    expect(csvField('cr\r')).toBe('"cr\r"');
  });

  it('refuses a since or a generation it cannot read as a usage error (exit 2) saying what to write', async () => {
    for (const [args, message] of [
      [
        ['--since', 'last week'],
        /^--since: "last week" is not a time to count from: write a duration back from now such as 7d, 24h or 30m/,
      ],
      [['--since', '2026-12-01T00:00:00'], /^--since: .*add its zone/],
      [['--generation', 'v3'], /^--generation must be v1 or v2, got "v3"/],
    ] as const) {
      const refused = await usage(...args).catch((error: unknown) => error);
      expect(refused, args.join(' ')).toBeInstanceOf(CliError);
      expect((refused as CliError).exitCode).toBe(EXIT_CODES.usage);
      expect((refused as CliError).message).toMatch(message);
    }
    const format = await usage('--format', 'xml').catch((error: unknown) => error);
    expect(format).toBeInstanceOf(CommanderError);
    expect((format as CommanderError).message).toMatch(/Allowed choices are table, json, csv/);
    expect(NO_OPERATION).toBe('(no operation)');
  });
});

describe('fxgate usage, the command line on PostgreSQL', () => {
  let database: TestDatabase;
  beforeAll(async () => {
    database = await createTestPostgres();
    await seed(database);
  });
  afterAll(async () => {
    await database?.drop();
  });

  it('prints the report of the configured database', async () => {
    const result = await fxgate(['usage', '--generation', 'v2', '--format', 'csv'], { DATABASE_URL: database.url! });
    expect(result.stderr).toBe('');
    expect(result.code).toBe(0);
    const records = parseCsv(result.stdout);
    expect(records.map((record) => record[3])).toEqual(['operation', 'trade/{id}', 'odd, "quoted"\r\nname']);
  });
});
