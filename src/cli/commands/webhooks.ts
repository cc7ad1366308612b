/**
 * `fxgate webhooks add | list | remove`: legacy webhook subscriptions, delivered by the gateway
 * in the v1/v2 shape (src/gateway/webhooks/). They are kept in the configured database, the one
 * the gateway's legacy side uses (DATABASE_URL, or the embedded database).
 *
 * A subscription needs the gateway registered with v3 for its org and mode. This command does
 * that itself when it can reach v3 (FXGATE_UPSTREAM_URL and FXGATE_GATEWAY_WEBHOOK_URL set, its
 * credentials in FXGATE_UPSTREAM_KEYS_DIR), at the callback base the fleet of gateways agreed on
 * (its own setting only while none has); otherwise the gateway does it at start-up, or within
 * its reconciliation interval while it runs. Declared in definitions/webhooks.ts.
 */
import { z } from 'zod';

import { loadLegacyMappings } from '../../gateway/legacy/declarations/mappings-loader.js';
import { openV3Access } from '../../gateway/v3-access.js';
import { fleetCallbackBase } from '../../gateway/webhooks/fleet-callback.js';
import { compileLegacyWebhooks } from '../../gateway/webhooks/legacy-payload.js';
import { LEGACY_WEBHOOK_DEFAULTS } from '../../gateway/webhooks/legacy-webhooks.js';
import { type Registration, type WebhookRegistrar } from '../../gateway/webhooks/registrations.js';
import {
  addSubscription,
  checkEvents,
  listSubscriptions,
  removeSubscription,
  type Subscription,
} from '../../gateway/webhooks/subscriptions.js';
import type { Mode } from '../../lib/auth/credential-vocabulary.js';
import type { Config } from '../../lib/config.js';
import type { Database } from '../../lib/db/database.js';
import { CliError, SubscriptionInputError } from '../../lib/errors/internal-errors.js';
import { type OutboundAllowance, webhookPolicies } from '../../lib/net/destination-policy.js';
import type { SealingKeyring } from '../../lib/secrets/sealing-keyring.js';
import { Closers } from '../closers.js';
import { allowedNetworks, upstreamKeysDir } from '../config.js';
import { messageOf, usageError } from '../exit.js';
import type { CliRun } from '../io.js';
import { GATEWAY_SEALED_COLUMNS } from '../sealing.js';
import { defineOperation, modeSchema, type StateContext } from '../state/operation.js';
import { withState } from '../state/session.js';
import { textTable } from '../text-table.js';

/** What the commands run on; tests build it in process. */
export interface WebhookCommandDeps {
  readonly db: Database;
  /** Seals the subscriptions' secrets; null for work that seals nothing. */
  readonly keyring: SealingKeyring | null;
  readonly events: { readonly names: readonly string[]; readonly defaults: readonly string[] };
  /** Registers with v3 at once when this process can reach it; null leaves it to the gateway. */
  readonly registration: { readonly registrar: WebhookRegistrar; readonly base: string } | null;
  /** Where subscription URLs may point beyond public addresses (and loopback in the sandbox); none unless given. */
  readonly outbound?: OutboundAllowance;
  readonly now?: () => Date;
}

/** What happened at v3: the endpoint registered or deleted now, why not, or that the gateway will. */
export type RegistrationNote =
  | { readonly state: 'registered'; readonly registration: Registration }
  | { readonly state: 'removed'; readonly endpointIds: readonly string[] }
  | { readonly state: 'deferred' }
  | { readonly state: 'failed'; readonly message: string };

export interface AddInput {
  readonly org: string;
  readonly mode: Mode;
  readonly url: string;
  readonly events?: readonly string[];
}

export async function addWebhook(
  deps: WebhookCommandDeps,
  input: AddInput,
): Promise<{ subscription: Subscription; secret: string; note: RegistrationNote }> {
  let created;
  try {
    const events = checkEvents(input.events, deps.events.names, deps.events.defaults);
    if (deps.keyring === null) throw new Error('adding a subscription seals its secret: the keyring is required');
    created = await addSubscription(
      deps.db,
      deps.keyring,
      { orgId: input.org, mode: input.mode, url: input.url, events, at: deps.now?.() ?? new Date() },
      // The operator adds subscriptions: a refusal names the setting that allows an in-house receiver.
      webhookPolicies(deps.outbound, 'operator'),
    );
  } catch (error) {
    if (error instanceof SubscriptionInputError) throw usageError(error.message);
    throw error;
  }
  let note: RegistrationNote = { state: 'deferred' };
  if (deps.registration !== null) {
    try {
      note = {
        state: 'registered',
        registration: await deps.registration.registrar.ensure(
          created.subscription.orgId,
          input.mode,
          deps.registration.base,
        ),
      };
    } catch (error) {
      note = { state: 'failed', message: messageOf(error) };
    }
  }
  return { ...created, note };
}

