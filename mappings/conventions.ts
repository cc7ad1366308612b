/**
 * The conventions every legacy operation of both generations shares: page defaults and the
 * values of the mode header. Format and validator: src/gateway/legacy/conventions.ts. Pure data.
 */
import type { LegacyConventions } from '../src/gateway/legacy/conventions.js';

export const LEGACY_CONVENTIONS = {
  pagination: {
    page: { default: 1, min: 1 },
    limit: { default: 10, min: 1, max: 50 },
    source: 'doc',
    reason: 'The v1 documentation: page at least 1 (default 1), limit 1 to 50 (default 10).',
  },
  appModes: {
    values: { SANDBOX: 'sandbox', LIVE: 'live', PRODUCTION: 'live' },
    absent: 'live',
    source: 'client',
    reason: 'The v2 client sends x-app-mode on every request, sandbox or live in any case, or production for live.',
  },
} as const satisfies LegacyConventions;
