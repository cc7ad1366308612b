/**
 * `fxgate usage [--generation v1|v2] [--since 7d] [--format table|json|csv]`: who still calls the
 * legacy generations, read from the usage report in the configured database: one row per org,
 * key, generation and operation, with every request counted, the 410s of brownouts and of the
 * sunset and the 429s of the key's own rate limit apart, when the first and the last were seen,
 * and the last client address. The list
 * the platform team mails before the sunset. `--format json` prints what `GET /admin/usage`
 * serves; `--format csv` is RFC 4180 with a header row. Declared in definitions/usage.ts.
 */

import {
  parseUsageQuery,
  type UsageQuery,
  type UsageReport,
  type UsageRow,
} from '../../gateway/usage/usage-recorder.js';
import { UsageQueryError } from '../../lib/errors/internal-errors.js';
import type { UsageCommandOptions, UsageFormat, UsageSource } from '../definitions/usage-options.js';
import { usageError } from '../exit.js';
import type { CliRun } from '../io.js';
import { withState } from '../state/session.js';
import { usageReportOperation } from '../state/usage-operation.js';
import { textTable } from '../text-table.js';

// Here too for the callers of the work.
export {
  USAGE_FORMATS,
  type UsageCommandOptions,
  type UsageFormat,
  type UsageSource,
} from '../definitions/usage-options.js';

/** The columns of the CSV, named as the JSON names them. */
const CSV_COLUMNS = [
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
] as const satisfies readonly (keyof UsageRow)[];

/** RFC 4180: a field with a comma, a double quote or a line break is quoted, its quotes doubled; a null is an empty field. */
export function csvField(value: string | number | null): string {
  if (value === null) return '';
  const text = String(value);
  return /[",\r\n]/.test(text) ? `"${text.replaceAll('"', '""')}"` : text;
}

/** RFC 4180 text: the header row, then one record per row, each ending in CRLF. */
export function usageCsv(report: UsageReport): string {
  const records = [
    CSV_COLUMNS.join(','),
    ...report.rows.map((row) => CSV_COLUMNS.map((column) => csvField(row[column])).join(',')),
  ];
  return records.map((record) => `${record}\r\n`).join('');
}

/** A key's id, the last part of its name (`org/{orgId}/apiKey/{keyId}`): the org has its own column. */
function keyIdOf(keyName: string): string {
  return /^org\/[^/]+\/apiKey\/([^/]+)$/.exec(keyName)?.[1] ?? keyName;
}

/** For people: one aligned row per org, key and operation; a request refused before its key was known shows no org and no key. */
export function usageTable(report: UsageReport): string {
  const window = report.since === null ? '' : ` since ${report.since}`;
  if (report.rows.length === 0) return `No legacy requests counted${window}.`;
  const lines = [
    `Legacy usage${window === '' ? '' : `, rows last seen${window}`} (counts since the first request counted)`,
    '',
  ];
  lines.push(
    ...textTable(
      [
        'GENERATION',
        'ORG',
        'KEY ID',
        'OPERATION',
        'COUNT',
        'BROWNOUT 410',
        'SUNSET 410',
        'RATE LIMIT 429',
        'FIRST SEEN',
        'LAST SEEN',
        'LAST ADDRESS',
      ],
      report.rows.map((row) => [
        row.generation,
        row.orgId ?? '(no key)',
        row.keyName === null ? '-' : keyIdOf(row.keyName),
        row.operation,
        row.count,
        row.refusedInBrownout,
        row.refusedAfterSunset,
        row.rateLimited,
        row.firstSeen,
        row.lastSeen,
        row.lastAddress ?? '-',
      ]),
    ),
  );
  return lines.join('\n');
}

/** The report in a format, as printed (the CSV with its own line ends, the others without a last one). */
export function formatUsage(report: UsageReport, format: UsageFormat): string {
  if (format === 'csv') return usageCsv(report);
  if (format === 'json') return JSON.stringify(report, null, 2);
  return usageTable(report);
}

/** The report from the run's configured database, or through the admin listener of the server that holds it (src/cli/state). */
export function configuredSource(run: CliRun): UsageSource {
  return { report: (query) => withState(run, (state) => state.run(usageReportOperation, { ...query })), now: Date.now };
}

/**
 * The command's --generation and --since read by the admin route's own query parser (`parse`),
 * a refusal naming the option instead of the query parameter; both reports are read through it.
 */
function queryOfOptions<Q>(
  parse: (input: Readonly<Record<string, unknown>>, now: number) => Q,
  options: { readonly generation?: string; readonly since?: string },
  now: number,
): Q {
  try {
    return parse(
      {
        ...(options.generation === undefined ? {} : { generation: options.generation }),
        ...(options.since === undefined ? {} : { since: options.since }),
      },
      now,
    );
  } catch (error) {
    if (error instanceof UsageQueryError)
      throw usageError(error.message.replace(/^since: /, '--since: ').replace(/^generation /, '--generation '));
    throw error;
  }
}

/** A report the command prints (the usage report, or with --readiness the readiness report): its query, source and formats. */
export interface UsageCommandReport<Query, Report> {
  /** The admin route's own query parser. */
  readonly parse: (input: Readonly<Record<string, unknown>>, now: number) => Query;
  readonly read: (query: Query) => Promise<Report>;
  readonly now: () => number;
  readonly format: (report: Report, format: UsageFormat) => string;
}

export function usageReport(source: UsageSource): UsageCommandReport<UsageQuery, UsageReport> {
  return { parse: parseUsageQuery, read: source.report, now: source.now, format: formatUsage };
}

/** The command's work: the options checked as the admin route checks its query, the report read and printed to the run's stdout. */
export async function runUsageCommand<Query, Report>(
  run: CliRun,
  options: UsageCommandOptions,
  report: UsageCommandReport<Query, Report>,
): Promise<void> {
  const query = queryOfOptions(report.parse, options, report.now());
  const text = report.format(await report.read(query), options.format);
  run.io.stdout.write(options.format === 'csv' ? text : `${text}\n`);
}
