/**
 * `fxgate usage --readiness`: the readiness report printed from the database, in process, as an
 * aligned table (one line per org, key, operation and blocker, `ready` where nothing would
 * break), as the admin route's JSON and as RFC 4180 CSV to mail to each integrator; its options
 * checked as the admin route checks its query; and once through the whole command line (runCli)
 * on PostgreSQL, configured by its environment.
 */
import { Command } from 'commander';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { registerUsageCommand } from '../../../src/cli/definitions/usage.js';
import { CliRun } from '../../../src/cli/io.js';
import { ReadinessRecorder, readReadiness } from '../../../src/gateway/usage/readiness-recorder.js';
import { readUsage, UsageRecorder } from '../../../src/gateway/usage/usage-recorder.js';
import { CliError, EXIT_CODES } from '../../../src/lib/errors/internal-errors.js';
import { newUuid } from '../../../src/lib/ids.js';
import { createTestPglite, createTestPostgres, type TestDatabase } from '../../support/databases.js';
import { CapturedIo, fxgate } from '../in-process-cli.js';

const NOW = Date.UTC(2026, 11, 20, 12);
const DAY = 24 * 3_600_000;
const ORG = newUuid();
const KEY_ID = newUuid();
const KEY = `org/${ORG}/apiKey/${KEY_ID}`;
const OTHER_ORG = newUuid();
const OTHER_KEY = `org/${OTHER_ORG}/apiKey/${newUuid()}`;
const MISSING = 'POST /v1/brokerage/{orgId}/trade without Idempotency-Key';

/** RFC 4180 records of text without quoted line breaks: fields split on commas outside quotes. */
function parseCsv(text: string): string[][] {
  expect(text.endsWith('\r\n')).toBe(true);
  return text
    .slice(0, -2)
    .split('\r\n')
    .map((line) => {
      const fields: string[] = [];
      let field = '';
      let quoted = false;
      for (let i = 0; i < line.length; i += 1) {
        const char = line[i]!;
        if (quoted && char === '"' && line[i + 1] === '"') {
          field += '"';
          i += 1;
        } else if (char === '"') quoted = !quoted;
        else if (char === ',' && !quoted) {
          fields.push(field);
          field = '';
        } else field += char;
      }
      fields.push(field);
      return fields;
    });
}

async function seed(database: TestDatabase): Promise<void> {
  const at = (ms: number) => () => ms;
  const usage = new UsageRecorder(database.db, { flushIntervalMs: 3_600_000, now: at(NOW - DAY) });
  const readiness = new ReadinessRecorder(database.db, { flushIntervalMs: 3_600_000, now: at(NOW - DAY) });
  const caller = { orgId: ORG, keyName: KEY };
  for (let n = 0; n < 4; n += 1) usage.seen({ generation: 'v1', operation: 'trade', caller, address: '10.0.0.1' });
  for (let n = 0; n < 3; n += 1)
    readiness.met({
      generation: 'v1',
      operation: 'trade',
      caller,
      hits: [
        { kind: 'idempotency-key-missing', severity: 'blocker', example: MISSING },
        { kind: 'trade-read-top-level', severity: 'warning', example: 'POST /v1/brokerage/{orgId}/trade' },
      ],
    });
  usage.seen({ generation: 'v1', operation: 'balances', caller, address: '10.0.0.1' });
  usage.seen({
    generation: 'v2',
    operation: 'trade',
    caller: { orgId: OTHER_ORG, keyName: OTHER_KEY },
    address: '10.0.0.2',
  });
  readiness.met({
    generation: 'v2',
    operation: 'trade',
    caller: { orgId: OTHER_ORG, keyName: OTHER_KEY },
    hits: [
      { kind: 'scope-missing', severity: 'blocker', example: 'POST /v2/brokerage/{orgId}/trade: key scopes trade' },
    ],
  });
  await Promise.all([usage.close(), readiness.close()]);
}

