/**
 * Where a state command runs its operations. With PostgreSQL, or an embedded data folder no
 * process holds, on the database it opens itself, as always. While a running fxgate holds the
 * embedded folder (PGlite serves one process), through that process's admin listener, found and
 * authenticated with what it published in the folder (admin-discovery.ts). A lock left by a
 * dead process is taken over as data-dir-lock.ts does, and the command runs directly.
 */
import { resolve } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';

import { Client } from 'undici';

import type { Config } from '../../lib/config.js';
import {
  CliError,
  DataDirLockedError,
  KeyImportConflictError,
  KeyImportInvalidError,
} from '../../lib/errors/internal-errors.js';
import { Closers } from '../closers.js';
import { messageOf } from '../exit.js';
import type { CliRun } from '../io.js';
import { openRegistry, type Warn } from '../runtime.js';
import { givenKeyring, openKeyring, resolveKeyring } from '../sealing.js';
import { checkAdminUrl, readAdminToken, readPublishedAdmin } from './admin-discovery.js';
import { type SealingAccess, type StateContext, type StateOperation, wireErrorSchema } from './operation.js';

/** How long a command waits for a process that holds the folder to publish its admin listener (it may be starting). */
export const PUBLISH_WAIT_MS = 20_000;
const POLL_MS = 200;
/** Said once the wait has lasted this long, so that a wait is never silent. */
const WAIT_NOTICE_MS = 1_000;

export const CLI_ROUTE_PREFIX = '/admin/cli/';

export interface StateSession {
  /** Where the operations run: this process's database, or the admin listener of the process that holds it. */
  readonly via:
    { readonly kind: 'database' } | { readonly kind: 'admin listener'; readonly url: string; readonly pid: number };
  run<I, O>(operation: StateOperation<I, O>, input: I): Promise<O>;
}

/** Runs fn with a session on the run's configured state, then closes what it opened whatever happened. */
export async function withState<T>(run: CliRun, fn: (session: StateSession) => Promise<T>): Promise<T> {
  const closers = new Closers();
  try {
    return await fn(await openState(run.config(), closers, { warn: (line) => run.err(line) }));
  } finally {
    await closers.closeAll();
  }
}

/** The result as it would arrive over the wire: both paths print from equal values. */
function roundTrip<O>(operation: StateOperation<unknown, O>, value: O): O {
  return operation.output.decode(JSON.parse(JSON.stringify(operation.output.encode(value))));
}

function directSession(context: StateContext): StateSession {
  return {
    via: { kind: 'database' },
    run: async (operation, input) => roundTrip(operation, await operation.run(context, operation.input.parse(input))),
  };
}

function lockHolder(error: unknown): number | null {
  return error instanceof CliError && error.cause instanceof DataDirLockedError ? error.cause.pid : null;
}

export interface OpenStateOptions {
  /** Says that the command is waiting for the holder of the folder (the run's stderr). */
  readonly warn: Warn;
  readonly publishWaitMs?: number;
}

/** The session for one command; what it opens is registered with closers. */
export async function openState(config: Config, closers: Closers, options: OpenStateOptions): Promise<StateSession> {
  const publishWaitMs = options.publishWaitMs ?? PUBLISH_WAIT_MS;
  const direct = async (): Promise<StateSession> => {
    const { db, registry } = await openRegistry(config, closers, options.warn);
    // Resolved when an operation asks: most commands never seal, and must not need a key.
    const sealing: SealingAccess = {
      keyring: (columns) => openKeyring(config, db, columns, options.warn),
      resolve: () => resolveKeyring(config, db),
      given: () => givenKeyring(config),
    };
    return directSession({ db, registry, sealing, config });
  };
  if (config.DATABASE_URL !== undefined) return direct();
  const folder = resolve(config.FXGATE_DATA_DIR);
  const started = Date.now();
  let noticed = false;
  for (;;) {
    let holder: number | null;
    try {
      return await direct();
    } catch (error) {
      holder = lockHolder(error);
      if (holder === null) throw error;
    }
    const published = await readPublishedAdmin(folder);
    if (published !== null && published.pid === holder) {
      if (published.url === null) {
        throw new CliError(
          `${folder} (FXGATE_DATA_DIR) is in use by fxgate (pid ${holder}), which runs without an admin listener, so this command cannot go through it. ` +
            'Stop that process and run the command again, or restart it with an admin listener (FXGATE_ADMIN_PORT unset for `fxgate all`, which then listens on PORT+1, ' +
            'or a port number), or set DATABASE_URL so that several processes share PostgreSQL.',
        );
      }
      return remoteSession(checkAdminUrl(published.url, holder), await readAdminToken(folder), holder, closers);
    }
    const waited = Date.now() - started;
    if (waited >= publishWaitMs) {
      throw new CliError(
        `${folder} (FXGATE_DATA_DIR) is in use by another fxgate process (pid ${holder}), which published no admin listener within ${publishWaitMs / 1000} s ` +
          '(it may still be starting, or not be a server). Run the command again once it has started, or stop it first, or set DATABASE_URL so that several processes share PostgreSQL.',
      );
    }
    if (!noticed && waited >= WAIT_NOTICE_MS) {
      noticed = true;
      options.warn(`fxgate: waiting for fxgate (pid ${holder}), which holds ${folder}, to finish starting`);
    }
    await sleep(POLL_MS);
  }
}

function parseJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}

/** The operation's failure as the command reports it directly. */
function failureOf(body: unknown): Error | null {
  const parsed = wireErrorSchema.safeParse(body);
  if (!parsed.success) return null;
  const { message, exitCode, keyImport } = parsed.data.error;
  if (keyImport !== undefined)
    return new (keyImport.invalid ? KeyImportInvalidError : KeyImportConflictError)(keyImport.file, keyImport.problems);
  return new CliError(message, exitCode);
}

function remoteSession(url: URL, token: string, pid: number, closers: Closers): StateSession {
  const client = new Client(url.origin);
  closers.add('admin listener client', () => client.close());
  const where = `the admin listener of fxgate (pid ${pid}) at ${url.origin}`;
  return {
    via: { kind: 'admin listener', url: url.origin, pid },
    run: async (operation, input) => {
      const path = `${CLI_ROUTE_PREFIX}${operation.name}`;
      let statusCode: number;
      let text: string;
      try {
        const response = await client.request({
          method: 'POST',
          path,
          headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
          body: JSON.stringify(input),
        });
        statusCode = response.statusCode;
        text = await response.body.text();
      } catch (error) {
        throw new CliError(`cannot reach ${where}: ${messageOf(error)}`, undefined, { cause: error });
      }
      const body = parseJson(text);
      if (statusCode === 200) {
        const decoded = operation.output.safeDecode(body);
        if (decoded.success) return decoded.data;
        throw new CliError(
          `${where} answered ${path} with what this fxgate cannot read (another version?): stop it and run the command again`,
        );
      }
      if (statusCode === 401)
        throw new CliError(
          `${where} refused the token in the data folder: stop that process and start it again, which writes a new one`,
        );
      if (statusCode === 404)
        throw new CliError(
          `${where} does not serve ${path} (another version of fxgate?): stop it and run the command again`,
        );
      throw failureOf(body) ?? new CliError(`${where} answered ${path} with ${statusCode}: ${text.slice(0, 200)}`);
    },
  };
}
