/**
 * `fxgate sign` as commander declares it: its options, their parsers and its help. The work
 * (commands/sign.ts) is imported when the command runs, so that defining it loads no signer.
 */
import type { Command } from 'commander';

import { parseHttpMethod, parseRequestPath } from '../arguments.js';
import type { SignCommandOptions } from '../commands/sign.js';
import type { CliRun } from '../io.js';

export function registerSignCommand(program: Command, run: CliRun): void {
  program
    .command('sign')
    .description(
      'Print the headers of a signed v3 request (Authorization, X-Request-Signature, ...), or with --legacy of a v1/v2 request, one per line, for curl -H @file.',
    )
    .requiredOption('--key <file>', 'key file (from `fxgate keys create` or `fxgate all`)')
    .option('--method <method>', 'HTTP method: GET, HEAD, POST or DELETE (required for v3)', parseHttpMethod)
    .option('--path <path>', 'path and query exactly as sent, e.g. /v3/fx/pairs (required for v3)', parseRequestPath)
    .option(
      '--body <json|@file>',
      'the body exactly as sent: the text itself, or @file for the bytes of a file (v3 only: a legacy token does not cover it)',
    )
    .option('--idempotency-key <key>', 'the Idempotency-Key header (required on v3 POSTs; v2 writes take one too)')
    .option('--issuer <issuer>', 'the JWT issuer (default: the first of FXGATE_JWT_ISSUER)')
    .option(
      '--legacy',
      'the headers of a v1/v2 request: a legacy token (120 s, not bound to the request), X-App-Mode for a sandbox key, Content-Type',
    )
    .addHelpText(
      'after',
      '\nExample:\n  curl -H @<(fxgate sign --key k.json --method GET --path /v3/fx/pairs) http://127.0.0.1:8080/v3/fx/pairs\n' +
        '  curl -H @<(fxgate sign --key k.json --method POST --path /v3/fx/quotes --body @q.json --idempotency-key q1) \\\n' +
        '       --data-binary @q.json http://127.0.0.1:8080/v3/fx/quotes\n' +
        '  curl -H @<(fxgate sign --key k.json --legacy) http://127.0.0.1:8080/v2/brokerage/<orgId>/balances',
    )
    .action(async (options: SignCommandOptions) => {
      const { signedHeaderLines } = await import('../commands/sign.js');
      run.out(await signedHeaderLines(run, options));
    });
}
