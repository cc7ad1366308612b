/**
 * Where v3 delivers to the gateway: `POST /_fxgate/webhooks/v3/<orgId>/<mode>`. A delivery is
 * verified with the secret of the gateway's own v3 endpoint for that org and mode
 * (X-Service-Signature, with the exported verifier, and its timestamp within the tolerance, so
 * a captured delivery cannot be replayed later), read, turned into its legacy body, and stored
 * with one outbox row per subscription that asked for it, in one transaction. Only then is it
 * answered 2xx: v3 keeps retrying anything else, so nothing is lost. A v3 event stored already
 * (a v3 retry, or two endpoints during a URL change) is answered 2xx and stored once.
 */
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';

import { type Mode, MODES } from '../../lib/auth/credential-vocabulary.js';
import type { Database } from '../../lib/db/database.js';
import { ApiError } from '../../lib/errors/api-error.js';
import { V3ContractError } from '../../lib/errors/internal-errors.js';
import { isUuid } from '../../lib/ids.js';
import type { SealingKeyring } from '../../lib/secrets/sealing-keyring.js';
import {
  DEFAULT_TOLERANCE_SECONDS,
  SIGNATURE_HEADER,
  verifyWebhookSignature,
  VERSION_HEADER,
  WEBHOOK_VERSION,
} from '../../lib/webhooks/signature.js';
import { sendV3Error } from '../v3/errors.js';
import { type LegacyWebhookBuilder, parseV3WebhookEnvelope } from './legacy-payload.js';
import { LEGACY_WEBHOOK_PATH, registrationSecretBinding } from './registrations.js';

/** v3 events are a few KB; anything near this is not one. */
export const RECEIVER_BODY_LIMIT = 64 * 1024;

export type Receipt =
  | { readonly outcome: 'stored'; readonly eventId: string; readonly deliveries: number }
  | { readonly outcome: 'duplicate'; readonly eventId: string }
  /** Verified, but nothing to deliver: no legacy event is made from it, or no subscription asks for it. */
  | { readonly outcome: 'ignored'; readonly reason: string };

export interface ReceiverDependencies {
  readonly db: Database;
  readonly keyring: SealingKeyring;
  readonly builder: LegacyWebhookBuilder;
  readonly toleranceSeconds?: number;
  readonly now?: () => Date;
  /** Called after a receipt stored deliveries (the worker tries them at once). */
  readonly onStored?: () => void;
  readonly log?: { error(object: object, message: string): void };
}

export interface V3Delivery {
  readonly orgId: string;
  readonly mode: string;
  readonly rawBody: Buffer;
  readonly headers: Readonly<Record<string, string | string[] | undefined>>;
}

/** The secrets v3 may sign this org and mode's deliveries with: its endpoints' (two while the URL changes). */
async function endpointSecrets(deps: ReceiverDependencies, orgId: string, mode: Mode): Promise<string[]> {
  const { rows } = await deps.db.query<{ id: string; secret: string }>(
    'SELECT id, secret FROM legacy_webhook_registrations WHERE org_id = $1 AND mode = $2 AND secret IS NOT NULL',
    [orgId, mode],
  );
  return rows.map((row) => deps.keyring.open(row.secret, registrationSecretBinding(row.id)));
}

function headerIssue(header: string, code: string, message: string): ApiError {
  return new ApiError('VALIDATION_HEADER_FAILED', { header, issues: [{ path: '', code, message }] });
}

/**
 * Verifies, reads and stores one v3 delivery; throws the ApiError to answer when it is refused
 * (401 a signature that does not verify, 400 a stale one or a body that is not a v3 event).
 */
