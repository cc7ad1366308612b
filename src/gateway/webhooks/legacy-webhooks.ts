/**
 * Legacy webhooks on a gateway: the receiver v3 delivers to, the outbox worker that re-delivers
 * each event in the legacy shape, and the registrar that keeps one v3 endpoint per org and mode
 * with a subscription, at the callback base the fleet of gateways agreed on (fleet-callback.ts).
 * Built by the caller (the CLI, a test), attached to the gateway app by buildGatewayApp, started
 * when the app listens (the callback URL may be the gateway's own port), and stopped when the
 * app closes, or before by stop() (draining): the reconciliation ends, the lease is given up.
 */
import type { FastifyInstance } from 'fastify';

import type { Database } from '../../lib/db/database.js';
import { LegacyWebhookOptionsError } from '../../lib/errors/internal-errors.js';
import type { OutboundAllowance } from '../../lib/net/destination-policy.js';
import type { SealedColumn } from '../../lib/secrets/sealed-rows.js';
import type { SealingKeyring } from '../../lib/secrets/sealing-keyring.js';
import type { WebhookFetcher } from '../../lib/webhooks/delivery-attempt.js';
import type { LegacyMappings } from '../legacy/declarations/mappings-loader.js';
import type { V3Client } from '../upstream/v3-client.js';
import {
  type DeliveryWorkerDependencies,
  type DeliveryWorkerOptions,
  LegacyDeliveryWorker,
} from './delivery-worker.js';
import { type CallbackDecision, FleetCallback } from './fleet-callback.js';
import { compileLegacyWebhooks, type LegacyWebhookBuilder } from './legacy-payload.js';
import { registerWebhookReceiver } from './receiver.js';
import {
  type ReconcileReport,
  REGISTRAR_DEFAULTS,
  registrationSecretBinding,
  WebhookRegistrar,
} from './registrations.js';
import { subscriptionSecretBinding } from './subscriptions.js';

/** The service_secrets row earlier versions sealed the gateway's secrets under. */
const FORMER_SEALING_KEY = 'legacy-webhook-sealing-key';

/**
 * Where the gateway's secrets are sealed, for the start-up check, the upgrade and `fxgate
 * secrets`: the subscriptions' own, and the secrets of the gateway's v3 endpoints.
 */
export const LEGACY_SEALED_COLUMNS: readonly SealedColumn[] = [
  {
    table: 'legacy_webhook_subscriptions',
    column: 'secret',
    binding: subscriptionSecretBinding,
    formerKeyName: FORMER_SEALING_KEY,
  },
  {
    table: 'legacy_webhook_registrations',
    column: 'secret',
    binding: registrationSecretBinding,
    formerKeyName: FORMER_SEALING_KEY,
  },
];

export interface LegacyWebhookOptions {
  /** Where subscriptions, registrations, events and the outbox live (the legacy side's database). */
  readonly db: Database;
  /** Seals and opens the subscriptions' and registrations' secrets: resolved once at start-up. */
  readonly keyring: SealingKeyring;
  /**
   * Where v3 reaches the receiver, without `/<orgId>/<mode>` (FXGATE_GATEWAY_WEBHOOK_URL); a
   * function of the port for a gateway that is reached on its own listener; null or absent: no
   * registration is made (events already stored are still delivered).
   */
  readonly callbackBaseUrl?: string | ((port: number) => string) | null;
  /** `enabled: false`: this process only receives (FXGATE_WEBHOOK_WORKER=off). */
  readonly worker?: Partial<DeliveryWorkerOptions> & { readonly enabled?: boolean };
  /** How far a v3 signature's timestamp may be from this clock; 300 s. */
  readonly toleranceSeconds?: number;
  /** How often registrations are reconciled with the subscriptions (and the lease renewed), besides at start-up; 30 s. */
  readonly reconcileIntervalMs?: number;
  /**
   * How long this gateway's claim on its callback base holds without a renewal: past it, the
   * fleet takes the gateway for gone. Longer than the interval; three intervals unless given.
   */
  readonly leaseMs?: number;
  /** How long a replaced v3 endpoint is kept once its successor is active: v3's retry window and an hour. */
  readonly retireAfterMs?: number;
  readonly fetcher?: WebhookFetcher;
  /** Where subscriptions may point beyond public addresses (and loopback in the sandbox): FXGATE_WEBHOOK_ALLOWED_NETWORKS; none unless given. */
  readonly outbound?: OutboundAllowance;
  readonly now?: () => Date;
  readonly random?: () => number;
}

export const LEGACY_WEBHOOK_DEFAULTS = {
  reconcileIntervalMs: 30_000,
  /** The lease lasts this many intervals: a renewal or two may be late without the fleet moving. */
  leaseIntervals: 3,
  retireAfterMs: REGISTRAR_DEFAULTS.retireAfterMs,
} as const;

