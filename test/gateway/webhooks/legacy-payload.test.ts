/**
 * The legacy webhook bodies, built from the declarations of mappings/webhooks.ts: each event's
 * envelope and record field by field from a v3 event, amounts with exactly the v3 digits, the
 * events a subscription gets by default, v3 data that breaks the contract, and the validator
 * refusing declarations that could not be served. docs/legacy-api.md's reference is generated from them.
 */
import { readFile } from 'node:fs/promises';

import { describe, expect, it } from 'vitest';

import { VALUE_MAPS } from '../../../mappings/value-maps.js';
import { LEGACY_WEBHOOKS } from '../../../mappings/webhooks.js';
import { loadLegacyMappings, SHIPPED_CODE } from '../../../src/gateway/legacy/declarations/mappings-loader.js';
import { validateValueMaps } from '../../../src/gateway/legacy/declarations/record-shapes.js';
import { defaultWebhookEvents, validateWebhookTable } from '../../../src/gateway/legacy/declarations/webhook-shapes.js';
import {
  compileLegacyWebhooks,
  parseV3WebhookEnvelope,
  type V3WebhookEnvelope,
} from '../../../src/gateway/webhooks/legacy-payload.js';
import { renderLegacyWebhooks } from '../../../src/gateway/webhooks/webhook-reference.js';
import { V3ContractError } from '../../../src/lib/errors/internal-errors.js';
import { edited, mappingError } from '../legacy/declaration-edits.js';
import {
  BIG,
  DEPOSIT_FAILED,
  DEPOSIT_USD,
  DEPOSIT_USDC,
  FIAT_WITHDRAWAL,
  ORG_ID,
  UUIDS,
  WITHDRAWAL,
} from '../legacy/v3-contract/v3-samples.js';

const maps = validateValueMaps(VALUE_MAPS);
const table = validateWebhookTable(LEGACY_WEBHOOKS, maps, SHIPPED_CODE);
const builder = compileLegacyWebhooks(table, maps);
const EVENT_ID = 'evt_01a207ceaaaa7bbb8ccc0000000000e1';
const EVENT_UUID = '01a207ce-aaaa-7bbb-8ccc-0000000000e1';

function envelope(eventType: string, data: object, createdAt = '2026-11-23T10:05:00.123Z'): V3WebhookEnvelope {
  return {
    id: EVENT_ID,
    type: eventType.startsWith('deposit') ? 'deposits' : 'withdrawals',
    eventType,
    createdAt,
    data: data as Record<string, unknown>,
  };
}

function built(eventType: string, data: object) {
  const result = builder.build(envelope(eventType, data), ORG_ID);
  expect(result).not.toBeNull();
  return {
    ...result!,
    parsed: JSON.parse(result!.body) as { data: Record<string, unknown>[] } & Record<string, unknown>,
  };
}

describe('the declared events', () => {
  it('are completed deposits and withdrawals by default, failures on request, from four v3 event types', () => {
    expect(builder.eventNames).toEqual(['deposits', 'withdrawals', 'failed-deposits', 'failed-withdrawals']);
    expect(builder.defaultEvents).toEqual(['deposits', 'withdrawals']);
    expect(defaultWebhookEvents(table)).toEqual(['deposits', 'withdrawals']);
    expect(builder.v3EventTypes).toEqual([
      'deposit.completed',
      'deposit.failed',
      'withdrawal.completed',
      'withdrawal.failed',
    ]);
  });

  it('are loaded and validated with the other declarations', async () => {
    const mappings = await loadLegacyMappings();
    expect(mappings.webhooks).toEqual(table);
  });
});

describe('a completed deposit', () => {
  it('is the envelope of the legacy service with the deposit record, field by field in order', () => {
    const result = built('deposit.completed', DEPOSIT_USDC);
    expect(result.event).toBe('deposits');
    expect(result.eventId).toBe(EVENT_UUID);
    expect(result.body).toBe(
      `{"eventId":"${EVENT_UUID}","type":"deposits","message":"Completed Deposits","timestamp":"2026-11-23T10:05:00.123Z","data":[` +
        `{"id":"${UUIDS.depositUsdc}","orgId":"${ORG_ID}","amount":100000.000000,"currency":"USDC","status":"COMPLETED","network":"ETHEREUM",` +
        `"referenceId":null,"comments":null,"transactionHash":"0xd77a3c5b1e0f","completedAt":"2026-11-23T09:31:00.000Z"}]}`,
    );
  });

  it('of fiat names its network FIAT and keeps the payer reference; an amount keeps every digit', () => {
    const result = built('deposit.completed', {
      ...DEPOSIT_USD,
      status: 'COMPLETED',
      amount: BIG,
      completedAt: '2026-11-23T09:45:00.000Z',
    });
    expect(result.parsed.data[0]).toMatchObject({
      network: 'FIAT',
      referenceId: 'wire-42',
      comments: 'March top-up',
      transactionHash: null,
    });
    expect(result.body).toContain(`"amount":${BIG},`);
  });
});

