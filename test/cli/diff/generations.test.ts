/**
 * `fxgate diff generations` against `fxgate all`, started in process as the command starts it, on
 * the embedded default (PGlite, the in-process store) and on PostgreSQL and Redis: every v1 and v2
 * operation agrees with v3, every field of every answer accounted for. Then what it must catch: a
 * gateway serving a copy of mappings/ with one record field renamed fails on exactly that
 * operation and field, and a proxy that rewrites one amount of one answer passes when the value
 * is the same (250.00 -> 250.0) and fails on exactly that field when it is rounded. Usage errors
 * are refused before anything is sent, and the whole command line (runCli) runs once.
 */
import { cp, mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';

import { request } from 'undici';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { diffGenerations } from '../../../src/cli/diff/generations-command.js';
import type { DiffReport, OperationReport } from '../../../src/cli/diff/runner.js';
import { CliRun } from '../../../src/cli/io.js';
import { readOrgBook, setCreditLine } from '../../../src/core/trading/org-books.js';
import { legacyFieldIndex } from '../../../src/gateway/compare/legacy-fields.js';
import type { EndpointMapping } from '../../../src/gateway/legacy/declarations/endpoint-mappings.js';
import { LEGACY_OPERATIONS } from '../../../src/gateway/legacy/declarations/legacy-operations.js';
import { type LegacyMappings, loadLegacyMappings } from '../../../src/gateway/legacy/declarations/mappings-loader.js';
import { CliError } from '../../../src/lib/errors/internal-errors.js';
import { generateSealingKey } from '../../../src/lib/secrets/sealing-keys.js';
import { createTestPostgres, type TestDatabase } from '../../support/databases.js';
import { testRedisEnv } from '../../support/test-run.js';
import { CapturedIo, fxgate } from '../in-process-cli.js';
import { type InProcessAll, startAllInProcess } from './in-process-all.js';

const MAPPINGS_DIR = new URL('../../../mappings/', import.meta.url);

let mappings: LegacyMappings;
let reportsDir: string;
beforeAll(async () => {
  mappings = await loadLegacyMappings();
  reportsDir = await mkdtemp(join(tmpdir(), 'fxgate-diff-reports-'));
});
afterAll(async () => {
  if (reportsDir) await rm(reportsDir, { recursive: true, force: true });
});

/** Runs the command in process; its output, exit code and the JSON and JUnit it wrote. */
async function diff(url: string, deployment: InProcessAll, extra: { only?: string } = {}) {
  const captured = new CapturedIo();
  const name = `${Math.random().toString(16).slice(2)}`;
  const json = join(reportsDir, `${name}.json`);
  const junit = join(reportsDir, `${name}.xml`);
  const { exitCode } = await diffGenerations(new CliRun(captured.io), {
    url,
    key: deployment.keyPath,
    issuer: deployment.issuer,
    json,
    junit,
    ...extra,
  });
  return {
    exitCode,
    stdout: captured.stdout,
    report: JSON.parse(await readFile(json, 'utf8')) as DiffReport,
    junit: await readFile(junit, 'utf8'),
  };
}

const mappingOf = (operation: OperationReport): EndpointMapping =>
  (mappings.endpoints[operation.generation] as Readonly<Record<string, EndpointMapping>>)[operation.operation]!;

/** Every operation of both generations, in the order the tool runs them. */
const EVERY_OPERATION = (['v1', 'v2'] as const).flatMap((generation) =>
  LEGACY_OPERATIONS[generation].map((operation) => `${generation} ${operation}`),
);

/** The report agrees everywhere, and every declared field of every answer was judged. */
function expectEveryFieldAccountedFor(report: DiffReport): void {
  expect(report.operations.map((operation) => `${operation.generation} ${operation.operation}`)).toEqual(
    EVERY_OPERATION,
  );
  for (const operation of report.operations) {
    const where = `${operation.generation} ${operation.operation}`;
    expect([where, operation.result, operation.error]).toEqual([where, 'agrees', undefined]);
    expect([where, operation.fields.filter((field) => !['agrees', 'answer-only'].includes(field.verdict))]).toEqual([
      where,
      [],
    ]);
    expect([where, operation.lists.filter((check) => !check.ok)]).toEqual([where, []]);
    const judged = new Map(operation.fields.map((field) => [field.field, field]));
    for (const path of legacyFieldIndex(mappingOf(operation), mappings.records).keys()) {
      expect([where, path, (judged.get(path)?.values ?? 0) > 0]).toEqual([where, path, true]);
    }
    expect(operation.fieldsCompared + operation.fieldsDeclared).toBe(operation.fields.length);
  }
  const reversal = report.operations.find((operation) => operation.operation === 'trade/reverse')!;
  expect(reversal.fields.filter((field) => field.verdict === 'answer-only').map((field) => field.field)).toEqual([
    'data.reversalDetails.direction',
    'data.reversalDetails.differentialAmount',
    'data.reversalDetails.currency',
  ]);
}

/** The operations that did not agree, with the fields that failed and how. */
function failures(report: DiffReport): string[] {
  return report.operations
    .filter((operation) => operation.result !== 'agrees')
    .flatMap((operation) => [
      ...(operation.error ? [`${operation.generation} ${operation.operation}: ${operation.error}`] : []),
      ...operation.fields
        .filter((field) => !['agrees', 'answer-only'].includes(field.verdict))
        .map((field) => `${operation.generation} ${operation.operation} ${field.field} ${field.verdict}`),
      ...operation.lists
        .filter((check) => !check.ok)
        .map((check) => `${operation.generation} ${operation.operation} ${check.list} ${check.check}`),
    ]);
}

describe.each([
  // The embedded default keeps the shipped rate limits: one run stays within them.
  {
    backend: 'the embedded default (PGlite, in-process store)',
    env: async () => ({ env: {}, database: null as TestDatabase | null }),
  },
  {
    backend: 'PostgreSQL and Redis',
    env: async () => {
      const database = await createTestPostgres();
      return {
        env: {
          DATABASE_URL: database.url!,
          ...testRedisEnv(),
          FXGATE_SECRETS_KEY: generateSealingKey(),
        },
        database,
      };
    },
  },
])('fxgate diff generations against fxgate all on $backend', ({ env }) => {
  let deployment: InProcessAll;
  let database: TestDatabase | null = null;
  beforeAll(async () => {
    const prepared = await env();
    database = prepared.database;
    deployment = await startAllInProcess(prepared.env);
  });
  afterAll(async () => {
    await deployment?.close();
    await database?.drop();
  });

  it(
    'agrees on every operation of both generations, with every field accounted for; exit 0',
    { timeout: 120_000 },
    async () => {
      const run = await diff(deployment.url, deployment);
      expect(failures(run.report)).toEqual([]);
      expect(run.exitCode).toBe(0);
      expectEveryFieldAccountedFor(run.report);
      expect(run.report).toMatchObject({ url: deployment.url, orgId: deployment.orgId, agrees: true });

      const table = run.stdout.split('\n');
      expect(table[0]).toMatch(/^operation +generation +fields compared +fields declared +result$/);
      expect(table).toContainEqual(expect.stringMatching(/^trade\/reverse +v2 +\d+ +3 +agrees$/));
      expect(run.stdout).toMatch(
        new RegExp(
          `^27 operations against ${deployment.url}: 27 agree, 0 differ, 0 could not be compared \\(\\d+\\.\\d+ s\\)$`,
          'm',
        ),
      );

      expect(run.junit).toMatch(
        /^<\?xml version="1.0" encoding="UTF-8"\?>\n<testsuites name="fxgate diff generations" tests="27" failures="0" errors="0" time="[\d.]+">/,
      );
      expect(run.junit.match(/<testcase /g)).toHaveLength(27);
      expect(run.junit).toContain('<testcase classname="fxgate.diff.v2" name="trade/{id}" time="');
      expect(run.junit).not.toContain('<failure');
    },
  );
});

/** An HTTP proxy in front of the gateway that passes everything through, and rewrites the body of one legacy answer. */
async function tamperingProxy(
  target: string,
  path: RegExp,
  rewrite: (body: string) => string,
): Promise<{ url: string; rewrites: { before: string; after: string }[]; close: () => Promise<void> }> {
  const rewrites: { before: string; after: string }[] = [];
  const server: Server = createServer((incoming: IncomingMessage, outgoing: ServerResponse) => {
    const chunks: Buffer[] = [];
    incoming.on('data', (chunk: Buffer) => chunks.push(chunk));
    incoming.on('end', () => {
      const headers = Object.fromEntries(
        Object.entries(incoming.headers).filter(([name]) => !['host', 'connection', 'content-length'].includes(name)),
      ) as Record<string, string>;
      const body = chunks.length > 0 ? Buffer.concat(chunks) : undefined;
      request(`${target}${incoming.url!}`, { method: incoming.method as 'GET', headers, body })
        .then(async (answer) => {
          let text = await answer.body.text();
          if (path.test(incoming.url!) && answer.statusCode === 200) {
            const after = rewrite(text);
            rewrites.push({ before: text, after });
            text = after;
          }
          const passed = Object.entries(answer.headers).filter(
            ([name]) => !['content-length', 'transfer-encoding', 'connection', 'keep-alive'].includes(name),
          );
          outgoing.writeHead(answer.statusCode, Object.fromEntries(passed) as Record<string, string>);
          outgoing.end(text);
        })
        .catch((error: unknown) => {
          outgoing.writeHead(502);
          outgoing.end(String(error));
        });
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  return {
    url: `http://127.0.0.1:${port}`,
    rewrites,
    close: () => new Promise((resolve) => server.close(() => resolve())),
  };
}

describe('fxgate diff generations catches what differs', () => {
  let database: TestDatabase;
  let deployment: InProcessAll;
  let brokenMappings: string;
  beforeAll(async () => {
    database = await createTestPostgres();
    // Several runs against one book: rate limits raised so that none waits out a 429.
    deployment = await startAllInProcess({
      DATABASE_URL: database.url!,
      ...testRedisEnv(),
      FXGATE_RATE_LIMIT_READS: '100000',
      FXGATE_RATE_LIMIT_WRITES: '100000',
      FXGATE_LEGACY_RATE_LIMIT_READS: '100000',
      FXGATE_LEGACY_RATE_LIMIT_WRITES: '100000',
    });
    brokenMappings = await mkdtemp(join(tmpdir(), 'fxgate-broken-mappings-'));
  });
  afterAll(async () => {
    await deployment?.close();
    await database?.drop();
    if (brokenMappings) await rm(brokenMappings, { recursive: true, force: true });
  });

  it(
    'a gateway serving mappings/ with coinName renamed coin fails on exactly withdrawal_addresses and those two fields',
    { timeout: 120_000 },
    async () => {
      await cp(MAPPINGS_DIR, brokenMappings, { recursive: true });
      // The record field and the filter that names it, so that the copy still validates.
      for (const file of await readdir(brokenMappings)) {
        if (!file.endsWith('.ts')) continue;
        const text = await readFile(join(brokenMappings, file), 'utf8');
        if (text.includes('coinName'))
          await writeFile(join(brokenMappings, file), text.replaceAll(/\bcoinName\b/g, 'coin'));
      }
      const broken = await deployment.gateway({
        mappingsLocation: { directory: pathToFileURL(`${brokenMappings}/`), extension: '.ts' },
      });

      const run = await diff(broken, deployment);
      expect(run.exitCode).toBe(1);
      expect(failures(run.report)).toEqual([
        'v1 withdrawal_addresses data[].coinName missing',
        'v1 withdrawal_addresses data[].coin unaccounted',
        'v2 withdrawal_addresses data[].coinName missing',
        'v2 withdrawal_addresses data[].coin unaccounted',
      ]);
      const v2 = run.report.operations.find(
        (operation) => operation.generation === 'v2' && operation.operation === 'withdrawal_addresses',
      )!;
      expect(v2.fields.find((field) => field.field === 'data[].coin')!.problems[0]).toEqual({
        path: 'data[0].coin',
        kind: 'unaccounted',
        actual: '"USDC"',
        note: 'the withdrawalAddress record declares no coin',
      });
      expect(v2.fields.find((field) => field.field === 'data[].coinName')!.problems[0]).toEqual({
        path: 'data[0].coinName',
        kind: 'missing',
        actual: '(absent)',
        note: 'the withdrawalAddress record declares coinName',
      });

      expect(run.stdout).toMatch(/^withdrawal_addresses +v2 +\d+ +0 +DIFFERS$/m);
      expect(run.stdout).toContain('25 agree, 2 differ, 0 could not be compared');
      expect(run.stdout).toContain(
        '  data[0].coin: unaccounted, actual "USDC" (the withdrawalAddress record declares no coin)',
      );
      expect(run.junit).toMatch(/tests="27" failures="2" errors="0"/);
      expect(run.junit).toContain('<testcase classname="fxgate.diff.v2" name="withdrawal_addresses"');
      expect(run.junit).toMatch(
        /<failure message="2 of the answer&apos;s fields or lists differ from v3" type="differs">data\[0\]\.coinName: missing, actual \(absent\) \(the withdrawalAddress record declares coinName\)\ndata\[0\]\.coin: unaccounted/,
      );
    },
  );

  it(
    'an amount written with fewer digits for the same value passes: 250.00 -> 250.0',
    { timeout: 120_000 },
    async () => {
      const proxy = await tamperingProxy(deployment.url, /^\/v2\/brokerage\/[^/]+\/generate_quote$/, (body) =>
        body.replace('"referencedAmount":250.00,', '"referencedAmount":250.0,'),
      );
      try {
        const run = await diff(proxy.url, deployment);
        expect(proxy.rewrites).toHaveLength(1);
        expect(proxy.rewrites[0]!.after).not.toBe(proxy.rewrites[0]!.before);
        expect(proxy.rewrites[0]!.after).toContain('"referencedAmount":250.0,');
        expect(failures(run.report)).toEqual([]);
        expect(run.exitCode).toBe(0);
      } finally {
        await proxy.close();
      }
    },
  );

  it('an amount rounded fails on exactly that operation and field', { timeout: 120_000 }, async () => {
    // The quote's computed amount (270.54 for 250.00 EUR at the default rates) rounded to one decimal.
    const proxy = await tamperingProxy(deployment.url, /^\/v2\/brokerage\/[^/]+\/generate_quote$/, (body) =>
      body.replace(
        /"quoteAmount":(-?\d+)\.(\d)(\d)\b/,
        (_all, whole: string, first: string, second: string) =>
          `"quoteAmount":${whole}.${second === '0' ? first : String(Number(first) + (Number(second) >= 5 ? 1 : 0))}`,
      ),
    );
    try {
      const run = await diff(proxy.url, deployment);
      expect(proxy.rewrites).toHaveLength(1);
      const before = /"quoteAmount":([\d.]+)/.exec(proxy.rewrites[0]!.before)![1]!;
      const after = /"quoteAmount":([\d.]+)/.exec(proxy.rewrites[0]!.after)![1]!;
      expect(Number(after)).not.toBe(Number(before));
      expect(run.exitCode).toBe(1);
      expect(failures(run.report)).toEqual(['v2 generate_quote data.quote.quoteAmount differs']);
      const quote = run.report.operations.find(
        (operation) => operation.generation === 'v2' && operation.operation === 'generate_quote',
      )!;
      expect(quote.fields.find((field) => field.field === 'data.quote.quoteAmount')!.problems).toEqual([
        { path: 'data.quote.quoteAmount', kind: 'differs', expected: before, actual: after },
      ]);
      expect(run.junit).toContain(`data.quote.quoteAmount: differs, expected ${before}, actual ${after}`);
    } finally {
      await proxy.close();
    }
  });

  it('runs only the operations --only names, on both generations', { timeout: 60_000 }, async () => {
    const run = await diff(deployment.url, deployment, { only: 'trade,trade/settle' });
    expect(run.exitCode).toBe(0);
    expect(run.report.operations.map((operation) => `${operation.generation} ${operation.operation}`)).toEqual([
      'v1 trade',
      'v2 trade',
      'v2 trade/settle',
    ]);
  });

  it('refuses what cannot work before it changes anything, saying how to fix it', async () => {
    const refused = async (options: Partial<Parameters<typeof diffGenerations>[1]>): Promise<CliError> => {
      const error = await diffGenerations(new CliRun(new CapturedIo().io), {
        url: deployment.url,
        key: deployment.keyPath,
        issuer: deployment.issuer,
        ...options,
      }).then(
        () => null,
        (thrown: unknown) => thrown,
      );
      expect(error).toBeInstanceOf(CliError);
      return error as CliError;
    };
    const key = JSON.parse(await readFile(deployment.keyPath, 'utf8')) as Record<string, unknown>;
    const live = join(reportsDir, 'live.json');
    await writeFile(live, JSON.stringify({ ...key, mode: 'live' }));
    const viewOnly = join(reportsDir, 'view.json');
    await writeFile(viewOnly, JSON.stringify({ ...key, scopes: ['view'] }));

    expect(await refused({ key: live })).toMatchObject({
      exitCode: 2,
      message: expect.stringContaining(
        'is a live key: the run creates trades, deposits and withdrawals, so it takes a sandbox key',
      ),
    });
    expect(await refused({ key: viewOnly })).toMatchObject({
      exitCode: 2,
      message: expect.stringContaining('lacks the trade and withdraw scopes'),
    });
    expect(await refused({ key: join(reportsDir, 'absent.json') })).toMatchObject({
      exitCode: 2,
      message: expect.stringContaining('cannot use the key file'),
    });
    expect(await refused({ url: `${deployment.url}/api` })).toMatchObject({
      exitCode: 2,
      message: expect.stringContaining('--url:'),
    });
    expect(await refused({ only: 'trade,quote' })).toMatchObject({
      exitCode: 2,
      message: expect.stringContaining('--only: no legacy operation named quote'),
    });
    expect(await refused({ timeout: '0' })).toMatchObject({ exitCode: 2 });

    // Nothing listens there: exit 1, and what to do.
    const closed = await tamperingProxy(deployment.url, /^$/, (body) => body);
    await closed.close();
    expect(await refused({ url: closed.url })).toMatchObject({
      exitCode: 1,
      message: expect.stringMatching(/^cannot reach http:\/\/127\.0\.0\.1:\d+ \(ECONNREFUSED\): start the deployment/),
    });

    // A server that takes the request and never answers: the deadline, not a hang.
    const silent = createServer(() => {});
    await new Promise<void>((resolve) => silent.listen(0, '127.0.0.1', resolve));
    try {
      const started = performance.now();
      const error = await refused({
        url: `http://127.0.0.1:${(silent.address() as { port: number }).port}`,
        timeout: '300',
      });
      expect(error).toMatchObject({
        exitCode: 1,
        message: expect.stringContaining(
          '/v3/fx/pairs was not answered within 300 ms: the deployment is stalled or overloaded',
        ),
      });
      expect(performance.now() - started).toBeLessThan(5_000);
    } finally {
      silent.closeAllConnections();
      await new Promise((resolve) => silent.close(resolve));
    }

    // The core's own port serves v3 but no legacy generation.
    const v3Only = await refused({ url: deployment.coreUrl });
    expect(v3Only).toMatchObject({ exitCode: 1, message: expect.stringContaining('does not serve /v1 and /v2') });
  });

  it(
    "reports an operation whose setup or legacy call fails as an ERROR with v3's answer, and runs the others",
    { timeout: 60_000 },
    async () => {
      // No credit left: a trade is refused, a quote and the reads are not.
      const book = (await readOrgBook(deployment.db, deployment.orgId, 'sandbox'))!;
      await setCreditLine(deployment.db, deployment.orgId, 'sandbox', book.committedUsd);
      try {
        const run = await diff(deployment.url, deployment, { only: 'trade,trades,balances' });
        expect(run.exitCode).toBe(1);
        expect(
          run.report.operations.map((operation) => [operation.generation, operation.operation, operation.result]),
        ).toEqual([
          ['v1', 'balances', 'agrees'],
          ['v1', 'trade', 'error'],
          ['v1', 'trades', 'error'],
          ['v2', 'balances', 'agrees'],
          ['v2', 'trade', 'error'],
          ['v2', 'trades', 'error'],
        ]);
        const [v1Trade, v1Trades] = [run.report.operations[1]!, run.report.operations[2]!];
        expect(v1Trade.error).toMatch(/^the legacy POST answered 400 "/);
        expect(v1Trades.error).toMatch(/^setup: v3 POST \/v3\/fx\/trades answered 409 TRADE_CREDIT_LIMIT_EXCEEDED/);
        expect(run.stdout).toContain('2 agree, 0 differ, 4 could not be compared');
        expect(run.junit).toMatch(/tests="6" failures="0" errors="4"/);
      } finally {
        await setCreditLine(deployment.db, deployment.orgId, 'sandbox', book.creditLineUsd);
      }
    },
  );

  it('runs through the command line: exit 0 and the table on stdout', { timeout: 120_000 }, async () => {
    const json = join(reportsDir, 'cli.json');
    const result = await fxgate([
      'diff',
      'generations',
      '--url',
      deployment.url,
      '--key',
      deployment.keyPath,
      '--only',
      'balances,trade/{id}',
      '--json',
      json,
    ]);
    expect(result.stderr).toContain('v2 trade/{id}: agrees');
    expect(result.code).toBe(0);
    expect(result.stdout).toMatch(/^balances +v1 +\d+ +0 +agrees$/m);
    expect(result.stdout).toContain('4 operations against');
    expect((JSON.parse(await readFile(json, 'utf8')) as DiffReport).operations).toHaveLength(4);
  });
});
