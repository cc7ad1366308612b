/**
 * The gateway's legacy webhook worker: takes due deliveries from its outbox
 * (legacy_webhook_deliveries), POSTs each event's stored legacy body with X-Webhook-Signature
 * (base64 HMAC-SHA256 of the body with the subscription's secret), records every attempt, and
 * marks the delivery DELIVERED, schedules a retry (src/lib/webhooks/retry-schedule.ts) or gives
 * it up. At least once; receivers dedupe by eventId. Every attempt goes only where the
 * subscription's mode allows (src/lib/net/destination-policy.ts), checked before anything is sent
 * and again on every address a connection is made to; a refused destination is a failed attempt
 * naming the reason, retried on the schedule. It claims rows as the core's v3 worker does:
 *
 * - 'lock' (PostgreSQL): one transaction selects due rows FOR UPDATE SKIP LOCKED and keeps the
 *   locks through the HTTP calls, writing the outcomes in it. Any number of gateway processes
 *   may run; one that dies loses its connection, the transaction rolls back, and the rows are
 *   due again at once for the others (or for itself after a restart).
 * - 'lease' (PGlite): one connection serialises every transaction, and in `fxgate all` the core
 *   shares it, so no transaction may span an HTTP call. A short transaction leases the rows
 *   (leased_until), the calls run outside it, and each outcome is written in its own short
 *   transaction, guarded by the attempt count it claimed. PGlite serves one process (the data
 *   folder is locked), so a lease found at start-up is a dead process's and is released.
 */

import type { Mode } from '../../lib/auth/credential-vocabulary.js';
import { DEFAULT_WEBHOOK_POLL_MS } from '../../lib/config.js';
import type { Database, Queryable } from '../../lib/db/database.js';
import { type DestinationPolicy, type OutboundAllowance, webhookPolicies } from '../../lib/net/destination-policy.js';
import type { SealingKeyring } from '../../lib/secrets/sealing-keyring.js';
import {
  attemptDelivery,
  type AttemptResult,
  describeError,
  type WebhookFetcher,
} from '../../lib/webhooks/delivery-attempt.js';
import {
  defaultClaim,
  type DeliveryLoopOptions,
  DeliveryWorkerCore,
  insertAttempt,
  receiverAccepted,
  type WorkerSteps,
} from '../../lib/webhooks/delivery-rounds.js';
import { DEFAULT_RETRY_POLICY, outcomeAfterAttempt, type RetryPolicy } from '../../lib/webhooks/retry-schedule.js';
import { LEGACY_SIGNATURE_HEADER, signLegacyWebhook } from '../../lib/webhooks/signature.js';
import type { WebhookDeliveryOutcome } from '../metrics/gateway-metrics.js';
import { subscriptionSecretBinding } from './subscriptions.js';

/** The claim modes are described above. */
export interface DeliveryWorkerOptions extends DeliveryLoopOptions {
  /** Backoff, and the deadline after the gateway received the event (72 h). */
  readonly retry: RetryPolicy;
}

export const DELIVERY_WORKER_DEFAULTS = {
  pollIntervalMs: DEFAULT_WEBHOOK_POLL_MS,
  batchSize: 50,
  requestTimeoutMs: 10_000,
  concurrency: 8,
  retry: DEFAULT_RETRY_POLICY,
} as const;

export interface WorkerLog {
  error(object: object, message: string): void;
}

export interface DeliveryWorkerDependencies {
  readonly db: Database;
  readonly keyring: SealingKeyring;
  readonly options?: Partial<DeliveryWorkerOptions>;
  readonly now?: () => Date;
  /** undici through the worker's own pools unless given, one per mode, each connecting only where that mode's destination policy allows. */
  readonly fetcher?: WebhookFetcher;
  /** Where subscriptions may point beyond public addresses (and loopback in the sandbox), and the resolver. */
  readonly outbound?: OutboundAllowance;
  readonly random?: () => number;
  readonly log?: WorkerLog;
  /** Told of each attempt's outcome once it is written (the metrics). */
  readonly onOutcome?: (outcome: WebhookDeliveryOutcome) => void;
}

