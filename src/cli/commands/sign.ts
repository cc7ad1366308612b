/**
 * `fxgate sign`: the headers of one signed v3 request, one `Name: value` per line, for curl
 * (`curl -H @<(fxgate sign ...)`). Each token is single use and lives 60 s: sign per request.
 */
import { readFile } from 'node:fs/promises';
import type { Command } from 'commander';
import { V3RequestSigner } from '../../lib/auth/request-signer.js';
import { type LoadedKey, readKeyFile } from '../../lib/keys/key-file.js';
import { parseHttpMethod, parseRequestPath } from '../arguments.js';
import { cliConfig } from '../config.js';
import { messageOf, usageError } from '../exit.js';

interface SignOptions {
  readonly key: string;
  readonly method: string;
  readonly path: string;
  readonly body?: string;
  readonly idempotencyKey?: string;
  readonly issuer?: string;
}

/** `@file` is the file's exact bytes (what `curl --data-binary @file` sends); anything else, the text as UTF-8. */
async function bodyBytes(body: string | undefined): Promise<Buffer | undefined> {
  if (body === undefined) return undefined;
  if (!body.startsWith('@')) return Buffer.from(body);
  try {
    return await readFile(body.slice(1));
  } catch (error) {
    throw usageError(`cannot read the body file ${body.slice(1)}: ${messageOf(error)}`);
  }
}

async function loadKeyFile(path: string): Promise<LoadedKey> {
  try {
    return await readKeyFile(path);
  } catch (error) {
    throw usageError(`cannot use the key file ${path}: ${messageOf(error)}`);
  }
}

/** Header names as people write them: x-request-signature -> X-Request-Signature. */
function displayName(name: string): string {
  return name.replace(/(^|-)([a-z])/g, (_match, dash: string, letter: string) => `${dash}${letter.toUpperCase()}`);
}

export function registerSignCommand(program: Command): void {
  program
    .command('sign')
    .description('Print the headers of a signed v3 request (Authorization, X-Request-Signature, ...), one per line, for curl -H @file.')
    .requiredOption('--key <file>', 'key file (from `fxgate keys create` or `fxgate all`)')
    .requiredOption('--method <method>', 'HTTP method, e.g. GET or POST', parseHttpMethod)
    .requiredOption('--path <path>', 'path and query exactly as sent, e.g. /v3/fx/pairs', parseRequestPath)
    .option('--body <json|@file>', 'the body exactly as sent: the text itself, or @file for the bytes of a file')
    .option('--idempotency-key <key>', 'the Idempotency-Key header (required on v3 POSTs)')
    .option('--issuer <issuer>', 'the JWT issuer (default: FXGATE_JWT_ISSUER)')
    .addHelpText(
      'after',
      '\nExample:\n  curl -H @<(fxgate sign --key k.json --method GET --path /v3/fx/pairs) http://127.0.0.1:8080/v3/fx/pairs\n' +
        '  curl -H @<(fxgate sign --key k.json --method POST --path /v3/fx/quotes --body @q.json --idempotency-key q1) \\\n' +
        '       --data-binary @q.json http://127.0.0.1:8080/v3/fx/quotes',
    )
    .action(async (options: SignOptions) => {
      const issuer = options.issuer ?? cliConfig().FXGATE_JWT_ISSUER;
      const signer = new V3RequestSigner(await loadKeyFile(options.key), { issuer });
      const headers = await signer.headers({
        method: options.method,
        pathAndQuery: options.path,
        body: await bodyBytes(options.body),
        idempotencyKey: options.idempotencyKey,
      });
      console.log(
        Object.entries(headers)
          .map(([name, value]) => `${displayName(name)}: ${value}`)
          .join('\n'),
      );
    });
}
