/**
 * Every legacy operation of both generations, end to end, under the gateway's authorization
 * rules: a key without the operation's scope is refused with the legacy 401 on every route (a
 * view-only key reaches no write), a key of one org gets the legacy "not found" on every route
 * of another org, and a key imported from an integrator (its public half only, under its
 * existing name) works on its own org with the token the integrator signs, and on nothing else.
 */
import { generateKeyPairSync, randomUUID } from 'node:crypto';

import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { parseKeyImport, registerImportedKeys } from '../../../../src/cli/key-import.js';
import {
  LEGACY_OPERATIONS,
  type LegacyGeneration,
} from '../../../../src/gateway/legacy/declarations/legacy-operations.js';
import { loadLegacyMappings } from '../../../../src/gateway/legacy/declarations/mappings-loader.js';
import type { Scope } from '../../../../src/lib/auth/credential-vocabulary.js';
import type { LoadedKey } from '../../../../src/lib/keys/key-file.js';
import { legacyToken } from '../../../support/independent-signing.js';
import { idemKey, LegacyHarness } from '../../../support/legacy-harness.js';

const AUTH = {
  status: 'error',
  message: 'The authorization key provided is either invalid or expired, please try again',
};
const NOT_FOUND = { status: 'error', message: 'Route not found' };
const LEGACY_SCOPES: readonly Scope[] = ['view', 'trade', 'withdraw'];

let h: LegacyHarness;
let key: LoadedKey;
const scopes = new Map<string, Scope>();
const methods = new Map<string, 'GET' | 'POST'>();

/** Each operation's route with its parameters filled; a body that would pass, were the caller allowed. */
function requestFor(
  generation: LegacyGeneration,
  operation: string,
): { path: string; body?: string; headers: Record<string, string> } {
  const path = operation.replace('{id}', randomUUID());
  return methods.get(`${generation} ${operation}`) === 'POST'
    ? { path, body: '{}', headers: { 'idempotency-key': idemKey() } }
    : { path, headers: {} };
}

const CASES = (['v1', 'v2'] as const).flatMap((generation) =>
  LEGACY_OPERATIONS[generation].map((operation) => ({ generation, operation })),
);

beforeAll(async () => {
  h = await LegacyHarness.start();
  key = await h.createKey();
  const mappings = await loadLegacyMappings();
  for (const { generation, operation } of CASES) {
    const mapping = (
      mappings.endpoints[generation] as Readonly<Record<string, { scope: Scope; method: 'GET' | 'POST' }>>
    )[operation]!;
    scopes.set(`${generation} ${operation}`, mapping.scope);
    methods.set(`${generation} ${operation}`, mapping.method);
  }
});
afterAll(async () => {
  await h?.close();
});

describe.each(CASES)('$generation $operation', ({ generation, operation }) => {
  it('a key without its scope gets the legacy 401', async () => {
    const required = scopes.get(`${generation} ${operation}`)!;
    const lacking = await h.createKey({
      scopes: LEGACY_SCOPES.filter((scope) => scope !== required),
      orgId: key.file.orgId,
    });
    const response = await h.call(generation, lacking, requestFor(generation, operation));
    expect(response.status, response.text).toBe(401);
    expect(response.json()).toEqual(AUTH);
  });

  it("a key of another org gets the legacy not-found on this org's route", async () => {
    const response = await h.call(generation, key, { ...requestFor(generation, operation), orgId: randomUUID() });
    expect(response.status, response.text).toBe(generation === 'v1' ? 400 : 404);
    expect(response.json()).toEqual(NOT_FOUND);
  });
});

describe('a key imported from an integrator', () => {
  it('serves its own org with the token the integrator signs, and nothing of another org', async () => {
    const orgId = randomUUID();
    const name = `org/${orgId}/apiKey/${randomUUID()}`;
    const { privateKey, publicKey } = generateKeyPairSync('ec', { namedCurve: 'P-256' });
    const record = {
      name,
      orgId,
      publicKey: publicKey.export({ type: 'spki', format: 'pem' }),
      scopes: ['View', 'Trade'],
      mode: 'Sandbox',
    };
    await registerImportedKeys(h.core.db, parseKeyImport(JSON.stringify(record), 'keys.json'), 'keys.json');

    const integrator = { file: { name }, privateKey };
    const signed = (path: string) =>
      h.send({
        method: 'GET',
        path,
        headers: {
          authorization: `Bearer ${legacyToken(integrator, 110, 'openfx')}`,
          'x-app-mode': 'sandbox',
          'content-type': 'application/json',
        },
      });
    for (const generation of ['v1', 'v2'] as const) {
      const own = await signed(`/${generation}/brokerage/${orgId}/balances`);
      expect(own.status, own.text).toBe(200);
      expect(own.json()).toMatchObject({ status: 'success', data: [] });
      const other = await signed(`/${generation}/brokerage/${key.file.orgId}/balances`);
      expect(other.status).toBe(generation === 'v1' ? 400 : 404);
      expect(other.json()).toEqual(NOT_FOUND);
    }
  });
});
