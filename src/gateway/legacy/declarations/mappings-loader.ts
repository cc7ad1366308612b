/**
 * Loads the legacy declarations of `mappings/` and validates them, so the gateway refuses to
 * start with a table that is incomplete or wrong. Part of the legacy layer; the one module that
 * knows where the tables are.
 *
 * Where they are: `mappings/*.ts` at the repository root is their source. Running from source
 * (vitest, tsx: this module is `src/gateway/legacy/declarations/mappings-loader.ts`) they are imported from
 * there. Built, this module is `dist/gateway/legacy/mappings-loader.js` and the tables are
 * `dist/mappings/*.js`, compiled by `mappings/tsconfig.build.json` (the main build's rootDir is
 * `src`, so it cannot emit them). The tables import nothing at run time (only `import type`), so
 * the compiled files stand alone. The import is dynamic because the two places differ in depth;
 * the loaded modules are treated as unknown input and typed only by the validators.
 */

import { LegacyMappingError } from '../../../lib/errors/internal-errors.js';
import { CONVERTERS, derivedFieldNames } from '../transforms/derived-fields.js';
import { REQUEST_CHECKS } from '../transforms/request-body.js';
import { type BlockerTable, validateBlockers } from './blockers.js';
import { type LegacyConventions, validateConventions } from './conventions.js';
import { type EndpointTable, validateEndpointTable } from './endpoint-mappings.js';
import {
  applyV1ErrorChanges,
  describeV1ErrorChanges,
  type LegacyErrorTables,
  type V1ErrorChangeLine,
  validateErrorTables,
} from './error-tables.js';
import {
  applyGenerationChanges,
  applyRecordChanges,
  type GenerationChange,
  parseRecordChanges,
  type RecordChange,
} from './generation-changes.js';
import { importExport, type MappingsLocation, mappingsLocation } from './mappings-location.js';
import {
  type RecordCodeRegistry,
  type RecordTable,
  validateRecords,
  validateValueMaps,
  type ValueMapTable,
} from './record-shapes.js';
import { type LegacyWebhookTable, validateWebhookTable } from './webhook-shapes.js';

export interface LegacyMappings {
  readonly conventions: LegacyConventions;
  readonly maps: ValueMapTable;
  /** The records as v2 answers them (`recordsOf.v2`). */
  readonly records: RecordTable;
  /**
   * Each generation's records, the result of its chain: v2's are records.ts's with v2's record
   * changes (`V2_RECORD_CHANGES`), v1's are v2's with the record changes among v1's changes.
   */
  readonly recordsOf: { readonly v1: RecordTable; readonly v2: RecordTable };
  /** v2's record changes, for the docs and the changelog. */
  readonly v2RecordChanges: readonly RecordChange[];
  readonly errors: { readonly v1: LegacyErrorTables<'v1'>; readonly v2: LegacyErrorTables<'v2'> };
  readonly endpoints: { readonly v1: EndpointTable<'v1'>; readonly v2: EndpointTable<'v2'> };
  /** v1 as declared: its changes from v2, for the docs and the changelog. */
  readonly v1Changes: readonly GenerationChange[];
  /** Where v1's error answers differ from v2's, each with its reason, for the docs and the changelog. */
  readonly v1ErrorChanges: readonly V1ErrorChangeLine[];
  /** The legacy webhooks the gateway delivers. */
  readonly webhooks: LegacyWebhookTable;
  /** What would break on the next generation, checked per request for the readiness report. */
  readonly blockers: BlockerTable;
}

/** The code the declarations may name; the shipped registries unless a test gives its own. */
export interface MappingCode extends RecordCodeRegistry {
  readonly checks: Iterable<string>;
}

export const SHIPPED_CODE: MappingCode = {
  derived: derivedFieldNames(),
  converters: Object.keys(CONVERTERS),
  checks: Object.keys(REQUEST_CHECKS),
};

export { type MappingsLocation, mappingsLocation } from './mappings-location.js';

