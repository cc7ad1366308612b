import { describe, expect, it } from 'vitest';

import { formatKeyTable, GATEWAY_CREDENTIAL_NOTE } from '../../src/cli/key-table.js';
import { PROVISIONED_LABEL } from '../../src/gateway/upstream/signing-credentials.js';
import type { ApiKeyRecord } from '../../src/lib/keys/key-registry.js';

const base: ApiKeyRecord = {
  name: 'org/0190c5a8-7d2e-7c1a-9f3b-2a4d6e8f0b1c/apiKey/0190c5a8-7d2e-7c1a-9f3b-2a4d6e8f0b1d',
  orgId: '0190c5a8-7d2e-7c1a-9f3b-2a4d6e8f0b1c',
  scopes: ['view', 'trade'],
  mode: 'sandbox',
  ipAllowlist: [],
  createdAt: new Date('2026-01-02T03:04:05.678Z'),
  revokedAt: null,
  label: null,
};

describe('formatKeyTable', () => {
  it('aligns one row per key under a header', () => {
    const revoked = {
      ...base,
      mode: 'live' as const,
      scopes: ['view' as const],
      ipAllowlist: ['10.0.0.0/8', '::1/128'],
      revokedAt: new Date('2026-02-03T00:00:00.000Z'),
    };
    expect(formatKeyTable([base, revoked]).split('\n')).toEqual([
      `NAME${' '.repeat(base.name.length - 4)}  MODE     SCOPES      IP ALLOWLIST        CREATED                   REVOKED                   LABEL`,
      `${base.name}  sandbox  view,trade  any                 2026-01-02T03:04:05.678Z  -                         -`,
      `${base.name}  live     view        10.0.0.0/8,::1/128  2026-01-02T03:04:05.678Z  2026-02-03T00:00:00.000Z  -`,
    ]);
  });

  it("shows labels, and marks the gateway's own credential with a footnote under the table", () => {
    const labelled = { ...base, label: 'sandbox key made by fxgate all' };
    const gateway = { ...base, scopes: ['view' as const, 'trade' as const], label: PROVISIONED_LABEL };
    const lines = formatKeyTable([labelled, gateway]).split('\n');
    expect(lines.map((line) => line.split(/ {2,}/).at(-1))).toEqual([
      'LABEL',
      'sandbox key made by fxgate all',
      `${PROVISIONED_LABEL} *`,
      '',
      GATEWAY_CREDENTIAL_NOTE,
    ]);
    expect(lines.at(-1)).toBe(
      "* the gateway's own v3 credential for its org and mode: used by the gateway to call the core; do not revoke (the gateway would make another at its next call)",
    );
    expect(formatKeyTable([labelled])).not.toContain(GATEWAY_CREDENTIAL_NOTE);
  });
});
