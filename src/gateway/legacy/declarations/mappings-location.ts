/**
 * Where the declarations of `mappings/` are, seen from a module of this folder (the repository's
 * `mappings/*.ts` running from source, `dist/mappings/*.js` built: mappings-loader.ts says why),
 * and the import of one export of them. Part of the legacy layer; imports only the mapping error,
 * so the operation catalog can read the endpoint declarations before the rest of the layer loads.
 */

import { LegacyMappingError } from '../../../lib/errors/internal-errors.js';

export interface MappingsLocation {
  /** The folder holding the mapping modules. */
  readonly directory: URL;
  /** `.ts` from source, `.js` built. */
  readonly extension: '.ts' | '.js';
}

/** Where the tables are, seen from this module's own URL (source or built layout). */
export function mappingsLocation(moduleUrl: string = import.meta.url): MappingsLocation {
  return moduleUrl.endsWith('.ts')
    ? { directory: new URL('../../../../mappings/', moduleUrl), extension: '.ts' }
    : { directory: new URL('../../../mappings/', moduleUrl), extension: '.js' };
}

/** One export of a mappings module, as loaded (unknown input); a module that does not load or lacks it is a LegacyMappingError. */
export async function importExport(
  location: MappingsLocation,
  module: { readonly file: string; readonly export: string },
): Promise<unknown> {
  const url = new URL(`${module.file}${location.extension}`, location.directory);
  let namespace: Record<string, unknown>;
  try {
    namespace = (await import(url.href)) as Record<string, unknown>;
  } catch (error) {
    throw new LegacyMappingError(`mappings/${module.file}`, [
      `cannot be loaded from ${url.href}: ${error instanceof Error ? error.message : String(error)}`,
    ]);
  }
  if (!Object.hasOwn(namespace, module.export))
    throw new LegacyMappingError(`mappings/${module.file}`, [`exports no ${module.export}`]);
  return namespace[module.export];
}
