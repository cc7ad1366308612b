/**
 * loadLegacyMappings, the one module that knows where the declarations are: it finds them from
 * source (mappings/*.ts) and built (dist/mappings/*.js), loads and validates every table (v1's
 * endpoints and errors as v2's with v1's declared changes), and refuses to start with a table
 * that is broken, naming that table and its problem. Broken tables are temporary copies of the
 * whole mappings/ folder with one file changed in one place.
 */
import { execFile } from 'node:child_process';
import { copyFile, mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { promisify } from 'node:util';

import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { MIGRATION_BLOCKERS } from '../../../../mappings/blockers.js';
import { LEGACY_CONVENTIONS } from '../../../../mappings/conventions.js';
import { V1_ENDPOINTS } from '../../../../mappings/endpoints.v1.js';
import { V2_ENDPOINTS } from '../../../../mappings/endpoints.v2.js';
import { V1_ERROR_CHANGES } from '../../../../mappings/errors.v1.js';
import { V2_ERROR_TABLES } from '../../../../mappings/errors.v2.js';
import { LEGACY_RECORDS } from '../../../../mappings/records.js';
import { VALUE_MAPS } from '../../../../mappings/value-maps.js';
import { applyV1ErrorChanges } from '../../../../src/gateway/legacy/declarations/error-tables.js';
import { applyGenerationChanges } from '../../../../src/gateway/legacy/declarations/generation-changes.js';
import { LEGACY_OPERATIONS } from '../../../../src/gateway/legacy/declarations/legacy-operations.js';
import {
  loadLegacyMappings,
  MAPPING_MODULES,
  type MappingsLocation,
  mappingsLocation,
  SHIPPED_CODE,
} from '../../../../src/gateway/legacy/declarations/mappings-loader.js';
import { LegacyMappingError } from '../../../../src/lib/errors/internal-errors.js';
import { ERROR_CODES } from '../../../../src/lib/errors/v3-error-catalog.js';

const MAPPINGS = fileURLToPath(new URL('../../../../mappings/', import.meta.url));

let scratch: string;
beforeAll(async () => {
  scratch = await mkdtemp(path.join(tmpdir(), 'fxgate-mappings-'));
});
afterAll(async () => {
  if (scratch) await rm(scratch, { recursive: true, force: true });
});

interface Breakage {
  /** The file of mappings/ to change, e.g. `records.ts`. */
  readonly file: string;
  /** Text that occurs exactly once in it, and what it becomes (null: the file is removed). */
  readonly replace: string;
  readonly by: string | null;
}

/** A copy of every file of mappings/ in a fresh folder, with at most one change. */
async function copyOfMappings(breakage?: Breakage): Promise<MappingsLocation> {
  const directory = await mkdtemp(path.join(scratch, 'copy-'));
  for (const name of await readdir(MAPPINGS)) await copyFile(path.join(MAPPINGS, name), path.join(directory, name));
  if (breakage) {
    const target = path.join(directory, breakage.file);
    const text = await readFile(target, 'utf8');
    // The change must hit exactly one place, or the test would prove something else.
    expect(text.split(breakage.replace)).toHaveLength(2);
    if (breakage.by === null) await rm(target);
    else await writeFile(target, text.replace(breakage.replace, breakage.by));
  }
  return { directory: pathToFileURL(`${directory}/`), extension: '.ts' };
}

async function refusal(location: MappingsLocation, code = SHIPPED_CODE): Promise<LegacyMappingError> {
  try {
    await loadLegacyMappings(location, code);
  } catch (error) {
    expect(error).toBeInstanceOf(LegacyMappingError);
    return error as LegacyMappingError;
  }
  throw new Error('expected a LegacyMappingError');
}

describe('where the declarations are', () => {
  it('from source: mappings/*.ts at the repository root', () => {
    expect(mappingsLocation('file:///app/src/gateway/legacy/declarations/mappings-loader.ts')).toEqual({
      directory: new URL('file:///app/mappings/'),
      extension: '.ts',
    });
    expect(mappingsLocation()).toEqual({ directory: pathToFileURL(MAPPINGS), extension: '.ts' });
  });

  it('built: dist/mappings/*.js beside dist/gateway', () => {
    expect(mappingsLocation('file:///app/dist/gateway/legacy/declarations/mappings-loader.js')).toEqual({
      directory: new URL('file:///app/dist/mappings/'),
      extension: '.js',
    });
  });

  it('every module of mappings/ is loaded, each for its export', async () => {
    const files = (await readdir(MAPPINGS))
      .filter((name) => name.endsWith('.ts'))
      .map((name) => name.replace(/\.ts$/, ''));
    expect([...new Set(Object.values(MAPPING_MODULES).map((module) => module.file))].sort()).toEqual(files.sort());
  });
});

describe('loading the shipped declarations', () => {
  it('loads and validates them from source', async () => {
    const mappings = await loadLegacyMappings();
    expect(mappings.conventions).toEqual(LEGACY_CONVENTIONS);
    expect(mappings.maps).toEqual(VALUE_MAPS);
    expect(mappings.records).toEqual(LEGACY_RECORDS);
    expect(Object.keys(mappings.endpoints.v2)).toEqual([...LEGACY_OPERATIONS.v2]);
    expect(Object.keys(mappings.endpoints.v1)).toEqual([...LEGACY_OPERATIONS.v1]);
    expect(mappings.endpoints.v1).toEqual(applyGenerationChanges('v1', V2_ENDPOINTS, V1_ENDPOINTS).table);
    expect(mappings.v1Changes).toEqual(V1_ENDPOINTS.changes);
    expect(Object.keys(mappings.errors.v2.byCode).sort()).toEqual([...ERROR_CODES].sort());
    expect(mappings.errors.v1).toEqual(applyV1ErrorChanges(V2_ERROR_TABLES, V1_ERROR_CHANGES));
    expect(mappings.blockers).toEqual(MIGRATION_BLOCKERS);
  });

  it('loads an unchanged copy of the folder (the copies below differ from it in one place only)', async () => {
    const mappings = await loadLegacyMappings(await copyOfMappings());
    expect(mappings).toEqual(await loadLegacyMappings());
  });

  it('loads them as the build emits them: compiled by mappings/tsconfig.build.json, importing nothing', async () => {
    const outDir = await mkdtemp(path.join(scratch, 'dist-'));
    const tsc = createRequire(import.meta.url).resolve('typescript/bin/tsc');
    await promisify(execFile)(process.execPath, [
      tsc,
      '-p',
      path.join(MAPPINGS, 'tsconfig.build.json'),
      '--outDir',
      outDir,
    ]);
    for (const module of Object.values(MAPPING_MODULES))
      expect(await readFile(path.join(outDir, `${module.file}.js`), 'utf8')).not.toMatch(/^import /m);
    const mappings = await loadLegacyMappings({ directory: pathToFileURL(`${outDir}/`), extension: '.js' });
    expect(mappings).toEqual(await loadLegacyMappings());
  }, 60_000);
});

describe('refusing a broken declaration, naming its table', () => {
  it.each([
    [
      'a record field derived by code nothing registers',
      {
        file: 'records.ts',
        replace: "computedAmount: {\n        type: 'amount',\n        derived: 'counterAmount',",
        by: "computedAmount: {\n        type: 'amount',\n        derived: 'otherAmount',",
      },
      'mappings/records is not a valid legacy mapping table (1 problem):\n- trade.fields.computedAmount.derived: no derived field otherAmount is registered for the v3 trade record',
    ],
    [
      'a value map giving one word to two v3 values',
      { file: 'value-maps.ts', replace: "DISABLED: 'Disabled' }", by: "DISABLED: 'pending' }" },
      'mappings/value-maps is not a valid legacy mapping table (1 problem):\n- addressStatus.values.DISABLED: pending is already the word for PENDING_VERIFICATION',
    ],
    [
      'page defaults outside their bounds',
      { file: 'conventions.ts', replace: 'limit: { default: 10,', by: 'limit: { default: 100,' },
      'mappings/conventions is not a valid legacy mapping table (1 problem):\n- pagination: limit.default must lie from limit.min to limit.max',
    ],
    [
      'a v2 endpoint calling a path v3 lacks',
      { file: 'endpoints.v2.ts', replace: "path: '/v3/fx/pairs'", by: "path: '/v3/fx/markets'" },
      'mappings/endpoints.v2 is not a valid legacy mapping table (1 problem):\n- available_markets.v3.pairs: /v3/fx/markets is not a v3 path',
    ],
    [
      'a v1 change removing an operation v2 lacks',
      { file: 'endpoints.v1.ts', replace: "operation: 'trade/settle'", by: "operation: 'trade/cancel'" },
      'mappings/endpoints.v1 is not a valid legacy mapping table (1 problem):\n- changes[2].operation: v2 has no operation trade/cancel',
    ],
    [
      'v1 written against another generation than v2',
      { file: 'endpoints.v1.ts', replace: "base: 'v2'", by: "base: 'v1'" },
      'mappings/endpoints.v1 is not a valid legacy mapping table (1 problem):\n- base: v1 is written against v2, not v1',
    ],
    [
      'a v2 error row without its note',
      {
        file: 'errors.v2.ts',
        replace: "    note: 'A malformed header is a bad request; v2 has one 400 for all of them.',\n",
        by: '',
      },
      'mappings/errors.v2 is not a valid legacy mapping table (1 problem):\n- byCode.VALIDATION_HEADER_FAILED.note: Invalid input: expected string, received undefined',
    ],
    [
      'a blocker watching a query parameter its operation refuses already',
      { file: 'blockers.ts', replace: "parameters: ['page'] }", by: "parameters: ['offset'] }" },
      'mappings/blockers is not a valid legacy mapping table (5 problems):\n' +
        [
          ['trades', 'page, limit'],
          ['deposits', 'page, limit, currency'],
          ['withdrawal_addresses', 'page, limit, verified, status, coinNetwork, coin'],
          ['fiat_withdrawal_addresses', 'page, limit, verified, status, currency'],
          ['withdrawals', 'page, limit'],
        ]
          .map(
            ([name, taken]) =>
              `- page-number-paging.detect.parameters: ${name} takes no query parameter offset (it takes ${taken}): a request naming it is refused already`,
          )
          .join('\n'),
    ],
    [
      'a module without its export',
      { file: 'value-maps.ts', replace: 'export const VALUE_MAPS', by: 'export const VALUE_MAP' },
      'mappings/value-maps is not a valid legacy mapping table (1 problem):\n- exports no VALUE_MAPS',
    ],
  ])('%s', async (_breakage, breakage, message) => {
    const error = await refusal(await copyOfMappings(breakage));
    expect(error.message).toBe(message);
  });

  it('v1 endpoints that, once its changes apply, break a v1 rule: v1 is validated as served', async () => {
    const error = await refusal(
      await copyOfMappings({
        file: 'endpoints.v1.ts',
        replace:
          "    {\n      kind: 'idempotency',\n      method: 'GET',\n      becomes: 'none',\n      source: 'spec',\n      reason: 'v1 reads never took an Idempotency-Key.',\n    },\n",
        by: '',
      }),
    );
    expect(error.table).toBe('mappings/endpoints.v1');
    const gets = LEGACY_OPERATIONS.v1.filter(
      (operation) => V2_ENDPOINTS[operation as keyof typeof V2_ENDPOINTS].method === 'GET',
    );
    expect(error.problems).toEqual(gets.map((operation) => `${operation}.idempotency: v1 reads take no key`));
  });

  it('a v1 error change the validator refuses', async () => {
    const error = await refusal(
      await copyOfMappings({
        file: 'errors.v1.ts',
        replace: 'from: 503,\n    to: 500,',
        by: 'from: 503,\n    to: 503,',
      }),
    );
    expect(error.table).toBe('mappings/errors.v1');
    expect(error.problems).toEqual([expect.stringMatching(/^changes\.3\.to: /)]);
  });

  it('a module that is not there', async () => {
    const error = await refusal(
      await copyOfMappings({ file: 'records.ts', replace: 'export const LEGACY_RECORDS', by: null }),
    );
    expect(error.table).toBe('mappings/records');
    expect(error.problems).toEqual([expect.stringMatching(/^cannot be loaded from file:\/\/.*\/records\.ts: /)]);
  });

  it('a declaration naming code the registry lacks', async () => {
    const noChecks = await refusal(mappingsLocation(), { ...SHIPPED_CODE, checks: [] });
    expect(noChecks.table).toBe('mappings/endpoints.v2');
    expect(noChecks.problems).toEqual([
      'generate_quote.request.checks: no request check is registered as buyDiffersFromSell',
      'generate_quote.request.checks: no request check is registered as referencedUnitIsASide',
    ]);
    const noConverters = await refusal(mappingsLocation(), { ...SHIPPED_CODE, converters: [] });
    expect(noConverters.table).toBe('mappings/records');
    expect(noConverters.problems).toEqual([
      'withdrawalAddress.fields.coinId.convert: no converter is registered as coinUuid',
      'withdrawalAddress.fields.coinNetworkId.convert: no converter is registered as networkUuid',
    ]);
  });
});
