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
import { describeError } from '../../lib/webhooks/delivery-attempt.js';
import {
  type AttemptOutcome,
  type DeliveryLoopOptions,
  DeliveryWorkerCore,
  type Outbox,
  type SignedDelivery,
  type WorkerCoreDependencies,
} from '../../lib/webhooks/delivery-rounds.js';
import {
  DEFAULT_RETRY_POLICY,
  type DeliveryOutcome,
  outcomeAfterAttempt,
  type RetryPolicy,
} from '../../lib/webhooks/retry-schedule.js';
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

/** The database, clock, fetcher, keyring, outbound allowance and metrics of every worker, and its own options and log. */
export interface DeliveryWorkerDependencies extends WorkerCoreDependencies {
  readonly options?: Partial<DeliveryWorkerOptions>;
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
  /** The subscription's status. */
  readonly target_status: string;
  readonly body: string;
  readonly received_at: Date;
}

/** The outbox: the legacy deliveries, leased by a column of their own. */
const OUTBOX: Outbox = {
  deliveries: 'legacy_webhook_deliveries',
  lease: 'leased_until',
  carried: ['event_id', 'subscription_id'],
  columns: `c.subscription_id, s.mode, s.url, s.secret, s.status AS target_status, e.body, e.received_at`,
  joins:
    'JOIN legacy_webhook_subscriptions s ON s.id = c.subscription_id JOIN legacy_webhook_events e ON e.id = c.event_id',
};

export class LegacyDeliveryWorker extends DeliveryWorkerCore<ClaimedDelivery, DeliveryWorkerOptions> {
  constructor(deps: DeliveryWorkerDependencies) {
    super(deps, {
      names: {
        rounds: 'legacy webhook worker',
        loop: 'legacy webhook delivery worker',
        failed: 'legacy webhook delivery round failed',
      },
      kind: 'legacy',
      outbox: OUTBOX,
      defaults: DELIVERY_WORKER_DEFAULTS,
      // The operator's subscriptions: a refusal recorded on an attempt names the setting that allows an in-house receiver.
      audience: 'operator',
    });
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

  /** The event's stored legacy body, signed with the subscription's secret. */
  protected sign(row: ClaimedDelivery): SignedDelivery {
    const body = Buffer.from(row.body, 'utf8');
    let secret: string;
    try {
      secret = this.keyring.open(row.secret, subscriptionSecretBinding(row.subscription_id));
    } catch (error) {
      // Recorded as a failed attempt rather than thrown: one bad row must not hold back the round.
      return { notSent: `the subscription's secret does not open: ${describeError(error)}` };
    }
    const headers = {
      'content-type': 'application/json',
      'user-agent': LEGACY_USER_AGENT,
      [LEGACY_SIGNATURE_HEADER]: signLegacyWebhook(secret, body),
    };
    return { mode: row.mode, post: { url: row.url, headers, body } };
  }

  /** Retried on the legacy policy, counted from receipt: a receiver gets its whole window whatever v3's own delays were. */
  protected schedule(row: ClaimedDelivery, attempt: AttemptOutcome): DeliveryOutcome {
    return outcomeAfterAttempt(this.options.retry, {
      ...attempt,
      eventCreatedAt: row.received_at,
      random: this.random,
    });
  }
}
