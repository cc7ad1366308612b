/**
 * `fxgate usage --readiness --generation v1|v2 [--since 7d] [--format table|json|csv]`: what would
 * break for each legacy key if it moved to the next generation unchanged, read from the
 * readiness report in the configured database (src/gateway/usage/readiness-recorder.ts). The
 * table is for the operator; the CSV, one record per org, key, operation and blocker, is what
 * they mail to each integrator; `--format json` prints what `GET /admin/readiness` serves.
 * Declared in definitions/usage.ts beside the usage report.
 */
import {
  parseReadinessQuery,
  type ReadinessQuery,
  type ReadinessReport,
} from '../../gateway/usage/readiness-recorder.js';
import type { ReadinessSource, UsageFormat } from '../definitions/usage-options.js';
import type { CliRun } from '../io.js';
import { withState } from '../state/session.js';
import { readinessReportOperation } from '../state/usage-operation.js';
import { textTable } from '../text-table.js';
import { csvField, type UsageCommandReport } from './usage.js';

/** The CSV's columns: the row's, then its blocker's (empty on an operation where nothing would break). */
const CSV_COLUMNS = [
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
] as const;

type CsvRecord = Record<(typeof CSV_COLUMNS)[number], string | number | null>;

function records(report: ReadinessReport): CsvRecord[] {
  return report.rows.flatMap((row): CsvRecord[] => {
    const common = {
      generation: report.generation,
      target: report.target,
      orgId: row.orgId,
      keyName: row.keyName,
      operation: row.operation,
      count: row.count,
      lastSeen: row.lastSeen,
    };
    if (row.blockers.length === 0)
      return [{ ...common, kind: null, severity: null, blockerCount: null, example: null, guide: null }];
    return row.blockers.map((blocker) => ({
      ...common,
      kind: blocker.kind,
      severity: blocker.severity,
      blockerCount: blocker.count,
      example: blocker.example,
      guide: blocker.guide,
    }));
  });
}

/** RFC 4180 text: the header row, then one record per org, key, operation and blocker, each ending in CRLF. */
export function readinessCsv(report: ReadinessReport): string {
  const lines = [
    CSV_COLUMNS.join(','),
    ...records(report).map((record) => CSV_COLUMNS.map((column) => csvField(record[column])).join(',')),
  ];
  return lines.map((line) => `${line}\r\n`).join('');
}

function keyIdOf(keyName: string): string {
  return /^org\/[^/]+\/apiKey\/([^/]+)$/.exec(keyName)?.[1] ?? keyName;
}

/** For people: one aligned line per org, key, operation and blocker, `ready` where nothing would break. */
export function readinessTable(report: ReadinessReport): string {
  const window = report.since === null ? '' : `, rows last seen since ${report.since}`;
  const title = `Readiness of ${report.generation} clients for ${report.target}${window}`;
  if (report.rows.length === 0) return `${title}: no requests of a known key counted.`;
  const blocked = report.rows.filter((row) => row.blockers.some((blocker) => blocker.severity === 'blocker')).length;
  return [
    `${title} (counts since the first request counted): ${blocked} of ${report.rows.length} key operations blocked`,
    '',
    ...textTable(
      ['ORG', 'KEY ID', 'OPERATION', 'COUNT', 'LAST SEEN', 'BLOCKER', 'SEVERITY', 'MET', 'EXAMPLE', 'GUIDE'],
      records(report).map((record) => [
        String(record.orgId),
        keyIdOf(String(record.keyName)),
        String(record.operation),
        record.count!,
        String(record.lastSeen),
        record.kind ?? 'ready',
        record.severity ?? '-',
        record.blockerCount ?? '-',
        record.example ?? '-',
        record.guide ?? '-',
      ]),
    ),
  ].join('\n');
}

export function formatReadiness(report: ReadinessReport, format: UsageFormat): string {
  if (format === 'csv') return readinessCsv(report);
  if (format === 'json') return JSON.stringify(report, null, 2);
  return readinessTable(report);
}

export function configuredReadinessSource(run: CliRun): ReadinessSource {
  return {
    readiness: (query) => withState(run, (state) => state.run(readinessReportOperation, { ...query })),
    now: Date.now,
  };
}

/** The readiness report as `fxgate usage --readiness` prints it (runUsageCommand). */
export function readinessReport(source: ReadinessSource): UsageCommandReport<ReadinessQuery, ReadinessReport> {
  return { parse: parseReadinessQuery, read: source.readiness, now: source.now, format: formatReadiness };
}
