/**
 * Where the declarations of `mappings/` are, seen from a module of this folder: the repository's
 * `mappings/*.ts` running from source, `dist/mappings/*.js` built (mappings-loader.ts says why).
 * Part of the legacy layer; imports nothing, so the operation catalog can read the endpoint
 * declarations before anything else of the layer is loaded.
 */

export interface MappingsLocation {
  /** The folder holding the mapping modules. */
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
