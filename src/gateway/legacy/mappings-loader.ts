/**
 * Loads the legacy mapping tables of `mappings/` and validates them, so the gateway refuses to
 * start with a table that is incomplete or wrong (issue 5).
 *
 * Where the tables are: `mappings/*.ts` at the repository root is their source. Running from
 * source (vitest, tsx: this module is `src/gateway/legacy/mappings-loader.ts`) they are imported
 * from there. Built, this module is `dist/gateway/legacy/mappings-loader.js` and the tables are
 * `dist/mappings/*.js`, compiled by `mappings/tsconfig.build.json` (the main build's rootDir is
 * `src`, so it cannot emit them). The tables import nothing at run time (only `import type`), so
 * the compiled files stand alone. The import is dynamic because the two places differ in depth;
 * the loaded modules are treated as unknown input and typed only by the validators.
 */
import { type EndpointTable, type TransformRegistry, validateEndpointTable } from './endpoint-mappings.js';
import { type LegacyErrorTables, validateErrorTables } from './error-tables.js';
import { LegacyMappingError } from './mapping-error.js';

export interface LegacyMappings {
  readonly errors: { readonly v1: LegacyErrorTables<'v1'>; readonly v2: LegacyErrorTables<'v2'> };
  readonly endpoints: { readonly v1: EndpointTable<'v1'>; readonly v2: EndpointTable<'v2'> };
}

export interface MappingsLocation {
  /** The folder holding errors.v1, errors.v2, endpoints.v1 and endpoints.v2. */
  readonly directory: URL;
  /** `.ts` from source, `.js` built. */
  readonly extension: '.ts' | '.js';
}

/** Where the tables are, seen from this module's own URL (source or built layout). */
export function mappingsLocation(moduleUrl: string = import.meta.url): MappingsLocation {
  return moduleUrl.endsWith('.ts')
    ? { directory: new URL('../../../mappings/', moduleUrl), extension: '.ts' }
    : { directory: new URL('../../mappings/', moduleUrl), extension: '.js' };
}

/** The tables' modules and the export each must have. */
export const MAPPING_MODULES = {
  errorsV1: { file: 'errors.v1', export: 'V1_ERROR_TABLES' },
  errorsV2: { file: 'errors.v2', export: 'V2_ERROR_TABLES' },
  endpointsV1: { file: 'endpoints.v1', export: 'V1_ENDPOINTS' },
  endpointsV2: { file: 'endpoints.v2', export: 'V2_ENDPOINTS' },
} as const;

async function importExport(location: MappingsLocation, module: { readonly file: string; readonly export: string }): Promise<unknown> {
  const url = new URL(`${module.file}${location.extension}`, location.directory);
  let namespace: Record<string, unknown>;
  try {
    namespace = (await import(url.href)) as Record<string, unknown>;
  } catch (error) {
    throw new LegacyMappingError(`mappings/${module.file}`, [`cannot be loaded from ${url.href}: ${error instanceof Error ? error.message : String(error)}`]);
  }
  if (!Object.hasOwn(namespace, module.export)) throw new LegacyMappingError(`mappings/${module.file}`, [`exports no ${module.export}`]);
  return namespace[module.export];
}

/**
 * Imports and validates all four tables against the error catalog, the v3 contract and the
 * registered transform names. Throws LegacyMappingError, whose message lists every problem.
 */
export async function loadLegacyMappings(registry: TransformRegistry, location: MappingsLocation = mappingsLocation()): Promise<LegacyMappings> {
  const [errorsV1, errorsV2, endpointsV1, endpointsV2] = await Promise.all([
    importExport(location, MAPPING_MODULES.errorsV1),
    importExport(location, MAPPING_MODULES.errorsV2),
    importExport(location, MAPPING_MODULES.endpointsV1),
    importExport(location, MAPPING_MODULES.endpointsV2),
  ]);
  return {
    errors: { v1: validateErrorTables('v1', errorsV1), v2: validateErrorTables('v2', errorsV2) },
    endpoints: { v1: validateEndpointTable('v1', endpointsV1, registry), v2: validateEndpointTable('v2', endpointsV2, registry) },
  };
}
