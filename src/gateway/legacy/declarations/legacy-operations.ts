/**
 * The legacy operations the gateway serves, by generation, read from the endpoint declarations:
 * v2's are the keys of `mappings/endpoints.v2.ts`, v1's are v2's less those its changes
 * (`mappings/endpoints.v1.ts`) remove. An operation is named by its path below
 * `/v{1,2}/brokerage/{orgId}/`, which is unique within a generation, so the endpoint tables, the
 * generation changes and the per-operation rows of the error tables share one vocabulary. The
 * declarations are validated by mappings-loader.ts; this module only reads their names.
 */
import { LegacyMappingError } from '../../../lib/errors/internal-errors.js';
import { importExport, mappingsLocation } from './mappings-location.js';

export type LegacyGeneration = 'v1' | 'v2';
/** An operation name of a generation (the validators check it against LEGACY_OPERATIONS). */
// eslint-disable-next-line @typescript-eslint/no-unused-vars -- the generation documents which list a name belongs to
export type LegacyOperation<G extends LegacyGeneration> = string;
export type V1Operation = LegacyOperation<'v1'>;
export type V2Operation = LegacyOperation<'v2'>;

function isRecord(value: unknown): value is Readonly<Record<string, unknown>> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** v2's operations in declaration order, and the operations v1's changes remove. */
async function declaredOperations(): Promise<Readonly<Record<LegacyGeneration, readonly string[]>>> {
  const location = mappingsLocation(import.meta.url);
  const v2 = await importExport(location, { file: 'endpoints.v2', export: 'V2_ENDPOINTS' });
  const v1 = await importExport(location, { file: 'endpoints.v1', export: 'V1_ENDPOINTS' });
  if (!isRecord(v2)) throw new LegacyMappingError('mappings/endpoints.v2', ['V2_ENDPOINTS is not a table']);
  const changes = isRecord(v1) && Array.isArray(v1['changes']) ? (v1['changes'] as readonly unknown[]) : [];
  const removed = new Set(
    changes.flatMap((change) =>
      isRecord(change) && change['kind'] === 'operation-removed' && typeof change['operation'] === 'string'
        ? [change['operation']]
        : [],
    ),
  );
  const v2Operations = Object.keys(v2);
  return { v1: v2Operations.filter((operation) => !removed.has(operation)), v2: v2Operations };
}

export const LEGACY_OPERATIONS: Readonly<Record<LegacyGeneration, readonly string[]>> = await declaredOperations();

export const LEGACY_GENERATIONS: readonly LegacyGeneration[] = ['v1', 'v2'];

export function isLegacyOperation<G extends LegacyGeneration>(generation: G, name: string): name is LegacyOperation<G> {
  return LEGACY_OPERATIONS[generation].includes(name);
}

/** The legacy route of an operation in fastify's syntax: `trade/{id}` in v1 is `/v1/brokerage/:orgId/trade/:id`. */
export function legacyRoutePath(generation: LegacyGeneration, operation: string): string {
  return `/${generation}/brokerage/:orgId/${operation.replaceAll(/\{([A-Za-z]+)\}/g, ':$1')}`;
}