export const LEGACY_USER_AGENT = 'fxgate-webhooks/legacy';

interface ClaimedDelivery {
  /** bigint: both drivers return it as text. */
  readonly id: string;
  readonly attempts: number;
  readonly subscription_id: string;
  readonly mode: Mode;
  readonly url: string;
  readonly secret: string;
  readonly subscription_status: string;
  readonly body: string;
  readonly received_at: Date;
}

const CLAIMED_COLUMNS = `c.id::text AS id, c.attempts, c.subscription_id, s.mode, s.url, s.secret, s.status AS subscription_status, e.body, e.received_at`;
const DUE = `SELECT id FROM legacy_webhook_deliveries
  WHERE status = 'PENDING' AND next_attempt_at <= $1 AND (leased_until IS NULL OR leased_until <= $1)
  ORDER BY next_attempt_at LIMIT $2 FOR UPDATE SKIP LOCKED`;
const JOINS =
  'JOIN legacy_webhook_subscriptions s ON s.id = c.subscription_id JOIN legacy_webhook_events e ON e.id = c.event_id';

export class LegacyDeliveryWorker extends DeliveryWorkerCore<ClaimedDelivery, AttemptResult, DeliveryWorkerOptions> {
  private readonly keyring: SealingKeyring;
  /** Where each mode's subscriptions may point, checked before every attempt (and by the agents' connections). */
  private readonly destinations: Readonly<Record<Mode, DestinationPolicy>>;
  private readonly random: () => number;
  private readonly onOutcome: ((outcome: WebhookDeliveryOutcome) => void) | null;
  constructor(deps: DeliveryWorkerDependencies) {
    const options: DeliveryWorkerOptions = {
      ...DELIVERY_WORKER_DEFAULTS,
      claim: defaultClaim(deps.db),
      ...deps.options,
    };
    // The operator's subscriptions: a refusal recorded on an attempt names the setting that allows an in-house receiver.
    const destinations = webhookPolicies(deps.outbound, 'operator');
    super(
      {
        rounds: 'legacy webhook worker',
        loop: 'legacy webhook delivery worker',
        failed: 'legacy webhook delivery round failed',
      },
      deps,
      options,
      destinations,
    );
    this.destinations = destinations;
    this.keyring = deps.keyring;
    this.random = deps.random ?? Math.random;
    this.onOutcome = deps.onOutcome ?? null;
  }

  /** Polls until stop(); releases a dead process's leases first on PGlite. */
  async start(log?: WorkerLog): Promise<void> {
    if (this.loop.running || this.stopped) return;
    this.log ??= log ?? null;
    if (this.options.claim === 'lease' && this.db.driver === 'pglite') {
      await this.db.query(
        `UPDATE legacy_webhook_deliveries SET leased_until = NULL WHERE status = 'PENDING' AND leased_until IS NOT NULL`,
      );
    }
    this.loop.start();
  }

  /** A delivery was just stored: try it now rather than at the next poll. */
  nudge(): void {
    this.loop.wake();
  }

  protected roundSteps(signal: AbortSignal): WorkerSteps<ClaimedDelivery, AttemptResult> {
    return {
      claimLocked: async (tx, now) => {
        const { rows } = await tx.query<ClaimedDelivery>(
          `WITH c AS (SELECT d.id, d.attempts, d.event_id, d.subscription_id, d.next_attempt_at FROM legacy_webhook_deliveries d WHERE d.id IN (${DUE}))
             SELECT ${CLAIMED_COLUMNS} FROM c ${JOINS} ORDER BY c.next_attempt_at, c.id`,
          [now, this.options.batchSize],
        );
        return rows;
      },
      claimLeased: async (tx, now, leaseUntil) => {
        const { rows } = await tx.query<ClaimedDelivery>(
          `WITH c AS (UPDATE legacy_webhook_deliveries SET leased_until = $3 WHERE id IN (${DUE}) RETURNING id, attempts, event_id, subscription_id)
             SELECT ${CLAIMED_COLUMNS} FROM c ${JOINS} ORDER BY c.id`,
          [now, this.options.batchSize, leaseUntil],
        );
        return rows;
      },
      release: async (db, rows) => {
        await db.query(
          `UPDATE legacy_webhook_deliveries SET leased_until = NULL WHERE id = ANY($1::bigint[]) AND status = 'PENDING'`,
          [rows.map((row) => row.id)],
        );
      },
      // A subscription removed after the delivery was written: nothing is sent.
      attempt: (row) => (row.subscription_status === 'ACTIVE' ? this.attempt(row, signal) : Promise.resolve(null)),
      record: (tx, row, result, at) => this.record(tx, row, result, at),
    };
  }

