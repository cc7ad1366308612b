/**
 * The printed report: one table row per case, then what the numbers depend on (the machine
 * is shared by the server, the load generator, PostgreSQL and Redis) and any failure.
 */
import os from 'node:os';

import type { AddedLatencyTarget, RateTarget, RowComparison, RssTarget } from './cases.js';
import { serverStartDifferences } from './launcher.js';
import { type CaseMeasurement, MEASURED_POOL_HEADROOM, type RowMeasurement } from './measurement.js';
import { BENCH_RATE_LIMITS } from './server-apps.js';
import type { BenchSettings } from './settings.js';

export interface CaseReport {
  readonly name: string;
  readonly description: string;
  readonly targetRatioToBare: number | undefined;
  readonly targetRate: RateTarget | undefined;
  readonly rowComparisons: readonly RowComparison[];
  readonly rssTarget: RssTarget | undefined;
  readonly addedLatencyTarget: AddedLatencyTarget | undefined;
  readonly measurement: CaseMeasurement;
  /** RSS in bytes of each server process of the case, at the end of its measured run. */
  readonly servers: readonly {
    readonly app: string;
    readonly pid: number;
    readonly rss: number;
    readonly heapTotal: number;
  }[];
}

function rowName(report: CaseReport, row: RowMeasurement): string {
  return row.label === null ? report.name : `${report.name} ${row.label}`;
}

/** A case failed when any request of its measured run did not get a 2xx answer. */
export function failuresOf(report: CaseReport): string[] {
  const { rows, pool, chained } = report.measurement;
  const failures: string[] = [];
  for (const row of rows) {
    const of = row.label === null ? '' : ` (${row.label})`;
    if (row.errors > 0) failures.push(`${row.errors} connection errors${of} (${row.timeouts} of them timeouts)`);
    if (row.non2xx > 0)
      failures.push(`${row.non2xx} non-2xx responses${of} (status counts ${JSON.stringify(row.statusCodes)})`);
    if ((row.poolDry ?? 0) > 0)
      failures.push(
        `the row's pool of signed requests ran dry${of}: ${row.poolDry} requests went unsigned to a path that answers 404`,
      );
  }
  if (pool !== null && pool.dry > 0)
    failures.push(`the pool of ${pool.size} signed requests ran dry: ${pool.dry} requests went unsigned`);
  if (chained !== null && failures.length > 0 && chained.failureSamples.length > 0)
    failures.push(`first failures: ${chained.failureSamples.join(' | ')}`);
  return failures;
}

function ratioToBare(row: RowMeasurement, bare: CaseReport | undefined): number | null {
  const bareRate = bare?.measurement.rows[0]?.requestsPerSecond ?? 0;
  return bareRate > 0 ? row.requestsPerSecond / bareRate : null;
}

function formatRatio(ratio: number | null): string {
  return ratio === null ? 'n/a' : `${(ratio * 100).toFixed(1)}%`;
}

function megabytes(bytes: number): string {
  return `${(bytes / 1024 / 1024).toFixed(0)} MB`;
}

/** How the servers' node was started, when that is not as the product starts it. */
function serverStart(): string {
  const differences = serverStartDifferences();
  return differences.length === 0 ? '' : ` (here ${differences.join('; ')})`;
}

/** Left-aligned first column, right-aligned numbers, Markdown-compatible. */
function table(header: readonly string[], rows: readonly (readonly string[])[]): string {
  const widths = header.map((title, column) =>
    Math.max(title.length, ...rows.map((row) => (row[column] ?? '').length)),
  );
  const line = (cells: readonly string[]): string =>
    `| ${cells.map((cell, column) => (column === 0 ? cell.padEnd(widths[column]!) : cell.padStart(widths[column]!))).join(' | ')} |`;
  const rule = `|${widths.map((width, column) => (column === 0 ? `:${'-'.repeat(width + 1)}` : `${'-'.repeat(width + 1)}:`)).join('|')}|`;
  return [line(header), rule, ...rows.map(line)].join('\n');
}

/** A row's ratio to another row of its case: the median of the rounds' ratios, with their range; null when either row is missing. */
interface RowRatio {
  readonly comparison: RowComparison;
  readonly median: number;
  /** Each round's ratio, sorted; empty when the rows were not measured in rounds (the ratio of their rates then). */
  readonly rounds: readonly number[];
}

function median(sorted: readonly number[]): number {
  const middle = Math.floor(sorted.length / 2);
  return sorted.length % 2 === 1 ? sorted[middle]! : (sorted[middle - 1]! + sorted[middle]!) / 2;
}

