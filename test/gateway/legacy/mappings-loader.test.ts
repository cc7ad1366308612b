import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { V1_ENDPOINTS } from '../../../mappings/endpoints.v1.js';
import { V2_ENDPOINTS } from '../../../mappings/endpoints.v2.js';
import { V1_ERROR_TABLES } from '../../../mappings/errors.v1.js';
import { V2_ERROR_TABLES } from '../../../mappings/errors.v2.js';
import { type EndpointMapping, type TransformRegistry, transformNames } from '../../../src/gateway/legacy/endpoint-mappings.js';
import { LegacyMappingError } from '../../../src/gateway/legacy/mapping-error.js';
import { MAPPING_MODULES, type MappingsLocation, loadLegacyMappings, mappingsLocation } from '../../../src/gateway/legacy/mappings-loader.js';

const names = [transformNames(V1_ENDPOINTS as Record<string, EndpointMapping>), transformNames(V2_ENDPOINTS as Record<string, EndpointMapping>)];
const REGISTRY: TransformRegistry = { request: names.flatMap((entry) => entry.request), response: names.flatMap((entry) => entry.response) };

/** Writes the four tables as plain ES modules, as the build emits them into dist/mappings. */
async function writeCompiledTables(directory: string, change: (tables: Record<string, unknown>) => void = () => {}): Promise<MappingsLocation> {
  const tables: Record<string, unknown> = structuredClone({
    V1_ERROR_TABLES,
    V2_ERROR_TABLES,
    V1_ENDPOINTS,
    V2_ENDPOINTS,
  });
  change(tables);
  for (const module of Object.values(MAPPING_MODULES)) {
    const body = Object.hasOwn(tables, module.export) ? `export const ${module.export} = ${JSON.stringify(tables[module.export])};\n` : 'export {};\n';
    await writeFile(path.join(directory, `${module.file}.js`), body);
  }
  return { directory: pathToFileURL(`${directory}/`), extension: '.js' };
}

describe('where the mapping tables are', () => {
  it('from source: mappings/*.ts at the repository root', () => {
    expect(mappingsLocation('file:///app/src/gateway/legacy/mappings-loader.ts')).toEqual({ directory: new URL('file:///app/mappings/'), extension: '.ts' });
    expect(mappingsLocation().directory.href).toBe(pathToFileURL(path.resolve('mappings')).href + '/');
  });

  it('built: dist/mappings/*.js beside dist/gateway', () => {
    expect(mappingsLocation('file:///app/dist/gateway/legacy/mappings-loader.js')).toEqual({ directory: new URL('file:///app/dist/mappings/'), extension: '.js' });
  });
});

describe('loading the mapping tables', () => {
  let directory: string;
  beforeAll(async () => {
    directory = await mkdtemp(path.join(tmpdir(), 'fxgate-mappings-'));
  });
  afterAll(async () => {
    if (directory) await rm(directory, { recursive: true, force: true });
  });

  it('loads and validates the shipped tables from source', async () => {
    const mappings = await loadLegacyMappings(REGISTRY);
    expect(Object.keys(mappings.errors.v1.byCode)).toHaveLength(62);
    expect(Object.keys(mappings.errors.v2.byCode)).toHaveLength(62);
    expect(Object.keys(mappings.endpoints.v1)).toHaveLength(8);
    expect(Object.keys(mappings.endpoints.v2)).toHaveLength(14);
  });

  it('refuses to start while a named transform is not registered', async () => {
    await expect(loadLegacyMappings({ request: [], response: [] })).rejects.toThrow(/no response transform is registered as/);
  });

  it('loads the tables as the build emits them (plain modules, no imports)', async () => {
    const location = await writeCompiledTables(await mkdtemp(path.join(directory, 'ok-')));
    const mappings = await loadLegacyMappings(REGISTRY, location);
    expect(mappings.errors.v2.byCode.IDEMPOTENCY_UNAVAILABLE.error?.code).toBe('IDEMPOTENCY_SERVICE_UNAVAILABLE');
  });

  it('fails with a clear error when a table lacks a code', async () => {
    const location = await writeCompiledTables(await mkdtemp(path.join(directory, 'missing-code-')), (tables) => {
      delete (tables.V2_ERROR_TABLES as { byCode: Record<string, unknown> }).byCode.WITHDRAWAL_INSUFFICIENT_BALANCE;
    });
    const failure = loadLegacyMappings(REGISTRY, location);
    await expect(failure).rejects.toBeInstanceOf(LegacyMappingError);
    await expect(failure).rejects.toThrow('mappings/errors.v2 is not a valid legacy mapping table (1 problem):\n- byCode: no row for v3 error code WITHDRAWAL_INSUFFICIENT_BALANCE');
  });

  it('fails with a clear error when a module lacks its export, or is not there', async () => {
    const location = await writeCompiledTables(await mkdtemp(path.join(directory, 'no-export-')), (tables) => {
      delete tables.V1_ENDPOINTS;
    });
    await expect(loadLegacyMappings(REGISTRY, location)).rejects.toThrow('mappings/endpoints.v1 is not a valid legacy mapping table (1 problem):\n- exports no V1_ENDPOINTS');
    const nowhere: MappingsLocation = { directory: pathToFileURL(`${path.join(directory, 'nowhere')}/`), extension: '.js' };
    await expect(loadLegacyMappings(REGISTRY, nowhere)).rejects.toThrow(/cannot be loaded from file:/);
  });
});
