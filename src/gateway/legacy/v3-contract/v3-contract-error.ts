/**
 * The one error a v3 answer that breaks the v3 contract raises in the legacy layer: a missing
 * field, an amount that is not decimal text, an id without its prefix. The gateway cannot
 * translate such an answer, so the client gets the legacy 500 and the log names the operation
 * and every field that is wrong. Defined with every internal error in
 * src/lib/errors/internal-errors.ts; the legacy layer imports it from here.
 */
export { V3ContractError } from '../../../lib/errors/internal-errors.js';