function rowRatio(report: CaseReport, row: RowMeasurement): RowRatio | null {
  const comparison = report.rowComparisons.find((candidate) => candidate.row === row.label);
  const baseline = report.measurement.rows.find((candidate) => candidate.label === comparison?.of);
  if (comparison === undefined || baseline === undefined || baseline.requestsPerSecond <= 0) return null;
  const own = row.roundRates;
  const theirs = baseline.roundRates;
  if (
    own === undefined ||
    theirs === undefined ||
    own.length !== theirs.length ||
    own.length === 0 ||
    theirs.some((rate) => rate <= 0)
  ) {
    return { comparison, median: row.requestsPerSecond / baseline.requestsPerSecond, rounds: [] };
  }
  const rounds = own.map((rate, index) => rate / theirs[index]!).sort((a, b) => a - b);
  return { comparison, median: median(rounds), rounds };
}

function formatRowRatio(ratio: RowRatio): string {
  const { rounds } = ratio;
  const range =
    rounds.length === 0
      ? ''
      : ` (median of ${rounds.length} rounds, ${formatRatio(rounds[0]!)} to ${formatRatio(rounds.at(-1)!)})`;
  return `${formatRatio(ratio.median)} of ${ratio.comparison.of}${range}`;
}

/** A difference in milliseconds, with its sign. */
export function formatSignedMs(value: number): string {
  return `${value >= 0 ? '+' : ''}${value.toFixed(2)} ms`;
}

function met(ok: boolean): string {
  return ok ? 'met' : 'MISSED';
}

/**
 * The target cell of a row: the ratio-to-bare and RSS targets apply to the case's first row, a
 * rate target to the row it names, a row comparison to its row, an added-latency target to every
 * row but its baseline.
 */
function targetCell(
  report: CaseReport,
  row: RowMeasurement,
  ratio: number | null,
  withinCase: RowRatio | null,
): string {
  const { targetRatioToBare, targetRate, rssTarget, addedLatencyTarget } = report;
  const first = row === report.measurement.rows[0];
  const cells: string[] = [];
  if (targetRatioToBare !== undefined && first) {
    cells.push(ratio === null ? 'n/a' : `${met(ratio >= targetRatioToBare)} (≥${formatRatio(targetRatioToBare)})`);
  }
  if (targetRate !== undefined && (targetRate.row === undefined ? first : row.label === targetRate.row)) {
    cells.push(`${met(row.requestsPerSecond >= targetRate.requestsPerSecond)} (≥${targetRate.requestsPerSecond}/s)`);
  }
  const withinTarget = withinCase?.comparison.targetRatio;
  if (withinCase !== null && withinTarget !== undefined) {
    cells.push(
      `${met(withinCase.median >= withinTarget)} (≥${formatRatio(withinTarget)} of ${withinCase.comparison.of}${withinCase.rounds.length > 0 ? ', median of rounds' : ''})`,
    );
  }
  if (rssTarget !== undefined && first) {
    const server = report.servers.find((candidate) => candidate.app === rssTarget.app);
    const wanted = `${rssTarget.app} RSS <${rssTarget.maxMegabytes} MB`;
    cells.push(
      server === undefined
        ? `n/a (${wanted})`
        : `${met(server.rss < rssTarget.maxMegabytes * 1024 * 1024)} (${wanted})`,
    );
  }
  if (addedLatencyTarget !== undefined && row.label !== addedLatencyTarget.baselineRow) {
    // Judged on what a client sees, the row's p99 less the baseline's: the rows ran together
    // (paced-load.ts), so a stall of the machine is in both tails. The per-request figure (the
    // latency less the gateway's Server-Timing upstream time) is shown beside it.
    const { maxAddedP99Ms } = addedLatencyTarget;
    const baseline = report.measurement.rows.find((candidate) => candidate.label === addedLatencyTarget.baselineRow);
    const added = baseline === undefined ? Number.NaN : row.latencyMs.p99 - baseline.latencyMs.p99;
    const wanted = `p99 <${addedLatencyTarget.baselineRow} +${maxAddedP99Ms} ms`;
    const perRequest = row.addedMs === undefined ? '' : `; per request ${row.addedMs.p99.toFixed(2)} ms`;
    cells.push(
      Number.isNaN(added)
        ? `n/a (${wanted})`
        : `${met(added < maxAddedP99Ms)} (${formatSignedMs(added)}; ${wanted}${perRequest})`,
    );
  }
  return cells.join('; ');
}

/** A case's server RSS with its V8 heap, each named when the case runs several. */
function rssCell(report: CaseReport): string {
  const named = report.servers.length > 1;
  return report.servers
    .map((server) => `${named ? `${server.app} ` : ''}${megabytes(server.rss)} (heap ${megabytes(server.heapTotal)})`)
    .join(' + ');
}

function caseRows(report: CaseReport, bare: CaseReport | undefined): string[][] {
  return report.measurement.rows.map((row, index) => {
    const ratio = ratioToBare(row, bare);
    const first = index === 0;
    const withinCase = rowRatio(report, row);
    return [
      rowName(report, row),
      row.requestsPerSecond.toFixed(0),
      row.latencyMs.p50.toFixed(2),
      row.latencyMs.p99.toFixed(2),
      `${row.errors}/${row.non2xx}`,
      // A fixed-rate row's rate is what was offered, not what the server can do.
      row.offeredRate !== undefined ? 'fixed rate' : report.name === bare?.name ? '100%' : formatRatio(ratio),
      withinCase === null ? '' : formatRowRatio(withinCase),
      targetCell(report, row, ratio, withinCase),
      // The servers' RSS once per case, on its first row.
      first ? rssCell(report) : '',
    ];
  });
}

