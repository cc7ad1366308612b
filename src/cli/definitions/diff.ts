/**
 * `fxgate diff` as commander declares it: the tools that prove a move onto the gateway changes
 * nothing a legacy client sees. `generations` runs every legacy operation against its v3
 * equivalent on a deployment (diff/generations-command.ts); `report` prints what the shadow mode
 * has compared so far (diff/report-command.ts). Each is imported when its command runs.
 */
import type { Command } from 'commander';

import { parseHttpUrl } from '../arguments.js';
import { DIFF_DEFAULTS, type DiffGenerationsOptions, SHADOW_REPORT_PATH } from '../diff/diff-options.js';
import type { CliRun } from '../io.js';

function registerDiffGenerationsCommand(diff: Command, run: CliRun): void {
  diff
    .command('generations')
    .description(
      'Run every v1 and v2 operation against a sandbox deployment and compare each legacy answer, field by field, with the same records read back through v3, by the declarations of mappings/. Exit 0 when every operation agrees, 1 when one differs.',
    )
    .requiredOption('--url <url>', 'the deployment serving /v1, /v2 and /v3, e.g. http://127.0.0.1:8080 (`fxgate all`)')
    .requiredOption(
      '--key <file>',
      'a sandbox key file with the view, trade and withdraw scopes (`fxgate all` writes one)',
    )
    .option('--only <operations>', 'comma-separated operation names, e.g. trade,deposits,trade/{id}')
    .option('--json <file>', "write every operation with every field's verdict as JSON")
    .option('--junit <file>', 'write JUnit XML: one testcase per operation and generation')
    .option('--issuer <issuer>', 'the JWT issuer (default: the first of FXGATE_JWT_ISSUER)')
    .option('--timeout <ms>', `the most one request may take (default ${DIFF_DEFAULTS.timeoutMs})`)
    .addHelpText(
      'after',
      '\nExample:\n  fxgate diff generations --url http://127.0.0.1:8080 --key data/keys/<org>.json --junit diff.xml',
    )
    .action(async (options: DiffGenerationsOptions) => {
      const { diffGenerations } = await import('../diff/generations-command.js');
      run.exitCode = (await diffGenerations(run, options)).exitCode;
    });
}

function registerDiffReportCommand(diff: Command, run: CliRun): void {
  diff
    .command('report')
    .description(
      "Print what the shadow mode has compared so far: counts per legacy operation, each differing field with a masked example, and the noise. Reads a gateway's admin listener.",
    )
    .requiredOption(
      '--url <url>',
      `the admin listener's base URL, e.g. http://127.0.0.1:8081 (it serves ${SHADOW_REPORT_PATH})`,
      parseHttpUrl,
    )
    .option('--json', 'print the report as JSON, as the admin listener serves it')
    .action(async (options: { url: string; json?: boolean }) =>
      (await import('../diff/report-command.js')).printShadowReport(run, options),
    );
}

export function registerDiffCommand(program: Command, run: CliRun): void {
  const diff = program
    .command('diff')
    .description('Prove the migration safe: compare the legacy generations with v3, and read the shadow report.');
  registerDiffGenerationsCommand(diff, run);
  registerDiffReportCommand(diff, run);
}
