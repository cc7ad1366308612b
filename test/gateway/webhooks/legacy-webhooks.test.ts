/**
 * LegacyWebhooks' own rules, without a gateway: a lease that would lapse between two renewals is
 * refused at construction, and the lines an operator reads when the fleet registers another URL
 * than a gateway's own, or moves to another, name both URLs and what to do. The fleet at work is
 * in test/gateway/legacy/e2e/webhooks-fleet.test.ts.
 */
import { randomBytes } from 'node:crypto';

import { describe, expect, it } from 'vitest';

import type { CallbackDecision } from '../../../src/gateway/webhooks/fleet-callback.js';
import {
  describeHeldElsewhere,
  describeMove,
  LEGACY_WEBHOOK_DEFAULTS,
  LegacyWebhooks,
} from '../../../src/gateway/webhooks/legacy-webhooks.js';
import type { Database } from '../../../src/lib/db/database.js';
import { LegacyWebhookOptionsError } from '../../../src/lib/errors/internal-errors.js';
import { SealingKeyring } from '../../../src/lib/secrets/sealing-keyring.js';

const A = 'https://gw-old.example.com/_fxgate/webhooks/v3';
const B = 'https://gw-new.example.com/_fxgate/webhooks/v3';
// Never queried: construction only reads options.
const db = {} as Database;
const keyring = SealingKeyring.of([randomBytes(32)]);

describe('LegacyWebhooks options', () => {
  it('a lease lasts three reconciliation intervals unless given; one no longer than the interval is refused', () => {
    expect(LEGACY_WEBHOOK_DEFAULTS.leaseIntervals).toBe(3);
    expect(() => new LegacyWebhooks({ db, keyring, reconcileIntervalMs: 100 })).not.toThrow();
    expect(() => new LegacyWebhooks({ db, keyring, reconcileIntervalMs: 100, leaseMs: 101 })).not.toThrow();
    for (const leaseMs of [100, 50]) {
      const build = () => new LegacyWebhooks({ db, keyring, reconcileIntervalMs: 100, leaseMs });
      expect(build).toThrow(LegacyWebhookOptionsError);
      expect(build).toThrow(
        `the lease (${leaseMs} ms) must outlast the reconciliation interval (100 ms) that renews it`,
      );
    }
  });

  it("keeps a replaced endpoint for v3's retry window and an hour by default", () => {
    expect(LEGACY_WEBHOOK_DEFAULTS.retireAfterMs).toBe(73 * 3_600_000);
  });
});

describe('what an operator reads', () => {
  const since = new Date('2026-11-26T00:00:00Z');

  it('a gateway whose URL is not the registered one names both, and what to do', () => {
    const decision: CallbackDecision = {
      base: A,
      own: B,
      movedFrom: null,
      advertised: [
        { base: B, gateways: 1, since },
        { base: A, gateways: 2, since },
      ],
    };
    expect(describeHeldElsewhere(decision)).toBe(
      `legacy webhooks: this gateway advertises ${B} (FXGATE_GATEWAY_WEBHOOK_URL), but v3 delivers to ${A}, which 2 ` +
        'other running gateway(s) advertise; the fleet keeps one URL while a gateway advertising it runs. In a rolling ' +
        'change of FXGATE_GATEWAY_WEBHOOK_URL the registrations move to the newest URL when the last of those gateways ' +
        'stops; otherwise give every gateway of the fleet the same FXGATE_GATEWAY_WEBHOOK_URL',
    );
  });

  it('a move names the old URL, the new one, and how long the old one must still reach the gateways', () => {
    const decision: CallbackDecision = { base: B, own: B, movedFrom: A, advertised: [{ base: B, gateways: 3, since }] };
    expect(describeMove(decision, LEGACY_WEBHOOK_DEFAULTS.retireAfterMs)).toBe(
      `legacy webhooks: no running gateway advertises ${A} any more: the registrations move to ${B}. The ` +
        `endpoints at ${A} are kept, and their deliveries accepted, for 73 h after their successors are registered ` +
        `(v3's retry window): keep ${A} routed to the gateways until then, or the deliveries v3 still holds for it are lost`,
    );
    expect(describeMove(decision, 2_000)).toContain('for 2 s after');
    expect(describeMove(decision, 300_000)).toContain('for 5 min after');
  });
});
