/**
 * The one error a v3 answer that breaks the v3 contract raises in the legacy layer: a missing
 * field, an amount that is not decimal text, an id without its prefix. The gateway cannot
 * translate such an answer, so the client gets the legacy 500 and the log names the operation
 * and every field that is wrong.
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