/** The tables' modules and the export each must have. */
export const MAPPING_MODULES = {
  conventions: { file: 'conventions', export: 'LEGACY_CONVENTIONS' },
  valueMaps: { file: 'value-maps', export: 'VALUE_MAPS' },
  records: { file: 'records', export: 'LEGACY_RECORDS' },
  recordChangesV2: { file: 'records', export: 'V2_RECORD_CHANGES' },
  errorsV1: { file: 'errors.v1', export: 'V1_ERROR_CHANGES' },
  errorsV2: { file: 'errors.v2', export: 'V2_ERROR_TABLES' },
  endpointsV1: { file: 'endpoints.v1', export: 'V1_ENDPOINTS' },
  endpointsV2: { file: 'endpoints.v2', export: 'V2_ENDPOINTS' },
  webhooks: { file: 'webhooks', export: 'LEGACY_WEBHOOKS' },
  blockers: { file: 'blockers', export: 'MIGRATION_BLOCKERS' },
} as const;

export type MappingModuleName = keyof typeof MAPPING_MODULES;
type ModuleName = MappingModuleName;

/**
 * Imports and validates every table against the error catalog, the v3 contract and the code the
 * declarations name; v1's endpoints and errors are v2's with v1's declared changes applied. Throws
 * LegacyMappingError, whose message lists every problem of the first table that has any.
 */
export async function loadLegacyMappings(
  location: MappingsLocation = mappingsLocation(),
  code: MappingCode = SHIPPED_CODE,
): Promise<LegacyMappings> {
  const names = Object.keys(MAPPING_MODULES) as ModuleName[];
  const loaded = Object.fromEntries(
    await Promise.all(names.map(async (name) => [name, await importExport(location, MAPPING_MODULES[name])] as const)),
  ) as Record<ModuleName, unknown>;
  return compileLegacyMappings(loaded, code);
}

/**
 * Validates and compiles the tables as loaded (each module's export, unknown input): the work of
 * loadLegacyMappings once the modules are imported. Tests pass an edited copy of the shipped
 * declarations to see a change go through every consumer.
 */
export function compileLegacyMappings(
  loaded: Readonly<Record<MappingModuleName, unknown>>,
  code: MappingCode = SHIPPED_CODE,
): LegacyMappings {
  const conventions = validateConventions(loaded.conventions);
  const maps = validateValueMaps(loaded.valueMaps);
  const base = validateRecords(loaded.records, maps, code);
  const v2RecordChanges = parseRecordChanges(loaded.recordChangesV2, 'mappings/records (V2_RECORD_CHANGES)');
  const recordsV2 = validateRecords(
    applyRecordChanges(base, v2RecordChanges, 'mappings/records (V2_RECORD_CHANGES)'),
    maps,
    code,
    'mappings/records (v2, its record changes applied)',
  );
  const v2 = validateEndpointTable('v2', loaded.endpointsV2, { records: recordsV2, maps, checks: code.checks });
  const v1 = applyGenerationChanges('v1', v2, loaded.endpointsV1);
  if (v1.base !== 'v2')
    throw new LegacyMappingError('mappings/endpoints.v1', [`base: v1 is written against v2, not ${v1.base}`]);
  const recordsV1 = validateRecords(
    applyRecordChanges(recordsV2, v1.changes, 'mappings/endpoints.v1'),
    maps,
    code,
    'mappings/records (v1, its record changes applied)',
  );
  const errorsV2 = validateErrorTables('v2', loaded.errorsV2);
  const endpoints = {
    v1: validateEndpointTable('v1', v1.table, { records: recordsV1, maps, checks: code.checks }),
    v2,
  };
  return {
    conventions,
    maps,
    records: recordsV2,
    recordsOf: { v1: recordsV1, v2: recordsV2 },
    v2RecordChanges,
    errors: { v1: validateErrorTables('v1', applyV1ErrorChanges(errorsV2, loaded.errorsV1)), v2: errorsV2 },
    endpoints,
    v1Changes: v1.changes,
    v1ErrorChanges: describeV1ErrorChanges(errorsV2, loaded.errorsV1),
    webhooks: validateWebhookTable(loaded.webhooks, maps, code),
    blockers: validateBlockers(loaded.blockers, endpoints),
  };
}