  private async attempt(row: ClaimedDelivery, stopSignal: AbortSignal): Promise<AttemptResult> {
    const body = Buffer.from(row.body, 'utf8');
    let secret: string;
    try {
      secret = this.keyring.open(row.secret, subscriptionSecretBinding(row.subscription_id));
    } catch (error) {
      // Recorded as a failed attempt rather than thrown: one bad row must not hold back the round.
      return {
        kind: 'failed',
        error: `the subscription's secret does not open: ${describeError(error)}`,
        durationMs: 0,
      };
    }
    const headers = {
      'content-type': 'application/json',
      'user-agent': LEGACY_USER_AGENT,
      [LEGACY_SIGNATURE_HEADER]: signLegacyWebhook(secret, body),
    };
    // A subscription stored before the policy, or by a process with another allowance: nothing is sent.
    const refusal = this.destinations[row.mode].refusalOf(row.url);
    if (refusal !== null) return { kind: 'failed', error: `refused: ${refusal}`, durationMs: 0 };
    return attemptDelivery(
      this.outboundFetchers.fetchers[row.mode],
      { url: row.url, headers, body },
      stopSignal,
      this.options.requestTimeoutMs,
      'legacy',
    );
  }

  /** Writes the attempt and the delivery's new state; `attempts = claimed` makes a stale lease's late result change nothing. */
  private async record(
    tx: Queryable,
    row: ClaimedDelivery,
    result: AttemptResult | null,
    attemptedAt: Date,
  ): Promise<void> {
    if (result === null) {
      const { rowCount } = await tx.query(
        `UPDATE legacy_webhook_deliveries SET status = 'GAVE_UP', leased_until = NULL WHERE id = $1 AND status = 'PENDING' AND attempts = $2`,
        [row.id, row.attempts],
      );
      if (rowCount > 0) this.onOutcome?.('gave_up');
      return;
    }
    await insertAttempt(tx, 'legacy_webhook_delivery_attempts', row.id, attemptedAt, result);
    if (result.kind === 'interrupted') {
      // Not the receiver's failure: no attempt counted, due again at once.
      await tx.query(
        `UPDATE legacy_webhook_deliveries SET leased_until = NULL WHERE id = $1 AND status = 'PENDING' AND attempts = $2`,
        [row.id, row.attempts],
      );
      this.onOutcome?.('interrupted');
      return;
    }
    const outcome = outcomeAfterAttempt(this.options.retry, {
      succeeded: receiverAccepted(result),
      failures: row.attempts + 1,
      now: attemptedAt,
      // Counted from receipt: a receiver gets its whole window whatever v3's own delays were.
      eventCreatedAt: row.received_at,
      random: this.random,
    });
    const { rowCount } = await tx.query(
      `UPDATE legacy_webhook_deliveries
          SET status = $3, attempts = attempts + 1, leased_until = NULL,
              next_attempt_at = COALESCE($4, next_attempt_at),
              delivered_at = CASE WHEN $3 = 'DELIVERED' THEN $5::timestamptz ELSE delivered_at END
        WHERE id = $1 AND status = 'PENDING' AND attempts = $2`,
      [row.id, row.attempts, outcome.status, outcome.status === 'PENDING' ? outcome.nextAttemptAt : null, attemptedAt],
    );
    // A stale lease's late result changed nothing, and is not counted either.
    if (rowCount > 0)
      this.onOutcome?.(
        outcome.status === 'DELIVERED' ? 'delivered' : outcome.status === 'PENDING' ? 'retrying' : 'gave_up',
      );
  }
}
