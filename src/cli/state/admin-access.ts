/**
 * The server's side of the CLI's state commands: while a process holds the embedded data folder,
 * its admin listener serves `POST /admin/cli/<operation>` for each of them, running the same
 * operation the command runs directly, on this process's database and key registry (so a
 * revocation reaches its key cache at once). The routes exist only on a process that holds an
 * embedded folder: with PostgreSQL the commands open the database themselves.
 *
 * Each request carries the token this process published (`Authorization: Bearer`), compared in
 * constant time, and must come over loopback: anything else is 401 or 403. The admin listener's
 * own token (FXGATE_ADMIN_TOKEN) is neither needed nor taken here: the published token is the
 * stronger proof (a fresh secret per process, readable only by the server's user), and a
 * scraper's credential must not open key management.
 */
import type { AddressInfo } from 'node:net';
import { resolve } from 'node:path';

import type { FastifyReply, FastifyRequest } from 'fastify';

import type { AdminRoutes } from '../../lib/admin/admin-listener.js';
import { bearerTokenMatches } from '../../lib/admin/admin-token.js';
import type { Config } from '../../lib/config.js';
import { CliError, EXIT_CODES, KeyImportError, KeyImportInvalidError } from '../../lib/errors/internal-errors.js';
import type { Closers } from '../closers.js';
import { accountOperations } from '../commands/accounts.js';
import { keyOperations } from '../commands/keys.js';
import { orgOperations } from '../commands/orgs.js';
import { secretsOperations } from '../commands/secrets.js';
import { webhookOperations } from '../commands/webhooks.js';
import { messageOf } from '../exit.js';
import type { Registry } from '../runtime.js';
import type { ResolvedKeyring } from '../sealing.js';
import { isLoopbackAddress, localAdminUrl, newAdminToken, publishAdmin } from './admin-discovery.js';
import type { AnyStateOperation, StateContext, WireError } from './operation.js';
import { CLI_ROUTE_PREFIX } from './session.js';
import { readinessReportOperation, usageReportOperation } from './usage-operation.js';

/** Every operation a state command runs. */
export const STATE_OPERATIONS: readonly AnyStateOperation[] = [
  ...[keyOperations, orgOperations, accountOperations, webhookOperations, secretsOperations].flatMap((group) =>
    Object.values(group),
  ),
  usageReportOperation,
  readinessReportOperation,
];

/** A key import file's records can be many: the admin listener's default of 1 MiB would refuse a large one. */
const BODY_LIMIT_BYTES = 64 * 1024 * 1024;

function wireError(error: unknown): { status: number; body: WireError } {
  if (error instanceof KeyImportError) {
    const invalid = error instanceof KeyImportInvalidError;
    const exitCode = invalid ? EXIT_CODES.usage : EXIT_CODES.failure;
    return {
      status: 409,
      body: {
        error: {
          message: error.message,
          exitCode,
          keyImport: { file: error.file, problems: [...error.problems], invalid },
        },
      },
    };
  }
  if (error instanceof CliError) {
    const exitCode = error.exitCode === EXIT_CODES.usage ? EXIT_CODES.usage : EXIT_CODES.failure;
    return { status: exitCode === EXIT_CODES.usage ? 422 : 409, body: { error: { message: error.message, exitCode } } };
  }
  // The command run directly would print this message too; the token holder is the same operator.
  return { status: 500, body: { error: { message: messageOf(error), exitCode: EXIT_CODES.failure } } };
}

/** What a serving process runs the operations on: its database, its key registry, its keyring. */
export interface ServingState extends Registry {
  readonly keyring: ResolvedKeyring;
}

export class CliAdminAccess {
  private readonly token = newAdminToken();
  private readonly context: StateContext;

  constructor(
    private readonly config: Config,
    state: ServingState,
  ) {
    // This process's keys, resolved and checked at its start.
    const keys = state.keyring;
    this.context = {
      db: state.db,
      registry: state.registry,
      sealing: { keyring: async () => keys, resolve: async () => keys, given: async () => keys },
      config,
    };
  }

  addRoutes(admin: AdminRoutes): void {
    for (const operation of STATE_OPERATIONS) {
      admin.add({
        method: 'POST',
        url: `${CLI_ROUTE_PREFIX}${operation.name}`,
        bodyLimit: BODY_LIMIT_BYTES,
        // This token, not FXGATE_ADMIN_TOKEN: it proves the caller can read the data folder as the server's user.
        ownCredential: true,
        handler: (request, reply) => this.handle(operation, request, reply),
      });
    }
  }

  private async handle(operation: AnyStateOperation, request: FastifyRequest, reply: FastifyReply): Promise<unknown> {
    if (!isLoopbackAddress(request.socket.remoteAddress ?? ''))
      return reply
        .code(403)
        .send({ error: { message: 'the CLI routes answer loopback clients only', exitCode: EXIT_CODES.failure } });
    if (!bearerTokenMatches(request.headers.authorization, this.token)) {
      return reply
        .code(401)
        .header('www-authenticate', 'Bearer')
        .send({ error: { message: 'a token from the data folder is required', exitCode: EXIT_CODES.failure } });
    }
    const input = operation.input.safeParse(request.body);
    if (!input.success)
      return reply.code(400).send({
        error: {
          message: `${operation.name}: ${input.error.issues.map((issue) => `${issue.path.join('.')}: ${issue.message}`).join('; ')}`,
          exitCode: EXIT_CODES.usage,
        },
      });
    try {
      return operation.output.encode(await operation.run(this.context, input.data));
    } catch (error) {
      const { status, body } = wireError(error);
      if (status === 500) request.log.error({ err: error }, `${operation.name} failed`);
      return reply.code(status).send(body);
    }
  }

  /**
   * Publishes the listener's address and token in the data folder (or that there is no
   * listener, with null), and registers their removal at shutdown with closers.
   */
  async publish(closers: Closers, address: AddressInfo | string | null): Promise<void> {
    const url = address === null ? null : typeof address === 'string' ? address : localAdminUrl(address);
    closers.add('published admin listener', await publishAdmin(resolve(this.config.FXGATE_DATA_DIR), url, this.token));
  }
}