describe('fxgate usage --readiness, in process', () => {
  let database: TestDatabase;

  async function usage(...args: string[]): Promise<string> {
    const captured = new CapturedIo();
    const program = new Command('fxgate').exitOverride();
    program.configureOutput({ writeErr: () => undefined, writeOut: () => undefined });
    registerUsageCommand(program, new CliRun(captured.io), {
      report: (query) => readUsage(database.db, query),
      readiness: (query) => readReadiness(database.db, query),
      now: () => NOW,
    });
    await program.parseAsync(['usage', ...args], { from: 'user' });
    return captured.stdout;
  }

  beforeAll(async () => {
    database = await createTestPglite();
    await seed(database);
  });
  afterAll(async () => database?.drop());

  it('prints a table: one line per org, key, operation and blocker, ready where nothing would break', async () => {
    const lines = (await usage('--readiness', '--generation', 'v1')).trimEnd().split('\n');
    expect(lines[0]).toBe(
      'Readiness of v1 clients for v2 (counts since the first request counted): 1 of 2 key operations blocked',
    );
    expect(lines[2]).toMatch(/^ORG +KEY ID +OPERATION +COUNT {2}LAST SEEN +BLOCKER +SEVERITY +MET {2}EXAMPLE +GUIDE$/);
    const seen = new Date(NOW - DAY).toISOString();
    expect(lines.slice(3).map((line) => line.split(/ {2,}/))).toEqual([
      [ORG, KEY_ID, 'balances', '1', seen, 'ready', '-', '-', '-', '-'],
      [
        ORG,
        KEY_ID,
        'trade',
        '4',
        seen,
        'idempotency-key-missing',
        'blocker',
        '3',
        MISSING,
        '/docs/migrate/v1-to-v2#trade',
      ],
      [
        ORG,
        KEY_ID,
        'trade',
        '4',
        seen,
        'trade-read-top-level',
        'warning',
        '3',
        'POST /v1/brokerage/{orgId}/trade',
        '/docs/migrate/v1-to-v2#trade',
      ],
    ]);
    expect(await usage('--readiness', '--generation', 'v2', '--since', '1h')).toBe(
      `Readiness of v2 clients for v3, rows last seen since ${new Date(NOW - 3_600_000).toISOString()}: no requests of a known key counted.\n`,
    );
  });

  it('prints what GET /admin/readiness serves with --format json', async () => {
    const report = JSON.parse(await usage('--readiness', '--generation', 'v2', '--format', 'json'));
    expect(report).toEqual(await readReadiness(database.db, { generation: 'v2' }));
    expect(report).toMatchObject({ since: null, generation: 'v2', target: 'v3' });
  });

  it('prints RFC 4180 CSV, one record per org, key, operation and blocker, to mail to each integrator', async () => {
    const records = parseCsv(await usage('--readiness', '--generation', 'v1', '--format', 'csv'));
    const seen = new Date(NOW - DAY).toISOString();
    expect(records).toEqual([
      [
        'generation',
        'target',
        'orgId',
        'keyName',
        'operation',
        'count',
        'lastSeen',
        'kind',
        'severity',
        'blockerCount',
        'example',
        'guide',
      ],
      ['v1', 'v2', ORG, KEY, 'balances', '1', seen, '', '', '', '', ''],
      [
        'v1',
        'v2',
        ORG,
        KEY,
        'trade',
        '4',
        seen,
        'idempotency-key-missing',
        'blocker',
        '3',
        MISSING,
        '/docs/migrate/v1-to-v2#trade',
      ],
      [
        'v1',
        'v2',
        ORG,
        KEY,
        'trade',
        '4',
        seen,
        'trade-read-top-level',
        'warning',
        '3',
        'POST /v1/brokerage/{orgId}/trade',
        '/docs/migrate/v1-to-v2#trade',
      ],
    ]);
  });

  it('refuses a readiness report without its generation, or one it cannot read, as a usage error saying what to write', async () => {
    for (const [args, message] of [
      [['--readiness'], /^--generation is required: v1 \(its clients move to v2\) or v2 \(its clients move to v3\)$/],
      [['--readiness', '--generation', 'v3'], /^--generation must be v1 \(its clients move to v2\) or v2/],
      [['--readiness', '--generation', 'v1', '--since', 'soon'], /^--since: "soon" is not a time to count from/],
    ] as const) {
      const refused = await usage(...args).catch((error: unknown) => error);
      expect(refused, args.join(' ')).toBeInstanceOf(CliError);
      expect((refused as CliError).exitCode).toBe(EXIT_CODES.usage);
      expect((refused as CliError).message).toMatch(message);
    }
  });
});

describe('fxgate usage --readiness, the command line on PostgreSQL', () => {
  let database: TestDatabase;
  beforeAll(async () => {
    database = await createTestPostgres();
    await seed(database);
  });
  afterAll(async () => {
    await database?.drop();
  });

  it('prints the report of the configured database', async () => {
    const result = await fxgate(['usage', '--readiness', '--generation', 'v2', '--format', 'csv'], {
      DATABASE_URL: database.url!,
    });
    expect(result.stderr).toBe('');
    expect(result.code).toBe(0);
    expect(parseCsv(result.stdout).map((record) => [record[2], record[4], record[7]])).toEqual([
      ['orgId', 'operation', 'kind'],
      [OTHER_ORG, 'trade', 'scope-missing'],
    ]);
  });
});
