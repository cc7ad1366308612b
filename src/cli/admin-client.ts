/**
 * The CLI as a client of a running process's admin listener (`fxgate diff report`, `fxgate
 * schedule`): one GET of a JSON route, with FXGATE_ADMIN_TOKEN (or the one in
 * FXGATE_ADMIN_TOKEN_FILE) as its bearer token when the environment has one, every failure a
 * CliError naming what to fix. It reaches only the URL it is given.
 */
import { request } from 'undici';

import { CliError } from '../lib/errors/internal-errors.js';
import { messageOf } from './exit.js';

/** The most the admin listener may take to answer. */
const FETCH_TIMEOUT_MS = 10_000;

/** The JSON `adminUrl` serves at `path`; `token` goes as its bearer token when given. */
export async function fetchAdminJson(adminUrl: string, path: string, token?: string): Promise<unknown> {
  const url = new URL(path, adminUrl).toString();
  let status: number;
  let text: string;
  try {
    const response = await request(url, {
      ...(token === undefined ? {} : { headers: { authorization: `Bearer ${token}` } }),
      headersTimeout: FETCH_TIMEOUT_MS,
      bodyTimeout: FETCH_TIMEOUT_MS,
      signal: AbortSignal.timeout(FETCH_TIMEOUT_MS),
    });
    status = response.statusCode;
    text = await response.body.text();
  } catch (error) {
    throw new CliError(`cannot read ${url}: ${messageOf(error)}`, undefined, { cause: error });
  }
  if (status === 404)
    throw new CliError(
      `${url} answered 404: point --url at the gateway's admin listener (FXGATE_ADMIN_HOST:FXGATE_ADMIN_PORT), not its public one`,
    );
  if (status === 401)
    throw new CliError(
      token === undefined
        ? `${url} answered 401: the admin listener has a token; set FXGATE_ADMIN_TOKEN to it`
        : `${url} answered 401: FXGATE_ADMIN_TOKEN is not the admin listener's token`,
    );
  if (status !== 200) throw new CliError(`${url} answered ${status}: ${text.slice(0, 300)}`);
  try {
    return JSON.parse(text);
  } catch {
    throw new CliError(`${url} answered something that is not JSON: ${text.slice(0, 300)}`);
  }
}