function duration(ms: number): string {
  if (ms >= 3_600_000) return `${Math.round(ms / 3_600_000)} h`;
  return ms >= 60_000 ? `${Math.round(ms / 60_000)} min` : `${Math.round(ms / 1000)} s`;
}

/** The line a gateway logs when the fleet registers another base than its own. */
export function describeHeldElsewhere(decision: CallbackDecision): string {
  const holders = decision.advertised.find((entry) => entry.base === decision.base)?.gateways ?? 0;
  return (
    `legacy webhooks: this gateway advertises ${decision.own} (FXGATE_GATEWAY_WEBHOOK_URL), but v3 delivers to ` +
    `${decision.base}, which ${holders} other running gateway(s) advertise; the fleet keeps one URL while a gateway ` +
    `advertising it runs. In a rolling change of FXGATE_GATEWAY_WEBHOOK_URL the registrations move to the newest URL ` +
    `when the last of those gateways stops; otherwise give every gateway of the fleet the same FXGATE_GATEWAY_WEBHOOK_URL`
  );
}

/** The line a gateway logs when it moves the fleet's registrations to another base. */
export function describeMove(decision: CallbackDecision, retireAfterMs: number): string {
  return (
    `legacy webhooks: no running gateway advertises ${decision.movedFrom} any more: the registrations move to ` +
    `${decision.base}. The endpoints at ${decision.movedFrom} are kept, and their deliveries accepted, for ` +
    `${duration(retireAfterMs)} after their successors are registered (v3's retry window): keep ` +
    `${decision.movedFrom} routed to the gateways until then, or the deliveries v3 still holds for it are lost`
  );
}

interface Attached {
  readonly worker: LegacyDeliveryWorker;
  readonly registrar: WebhookRegistrar;
  readonly builder: LegacyWebhookBuilder;
  readonly app: FastifyInstance;
}

export class LegacyWebhooks {
  private attached: Attached | null = null;
  private base: string | null = null;
  private fleet: FleetCallback | null = null;
  private decided: CallbackDecision | null = null;
  private timer: NodeJS.Timeout | null = null;
  private reconciling: Promise<ReconcileReport | null> | null = null;
  private renewing: Promise<unknown> | null = null;
  private stopped = false;
  private stopping: Promise<void> | null = null;
  private warnedUnregistered = false;
  /** The fleet base last warned about, so that a gateway holding another base says so once per change. */
  private warnedHeldElsewhere: string | null = null;
  private readonly intervalMs: number;
  private readonly leaseMs: number;

  constructor(readonly options: LegacyWebhookOptions) {
    this.intervalMs = options.reconcileIntervalMs ?? LEGACY_WEBHOOK_DEFAULTS.reconcileIntervalMs;
    this.leaseMs = options.leaseMs ?? this.intervalMs * LEGACY_WEBHOOK_DEFAULTS.leaseIntervals;
    if (this.leaseMs <= this.intervalMs)
      throw new LegacyWebhookOptionsError(
        `the lease (${this.leaseMs} ms) must outlast the reconciliation interval (${this.intervalMs} ms) that renews it`,
      );
  }

  /** Adds the receiver route and the start and stop hooks to the gateway app (before it is ready). */
  async attach(
    app: FastifyInstance,
    parts: {
      readonly mappings: LegacyMappings;
      readonly client: V3Client;
      readonly onDelivery?: DeliveryWorkerDependencies['onOutcome'];
    },
  ): Promise<void> {
    if (this.attached !== null) throw new Error('legacy webhooks are attached to a gateway already');
    const { db, keyring } = this.options;
    const builder = compileLegacyWebhooks(parts.mappings.webhooks, parts.mappings.maps);
    const { enabled: _enabled, ...workerOptions } = this.options.worker ?? {};
    const worker = new LegacyDeliveryWorker({
      db,
      keyring,
      options: workerOptions,
      fetcher: this.options.fetcher,
      outbound: this.options.outbound,
      now: this.options.now,
      random: this.options.random,
      log: app.log,
      onOutcome: parts.onDelivery,
    });
    const registrar = new WebhookRegistrar({
      db,
      client: parts.client,
      keyring,
      v3EventTypes: builder.v3EventTypes,
      retireAfterMs: this.options.retireAfterMs,
      now: this.options.now,
    });
    this.attached = { worker, registrar, builder, app };
    await registerWebhookReceiver(app, {
      db,
      keyring,
      builder,
      toleranceSeconds: this.options.toleranceSeconds,
      now: this.options.now,
      onStored: () => worker.nudge(),
      log: app.log,
    });
    app.addHook('onListen', async () => this.start());
    // In a child scope, whose onClose runs before the root's: the worker stops before the pool closes.
    await app.register(async (scope) => scope.addHook('onClose', async () => this.stop()));
  }

  get worker(): LegacyDeliveryWorker {
    return this.parts().worker;
  }

  get registrar(): WebhookRegistrar {
    return this.parts().registrar;
  }

  get builder(): LegacyWebhookBuilder {
    return this.parts().builder;
  }

