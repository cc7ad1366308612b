/**
 * v1, written as what it lacks compared with v2 (endpoints.v2.ts): where the two agree, v2's
 * mapping serves v1 as it is. The records, value maps and page defaults are the same. Format
 * and validator: src/gateway/legacy/declarations/generation-changes.ts. Pure data.
 */
import type { GenerationChanges } from '../src/gateway/legacy/declarations/generation-changes.js';

const NO_REVERSAL = 'The v1 documentation has no reversal or settlement section; v2 added them.';

export const V1_ENDPOINTS = {
  base: 'v2',
  changes: [
    { kind: 'operation-removed', operation: 'trade/reverse-quote', source: 'doc', reason: NO_REVERSAL },
    { kind: 'operation-removed', operation: 'trade/reverse', source: 'doc', reason: NO_REVERSAL },
    { kind: 'operation-removed', operation: 'trade/settle', source: 'doc', reason: NO_REVERSAL },
    {
      kind: 'idempotency',
      method: 'GET',
      becomes: 'none',
      source: 'spec',
      reason: 'v1 reads never took an Idempotency-Key.',
    },
    {
      kind: 'idempotency',
      method: 'POST',
      becomes: 'honoured-if-sent',
      source: 'ours',
      reason:
        "v1 had no idempotency: without a key each write is new, as it always was; a key sent is honoured with v2's lifetimes.",
    },
    {
      kind: 'data-also-at-root',
      operation: 'trade',
      source: 'doc',
      reason: 'The v1 documentation lists the trade result at the top of the body; clients also read it under data.',
    },
  ],
} as const satisfies GenerationChanges;
