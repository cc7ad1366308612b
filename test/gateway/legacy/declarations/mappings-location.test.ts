/**
 * Where the declarations are, and the import of one export of them: the source and built
 * layouts, and a module that does not load or lacks the export named as a LegacyMappingError.
 */

import { describe, expect, it } from 'vitest';

import { importExport, mappingsLocation } from '../../../../src/gateway/legacy/declarations/mappings-location.js';
import { LegacyMappingError } from '../../../../src/lib/errors/internal-errors.js';

describe('mappingsLocation and importExport', () => {
  it('finds mappings/*.ts from source and dist/mappings/*.js built', () => {
    expect(mappingsLocation('file:///repo/src/gateway/legacy/declarations/mappings-location.ts')).toEqual({
      directory: new URL('file:///repo/mappings/'),
      extension: '.ts',
    });
    expect(mappingsLocation('file:///app/dist/gateway/legacy/declarations/mappings-location.js')).toEqual({
      directory: new URL('file:///app/dist/mappings/'),
      extension: '.js',
    });
  });

  it('imports the export named, and names the module that does not load or lacks it', async () => {
    const location = mappingsLocation();
    await expect(importExport(location, { file: 'endpoints.v1', export: 'V1_ENDPOINTS' })).resolves.toHaveProperty(
      'base',
      'v2',
    );
    await expect(importExport(location, { file: 'endpoints.v1', export: 'V9_ENDPOINTS' })).rejects.toThrow(
      new LegacyMappingError('mappings/endpoints.v1', ['exports no V9_ENDPOINTS']),
    );
    await expect(importExport(location, { file: 'no-such-table', export: 'X' })).rejects.toBeInstanceOf(
      LegacyMappingError,
    );
  });
});
