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
import { SealedSecretError } from '../../lib/errors/internal-errors.js';
import {
  type AttemptOutcome,
  type DeliveryLoopOptions,
  DeliveryWorkerCore,
  type Outbox,
  type SignedDelivery,
  type WorkerCoreDependencies,
} from '../../lib/webhooks/delivery-rounds.js';
import { signWebhook } from '../../lib/webhooks/signature.js';
import { openEndpointSecret } from './webhook-endpoints.js';
import { afterAttempt, DELIVERY_MAX_AGE_MS, type DeliveryOutcome } from './webhook-schedule.js';

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

/** The database, clock, fetcher, keyring and outbound allowance (CoreOptions.outbound) of every worker, and its own options and log. */
export interface WebhookWorkerDependencies extends WorkerCoreDependencies {
  readonly options?: Partial<WebhookWorkerOptions>;
  readonly log?: WorkerLog;
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
  /** The endpoint's status. */
  readonly target_status: string;
  readonly type: string;
  readonly event_type: string;
  readonly data: Record<string, unknown>;
  readonly event_created_at: Date;
}

/** The outbox: the v3 deliveries, leased by their due time. */
const OUTBOX: Outbox = {
  deliveries: 'webhook_deliveries',
  lease: 'next_attempt_at',
  carried: ['event_id', 'endpoint_id'],
  columns: `c.event_id, c.endpoint_id, w.environment, w.url, w.secret, w.status AS target_status,
  e.type, e.event_type, e.data, e.created_at AS event_created_at`,
  joins: 'JOIN webhook_endpoints w ON w.id = c.endpoint_id JOIN events e ON e.id = c.event_id',
};

export class WebhookDeliveryWorker extends DeliveryWorkerCore<ClaimedDelivery, WebhookWorkerOptions> {
  constructor(deps: WebhookWorkerDependencies) {
    super(deps, {
      names: { rounds: 'webhook worker', loop: 'webhook worker', failed: 'webhook delivery round failed' },
      kind: 'v3',
      outbox: OUTBOX,
      defaults: WEBHOOK_WORKER_DEFAULTS,
      audience: 'integrator',
    });
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

  /** The event's v3 envelope, signed with its endpoint's secret. */
  protected sign(row: ClaimedDelivery, attemptedAt: Date): SignedDelivery {
    let secret: string;
    try {
      secret = openEndpointSecret(this.keyring, row.endpoint_id, row.secret);
    } catch (error) {
      if (!(error instanceof SealedSecretError)) throw error;
      // Nothing is sent unsigned: a failed attempt, retried on the schedule, until the key that
      // sealed it is given to the process or the delivery gives up.
      this.log?.error({ endpointId: row.endpoint_id, err: error }, 'webhook endpoint secret does not open');
      return { notSent: `not sent: ${error.message}` };
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
    return { mode: row.environment, post: { url: row.url, headers, body } };
  }

  /** Retried on the shared schedule for maxAgeMs after the event. */
  protected schedule(row: ClaimedDelivery, attempt: AttemptOutcome): DeliveryOutcome {
    return afterAttempt({
      ...attempt,
      eventCreatedAt: row.event_created_at,
      maxAgeMs: this.options.maxAgeMs,
      random: this.random,
    });
  }
}
