/**
 * The webhook delivery worker: takes due deliveries from the outbox (webhook_deliveries), POSTs
 * each event's v3 envelope signed with the endpoint's secret, opened from its sealed row
 * (docs/contract.md#webhooks-v3-signature), records every attempt, and marks the delivery
 * DELIVERED, schedules a retry (webhook-schedule.ts) or gives it up.
 *
 * Every attempt goes only where the endpoint's mode allows (src/lib/net/destination-policy.ts):
 * its URL is checked before anything is signed or sent, and its connection is made only to
 * addresses checked when it is made. A refused destination is a failed attempt that names the
 * reason, retried on the schedule (a name's answer can change) until it gives up.
 *
 * Delivery is at least once; receivers dedupe by event id. How a round claims its rows:
 *
 * - 'lock' (PostgreSQL): one transaction selects due rows `FOR UPDATE SKIP LOCKED` and keeps
 *   the row locks through the HTTP calls, recording the outcomes in the same transaction. Other
 *   workers skip locked rows, so any number of them may run and no attempt is made twice. If
 *   the worker dies mid-round its connection goes, PostgreSQL rolls the transaction back and
 *   releases the locks, and another worker takes the rows at once: at least once, nothing lost.
 *   The cost is a pooled connection held per round, bounded by batch and timeout.
 * - 'lease' (PGlite): PGlite has one connection and serialises every transaction, so holding
 *   one through an HTTP call would stall the whole API behind a slow receiver. A short
 *   transaction instead claims the rows by moving next_attempt_at past the longest the round
 *   can take (the lease); the calls happen outside any transaction; each outcome is written in
 *   its own short transaction, guarded by the attempt count it claimed. A worker that dies
 *   leaves its rows to become due again when the lease runs out.
 */

import type { Mode } from '../../lib/auth/credential-vocabulary.js';
import { DEFAULT_WEBHOOK_POLL_MS } from '../../lib/config.js';
import type { Database, Queryable } from '../../lib/db/database.js';
import { SealedSecretError } from '../../lib/errors/internal-errors.js';
import { type DestinationPolicy, type OutboundAllowance, webhookPolicies } from '../../lib/net/destination-policy.js';
import { type SealingKeyring } from '../../lib/secrets/sealing-keyring.js';
import { attemptDelivery, type AttemptResult, type WebhookFetcher } from '../../lib/webhooks/delivery-attempt.js';
import {
  defaultClaim,
  type DeliveryLoopOptions,
  DeliveryWorkerCore,
  insertAttempt,
  receiverAccepted,
  type WorkerSteps,
} from '../../lib/webhooks/delivery-rounds.js';
import { signWebhook } from '../../lib/webhooks/signature.js';
import { openEndpointSecret } from './webhook-endpoints.js';
import { afterAttempt, DELIVERY_MAX_AGE_MS } from './webhook-schedule.js';

/** The claim modes are the module comment's. */
export interface WebhookWorkerOptions extends DeliveryLoopOptions {
  /** How long after its event a delivery is still tried (72 h). */
  readonly maxAgeMs: number;
}

export const WEBHOOK_WORKER_DEFAULTS = {
  pollIntervalMs: DEFAULT_WEBHOOK_POLL_MS,
  batchSize: 50,
  requestTimeoutMs: 10_000,
  maxAgeMs: DELIVERY_MAX_AGE_MS,
  concurrency: 8,
} as const;

/** The subset of a pino / fastify logger the worker writes to. */
export interface WorkerLog {
  error(object: object, message: string): void;
  warn(object: object, message: string): void;
}

export interface WebhookWorkerDependencies {
  readonly db: Database;
  readonly options?: Partial<WebhookWorkerOptions>;
  /** The clock deliveries are scheduled and signed by; tests move it instead of sleeping. */
  readonly now?: () => Date;
  /**
   * undici `request` through the worker's own connection pools unless given, one per mode, each
   * connecting only where that mode's destination policy allows.
   */
  readonly fetcher?: WebhookFetcher;
  /** Where endpoints may point beyond public addresses (and loopback in the sandbox), and the resolver (CoreOptions.outbound). */
  readonly outbound?: OutboundAllowance;
  readonly log?: WorkerLog;
  /** The jitter's source, [0, 1) like Math.random. */
  readonly random?: () => number;
  /** Opens the endpoints' secrets: the service's keyring, resolved at start-up. */
  readonly keyring: SealingKeyring;
}

