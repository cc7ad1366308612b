/**
 * v3 error -> v1 answer, declared as what v1 changes in v2's answers (`mappings/errors.v2.ts`):
 * a newcomer reads what v1 lacks, not a second copy of 65 rows. The changes are error kinds of
 * the one change format (src/gateway/legacy/declarations/generation-changes.ts), each with its
 * source and reason; they are a list of their own, beside v2's error table they change, as v2's
 * record changes sit beside the records. The gateway applies them to v2's validated tables when
 * it loads them (`applyV1ErrorChanges` in src/gateway/legacy/declarations/error-tables.ts),
 * validates the result as v1's tables, and the docs list the changes (`describeV1ErrorChanges`).
 *
 * v1 serves the same twelve operations as v2 except trade/reverse-quote, trade/reverse and
 * trade/settle; v2's per-operation answers for those three are dropped, the others (the
 * "withdrawal account" wording of fiat_withdrawal) apply on v1 too.
 *
 * - `status-downgraded`: v1 has four statuses, the three of the v1 documentation (400 Query
 *   validation failed, 401 with the authorization message, 500 An internal error has occurred)
 *   and 429 from the rate limits every generation has. Each v2 status v1 lacks becomes one of
 *   them; the message stays v2's and v1's envelope is the bare `{status: 'error', message}`.
 * - `error-code-kept`: the one exception. v1 writes honour an Idempotency-Key the client sends
 *   (kept as long as on v2; a v1 write without one is new each time), so the idempotency
 *   answers a key-sending v1 client can meet are v2's, `error: {code, details}` included. This is
 *   the only way a v1 answer is 409 or 422.
 * - `error-answer-changed`: v1's one answer for a code whose v1 answer is not v2's under the
 *   rule (nothing of v2's row carries over, per-operation answers included). The validator
 *   refuses one that answers as the rule already does.
 *
 * `source: 'doc'`: the status and message are the v1 documentation's (the row's basis `spec`);
 * `source: 'ours'`: our choice (`closest`), the reason says why. Pure data: it imports only
 * types, so the compiled file imports nothing.
 */
import type { ErrorChange } from '../src/gateway/legacy/declarations/error-tables.js';

const INTERNAL = 'An internal error has occurred';
const BUSINESS_400 = "a business refusal or not-found is v1's 400.";
const KEY_HONOURED =
  "v1 writes honour an Idempotency-Key when the client sends one, kept as long as on v2, so a key-sending v1 client meets the idempotency answers v2 documents, error.code included; v1's documentation has none of its own.";

export const V1_ERROR_CHANGES = [
  { kind: 'status-downgraded', from: 404, to: 400, source: 'ours', reason: `v1 has no 404: ${BUSINESS_400}` },
  {
    kind: 'status-downgraded',
    from: 409,
    to: 400,
    source: 'ours',
    reason: `v1 has no 409 for a state conflict: ${BUSINESS_400}`,
  },
  {
    kind: 'status-downgraded',
    from: 422,
    to: 400,
    source: 'ours',
    reason: `v1 has no 422 for a broken business rule: ${BUSINESS_400}`,
  },
  {
    kind: 'status-downgraded',
    from: 503,
    to: 500,
    source: 'ours',
    reason: "v1 has no 503: an outage is v1's 500, whose advice (retry with backoff) fits.",
  },

  { kind: 'error-code-kept', code: 'IDEMPOTENCY_KEY_INVALID', source: 'ours', reason: KEY_HONOURED },
  { kind: 'error-code-kept', code: 'IDEMPOTENCY_IN_FLIGHT', source: 'ours', reason: KEY_HONOURED },
  { kind: 'error-code-kept', code: 'IDEMPOTENCY_MISMATCH', source: 'ours', reason: KEY_HONOURED },

  {
    kind: 'error-answer-changed',
    code: 'IDEMPOTENCY_KEY_MISSING',
    status: 500,
    message: INTERNAL,
    source: 'ours',
    reason:
      "v1 never requires an Idempotency-Key (a v1 write sent without one is simply new), so this code on a v1 request is a gateway defect: v1's 500, not v2's 400 IDEMPOTENCY_KEY_REQUIRED.",
  },
  {
    kind: 'error-answer-changed',
    code: 'IDEMPOTENCY_UNAVAILABLE',
    status: 500,
    message: INTERNAL,
    source: 'ours',
    reason:
      "Also raised when the nonce store is down, to clients that sent no key; v1 has no 503 and no error object for it, so it is the v1 documentation's 500 with its own message (retry with backoff), not v2's words about an idempotency service.",
  },
  {
    kind: 'error-answer-changed',
    code: 'INTERNAL_ERROR',
    status: 500,
    message: INTERNAL,
    source: 'doc',
    reason:
      "The v1 documentation's 500 An internal error has occurred, on every operation: v2's own 500 wording for generate_quote is v2's alone.",
  },
  {
    kind: 'error-answer-changed',
    code: 'SERVICE_UNAVAILABLE',
    status: 500,
    message: INTERNAL,
    source: 'ours',
    reason:
      "v1 has no 503: an outage is the v1 documentation's 500 (retry with backoff), with its message on every operation; v2's generate_quote wording is v2's alone.",
  },
  {
    kind: 'error-answer-changed',
    code: 'TRADE_ALREADY_SETTLED',
    status: 400,
    message: 'The trade cannot be settled (not in a settleable state)',
    source: 'ours',
    reason:
      "No v1 operation reverses or settles, so v1 clients cannot meet this code; v1 has always worded it as the settle refusal (v2's wording on trade/settle) under its 400, and keeps that rather than v2's reverse refusal.",
  },
] as const satisfies readonly ErrorChange[];