export async function receiveV3Delivery(deps: ReceiverDependencies, delivery: V3Delivery): Promise<Receipt> {
  const orgId = delivery.orgId;
  if (!isUuid(orgId) || !(MODES as readonly string[]).includes(delivery.mode)) {
    throw new ApiError('ROUTE_NOT_FOUND', {
      method: 'POST',
      path: `${LEGACY_WEBHOOK_PATH}/${delivery.orgId}/${delivery.mode}`,
    });
  }
  const mode = delivery.mode as Mode;
  const now = deps.now?.() ?? new Date();
  const header = delivery.headers[SIGNATURE_HEADER];
  if (header === undefined) throw new ApiError('AUTH_TOKEN_INVALID_CONFIG', { reason: 'SIGNATURE_MISSING' });
  // The receiver is on the public listener: a header that cannot be a signature costs no database read.
  const shape = verifyWebhookSignature({ secret: [], rawBody: '', header });
  if (!shape.ok && shape.reason === 'MALFORMED')
    throw new ApiError('AUTH_TOKEN_INVALID_CONFIG', { reason: 'SIGNATURE_MALFORMED' });
  const secrets = await endpointSecrets(deps, orgId, mode);
  // Nothing of this org and mode is registered: no delivery can verify.
  if (secrets.length === 0) throw new ApiError('AUTH_TOKEN_INVALID_CONFIG', { reason: 'SIGNATURE_INVALID' });
  const verified = verifyWebhookSignature({
    secret: secrets,
    rawBody: delivery.rawBody,
    header,
    toleranceSeconds: deps.toleranceSeconds ?? DEFAULT_TOLERANCE_SECONDS,
    nowSeconds: Math.floor(now.getTime() / 1000),
  });
  if (!verified.ok) {
    if (verified.reason === 'MALFORMED')
      throw new ApiError('AUTH_TOKEN_INVALID_CONFIG', { reason: 'SIGNATURE_MALFORMED' });
    if (verified.reason === 'SIGNATURE_MISMATCH')
      throw new ApiError('AUTH_TOKEN_INVALID_CONFIG', { reason: 'SIGNATURE_INVALID' });
    throw headerIssue(
      SIGNATURE_HEADER,
      'timestamp_out_of_tolerance',
      `the signature's timestamp is more than ${deps.toleranceSeconds ?? DEFAULT_TOLERANCE_SECONDS} s from the gateway's clock: a replay, or a clock to fix`,
    );
  }
  const version = delivery.headers[VERSION_HEADER];
  if (version !== WEBHOOK_VERSION)
    throw headerIssue(VERSION_HEADER, 'unsupported_version', `the gateway reads ${WEBHOOK_VERSION} deliveries`);

  let built;
  let envelope;
  try {
    envelope = parseV3WebhookEnvelope(delivery.rawBody);
    built = deps.builder.build(envelope, orgId);
  } catch (error) {
    if (!(error instanceof V3ContractError)) throw error;
    // Signed by v3 and still not a v3 event: its sender breaks the contract; v3 retries it, and the log says why.
    deps.log?.error({ err: error, orgId, mode }, 'legacy webhooks: a v3 delivery breaks the v3 contract');
    throw new ApiError('VALIDATION_BODY_FAILED', {
      issues: error.problems.map((problem) => ({ path: '', code: 'v3_contract', message: problem })),
    });
  }
  if (built === null) return { outcome: 'ignored', reason: `no legacy event is made from ${envelope.eventType}` };
  const legacy = built;
  const v3 = envelope;

  const receipt = await deps.db.transaction(async (tx): Promise<Receipt> => {
    const { rows: subscriptions } = await tx.query<{ id: string }>(
      `SELECT id FROM legacy_webhook_subscriptions WHERE org_id = $1 AND mode = $2 AND status = 'ACTIVE' AND $3 = ANY(events)`,
      [orgId, mode, legacy.event],
    );
    if (subscriptions.length === 0)
      return { outcome: 'ignored', reason: `no subscription of org ${orgId} (${mode}) asks for ${legacy.event}` };
    const inserted = await tx.query(
      `INSERT INTO legacy_webhook_events (id, v3_event_id, org_id, mode, v3_event_type, legacy_event, body, created_at, received_at)
       VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9) ON CONFLICT (id) DO NOTHING`,
      [legacy.eventId, v3.id, orgId, mode, v3.eventType, legacy.event, legacy.body, new Date(v3.createdAt), now],
    );
    if (inserted.rowCount === 0) return { outcome: 'duplicate', eventId: legacy.eventId };
    const fanned = await tx.query(
      `INSERT INTO legacy_webhook_deliveries (event_id, subscription_id, status, next_attempt_at, created_at)
       SELECT $1, s.id, 'PENDING', $2, $2 FROM legacy_webhook_subscriptions s WHERE s.id = ANY($3::uuid[])`,
      [legacy.eventId, now, subscriptions.map((row) => row.id)],
    );
    return { outcome: 'stored', eventId: legacy.eventId, deliveries: fanned.rowCount };
  });
  if (receipt.outcome === 'stored') deps.onStored?.();
  return receipt;
}

/** The receiver's route, with its own body parser: the signature is over the raw bytes. */
export async function registerWebhookReceiver(app: FastifyInstance, deps: ReceiverDependencies): Promise<void> {
  await app.register(async (scope) => {
    scope.removeAllContentTypeParsers();
    scope.addContentTypeParser('*', { parseAs: 'buffer', bodyLimit: RECEIVER_BODY_LIMIT }, (_request, body, done) =>
      done(null, body),
    );
    scope.post<{ Params: { orgId: string; mode: string } }>(
      `${LEGACY_WEBHOOK_PATH}/:orgId/:mode`,
      async (request: FastifyRequest<{ Params: { orgId: string; mode: string } }>, reply: FastifyReply) => {
        try {
          const receipt = await receiveV3Delivery(deps, {
            orgId: request.params.orgId,
            mode: request.params.mode,
            rawBody: Buffer.isBuffer(request.body) ? request.body : Buffer.alloc(0),
            headers: request.headers,
          });
          return reply.code(200).send({ received: true, ...receipt });
        } catch (error) {
          if (!(error instanceof ApiError)) throw error;
          request.log.warn(
            { err: error, orgId: request.params.orgId, mode: request.params.mode },
            'legacy webhooks: a v3 delivery was refused',
          );
          return sendV3Error(reply, error);
        }
      },
    );
  });
}
