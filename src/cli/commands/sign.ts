/**
 * `fxgate sign`: the headers of one signed request, one `Name: value` per line, for curl
 * (`curl -H @<(fxgate sign ...)`). A v3 request's token and X-Request-Signature are bound to its
 * method, path and body, and the token lives 60 s; with `--legacy`, the headers of a v1/v2
 * request, whose token is the legacy one (120 s, bound to the key only). Every token is single
 * use: sign per request. Declared in definitions/sign.ts, which imports this module when the
 * command runs.
 */
import { readFile } from 'node:fs/promises';

import { LEGACY_MAX_TOKEN_LIFETIME_SECONDS } from '../../gateway/legacy/runtime/auth.js';
import { signApiToken } from '../../lib/auth/jwt.js';
import { V3RequestSigner } from '../../lib/auth/request-signer.js';
import { signingIssuer } from '../../lib/config.js';
import { type LoadedKey, readKeyFile } from '../../lib/keys/key-file.js';
import { messageOf, usageError } from '../exit.js';
import type { CliRun } from '../io.js';

/** The command's options as commander hands them over. */
export interface SignCommandOptions {
  readonly key: string;
  /** Required for v3; optional with `legacy`, whose token does not cover the request. */
  readonly method?: string;
  readonly path?: string;
  readonly body?: string;
  readonly idempotencyKey?: string;
  readonly issuer?: string;
  readonly legacy?: boolean;
}

/** `@file` is the file's exact bytes (what `curl --data-binary @file` sends); anything else, the text as UTF-8. */
async function bodyBytes(run: CliRun, body: string | undefined): Promise<Buffer | undefined> {
  if (body === undefined) return undefined;
  if (!body.startsWith('@')) return Buffer.from(body);
  try {
    return await readFile(run.path(body.slice(1)));
  } catch (error) {
    throw usageError(`cannot read the body file ${body.slice(1)}: ${messageOf(error)}`);
  }
}

async function loadKeyFile(run: CliRun, path: string): Promise<LoadedKey> {
  try {
    return await readKeyFile(run.path(path));
  } catch (error) {
    throw usageError(`cannot use the key file ${path}: ${messageOf(error)}`);
  }
}

/** Header names as people write them: x-request-signature -> X-Request-Signature. */
function displayName(name: string): string {
  return name.replace(/(^|-)([a-z])/g, (_match, dash: string, letter: string) => `${dash}${letter.toUpperCase()}`);
}

/**
 * The headers of a v1/v2 request: the legacy token (ES256, kid = sub = the key name, a fresh
 * nonce, aud ['developer-api'], the longest lifetime the gateway accepts), the mode for a
 * sandbox key (absent means live), and the JSON content type legacy bodies have. Nothing of the
 * request is signed, so one set serves whichever v1/v2 call it is sent with.
 */
export async function legacyRequestHeaders(
  key: LoadedKey,
  options: { readonly issuer: string; readonly idempotencyKey?: string; readonly nowSeconds?: number },
): Promise<Record<string, string>> {
  const { token } = await signApiToken({
    privateKey: key.privateKey,
    keyName: key.file.name,
    issuer: options.issuer,
    lifetimeSeconds: LEGACY_MAX_TOKEN_LIFETIME_SECONDS,
    nowSeconds: options.nowSeconds,
  });
  const headers: Record<string, string> = { authorization: `Bearer ${token}` };
  if (key.file.mode === 'sandbox') headers['x-app-mode'] = 'SANDBOX';
  headers['content-type'] = 'application/json';
  if (options.idempotencyKey !== undefined) headers['idempotency-key'] = options.idempotencyKey;
  return headers;
}

/** The method and path a v3 signature covers; without them only a legacy request can be signed. */
function v3RequestLine(options: SignCommandOptions): { method: string; pathAndQuery: string } {
  const { method, path } = options;
  if (method === undefined || path === undefined) {
    throw usageError(
      'a v3 request needs --method and --path (its token and signature cover them), e.g. --method GET --path /v3/fx/pairs; for a v1/v2 request add --legacy instead',
    );
  }
  return { method, pathAndQuery: path };
}

/** What `fxgate sign` prints for these options in this run (its configuration, its folder): one `Name: value` line per header. */
export async function signedHeaderLines(run: CliRun, options: SignCommandOptions): Promise<string> {
  const v3Request = options.legacy ? null : v3RequestLine(options);
  // Read before the key file, so that a bad environment is reported as such.
  const issuer = options.issuer ?? signingIssuer(run.config());
  const key = await loadKeyFile(run, options.key);
  const headers =
    v3Request === null
      ? await legacyRequestHeaders(key, { issuer, idempotencyKey: options.idempotencyKey })
      : await new V3RequestSigner(key, { issuer }).headers({
          ...v3Request,
          body: await bodyBytes(run, options.body),
          idempotencyKey: options.idempotencyKey,
        });
  return Object.entries(headers)
    .map(([name, value]) => `${displayName(name)}: ${value}`)
    .join('\n');
}
