/**
 * Step 1's second half: the request's rate limit (../runtime/legacy-rate-limits.ts), charged after the token is
 * checked and before anything is kept or sent upstream. The charge goes to the key the token
 * proved, from the moment it is proven (beside the nonce claim), so that every outcome from
 * there on is the key's, a replay or a refusal of its mode, address, org or scope included; to
 * the client address when the token proved no key. It is settled before the authentication's
 * outcome is answered: an exhausted budget answers 429 before a 401 or a 410, and nothing of
 * the request reaches v3. Touches the request's state and the operation's metrics.
 */
import type { RateLimitClass } from '../../../lib/store/rate-limit-cell.js';
import { retryAfterSeconds } from '../../../lib/store/rate-limit-cell.js';
import type { OperationSeries } from '../../metrics/gateway-metrics.js';
import type { UsageCaller } from '../../usage/usage-recorder.js';
import type { LegacyRateLimitCharge } from '../runtime/legacy-rate-limits.js';
import type { RequestState } from './answer.js';
import { GatewayRefusal } from './failure.js';

/** The key's (or the address's) budget is spent: the legacy 429 with Retry-After. */
export class RateLimitRefusal extends GatewayRefusal {
  constructor(
    readonly charge: LegacyRateLimitCharge,
    /** The key charged, for the usage report; null when the address was. */
    readonly caller: UsageCaller | null,
    retryAfter: number,
  ) {
    super('RATE_LIMIT_EXCEEDED', `the ${charge.subject}'s legacy ${charge.class} limit is spent`, {
      'retry-after': String(retryAfter),
    });
    this.name = 'RateLimitRefusal';
  }
}

/** The class of a legacy operation: its method's, which is the class of the v3 call it maps to (endpoint-mappings.ts checks). */
export function rateClassOf(write: boolean): RateLimitClass {
  return write ? 'write' : 'read';
}

/** Waits for the charge, keeps it on the request for the answer's headers, and throws RateLimitRefusal when over. */
export async function settleCharge(
  charge: Promise<LegacyRateLimitCharge>,
  state: RequestState,
  caller: UsageCaller | null,
  metrics: OperationSeries | undefined,
): Promise<void> {
  const charged = await charge;
  state.rateLimit = charged;
  if (charged.result !== null && !charged.result.allowed) {
    metrics?.rateLimited(charged.subject);
    throw new RateLimitRefusal(charged, charged.subject === 'key' ? caller : null, retryAfterSeconds(charged.result));
  }
}