const USER_AGENT = 'fxgate-webhooks/v3';

interface ClaimedDelivery {
  /** bigint: both drivers return it as text. */
  readonly id: string;
  readonly attempts: number;
  readonly event_id: string;
  readonly endpoint_id: string;
  readonly environment: Mode;
  readonly url: string;
  /** Sealed (webhook-endpoints.ts). */
  readonly secret: string;
  readonly endpoint_status: string;
  readonly type: string;
  readonly event_type: string;
  readonly data: Record<string, unknown>;
  readonly event_created_at: Date;
}

const CLAIMED_COLUMNS = `c.id::text AS id, c.attempts, c.event_id, c.endpoint_id, w.environment, w.url, w.secret, w.status AS endpoint_status,
  e.type, e.event_type, e.data, e.created_at AS event_created_at`;

const DUE = `SELECT id FROM webhook_deliveries WHERE status = 'PENDING' AND next_attempt_at <= $1
  ORDER BY next_attempt_at LIMIT $2 FOR UPDATE SKIP LOCKED`;

/** 'lock': the rows stay locked until the round's transaction ends. */
async function claimLocked(tx: Queryable, now: Date, limit: number): Promise<ClaimedDelivery[]> {
  const { rows } = await tx.query<ClaimedDelivery>(
    `WITH c AS (SELECT d.id, d.attempts, d.event_id, d.endpoint_id, d.next_attempt_at FROM webhook_deliveries d WHERE d.id IN (${DUE}))
     SELECT ${CLAIMED_COLUMNS} FROM c JOIN webhook_endpoints w ON w.id = c.endpoint_id JOIN events e ON e.id = c.event_id
      ORDER BY c.next_attempt_at, c.id`,
    [now, limit],
  );
  return rows;
}

/** 'lease': the rows are hidden from other workers until leaseUntil. */
async function claimLeased(tx: Queryable, now: Date, limit: number, leaseUntil: Date): Promise<ClaimedDelivery[]> {
  const { rows } = await tx.query<ClaimedDelivery>(
    `WITH c AS (UPDATE webhook_deliveries SET next_attempt_at = $3 WHERE id IN (${DUE}) RETURNING id, attempts, event_id, endpoint_id)
     SELECT ${CLAIMED_COLUMNS} FROM c JOIN webhook_endpoints w ON w.id = c.endpoint_id JOIN events e ON e.id = c.event_id
      ORDER BY c.id`,
    [now, limit, leaseUntil],
  );
  return rows;
}

export class WebhookDeliveryWorker extends DeliveryWorkerCore<ClaimedDelivery, AttemptResult, WebhookWorkerOptions> {
  /** Where each mode's endpoints may point, checked before every attempt (and by the agents' connections). */
  private readonly destinations: Readonly<Record<Mode, DestinationPolicy>>;
  private readonly random: () => number;
  private readonly keyring: SealingKeyring;
  constructor(deps: WebhookWorkerDependencies) {
    const options: WebhookWorkerOptions = {
      ...WEBHOOK_WORKER_DEFAULTS,
      claim: defaultClaim(deps.db),
      ...deps.options,
    };
    const destinations = webhookPolicies(deps.outbound);
    super(
      { rounds: 'webhook worker', loop: 'webhook worker', failed: 'webhook delivery round failed' },
      deps,
      options,
      destinations,
    );
    this.destinations = destinations;
    this.random = deps.random ?? Math.random;
    this.keyring = deps.keyring;
  }

  /**
   * Polls until stop(): a round right after a full batch, else after pollIntervalMs. The log,
   * when given, is where failed rounds are reported (the app passes its own when it starts jobs).
   */
  start(log?: WorkerLog): void {
    if (this.loop.running || this.stopped) return;
    this.log ??= log ?? null;
    this.loop.start();
  }