function poolNote(report: CaseReport): string | null {
  const { pool, warmupRates, chained, rows } = report.measurement;
  if (pool === null) return null;
  const rates = warmupRates.map((rate) => rate.toFixed(0)).join(', ');
  const what = chained === null ? 'signed requests' : `signed first requests (${rows[0]?.label ?? 'first'})`;
  const unit = chained === null ? 'req/s' : 'pairs/s';
  const lines = [
    `  ${report.name}: ${pool.size} ${what} made in ${pool.generationSeconds.toFixed(1)} s before the run ` +
      `(${MEASURED_POOL_HEADROOM}x the last warm-up rate; warm-up rounds at ${rates} ${unit}), ${pool.taken} used, ${pool.dry} missing; ` +
      `oldest token ${pool.maxAgeSeconds.toFixed(1)} s old when sent`,
  ];
  if (chained !== null) {
    lines.push(
      `    ${rows[1]?.label ?? 'second requests'}: each signed in the loop from the answer to its first request, ${chained.makeSecondMsMean.toFixed(2)} ms mean ` +
        `(load-generator time between the two, in neither latency); ${chained.unchained} first requests answered as the run ended had none`,
    );
    const streams = chained.streams;
    if (streams !== null) {
      const range = ({ min, max }: { min: number; max: number }): string =>
        min === max ? `${min}` : `${min} to ${max}`;
      lines.push(
        `    workers dealt over ${streams.served} ${streams.noun}s (of ${streams.count}), ${range(streams.workers)} per ${streams.noun}, each with its own ` +
          `key and book; ${rows[1]?.label ?? 'pairs'} per ${streams.noun} in the run: ${range(streams.pairs)}`,
      );
    }
  }
  return lines.join('\n');
}

export function formatReport(
  reports: readonly CaseReport[],
  bareName: string,
  settings: BenchSettings,
  loadAverage: readonly number[],
): string {
  const bare = reports.find((report) => report.name === bareName);
  const rows = reports.flatMap((report) => caseRows(report, bare));
  const chained = reports.some((report) => report.measurement.chained !== null);
  const cpus = os.cpus();
  const lines = [
    table(
      ['case', 'req/s (mean)', 'p50 ms', 'p99 ms', 'errors/non-2xx', 'vs bare', 'vs other row', 'target', 'server RSS'],
      rows,
    ),
    '',
    'Cases:',
    ...reports.map((report) => `  ${report.name}: ${report.description}`),
    '',
    `Runs: autocannon, ${settings.connections} connections, pipelining ${settings.pipelining}, ${settings.durationSeconds} s measured after a ` +
      `${settings.warmupSeconds} s warm-up; latency per request; RSS of each server process after its run, with its V8 heap. Node ${process.version}; ` +
      `servers run compiled (tsc, plain node, no loader), as the product ships${serverStart()}.`,
    ...(chained
      ? [
          `Chained cases (a request made from the answer to the one before): ${settings.connections} workers over an undici pool of as many ` +
            'connections, each sending a pair and then the next; a row per kind of request, its rate counting the answers within the run. ' +
            "Where a case has several orgs, each worker sends one org's pairs for the whole case (spread below).",
        ]
      : []),
    `Machine: ${cpus.length} cores (${cpus[0]?.model.trim() ?? 'unknown CPU'}), shared by the server process, the load generator ` +
      `(a separate process), PostgreSQL and Redis, and by anything else running; load average ${loadAverage.map((value) => value.toFixed(2)).join(' ')} at the start. ` +
      'Compare cases within one run, not across runs or machines.',
    `The core runs with rate limits raised to ${BENCH_RATE_LIMITS.reads.toExponential()} per ${BENCH_RATE_LIMITS.periodMs / 1000} s per key ` +
      '(reads and writes; the most the store accepts): the bench measures the pipeline (the rate-limit step still runs), not 429 answers.',
  ];
  const pools = reports.map(poolNote).filter((note): note is string => note !== null);
  if (pools.length > 0) lines.push('Single-use requests (a JWT nonce each, signed before the timed run):', ...pools);
  const notes = reports.filter((report) => report.measurement.notes.length > 0);
  if (notes.length > 0)
    lines.push(
      'Measured by the case itself (its own load loop, or none):',
      ...notes.flatMap((report) => report.measurement.notes.map((note) => `  ${report.name}: ${note}`)),
    );
  const failed = reports.flatMap((report) => failuresOf(report).map((failure) => `  ${report.name}: ${failure}`));
  if (failed.length > 0) lines.push('', 'FAILED, the numbers above are not valid:', ...failed);
  return lines.join('\n');
}
