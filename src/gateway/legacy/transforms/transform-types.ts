/**
 * The contract between the endpoint tables (`mappings/`), the legacy route handler and the
 * transforms: what a request transform is given and returns, what a response transform is given
 * and returns, and the two errors a transform may throw.
 *
 * Transforms are pure functions. They never call v3 themselves: the handler makes the v3 calls
 * the mapping declares and hands their parsed answers to the response transform. Money stays
 * decimal text throughout: legacy amounts arrive as canonical decimal strings (read from the raw
 * JSON by lossless-json.ts at the mapping's `amounts.request` paths), v3 amounts are strings, and
 * a response transform puts decimal strings at the mapping's `amounts.response` paths, which the
 * writer turns into JSON numbers with exactly their digits.
 */
import type { LegacyPrincipal } from '../legacy-auth.js';
import type { LegacyGeneration } from '../operations.js';

export interface LegacyRequestInput {
  readonly generation: LegacyGeneration;
  /** The operation name of the endpoint table, e.g. `generate_quote`. */
  readonly operation: string;
  /** The legacy body as parseLegacyJson returned it (amounts are decimal strings). */
  readonly body: unknown;
  readonly principal: LegacyPrincipal;
}

/** The v3 JSON body to send, or null to send no body at all (v3 settle takes none). */
export type RequestTransform = (input: LegacyRequestInput) => Record<string, unknown> | null;

/** A v3 success body as parsed JSON: `{data, pagination?, totals?, ...}`. */
export interface V3SuccessBody {
  readonly data: unknown;
  readonly [field: string]: unknown;
}

export interface LegacyResponseInput {
  readonly generation: LegacyGeneration;
  readonly operation: string;
  /**
   * One answer per v3 call of the mapping, in the mapping's order. For a `page-limit/cursor`
   * list the first answer is `{data: <the v3 records of the requested page>}`, assembled by the
   * page walker; for a `page-limit/bounded` list it is the whole v3 list (the handler slices
   * the legacy `data` afterwards).
   */
  readonly answers: readonly V3SuccessBody[];
  readonly principal: LegacyPrincipal;
}

/** The whole legacy success body (`{status: 'success', data, ...}`), without `meta`: the handler adds pagination. */
export type ResponseTransform = (input: LegacyResponseInput) => Record<string, unknown>;

export interface TransformSet {
  readonly request: Readonly<Record<string, RequestTransform>>;
  readonly response: Readonly<Record<string, ResponseTransform>>;
}

/**
 * A v3 answer that does not have the shape the contract promises (a missing field, an amount
 * that is not decimal text, an id without its prefix). The gateway cannot translate it: the
 * legacy 500, and a log line naming the operation and the field.
 */
export class V3ContractError extends Error {
  readonly code = 'FXGATE_V3_CONTRACT_VIOLATION';
  constructor(
    readonly operation: string,
    readonly problems: readonly string[],
  ) {
    super(`the v3 answer for ${operation} breaks the v3 contract: ${problems.join('; ')}`);
    this.name = 'V3ContractError';
  }
}
