/**
 * The legacy webhooks the gateway delivers: which v3 event makes each legacy event, the envelope
 * `{eventId, type, message, timestamp, data}`, and the records in `data`, field by field in the
 * format of records.ts (src/gateway/legacy/declarations/record-shapes.ts). Every entry names its source and
 * reason. Format and validator: src/gateway/legacy/declarations/webhook-shapes.ts. Pure data.
 */
import type { LegacyWebhookTable } from '../src/gateway/legacy/declarations/webhook-shapes.js';

const ID = 'Legacy ids are UUIDs: the same 128 bits as the v3 id, without its prefix.';
const FAILURES_OPT_IN =
  'The legacy service sent completed events only; a receiver written for them may read every event of this type as a completion, so failures go only to subscriptions that name them.';

export const LEGACY_WEBHOOKS = {
  envelope: {
    eventId: {
      value: 'eventUuid',
      source: 'doc',
      reason:
        "A UUID per event; the v3 event id's 128 bits, so every retry and every v3 redelivery of one change carries the same eventId to dedupe by.",
    },
    type: { value: 'resource', source: 'doc', reason: 'deposits or withdrawals: what the records in data are.' },
    message: { value: 'message', source: 'doc', reason: 'What happened, in words ("Completed Deposits").' },
    timestamp: {
      value: 'eventCreatedAt',
      source: 'doc',
      reason: "When the change happened (the v3 event's createdAt), not when this attempt was sent.",
    },
    data: { value: 'records', source: 'doc', reason: 'A list of records; the gateway sends one record per event.' },
  },
  events: {
    deposits: {
      summary: 'A deposit was credited.',
      v3: 'deposit.completed',
      type: 'deposits',
      message: 'Completed Deposits',
      record: 'deposit',
      byDefault: true,
      source: 'doc',
      reason: "The legacy service's deposit webhook.",
    },
    withdrawals: {
      summary: 'A withdrawal was paid out.',
      v3: 'withdrawal.completed',
      type: 'withdrawals',
      message: 'Completed Withdrawals',
      record: 'withdrawal',
      byDefault: true,
      source: 'doc',
      reason: "The legacy service's withdrawal webhook.",
    },
    'failed-deposits': {
      summary: 'A deposit failed (its status is ERROR).',
      v3: 'deposit.failed',
      type: 'deposits',
      message: 'Failed Deposits',
      record: 'deposit',
      byDefault: false,
      source: 'ours',
      reason: FAILURES_OPT_IN,
    },
    'failed-withdrawals': {
      summary: 'A withdrawal failed and its amount was returned to the balance (its status is FAILED).',
      v3: 'withdrawal.failed',
      type: 'withdrawals',
      message: 'Failed Withdrawals',
      record: 'withdrawal',
      byDefault: false,
      source: 'ours',
      reason: FAILURES_OPT_IN,
    },
  },
  records: {
    deposit: {
      summary: 'A deposit as the deposit webhooks carry it.',
      v3: 'deposit',
      fields: {
        id: { type: 'id', from: 'id', source: 'doc', reason: ID },
        orgId: { type: 'id', context: 'orgId', source: 'doc', reason: 'The organisation of the subscription.' },
        amount: {
          type: 'amount',
          from: 'amount',
          source: 'doc',
          reason: 'The amount deposited, with exactly the v3 digits.',
        },
        currency: { type: 'currency', from: 'currency', source: 'doc', reason: "The deposit's currency." },
        status: {
          type: 'string',
          from: 'status',
          map: 'depositStatus',
          source: 'doc',
          reason: 'COMPLETED, or ERROR for a failed deposit (the legacy word, as the deposits list writes it).',
        },
        network: {
          type: 'string',
          derived: 'networkOrFiat',
          source: 'doc',
          reason: '"FIAT" for a fiat deposit, else its chain.',
        },
        referenceId: {
          type: 'string',
          nullable: true,
          from: 'referenceId',
          source: 'doc',
          reason: "The payer's reference, or null.",
        },
        comments: { type: 'string', nullable: true, from: 'comments', source: 'doc', reason: 'Free text, or null.' },
        transactionHash: {
          type: 'string',
          nullable: true,
          from: 'transactionHash',
          source: 'doc',
          reason: 'The chain transaction of a stablecoin deposit; null for fiat.',
        },
        completedAt: {
          type: 'timestamp',
          nullable: true,
          from: 'completedAt',
          source: 'doc',
          reason: 'When it was credited; null for a failed deposit.',
        },
      },
    },
    withdrawal: {
      summary: 'A withdrawal as the withdrawal webhooks carry it.',
      v3: 'withdrawal',
      fields: {
        id: { type: 'id', from: 'id', source: 'doc', reason: ID },
        orgId: { type: 'id', context: 'orgId', source: 'doc', reason: 'The organisation of the subscription.' },
        amount: {
          type: 'amount',
          from: 'withdrawalAmount',
          source: 'doc',
          reason: 'The legacy name of withdrawalAmount, with exactly the v3 digits.',
        },
        currency: { type: 'currency', from: 'currency', source: 'doc', reason: "The withdrawal's currency." },
        status: { type: 'string', from: 'status', source: 'doc', reason: 'The same words: COMPLETED, or FAILED.' },
        network: {
          type: 'string',
          derived: 'networkOrFiat',
          source: 'doc',
          reason: '"FIAT" for a fiat withdrawal, never null; else its chain.',
        },
        actorEmail: {
          type: 'string',
          nullable: true,
          from: 'actorEmail',
          source: 'doc',
          reason: 'Who asked for it; for an API key, its key id at api-keys.fxgate.invalid.',
        },
        referenceId: {
          type: 'string',
          nullable: true,
          derived: 'railReference',
          source: 'ours',
          reason:
            "v3 keeps no payer reference for a withdrawal; the rail's own once it has paid (FEDWIRE IMAD, SWIFT UETR), else null.",
        },
        comments: { type: 'string', nullable: true, from: 'comments', source: 'doc', reason: 'Free text, or null.' },
        transactionHash: {
          type: 'string',
          nullable: true,
          from: 'transactionHash',
          source: 'doc',
          reason: 'The chain transaction of a stablecoin withdrawal; null for fiat.',
        },
        completedAt: {
          type: 'timestamp',
          nullable: true,
          from: 'completedAt',
          source: 'doc',
          reason: 'When it was paid out; null for a failed withdrawal.',
        },
      },
    },
  },
} as const satisfies LegacyWebhookTable;
