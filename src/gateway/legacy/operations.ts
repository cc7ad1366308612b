/**
 * The legacy operations the gateway serves (DESIGN 4): the spec's v1 and v2 operations plus what
 * public v1/v2 clients are known to call. An operation is named by its path below
 * `/v{1,2}/brokerage/{orgId}/`, which is unique within a generation, so the endpoint tables and
 * the per-operation rows of the error tables share one vocabulary.
 */

export const LEGACY_OPERATIONS = {
  v1: ['fiat_withdrawal_addresses', 'withdrawal_addresses', 'trades', 'trade/{id}', 'deposits', 'balances', 'generate_quote', 'trade'],
  v2: [
    'balances',
    'available_markets',
    'trades',
    'deposits',
    'withdrawals',
    'withdrawal_addresses',
    'fiat_withdrawal_addresses',
    'generate_quote',
    'trade',
    'trade/reverse-quote',
    'trade/reverse',
    'trade/settle',
    'withdrawal',
    'fiat_withdrawal',
  ],
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