export interface ListedWebhook extends Subscription {
  /** The gateway's v3 endpoint for the subscription's org and mode; null until it is registered. */
  readonly v3EndpointId: string | null;
}

export async function listWebhooks(deps: Pick<WebhookCommandDeps, 'db'>, org?: string): Promise<ListedWebhook[]> {
  const subscriptions = await listSubscriptions(deps.db, org);
  const { rows } = await deps.db.query<{ org_id: string; mode: string; endpoint_id: string }>(
    `SELECT org_id, mode, endpoint_id FROM legacy_webhook_registrations WHERE status = 'ACTIVE'`,
  );
  const endpoints = new Map(rows.map((row) => [`${row.org_id}.${row.mode}`, row.endpoint_id]));
  return subscriptions.map((subscription) => ({
    ...subscription,
    v3EndpointId: endpoints.get(`${subscription.orgId}.${subscription.mode}`) ?? null,
  }));
}

export async function removeWebhook(
  deps: WebhookCommandDeps,
  id: string,
): Promise<{ subscription: Subscription; note: RegistrationNote }> {
  const subscription = await removeSubscription(deps.db, id, deps.now?.() ?? new Date());
  if (subscription === null) throw new CliError(`no active legacy webhook subscription ${id}`);
  let note: RegistrationNote = { state: 'deferred' };
  if (deps.registration !== null) {
    try {
      // Deletes the gateway's v3 endpoint only when this was the org and mode's last subscription.
      note = {
        state: 'removed',
        endpointIds: await deps.registration.registrar.releaseIfUnused(subscription.orgId, subscription.mode),
      };
    } catch (error) {
      note = { state: 'failed', message: messageOf(error) };
    }
  }
  return { subscription, note };
}

const RECONCILE_SECONDS = LEGACY_WEBHOOK_DEFAULTS.reconcileIntervalMs / 1000;

/** One line on what happened at v3. */
export function describeNote(note: RegistrationNote, action: 'add' | 'remove'): string {
  switch (note.state) {
    case 'registered':
      return `v3 endpoint: ${note.registration.endpointId} delivers org ${note.registration.orgId} (${note.registration.mode}) to ${note.registration.url}`;
    case 'removed':
      return note.endpointIds.length > 0
        ? `v3 endpoint deleted: ${note.endpointIds.join(', ')} (no subscription of the org and mode is left)`
        : 'v3 endpoint kept: other subscriptions of the org and mode use it';
    case 'failed':
      return `v3 ${action === 'add' ? 'registration' : 'endpoint removal'} failed: ${note.message}; the gateway retries it at start-up and every ${RECONCILE_SECONDS} s while it runs`;
    case 'deferred':
      return `v3 ${action === 'add' ? 'registration' : 'endpoint removal'}: left to the gateway (at start-up, and every ${RECONCILE_SECONDS} s while it runs); set FXGATE_UPSTREAM_URL and FXGATE_GATEWAY_WEBHOOK_URL to do it here`;
  }
}

const TABLE_HEADER = ['ID', 'ORG', 'MODE', 'URL', 'EVENTS', 'CREATED', 'V3 ENDPOINT'];

export function formatWebhookTable(webhooks: readonly ListedWebhook[]): string {
  const rows = webhooks.map((w) => [
    w.id,
    w.orgId,
    w.mode,
    w.url,
    w.events.join(','),
    w.createdAt,
    w.v3EndpointId ?? 'pending',
  ]);
  return textTable(TABLE_HEADER, rows).join('\n');
}

/**
 * The registrar of this process, when it can reach v3 itself, and the base it registers at: the
 * fleet's (a different one would move every gateway's registrations), or its own while there is none.
 */
async function directRegistration(
  config: Config,
  db: Database,
  keyring: SealingKeyring | null,
  v3EventTypes: readonly string[],
  closers: Closers,
): Promise<WebhookCommandDeps['registration']> {
  const configured = config.FXGATE_GATEWAY_WEBHOOK_URL;
  if (config.FXGATE_UPSTREAM_URL === undefined || configured === undefined) return null;
  const base = (await fleetCallbackBase(db)) ?? configured;
  if (keyring === null) throw new Error('registering with v3 seals the endpoint secret: the keyring is required');
  const v3 = openV3Access(config, upstreamKeysDir(config));
  if (v3 === null) return null;
  closers.add('upstream pool', () => v3.close());
  return { registrar: v3.webhookRegistrar({ db, keyring, v3EventTypes }), base };
}

/**
 * The commands' dependencies on the database of the process that runs the operation, its keys and
 * its configuration. The keyring is resolved (and so required) when the work seals a secret (an
 * add, `seals`) or this process registers with v3 itself, whose registrations seal theirs.
 */