describe('the other events', () => {
  it('a failed deposit: "Failed Deposits", the legacy status ERROR, no completion time', () => {
    const result = built('deposit.failed', DEPOSIT_FAILED);
    expect(result.event).toBe('failed-deposits');
    expect(result.parsed).toMatchObject({ type: 'deposits', message: 'Failed Deposits' });
    expect(result.parsed.data[0]).toMatchObject({
      id: UUIDS.depositFailed,
      status: 'ERROR',
      completedAt: null,
      comments: 'returned by the bank',
    });
  });

  it('a completed fiat withdrawal: its IMAD as referenceId, who asked, amount with its digits', () => {
    const result = built('withdrawal.completed', FIAT_WITHDRAWAL);
    expect(result.event).toBe('withdrawals');
    expect(result.body).toBe(
      `{"eventId":"${EVENT_UUID}","type":"withdrawals","message":"Completed Withdrawals","timestamp":"2026-11-23T10:05:00.123Z","data":[` +
        `{"id":"${UUIDS.fiatWithdrawal}","orgId":"${ORG_ID}","amount":100.00,"currency":"USD","status":"COMPLETED","network":"FIAT",` +
        `"actorEmail":"01a207ce-44eb-7202-8b2f-43bbb9b9c176@api-keys.fxgate.invalid","referenceId":"20261123MMQFMP2L000001","comments":"",` +
        `"transactionHash":null,"completedAt":"2026-11-23T10:05:00.000Z"}]}`,
    );
  });

  it("a SWIFT withdrawal's reference is its UETR; a stablecoin one has none, and its chain and hash", () => {
    const uetr = '8a562c67-ca16-48ba-b074-65581be6f011';
    expect(
      built('withdrawal.completed', { ...FIAT_WITHDRAWAL, currency: 'EUR', paymentDetails: { SWIFT: { uetr } } }).parsed
        .data[0],
    ).toMatchObject({ referenceId: uetr });
    const coin = built('withdrawal.completed', {
      ...WITHDRAWAL,
      status: 'COMPLETED',
      transactionHash: '0xabc',
      completedAt: '2026-11-23T10:06:00.000Z',
    });
    expect(coin.parsed.data[0]).toMatchObject({ network: 'ETHEREUM', transactionHash: '0xabc', referenceId: null });
    expect(coin.body).toContain('"amount":12.500000,');
  });

  it('a failed withdrawal: "Failed Withdrawals", status FAILED', () => {
    const result = built('withdrawal.failed', {
      ...FIAT_WITHDRAWAL,
      status: 'FAILED',
      paymentDetails: {},
      completedAt: null,
      failureReason: 'closed account',
    });
    expect(result.event).toBe('failed-withdrawals');
    expect(result.parsed).toMatchObject({ type: 'withdrawals', message: 'Failed Withdrawals' });
    expect(result.parsed.data[0]).toMatchObject({ status: 'FAILED', referenceId: null, completedAt: null });
  });

  it('no legacy event is made from the other v3 events', () => {
    for (const eventType of [
      'deposit.pending',
      'withdrawal.pending',
      'withdrawal.processing',
      'withdrawal.cancelled',
      'trade.executed',
    ]) {
      expect(builder.build(envelope(eventType, WITHDRAWAL), ORG_ID), eventType).toBeNull();
    }
  });
});

