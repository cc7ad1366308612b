/**
 * The legacy operations the gateway serves, by generation. An operation is named by its path
 * below `/v{1,2}/brokerage/{orgId}/`, which is unique within a generation, so the endpoint
 * tables, the generation changes and the per-operation rows of the error tables share one
 * vocabulary.
 *
 * The twelve operations real v1 and v2 clients call are served on both generations; v2 keeps
 * the three reversal and settlement operations v1 never had (`mappings/endpoints.v1.ts` says
 * so as changes from v2).
 */

const SHARED = [
  'available_markets',
  'balances',
  'generate_quote',
  'trade',
  'trades',
  'trade/{id}',
  'deposits',
  'withdrawal_addresses',
  'fiat_withdrawal_addresses',
  'withdrawals',
  'withdrawal',
  'fiat_withdrawal',
] as const;

export const LEGACY_OPERATIONS = {
  v1: SHARED,
  v2: [...SHARED, 'trade/reverse-quote', 'trade/reverse', 'trade/settle'],
} as const;

export type LegacyGeneration = keyof typeof LEGACY_OPERATIONS;
export type LegacyOperation<G extends LegacyGeneration> = (typeof LEGACY_OPERATIONS)[G][number];
export type V1Operation = LegacyOperation<'v1'>;
export type V2Operation = LegacyOperation<'v2'>;

export const LEGACY_GENERATIONS = Object.keys(LEGACY_OPERATIONS) as LegacyGeneration[];

export function isLegacyOperation<G extends LegacyGeneration>(generation: G, name: string): name is LegacyOperation<G> {
  return (LEGACY_OPERATIONS[generation] as readonly string[]).includes(name);
}

/** The legacy route of an operation in fastify's syntax: `trade/{id}` in v1 is `/v1/brokerage/:orgId/trade/:id`. */
export function legacyRoutePath(generation: LegacyGeneration, operation: string): string {
  return `/${generation}/brokerage/:orgId/${operation.replaceAll(/\{([A-Za-z]+)\}/g, ':$1')}`;
}
