import { describe, expect, it } from 'vitest';
import { renderLegacyErrors, renderLegacyOperations } from '../../../src/gateway/legacy/legacy-reference.js';
import { LEGACY_OPERATIONS } from '../../../src/gateway/legacy/operations.js';
import { loadShippedMappings } from '../../../src/gateway/legacy/transforms/index.js';
import { ERROR_CODES } from '../../../src/lib/errors/catalog.js';

describe('the legacy reference generated from mappings/', () => {
  it('has one row per operation of each generation, with its v3 calls and rules', async () => {
    const text = renderLegacyOperations(await loadShippedMappings());
    const rows = text.split('\n').filter((line) => line.startsWith('| `'));
    expect(rows).toHaveLength(LEGACY_OPERATIONS.v1.length + LEGACY_OPERATIONS.v2.length);
    expect(text).toContain('| `POST …/trade` | `POST /v3/fx/trades` + `GET /v3/fx/balances` + `GET /v3/fx/exposure` | trade | required, kept 24 h |');
    expect(text).toContain('| `POST …/withdrawal` | `POST /v3/fx/withdrawals` | withdraw | required, kept 7 d |');
    expect(text).toContain('| `POST …/generate_quote` | `POST /v3/fx/quotes` | trade | required, kept 30 min |');
    expect(text).toContain('| `GET …/trades` | `GET /v3/fx/trades` | view | none | page/limit over cursors |');
  });

  it('has one row per v3 code with both generations and the per-operation exceptions', async () => {
    const text = renderLegacyErrors(await loadShippedMappings());
    expect(text.split('\n').filter((line) => line.startsWith('| `'))).toHaveLength(ERROR_CODES.length);
    expect(text).toContain('| `IDEMPOTENCY_KEY_MISSING` | 500 An internal error has occurred | 400 Idempotency key is required (`IDEMPOTENCY_KEY_REQUIRED`) |');
    expect(text).toMatch(/\| `TRADE_NOT_FOUND` \| 400 Trade not found \| 400 Trade not found \| trade\/reverse: 404 Trade not found; /);
  });
});
