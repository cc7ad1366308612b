/**
 * What would break if a legacy client moved to the next generation unchanged: v1 clients to v2
 * (the differences of endpoints.v1.ts), v2 clients to v3 (the v3 calls of endpoints.v2.ts and the
 * v3 contract). The gateway checks every request of a known key against these and counts what
 * it meets per key and operation (`GET /admin/readiness`, `fxgate usage --readiness`). Format,
 * rule kinds and validator: src/gateway/legacy/declarations/blockers.ts. Pure data.
 *
 * v1 and v2 share their filters and page bounds (conventions.ts; endpoints.v1.ts changes
 * neither), so no v1 query meets another answer on v2; their error answers differ
 * (errors.v1.ts), which `error-answer` compares per request.
 */
import type { BlockerTable } from '../src/gateway/legacy/declarations/blockers.js';

export const MIGRATION_BLOCKERS = {
  'idempotency-key-missing': {
    severity: 'blocker',
    from: 'v1',
    to: 'v2',
    operations: { method: 'POST' },
    detect: { rule: 'header-missing', header: 'Idempotency-Key' },
    source: 'spec',
    reason:
      'v1 writes take no key (endpoints.v1.ts, idempotency of POST); every v2 write requires one and is refused with 400 IDEMPOTENCY_KEY_REQUIRED without it.',
  },
  'trade-read-top-level': {
    severity: 'warning',
    from: 'v1',
    to: 'v2',
    operations: ['trade'],
    detect: { rule: 'success' },
    source: 'doc',
    reason:
      'v1 writes the trade result at the top of the body as well as under data (endpoints.v1.ts, data-also-at-root); v2 only under data. The gateway cannot see which the client reads, so each trade answered counts.',
  },
  'read-idempotency-key-honoured': {
    severity: 'warning',
    from: 'v1',
    to: 'v2',
    operations: { method: 'GET' },
    detect: { rule: 'header-present', header: 'Idempotency-Key' },
    source: 'spec',
    reason:
      'v1 reads ignore an Idempotency-Key (endpoints.v1.ts, idempotency of GET); v2 honours it for 24 hours: the same key replays the first answer, and another read under it is 422 IDEMPOTENCY_MISMATCH.',
  },
  'error-answer-changes': {
    severity: 'warning',
    from: 'v1',
    to: 'v2',
    operations: 'all',
    detect: { rule: 'error-answer' },
    source: 'spec',
    reason:
      "v1 answers some errors otherwise than v2 (errors.v1.ts): a path naming another org is v1's 400 and v2's 404, the idempotency store down v1's 500 and v2's 503, a failed quote v1's own wording. A client that tells errors apart by status or message meets new ones.",
  },
  'scope-missing': {
    severity: 'blocker',
    from: 'v2',
    to: 'v3',
    operations: 'all',
    detect: { rule: 'scope-missing' },
    source: 'spec',
    reason:
      "On v3 the client makes each of the operation's v3 calls itself (endpoints.v2.ts, v3), with its own key: a call outside the key's scopes is 403 AUTH_INSUFFICIENT_SCOPE. A v2 trade answers balances and credit too, which v3 reads only with view.",
  },
  'app-mode-production': {
    severity: 'blocker',
    from: 'v2',
    to: 'v3',
    operations: 'all',
    detect: { rule: 'header-value', header: 'X-App-Mode', values: ['production'] },
    source: 'spec',
    reason:
      'Legacy takes x-app-mode production for live (conventions.ts, appModes); v3 takes SANDBOX or LIVE and refuses anything else with 400 VALIDATION_HEADER_FAILED.',
  },
  'page-number-paging': {
    severity: 'blocker',
    from: 'v2',
    to: 'v3',
    operations: ['trades', 'deposits', 'withdrawal_addresses', 'fiat_withdrawal_addresses', 'withdrawals'],
    detect: { rule: 'query-present', parameters: ['page'] },
    source: 'spec',
    reason:
      'v3 lists page by cursor (limit, startingAfter, endingBefore) and refuses an unknown query parameter such as page with 400; v3 pages default to 25 records, up to 100.',
  },
  'filter-renamed': {
    severity: 'blocker',
    from: 'v2',
    to: 'v3',
    operations: ['withdrawal_addresses'],
    detect: { rule: 'query-present', parameters: ['coinNetwork', 'coin'] },
    source: 'spec',
    reason:
      'v3 withdrawal accounts filter by network (a code) and currency, and refuse the v2 names coinNetwork and coin with 400.',
  },
} as const satisfies BlockerTable;