  protected roundSteps(signal: AbortSignal): WorkerSteps<ClaimedDelivery, AttemptResult> {
    return {
      claimLocked: (tx, now) => claimLocked(tx, now, this.options.batchSize),
      claimLeased: (tx, now, leaseUntil) => claimLeased(tx, now, this.options.batchSize, leaseUntil),
      release: async (db, rows, now) => {
        await db.query(
          `UPDATE webhook_deliveries SET next_attempt_at = $2 WHERE id = ANY($1::bigint[]) AND status = 'PENDING'`,
          [rows.map((row) => row.id), now],
        );
      },
      // An endpoint deleted after its delivery was fanned out: nothing is sent.
      attempt: (row, attemptedAt) =>
        row.endpoint_status === 'ACTIVE' ? this.attempt(row, attemptedAt, signal) : Promise.resolve(null),
      record: (tx, row, result, at) => this.record(tx, row, result, at),
    };
  }

  private async attempt(row: ClaimedDelivery, attemptedAt: Date, stopSignal: AbortSignal): Promise<AttemptResult> {
    let secret: string;
    try {
      secret = openEndpointSecret(this.keyring, row.endpoint_id, row.secret);
    } catch (error) {
      if (!(error instanceof SealedSecretError)) throw error;
      // Nothing is sent unsigned: a failed attempt, retried on the schedule, until the key that
      // sealed it is given to the process or the delivery gives up.
      this.log?.error({ endpointId: row.endpoint_id, err: error }, 'webhook endpoint secret does not open');
      return { kind: 'failed', error: `not sent: ${error.message}`, durationMs: 0 };
    }
    // The envelope of docs/contract.md#webhooks-v3-envelope. These bytes are signed and these
    // bytes are sent.
    const body = Buffer.from(
      JSON.stringify({
        id: row.event_id,
        type: row.type,
        eventType: row.event_type,
        createdAt: row.event_created_at.toISOString(),
        data: row.data,
      }),
    );
    const headers = {
      'content-type': 'application/json',
      'user-agent': USER_AGENT,
      ...signWebhook(secret, body, Math.floor(attemptedAt.getTime() / 1000)),
    };
    // An endpoint stored before the policy, or by a process with another allowance: nothing is sent.
    const refusal = this.destinations[row.environment].refusalOf(row.url);
    if (refusal !== null) return { kind: 'failed', error: `refused: ${refusal}`, durationMs: 0 };
    return attemptDelivery(
      this.outboundFetchers.fetchers[row.environment],
      { url: row.url, headers, body },
      stopSignal,
      this.options.requestTimeoutMs,
    );
  }

  /**
   * Writes the attempt and the delivery's new state. The `attempts = claimed` guard makes a
   * stale lease's late result change nothing (its attempt row is still kept: it happened).
   */
  private async record(
    tx: Queryable,
    row: ClaimedDelivery,
    result: AttemptResult | null,
    attemptedAt: Date,
  ): Promise<void> {
    if (result === null) {
      await tx.query(
        `UPDATE webhook_deliveries SET status = 'GAVE_UP' WHERE id = $1 AND status = 'PENDING' AND attempts = $2`,
        [row.id, row.attempts],
      );
      return;
    }
    await insertAttempt(tx, 'webhook_delivery_attempts', row.id, attemptedAt, result);
    if (result.kind === 'interrupted') {
      // Not the receiver's failure: no attempt counted, due again at once (a lease handed back).
      await tx.query(
        `UPDATE webhook_deliveries SET next_attempt_at = $3 WHERE id = $1 AND status = 'PENDING' AND attempts = $2`,
        [row.id, row.attempts, attemptedAt],
      );
      return;
    }
    const outcome = afterAttempt({
      succeeded: receiverAccepted(result),
      failures: row.attempts + 1,
      now: attemptedAt,
      eventCreatedAt: row.event_created_at,
      maxAgeMs: this.options.maxAgeMs,
      random: this.random,
    });
    await tx.query(
      `UPDATE webhook_deliveries
          SET status = $3, attempts = attempts + 1,
              next_attempt_at = COALESCE($4, next_attempt_at),
              delivered_at = CASE WHEN $3 = 'DELIVERED' THEN $5::timestamptz ELSE delivered_at END
        WHERE id = $1 AND status = 'PENDING' AND attempts = $2`,
      [row.id, row.attempts, outcome.status, outcome.status === 'PENDING' ? outcome.nextAttemptAt : null, attemptedAt],
    );
  }
}
