/**
 * Legacy webhooks on a gateway: the receiver v3 delivers to, the outbox worker that re-delivers
 * each event in the legacy shape, and the registrar that keeps one v3 endpoint per org and mode
 * with a subscription. Built by the caller (the CLI, a test), attached to the gateway app by
 * buildGatewayApp, started when the app listens (the callback URL may be the gateway's own
 * port), and stopped when the app closes.
 */
import type { FastifyInstance } from 'fastify';

import type { Database } from '../../lib/db/database.js';
import type { OutboundAllowance } from '../../lib/net/destination-policy.js';
import type { SealedColumn } from '../../lib/secrets/sealed-rows.js';
import type { SealingKeyring } from '../../lib/secrets/sealing-keyring.js';
import type { WebhookFetcher } from '../../lib/webhooks/delivery-attempt.js';
import type { LegacyMappings } from '../legacy/mappings-loader.js';
import type { V3Client } from '../upstream/v3-client.js';
import {
  type DeliveryWorkerDependencies,
  type DeliveryWorkerOptions,
  LegacyDeliveryWorker,
} from './delivery-worker.js';
import { compileLegacyWebhooks, type LegacyWebhookBuilder } from './legacy-payload.js';
import { registerWebhookReceiver } from './receiver.js';
import { type ReconcileReport, registrationSecretBinding, WebhookRegistrar } from './registrations.js';
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
  /** How often registrations are reconciled with the subscriptions, besides at start-up; 30 s. */
  readonly reconcileIntervalMs?: number;
  readonly fetcher?: WebhookFetcher;
  /** Where subscriptions may point beyond public addresses (and loopback in the sandbox): FXGATE_WEBHOOK_ALLOWED_NETWORKS; none unless given. */
  readonly outbound?: OutboundAllowance;
  readonly now?: () => Date;
  readonly random?: () => number;
}

export const LEGACY_WEBHOOK_DEFAULTS = { reconcileIntervalMs: 30_000 } as const;

interface Attached {
  readonly worker: LegacyDeliveryWorker;
  readonly registrar: WebhookRegistrar;
  readonly builder: LegacyWebhookBuilder;
  readonly app: FastifyInstance;
}

export class LegacyWebhooks {
  private attached: Attached | null = null;
  private base: string | null = null;
  private timer: NodeJS.Timeout | null = null;
  private reconciling: Promise<ReconcileReport | null> | null = null;
  private stopped = false;
  private warnedUnregistered = false;

  constructor(readonly options: LegacyWebhookOptions) {}

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

  /** The callback base in use (resolved when the gateway listens); null when none is configured. */
  get callbackBase(): string | null {
    return this.base;
  }

  /** Registers what the subscriptions need and removes what they no longer do; reported, and logged when something failed. */
  reconcile(): Promise<ReconcileReport | null> {
    if (this.stopped) return Promise.resolve(null);
    // One reconciliation at a time in this process; a second caller shares the running one.
    this.reconciling ??= this.parts()
      .registrar.reconcile(this.base)
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
    if (this.options.worker?.enabled !== false) await worker.start();
    // Not awaited: v3 may be down at start-up, and serving must not wait for it.
    void this.reconcile();
    const interval = this.options.reconcileIntervalMs ?? LEGACY_WEBHOOK_DEFAULTS.reconcileIntervalMs;
    this.timer = setInterval(() => void this.reconcile(), interval);
    this.timer.unref();
  }

  /** Stops the worker and the reconciliation; waits for the one in progress. */
  async stop(): Promise<void> {
    this.stopped = true;
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
    await this.reconciling;
    await this.attached?.worker.stop();
  }
}
