/**
 * v3 words -> the words legacy clients read, one named map per vocabulary. A v3 value a map does
 * not list passes through unchanged. Record fields use a map by name (`map:` in records.ts);
 * filters use it backwards, so a client may filter by the legacy word or the v3 one.
 * Format: src/gateway/legacy/declarations/record-shapes.ts. Pure data.
 */
import type { ValueMapTable } from '../src/gateway/legacy/declarations/record-shapes.js';

export const VALUE_MAPS = {
  depositStatus: {
    summary: 'Deposit statuses.',
    values: { PENDING: 'PENDING', COMPLETED: 'COMPLETED', FAILED: 'ERROR' },
    source: 'client',
    reason: 'The v2 client knows PENDING, COMPLETED and ERROR; v3 calls a failed deposit FAILED.',
  },
  addressStatus: {
    summary: 'Stablecoin withdrawal address statuses.',
    values: { ACTIVE: 'Verified', PENDING_VERIFICATION: 'Pending', DISABLED: 'Disabled' },
    source: 'ours',
    reason: 'The v1 documentation shows "Verified" for a usable address; the other words are not public.',
  },
  fiatAccountStatus: {
    summary: 'Fiat withdrawal account statuses.',
    values: { ACTIVE: 'active', PENDING_VERIFICATION: 'pending_verification', DISABLED: 'disabled' },
    source: 'spec',
    reason: 'The legacy fiat account record writes its status in lower case ("active").',
  },
  networkName: {
    summary: 'Blockchain networks by their display names.',
    values: { ETHEREUM: 'Ethereum', POLYGON: 'Polygon', BASE: 'Base', SOLANA: 'Solana', TRON: 'Tron' },
    source: 'doc',
    reason: 'The v1 documentation names a network by its display name ("Ethereum") where v3 writes its code.',
  },
} as const satisfies ValueMapTable;