  /** The callback base this gateway advertises (resolved when the gateway listens); null when none is configured. */
  get callbackBase(): string | null {
    return this.base;
  }

  /** The fleet's decision at this gateway's last reconciliation: where v3 delivers; null before the first. */
  get decision(): CallbackDecision | null {
    return this.decided;
  }

  /**
   * Renews this gateway's lease, takes the fleet's callback base, registers what the
   * subscriptions need there and removes what they no longer do; reported, and logged when
   * something failed.
   */
  reconcile(): Promise<ReconcileReport | null> {
    if (this.stopped) return Promise.resolve(null);
    // One reconciliation at a time in this process; a second caller shares the running one.
    this.reconciling ??= this.decide()
      .then((decision) => this.parts().registrar.reconcile(decision.base))
      .then(
        (report) => {
          if (report.unregistered > 0 && !this.warnedUnregistered) {
            this.warnedUnregistered = true;
            this.parts().app.log.warn(
              { unregistered: report.unregistered },
              'legacy webhooks: subscriptions exist but FXGATE_GATEWAY_WEBHOOK_URL is unset, so v3 is not told where to deliver; events already stored are still delivered',
            );
          }
          for (const failure of report.failed)
            this.parts().app.log.error(
              { err: failure, orgId: failure.orgId, mode: failure.mode },
              'legacy webhooks: registration with v3 failed; retried at the next reconciliation',
            );
          return report;
        },
        (error: unknown) => {
          this.parts().app.log.error({ err: error }, 'legacy webhooks: reconciliation failed; retried at the next one');
          return null;
        },
      )
      .finally(() => {
        this.reconciling = null;
      });
    return this.reconciling;
  }

  /** Renews the lease and takes the fleet's decision, logging what an operator must hear of it. */
  private async decide(): Promise<CallbackDecision> {
    const decision = await this.fleetCallback().decide();
    this.decided = decision;
    const { log } = this.parts().app;
    if (decision.movedFrom !== null)
      log.warn(
        { from: decision.movedFrom, to: decision.base },
        describeMove(decision, this.options.retireAfterMs ?? LEGACY_WEBHOOK_DEFAULTS.retireAfterMs),
      );
    if (decision.own !== null && decision.base !== decision.own) {
      if (this.warnedHeldElsewhere !== decision.base) {
        this.warnedHeldElsewhere = decision.base;
        log.warn({ advertised: decision.own, registered: decision.base }, describeHeldElsewhere(decision));
      }
    } else {
      this.warnedHeldElsewhere = null;
    }
    return decision;
  }

  /** The timer's work: a reconciliation, or while one is still running (v3 slow), the lease's renewal alone. */
  private tick(): void {
    if (this.stopped) return;
    if (this.reconciling === null) {
      void this.reconcile();
      return;
    }
    this.renewing ??= this.decide()
      .catch((error: unknown) => {
        this.parts().app.log.error(
          { err: error },
          'legacy webhooks: renewing the lease failed; retried at the next interval',
        );
      })
      .finally(() => {
        this.renewing = null;
      });
  }

  private fleetCallback(): FleetCallback {
    this.fleet ??= new FleetCallback({ db: this.options.db, base: this.base, leaseMs: this.leaseMs });
    return this.fleet;
  }

  private parts(): Attached {
    if (this.attached === null) throw new Error('legacy webhooks are not attached to a gateway');
    return this.attached;
  }

  private async start(): Promise<void> {
    const { app, worker } = this.parts();
    const configured = this.options.callbackBaseUrl ?? null;
    if (typeof configured === 'function') {
      const address = app.server.address();
      this.base = typeof address === 'object' && address !== null ? configured(address.port) : null;
    } else {
      this.base = configured;
    }
    this.fleet = new FleetCallback({ db: this.options.db, base: this.base, leaseMs: this.leaseMs });
    if (this.options.worker?.enabled !== false) await worker.start();
    // PGlite's folder opens in one process only: any other lease is a process that died holding it.
    if (this.options.db.driver === 'pglite') await this.fleetCallback().forgetOthers();
    // Not awaited: v3 may be down at start-up, and serving must not wait for it.
    void this.reconcile();
    this.timer = setInterval(() => this.tick(), this.intervalMs);
    this.timer.unref();
  }

  /**
   * Stops the reconciliation (waiting for the one in progress), gives up this gateway's lease so
   * that the fleet need not wait for it to expire, and stops the worker; idempotent.
   */
  stop(): Promise<void> {
    this.stopping ??= this.shutdown();
    return this.stopping;
  }

  private async shutdown(): Promise<void> {
    this.stopped = true;
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
    await this.reconciling;
    await this.renewing;
    try {
      await this.fleet?.withdraw();
    } catch (error) {
      // The lease then runs out on its own.
      this.attached?.app.log.error({ err: error }, 'legacy webhooks: giving up the lease failed; it expires by itself');
    }
    await this.attached?.worker.stop();
  }
}
