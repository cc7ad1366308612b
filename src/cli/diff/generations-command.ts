/**
 * `fxgate diff generations`: every legacy operation of every generation against its v3
 * equivalent, on a running deployment in sandbox mode. For each operation it puts in place
 * through v3 what the operation needs, calls it on v1 or v2, reads the same records back through
 * v3 and compares every field of the legacy answer with what the declarations of `mappings/` say
 * it must be. Exit 0 only when every operation agrees, 1 when one differs or cannot be compared,
 * 2 for bad arguments.
 */
import { mkdir, writeFile } from 'node:fs/promises';
import { dirname } from 'node:path';

import { upstreamOrigin } from '../../gateway/upstream/pool.js';
import { signingIssuer } from '../../lib/config.js';
import { CliError, DeploymentError, EXIT_CODES, type ExitCode } from '../../lib/errors/internal-errors.js';
import { type LoadedKey, readKeyFile } from '../../lib/keys/key-file.js';
import { messageOf, usageError } from '../exit.js';
import type { CliRun } from '../io.js';
import { DIFF_DEFAULTS, type DiffGenerationsOptions } from './diff-options.js';
import { renderJson, renderJunit, renderTable } from './reporters.js';
import { type DiffReport, type OperationReport, REQUIRED_SCOPES, runGenerationDiff } from './runner.js';

function parseUrl(url: string): string {
  try {
    return upstreamOrigin(url);
  } catch (error) {
    throw usageError(`--url: ${messageOf(error).replace(/^invalid upstream /, '')} (e.g. http://127.0.0.1:8080)`);
  }
}

function parseTimeout(value: string | number | undefined): number {
  if (value === undefined) return DIFF_DEFAULTS.timeoutMs;
  const ms = typeof value === 'number' ? value : Number(value);
  if (!Number.isInteger(ms) || ms < 100 || ms > 600_000)
    throw usageError(`--timeout: ${value} is not a whole number of milliseconds from 100 to 600000`);
  return ms;
}

/** The key file, which must be a sandbox key with the scopes every scenario needs. */
async function sandboxKey(run: CliRun, path: string): Promise<LoadedKey> {
  let key: LoadedKey;
  try {
    key = await readKeyFile(run.path(path));
  } catch (error) {
    throw usageError(`cannot use the key file ${path}: ${messageOf(error)}`);
  }
  if (key.file.mode !== 'sandbox') {
    throw usageError(
      `${path} is a ${key.file.mode} key: the run creates trades, deposits and withdrawals, so it takes a sandbox key (the one \`fxgate all\` writes, or \`fxgate keys create --org ORG --mode sandbox --scopes view,trade,withdraw\`)`,
    );
  }
  const missing = REQUIRED_SCOPES.filter((scope) => !key.file.scopes.includes(scope));
  if (missing.length > 0) {
    throw usageError(
      `${path} lacks the ${missing.join(' and ')} scope${missing.length > 1 ? 's' : ''}: the run needs view, trade and withdraw (\`fxgate keys create --org ${key.file.orgId} --mode sandbox --scopes view,trade,withdraw\`)`,
    );
  }
  return key;
}

async function writeReport(path: string, text: string, what: string): Promise<void> {
  try {
    await mkdir(dirname(path), { recursive: true });
    await writeFile(path, text);
  } catch (error) {
    throw new CliError(`cannot write the ${what} report to ${path}: ${messageOf(error)}`, EXIT_CODES.failure, {
      cause: error,
    });
  }
}

/**
 * The command itself, for the command line and for tests in process: runs, prints the table to
 * the run's stdout (each operation's verdict to its stderr as it comes), writes the reports, and
 * returns the exit code with the report. Throws CliError for bad arguments (2) and for a
 * deployment that cannot serve the run (1).
 */
export async function diffGenerations(
  run: CliRun,
  options: DiffGenerationsOptions,
): Promise<{ exitCode: ExitCode; report: DiffReport }> {
  const origin = parseUrl(options.url);
  const timeoutMs = parseTimeout(options.timeout);
  const only =
    options.only === undefined
      ? undefined
      : options.only
          .split(',')
          .map((name) => name.trim())
          .filter((name) => name !== '');
  const key = await sandboxKey(run, options.key);
  const issuer = options.issuer ?? signingIssuer(run.config());
  let report: DiffReport;
  try {
    report = await runGenerationDiff({
      origin,
      key,
      issuer,
      timeoutMs,
      ...(only === undefined ? {} : { only }),
      onOperation: (operation: OperationReport) =>
        run.err(`${operation.generation} ${operation.operation}: ${operation.result} (${operation.durationMs} ms)`),
    });
  } catch (error) {
    if (error instanceof DeploymentError) throw new CliError(error.message, EXIT_CODES.failure, { cause: error });
    throw error;
  }
  run.out(renderTable(report));
  if (options.json !== undefined) await writeReport(run.path(options.json), renderJson(report), 'JSON');
  if (options.junit !== undefined) await writeReport(run.path(options.junit), renderJunit(report), 'JUnit');
  return { exitCode: report.agrees ? EXIT_CODES.ok : EXIT_CODES.failure, report };
}