describe('v3 deliveries that break the contract', () => {
  it('a body that is not JSON or not the envelope', () => {
    expect(() => parseV3WebhookEnvelope(Buffer.from('not json'))).toThrow(V3ContractError);
    expect(() =>
      parseV3WebhookEnvelope(
        Buffer.from(
          '{"id":"dep_01","type":"deposits","eventType":"deposit.completed","createdAt":"2026-11-23T10:05:00.000Z","data":{}}',
        ),
      ),
    ).toThrow(/id: must be an evt_ id/);
    expect(() =>
      parseV3WebhookEnvelope(
        Buffer.from(
          `{"id":"${EVENT_ID}","type":"deposits","eventType":"deposit.completed","createdAt":"yesterday","data":{}}`,
        ),
      ),
    ).toThrow(/createdAt/);
    expect(
      parseV3WebhookEnvelope(Buffer.from(JSON.stringify({ ...envelope('deposit.completed', DEPOSIT_USDC), extra: 1 }))),
    ).toMatchObject({ id: EVENT_ID, eventType: 'deposit.completed' });
  });

  it('data whose amount is a number, or lacks a field, names the field', () => {
    expect(() => builder.build(envelope('deposit.completed', { ...DEPOSIT_USDC, amount: 100 }), ORG_ID)).toThrow(
      /data\.amount: .*expected string/,
    );
    const { actorEmail: _dropped, ...withoutEmail } = FIAT_WITHDRAWAL;
    expect(() => builder.build(envelope('withdrawal.completed', withoutEmail), ORG_ID)).toThrow(/data\.actorEmail/);
    expect(() =>
      builder.build(
        envelope('withdrawal.completed', { ...FIAT_WITHDRAWAL, id: 'dep_01a207ce70007000800000000000f002' }),
        ORG_ID,
      ),
    ).toThrow(/data\.id: must be a wtd_ id/);
  });
});

describe('validateWebhookTable', () => {
  const refused = (edits: Record<string, unknown>) =>
    mappingError(() => validateWebhookTable(edited(LEGACY_WEBHOOKS, edits), maps, SHIPPED_CODE)).problems;

  it('refuses an event whose record, type or v3 event does not fit', () => {
    expect(refused({ 'events.deposits.record': 'withdrawal' })).toEqual([
      'events.deposits.record: withdrawal is built from the v3 withdrawal, but deposit.completed carries a deposit',
    ]);
    expect(refused({ 'events.deposits.record': 'payout' })).toEqual(['events.deposits.record: no record named payout']);
    expect(refused({ 'events.deposits.type': 'withdrawals' })).toEqual([
      'events.deposits.type: deposit.completed is about deposits, not withdrawals',
    ]);
    expect(refused({ 'events.failed-deposits.v3': 'deposit.completed' })).toEqual([
      'events.failed-deposits.v3: deposit.completed already makes deposits',
    ]);
    expect(refused({ 'events.deposits.v3': 'trade.executed' })[0]).toMatch(/^events\.deposits\.v3: /);
    expect(refused({ 'events.deposits.byDefault': false, 'events.withdrawals.byDefault': false })).toEqual([
      'events: at least one must be sent by default',
    ]);
    expect(refused({ 'events.Deposits': LEGACY_WEBHOOKS.events.deposits })[0]).toMatch(/^events\.Deposits: /);
    expect(refused({ 'events.deposits.reason': undefined })[0]).toMatch(/^events\.deposits\.reason/);
  });

  it('refuses an envelope without each value exactly once', () => {
    expect(refused({ 'envelope.timestamp': undefined })).toEqual([
      'envelope: eventCreatedAt (when the v3 event happened (ISO 8601 UTC)) must be declared exactly once, not 0 times',
    ]);
    expect(refused({ 'envelope.sentAt': { value: 'eventCreatedAt', source: 'ours', reason: 'twice' } })[0]).toMatch(
      /eventCreatedAt .* not 2 times/,
    );
    expect(refused({ 'envelope.eventId.value': 'eventId' })[0]).toMatch(/^envelope\.eventId\.value/);
  });

  it("refuses records the record format refuses, and a caller's key id, which no webhook has", () => {
    expect(refused({ 'records.deposit.fields.amount.from': 'amountt' })[0]).toMatch(
      /the v3 deposit record has no field amountt/,
    );
    expect(
      refused({
        'records.withdrawal.fields.actorEmail': { type: 'id', context: 'keyId', source: 'ours', reason: 'the key' },
      }),
    ).toEqual(["records.withdrawal.fields.actorEmail.context: a webhook knows the org, not a caller's keyId"]);
    expect(refused({ 'records.withdrawal.fields.referenceId.derived': 'wireReference' })[0]).toMatch(
      /no derived field wireReference/,
    );
  });
});

describe('the generated reference', () => {
  it("lists every event, the envelope and every field, and is docs/legacy-api.md's", async () => {
    const rendered = renderLegacyWebhooks({ webhooks: table });
    expect(rendered).toContain(
      '| `failed-withdrawals` | `withdrawal.failed` | withdrawals | Failed Withdrawals | withdrawal | no | ours |',
    );
    expect(rendered).toContain('| `referenceId` | string or null | derived: railReference | ours |');
    const reference = await readFile(new URL('../../../docs/legacy-api.md', import.meta.url), 'utf8');
    expect(reference).toContain(`<!-- generated:legacy-webhooks -->\n${rendered}\n<!-- /generated:legacy-webhooks -->`);
  });
});