async function withDeps<T>(
  context: StateContext,
  seals: boolean,
  fn: (deps: WebhookCommandDeps) => Promise<T>,
): Promise<T> {
  const closers = new Closers();
  try {
    const mappings = await loadLegacyMappings();
    const builder = compileLegacyWebhooks(mappings.webhooks, mappings.maps);
    const { config } = context;
    const registers = config.FXGATE_UPSTREAM_URL !== undefined && config.FXGATE_GATEWAY_WEBHOOK_URL !== undefined;
    const keyring = seals || registers ? (await context.sealing.keyring(GATEWAY_SEALED_COLUMNS)).keyring : null;
    const registration = await directRegistration(context.config, context.db, keyring, builder.v3EventTypes, closers);
    return await fn({
      db: context.db,
      keyring,
      events: { names: builder.eventNames, defaults: builder.defaultEvents },
      registration,
      outbound: { networks: allowedNetworks(context.config) },
    });
  } finally {
    await closers.closeAll();
  }
}

const subscriptionSchema = z.object({
  id: z.string(),
  orgId: z.string(),
  mode: modeSchema,
  url: z.string(),
  events: z.array(z.string()).readonly(),
  status: z.enum(['ACTIVE', 'REMOVED']),
  createdAt: z.string(),
  removedAt: z.string().nullable(),
});
const noteSchema = z.discriminatedUnion('state', [
  z.object({
    state: z.literal('registered'),
    registration: z.object({ orgId: z.string(), mode: modeSchema, endpointId: z.string(), url: z.string() }),
  }),
  z.object({ state: z.literal('removed'), endpointIds: z.array(z.string()).readonly() }),
  z.object({ state: z.literal('deferred') }),
  z.object({ state: z.literal('failed'), message: z.string() }),
]);

/**
 * What the webhooks commands do with the database, directly or through a running fxgate's admin
 * listener. There, the registration with v3 is that process's to do, as its configuration allows.
 */
export const webhookOperations = {
  add: defineOperation({
    name: 'webhooks/add',
    input: z.object({ org: z.uuid(), mode: modeSchema, url: z.string(), events: z.array(z.string()).optional() }),
    output: z.object({ subscription: subscriptionSchema, secret: z.string(), note: noteSchema }),
    run: (context, input) => withDeps(context, true, (deps) => addWebhook(deps, input)),
  }),
  list: defineOperation({
    name: 'webhooks/list',
    input: z.object({ org: z.uuid().optional() }),
    output: z.array(subscriptionSchema.extend({ v3EndpointId: z.string().nullable() })),
    run: ({ db }, { org }) => listWebhooks({ db }, org),
  }),
  remove: defineOperation({
    name: 'webhooks/remove',
    input: z.object({ id: z.string() }),
    output: z.object({ subscription: subscriptionSchema, note: noteSchema }),
    run: (context, { id }) => withDeps(context, false, (deps) => removeWebhook(deps, id)),
  }),
};

export interface AddWebhookOptions {
  readonly org: string;
  readonly mode: Mode;
  readonly url: string;
  readonly events?: string[];
  readonly json?: boolean;
}

/** `fxgate webhooks add`: the subscription made, its secret printed once. */
export async function addWebhookCommand(run: CliRun, options: AddWebhookOptions): Promise<void> {
  const added = await withState(run, (state) =>
    state.run(webhookOperations.add, {
      org: options.org,
      mode: options.mode,
      url: options.url,
      events: options.events,
    }),
  );
  const { id, orgId, mode, url, events } = added.subscription;
  if (options.json) {
    run.out(JSON.stringify({ id, orgId, mode, url, events, secret: added.secret }));
    run.err(`fxgate: ${describeNote(added.note, 'add')}`);
    return;
  }
  run.out(`id: ${id}`);
  run.out(`org: ${orgId}`);
  run.out(`mode: ${mode}`);
  run.out(`url: ${url}`);
  run.out(`events: ${events.join(',')}`);
  run.out(`secret: ${added.secret}`);
  run.out('(the secret is shown only now: keep it where the receiver can read it)');
  run.out(describeNote(added.note, 'add'));
}

/** `fxgate webhooks list`. */
export async function listWebhooksCommand(
  run: CliRun,
  options: { readonly org?: string; readonly json?: boolean },
): Promise<void> {
  const listed = await withState(run, (state) => state.run(webhookOperations.list, { org: options.org }));
  if (options.json) run.out(JSON.stringify(listed));
  else run.out(listed.length > 0 ? formatWebhookTable(listed) : 'no subscriptions');
}

/** `fxgate webhooks remove`. */
export async function removeWebhookCommand(
  run: CliRun,
  id: string,
  options: { readonly json?: boolean },
): Promise<void> {
  const removed = await withState(run, (state) => state.run(webhookOperations.remove, { id: id.trim() }));
  if (options.json) {
    run.out(JSON.stringify({ id: removed.subscription.id, removed: true }));
    run.err(`fxgate: ${describeNote(removed.note, 'remove')}`);
    return;
  }
  run.out(`removed: ${removed.subscription.id}`);
  run.out(describeNote(removed.note, 'remove'));
}
