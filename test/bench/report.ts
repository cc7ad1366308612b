/**
 * The printed report: one table row per case, then what the numbers depend on (the machine
 * is shared by the server, the load generator, PostgreSQL and Redis) and any failure.
 */
import os from 'node:os';
import { MEASURED_POOL_HEADROOM, type CaseMeasurement } from './load.js';
import { BENCH_RATE_LIMITS } from './server-apps.js';
import type { BenchSettings } from './settings.js';

export interface CaseReport {
  readonly name: string;
  readonly description: string;
  readonly targetRatioToBare: number | undefined;
  readonly measurement: CaseMeasurement;
  /** RSS in bytes of each server process of the case, at the end of its measured run. */
  readonly servers: readonly { readonly app: string; readonly pid: number; readonly rss: number }[];
}

/** A case failed when any request of its measured run did not get a 2xx answer. */
export function failuresOf(report: CaseReport): string[] {
  const { result, pool } = report.measurement;
  const failures: string[] = [];
  if (result.errors > 0) failures.push(`${result.errors} connection errors (${result.timeouts} of them timeouts)`);
  if (result.non2xx > 0) failures.push(`${result.non2xx} non-2xx responses (status counts ${JSON.stringify(result.statusCodeStats ?? {})})`);
  if (pool !== null && pool.dry > 0) failures.push(`the pool of ${pool.size} signed requests ran dry: ${pool.dry} requests went unsigned`);
  return failures;
}

function ratioToBare(report: CaseReport, bare: CaseReport | undefined): number | null {
  if (bare === undefined) return null;
  const bareRate = bare.measurement.result.requests.mean;
  return bareRate > 0 ? report.measurement.result.requests.mean / bareRate : null;
}

function formatRatio(ratio: number | null): string {
  return ratio === null ? 'n/a' : `${(ratio * 100).toFixed(1)}%`;
}

function megabytes(bytes: number): string {
  return `${(bytes / 1024 / 1024).toFixed(0)} MB`;
}

/** Left-aligned first column, right-aligned numbers, Markdown-compatible. */
function table(header: readonly string[], rows: readonly (readonly string[])[]): string {
  const widths = header.map((title, column) => Math.max(title.length, ...rows.map((row) => (row[column] ?? '').length)));
  const line = (cells: readonly string[]): string =>
    `| ${cells.map((cell, column) => (column === 0 ? cell.padEnd(widths[column]!) : cell.padStart(widths[column]!))).join(' | ')} |`;
  const rule = `|${widths.map((width, column) => (column === 0 ? `:${'-'.repeat(width + 1)}` : `${'-'.repeat(width + 1)}:`)).join('|')}|`;
  return [line(header), rule, ...rows.map(line)].join('\n');
}

function caseRow(report: CaseReport, bare: CaseReport | undefined): string[] {
  const { result, latencyMs } = report.measurement;
  const ratio = ratioToBare(report, bare);
  const target =
    report.targetRatioToBare === undefined ? '' : ratio === null ? 'n/a' : `${ratio >= report.targetRatioToBare ? 'met' : 'MISSED'} (≥${formatRatio(report.targetRatioToBare)})`;
  return [
    report.name,
    result.requests.mean.toFixed(0),
    latencyMs.p50.toFixed(2),
    latencyMs.p99.toFixed(2),
    `${result.errors}/${result.non2xx}`,
    report.name === bare?.name ? '100%' : formatRatio(ratio),
    target,
    report.servers.map((server) => megabytes(server.rss)).join(' + '),
  ];
}

function poolNote(report: CaseReport): string | null {
  const { pool, warmupRates } = report.measurement;
  if (pool === null) return null;
  const rates = warmupRates.map((rate) => rate.toFixed(0)).join(', ');
  return (
    `  ${report.name}: ${pool.size} signed requests made in ${pool.generationSeconds.toFixed(1)} s before the run ` +
    `(${MEASURED_POOL_HEADROOM}x the last warm-up rate; warm-up rounds at ${rates} req/s), ${pool.taken} used, ${pool.dry} missing; ` +
    `oldest token ${pool.maxAgeSeconds.toFixed(1)} s old when sent`
  );
}

export function formatReport(reports: readonly CaseReport[], bareName: string, settings: BenchSettings, loadAverage: readonly number[]): string {
  const bare = reports.find((report) => report.name === bareName);
  const rows = reports.map((report) => caseRow(report, bare));
  const cpus = os.cpus();
  const lines = [
    table(['case', 'req/s (mean)', 'p50 ms', 'p99 ms', 'errors/non-2xx', 'vs bare', 'target', 'server RSS'], rows),
    '',
    'Cases:',
    ...reports.map((report) => `  ${report.name}: ${report.description}`),
    '',
    `Runs: autocannon, ${settings.connections} connections, pipelining ${settings.pipelining}, ${settings.durationSeconds} s measured after a ` +
      `${settings.warmupSeconds} s warm-up; latency per request; RSS of the server process after its run. Node ${process.version}.`,
    `Machine: ${cpus.length} cores (${cpus[0]?.model.trim() ?? 'unknown CPU'}), shared by the server process, the load generator ` +
      `(a separate process), PostgreSQL and Redis, and by anything else running; load average ${loadAverage.map((value) => value.toFixed(2)).join(' ')} at the start. ` +
      'Compare cases within one run, not across runs or machines.',
    `The core runs with rate limits raised to ${BENCH_RATE_LIMITS.reads.toExponential()} per ${BENCH_RATE_LIMITS.periodMs / 1000} s per key ` +
      '(reads and writes; the most the store accepts): the bench measures the pipeline (the rate-limit step still runs), not 429 answers.',
  ];
  const pools = reports.map(poolNote).filter((note): note is string => note !== null);
  if (pools.length > 0) lines.push('Single-use requests (a JWT nonce each, signed before the timed run):', ...pools);
  const failed = reports.flatMap((report) => failuresOf(report).map((failure) => `  ${report.name}: ${failure}`));
  if (failed.length > 0) lines.push('', 'FAILED, the numbers above are not valid:', ...failed);
  return lines.join('\n');
}
