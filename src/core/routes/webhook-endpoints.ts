/**
 * Webhook endpoints (scope `webhooks`): POST /v3/fx/webhook-endpoints (the secret appears in
 * this response only), GET the bounded list and one endpoint, DELETE one. Deliveries are the
 * worker's business (src/core/events/webhook-worker.ts).
 */
import { z } from 'zod';

import type { Mode } from '../../lib/auth/credential-vocabulary.js';
import type { Database } from '../../lib/db/database.js';
import { ApiError } from '../../lib/errors/api-error.js';
import type { DestinationPolicy } from '../../lib/net/destination-policy.js';
import type { SealingKeyring } from '../../lib/secrets/sealing-keyring.js';
import {
  createdWebhookEndpointSchema,
  createWebhookEndpoint,
  deleteWebhookEndpoint,
  findWebhookEndpoint,
  listWebhookEndpoints,
  toWebhookEndpointRecord,
  WEBHOOK_EVENT_TYPES,
  webhookEndpointRecordSchema,
} from '../events/webhook-endpoints.js';
import { defineOperation } from '../http/operation.js';
import { dataOf, listOf } from '../wire-types.js';

export interface WebhookEndpointContext {
  readonly db: Database;
  readonly now: () => Date;
}

const createSchema = z.strictObject({
  // The length, scheme and destination rules are checked by checkWebhookUrl, which answers 422 with a reason.
  url: z.string().min(1).max(4096),
  eventTypes: z
    .array(z.enum(WEBHOOK_EVENT_TYPES))
    .max(WEBHOOK_EVENT_TYPES.length * 2)
    .optional(),
});

/** `destinations`: where each mode's endpoints may point (src/lib/net/destination-policy.ts). */
export function webhookEndpointOperations(
  context: WebhookEndpointContext,
  keyring: SealingKeyring,
  destinations: Readonly<Record<Mode, DestinationPolicy>>,
) {
  return [
    defineOperation({
      method: 'POST',
      path: '/v3/fx/webhook-endpoints',
      scope: 'webhooks',
      summary: 'Create a webhook endpoint',
      response: dataOf(createdWebhookEndpointSchema),
      errors: ['WEBHOOK_URL_INVALID'],
      body: createSchema,
      async handle({ principal, body, setResourceId }) {
        const { row, secret } = await createWebhookEndpoint(
          context.db,
          keyring,
          {
            orgId: principal.orgId,
            environment: principal.environment,
            url: body.url,
            eventTypes: body.eventTypes ?? [],
            at: context.now(),
          },
          destinations[principal.environment],
        );
        setResourceId(row.id);
        return { body: { data: { ...toWebhookEndpointRecord(row), secret } } };
      },
    }),
    defineOperation({
      method: 'GET',
      path: '/v3/fx/webhook-endpoints',
      scope: 'webhooks',
      summary: 'List active webhook endpoints, newest first',
      response: listOf(webhookEndpointRecordSchema),
      async handle({ principal }) {
        const rows = await listWebhookEndpoints(context.db, principal.orgId, principal.environment);
        return { body: { data: rows.map(toWebhookEndpointRecord) } };
      },
    }),
    defineOperation({
      method: 'GET',
      path: '/v3/fx/webhook-endpoints/:id',
      scope: 'webhooks',
      summary: 'Retrieve a webhook endpoint',
      response: dataOf(webhookEndpointRecordSchema),
      errors: ['WEBHOOK_ENDPOINT_NOT_FOUND'],
      async handle({ principal, params }) {
        const row = await findWebhookEndpoint(context.db, principal.orgId, principal.environment, params.id!);
        if (!row) throw new ApiError('WEBHOOK_ENDPOINT_NOT_FOUND', { webhookEndpointId: params.id! });
        return { body: { data: toWebhookEndpointRecord(row) } };
      },
    }),
    defineOperation({
      method: 'DELETE',
      path: '/v3/fx/webhook-endpoints/:id',
      scope: 'webhooks',
      summary: 'Delete a webhook endpoint',
      response: dataOf(webhookEndpointRecordSchema),
      errors: ['WEBHOOK_ENDPOINT_NOT_FOUND'],
      async handle({ principal, params }) {
        const row = await deleteWebhookEndpoint(
          context.db,
          principal.orgId,
          principal.environment,
          params.id!,
          context.now(),
        );
        if (!row) throw new ApiError('WEBHOOK_ENDPOINT_NOT_FOUND', { webhookEndpointId: params.id! });
        return { body: { data: toWebhookEndpointRecord(row) } };
      },
    }),
  ];
}
