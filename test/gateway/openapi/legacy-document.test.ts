/**
 * The v1 and v2 OpenAPI documents: valid OpenAPI 3.1, clean under Redocly's recommended lint,
 * generated from mappings/ (operations, filters, bodies, records, error tables, the legacy JWT),
 * describing exactly the legacy routes a live gateway registers (read from the app), and matched
 * by a success of every operation on it.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { oas31 } from 'zod-openapi';

import type { EndpointMapping } from '../../../src/gateway/legacy/declarations/endpoint-mappings.js';
import {
  LEGACY_GENERATIONS,
  LEGACY_OPERATIONS,
  type LegacyGeneration,
  legacyRoutePath,
} from '../../../src/gateway/legacy/declarations/legacy-operations.js';
import { type LegacyMappings, loadLegacyMappings } from '../../../src/gateway/legacy/declarations/mappings-loader.js';
import { buildLegacyDocument } from '../../../src/gateway/openapi/legacy-document.js';
import { routesOf } from '../../../src/lib/http/route-inventory.js';
import { idToLegacyUuid } from '../../../src/lib/ids.js';
import { type OpenApiDocument, openApiPath } from '../../../src/lib/openapi/document.js';
import { FEDWIRE_ACCOUNT, postData, postEmpty, recordTestDeposit } from '../../support/book-fixtures.js';
import { idemKey, LegacyHarness } from '../../support/legacy-harness.js';
import { lintProblems, openApiSchemaErrors } from '../../support/openapi-checks.js';

let mappings: LegacyMappings;
const documents = {} as Record<LegacyGeneration, OpenApiDocument>;

beforeAll(async () => {
  mappings = await loadLegacyMappings();
  for (const generation of LEGACY_GENERATIONS) documents[generation] = buildLegacyDocument(mappings, generation);
});

function operationOf(generation: LegacyGeneration, operation: string): oas31.OperationObject {
  const mapping = (mappings.endpoints[generation] as Readonly<Record<string, EndpointMapping>>)[operation]!;
  return documents[generation].paths![openApiPath(legacyRoutePath(generation, operation))]![
    mapping.method.toLowerCase() as 'get'
  ]!;
}

const jsonSchema = (response: unknown) =>
  (response as oas31.ResponseObject).content!['application/json']!.schema as oas31.SchemaObject;

function documentedOperations(document: OpenApiDocument): string[] {
  return Object.entries(document.paths ?? {}).flatMap(([path, item]) =>
    (['get', 'post'] as const)
      .filter((method) => item[method] !== undefined)
      .map((method) => `${method.toUpperCase()} ${path}`),
  );
}

describe.each(LEGACY_GENERATIONS)('the %s OpenAPI document', (generation) => {
  it('is valid OpenAPI 3.1', async () => {
    expect(await openApiSchemaErrors(documents[generation])).toEqual([]);
  });

  it("passes Redocly's recommended lint without a problem", async () => {
    expect(await lintProblems(documents[generation], generation)).toEqual([]);
  });

  it('describes every operation of the generation, and the document itself', () => {
    const expected = LEGACY_OPERATIONS[generation].map((operation) => {
      const mapping = (mappings.endpoints[generation] as Readonly<Record<string, EndpointMapping>>)[operation]!;
      return `${mapping.method} ${openApiPath(legacyRoutePath(generation, operation))}`;
    });
    expect(documentedOperations(documents[generation]).sort()).toEqual(
      [...expected, `GET /${generation}/openapi.json`].sort(),
    );
  });

  it('authenticates with the legacy bearer JWT and the scope of each mapping', () => {
    expect(documents[generation].components!.securitySchemes).toEqual({
      bearerToken: expect.objectContaining({ type: 'http', scheme: 'bearer', bearerFormat: 'JWT' }),
    });
    for (const operation of LEGACY_OPERATIONS[generation]) {
      const mapping = (mappings.endpoints[generation] as Readonly<Record<string, EndpointMapping>>)[operation]!;
      expect(operationOf(generation, operation).security).toEqual([{ bearerToken: [mapping.scope] }]);
    }
  });

  it('writes request amounts as JSON numbers and answers the declared records in the success envelope', () => {
    const quote = operationOf(generation, 'generate_quote');
    const body = (quote.requestBody as oas31.RequestBodyObject).content['application/json']!
      .schema as oas31.SchemaObject;
    expect(body.properties!.amount).toMatchObject({ type: 'number', exclusiveMinimum: 0 });
    expect(body.required).toEqual(['amount', 'buy', 'sell', 'referencedUnit']);
    const success = jsonSchema(quote.responses!['200']);
    expect(success.properties!.status).toEqual({ type: 'string', const: 'success' });
    expect(success.properties!.message).toEqual({ type: 'string', const: 'Quote generated successfully' });
    expect(success.properties!.data).toMatchObject({ properties: { quote: { $ref: '#/components/schemas/Quote' } } });
    const balance = documents[generation].components!.schemas!.Balance as oas31.SchemaObject;
    expect(balance.properties!.amount).toMatchObject({ type: 'number' });
    expect(balance.additionalProperties).toBe(false);
  });

  it('pages the lists with page, limit and meta.pagination, and declares their filters', () => {
    const addresses = operationOf(generation, 'withdrawal_addresses');
    const names = (addresses.parameters as oas31.ParameterObject[])
      .filter((parameter) => parameter.in === 'query')
      .map((parameter) => parameter.name);
    expect(names).toEqual([
      'page',
      'limit',
      ...Object.keys(mappings.endpoints[generation].withdrawal_addresses!.filters),
    ]);
    expect(jsonSchema(addresses.responses!['200']).required).toContain('meta');
  });

  it("answers the generation's error table for each status", () => {
    const withdrawal = operationOf(generation, 'withdrawal');
    const refused = jsonSchema(withdrawal.responses!['400']);
    expect((refused.properties!.message as oas31.SchemaObject).enum).toEqual(
      expect.arrayContaining([
        'Query validation failed',
        'Insufficient balance for this withdraw.',
        'Checksum verification failed for withdrawal address',
      ]),
    );
    const fiat = jsonSchema(operationOf(generation, 'fiat_withdrawal').responses!['400']);
    expect((fiat.properties!.message as oas31.SchemaObject).enum).toContain(
      'Withdrawal account is not active or verified',
    );
    expect(jsonSchema(withdrawal.responses!['401']).properties!.message).toEqual(
      expect.objectContaining({
        enum: ['The authorization key provided is either invalid or expired, please try again'],
      }),
    );
  });
});

describe('what the generations differ in', () => {
  it('v1 lacks the reversal and settlement operations, is deprecated, and can be retired (410)', () => {
    const v1 = documentedOperations(documents.v1).join('\n');
    expect(v1).not.toContain('trade/reverse');
    expect(documentedOperations(documents.v2).join('\n')).toContain('POST /v2/brokerage/{orgId}/trade/reverse');
    for (const operation of LEGACY_OPERATIONS.v1) {
      expect(operationOf('v1', operation).deprecated).toBe(true);
      expect(operationOf('v1', operation).responses!['410']).toBeDefined();
      expect(operationOf('v2', operation).deprecated).toBeUndefined();
      expect(operationOf('v2', operation).responses!['410']).toBeUndefined();
    }
  });

  it('v1 answers the trade result at the root too, and has no 404, 409, 422 or 503 without an idempotency code', () => {
    const v1Trade = jsonSchema(operationOf('v1', 'trade').responses!['200']);
    const v2Trade = jsonSchema(operationOf('v2', 'trade').responses!['200']);
    expect(Object.keys(v1Trade.properties!)).toEqual([
      'status',
      'message',
      'data',
      'balances',
      'trade',
      'userCreditLimit',
      'userCreditUsed',
    ]);
    expect(Object.keys(v2Trade.properties!)).toEqual(['status', 'message', 'data']);
    expect(Object.keys(operationOf('v1', 'trades').responses!)).not.toContain('404');
    expect(Object.keys(operationOf('v2', 'trades').responses!)).toContain('404');
    const v1Conflict = jsonSchema(operationOf('v1', 'trade').responses!['409']);
    expect(v1Conflict.properties!.error).toMatchObject({ properties: { code: { enum: ['IDEMPOTENCY_IN_FLIGHT'] } } });
  });

  it('v2 requires an Idempotency-Key on writes and honours one on reads; v1 reads take none', () => {
    const key = (generation: LegacyGeneration, operation: string) =>
      (operationOf(generation, operation).parameters as oas31.ParameterObject[]).find(
        (parameter) => parameter.name === 'Idempotency-Key',
      );
    expect(key('v2', 'trade')?.required).toBe(true);
    expect(key('v2', 'trades')?.required).toBe(false);
    expect(key('v1', 'trade')?.required).toBe(false);
    expect(key('v1', 'trades')).toBeUndefined();
  });
});

describe('the legacy routes of a live gateway against the v1 and v2 documents', () => {
  let h: LegacyHarness;
  beforeAll(async () => {
    h = await LegacyHarness.start();
  });
  afterAll(async () => h?.close());

  it.each(LEGACY_GENERATIONS)(
    'answers every documented %s operation with a documented success (each answer held against the document)',
    async (generation) => {
      const key = await h.createKey();
      const orgId = key.file.orgId;
      await recordTestDeposit(h.core.db, { orgId, environment: 'sandbox', currency: 'USD', amount: '10000.00' });
      await recordTestDeposit(h.core.db, { orgId, environment: 'sandbox', currency: 'USDC', amount: '1000.000000' });
      const fiat = await postData(h.core, key, '/v3/fx/withdrawal-accounts', FEDWIRE_ACCOUNT);
      const wallet = await postData(h.core, key, '/v3/fx/withdrawal-accounts', {
        currency: 'USDC',
        assetType: 'STABLECOIN',
        accountName: 'Wallet',
        network: 'ETHEREUM',
        address: '0x5aAeb6053F3E94C9b9A09f33669435E7Ef1BeAed',
      });
      for (const account of [fiat, wallet])
        await postEmpty(h.core, key, `/v3/fx/sandbox/withdrawal-accounts/${account.id}/verify`);
      const answered = new Set<string>();
      /** Calls one operation, expects its success (the harness has held the answer against the document), returns `data`. */
      const call = async (operation: string, path: string, body?: object): Promise<Record<string, unknown>> => {
        const mapping = (mappings.endpoints[generation] as Readonly<Record<string, EndpointMapping>>)[operation]!;
        const headers = mapping.method === 'POST' ? { 'idempotency-key': idemKey() } : {};
        const response = await h.call(generation, key, {
          method: mapping.method,
          path,
          ...(body === undefined ? {} : { body: JSON.stringify(body) }),
          headers,
        });
        expect(response.status, `${generation} ${operation}: ${response.text}`).toBe(200);
        answered.add(`${mapping.method} ${openApiPath(legacyRoutePath(generation, operation))}`);
        return response.json<{ data: Record<string, unknown> }>().data;
      };
      const trade = async () => {
        const { quote } = (await call('generate_quote', 'generate_quote', {
          amount: 10,
          buy: 'EUR',
          sell: 'USD',
          referencedUnit: 'EUR',
        })) as { quote: { id: string } };
        return ((await call('trade', 'trade', { quoteId: quote.id })) as { trade: { id: string } }).trade.id;
      };
      await call('available_markets', 'available_markets');
      const traded = await trade();
      await call('trades', 'trades?limit=5');
      await call('trade/{id}', `trade/${traded}`);
      await call('balances', 'balances');
      await call('deposits', 'deposits?currency=usd');
      await call('withdrawal_addresses', 'withdrawal_addresses?coin=USDC&verified=true');
      await call('fiat_withdrawal_addresses', 'fiat_withdrawal_addresses');
      await call('withdrawal', 'withdrawal', {
        amount: 5,
        currency: 'USDC',
        withdrawalAddressId: idToLegacyUuid('withdrawalAccount', wallet.id!),
      });
      await call('fiat_withdrawal', 'fiat_withdrawal', {
        amount: 5,
        currency: 'USD',
        withdrawalAddressId: idToLegacyUuid('withdrawalAccount', fiat.id!),
      });
      await call('withdrawals', 'withdrawals?page=1&limit=10');
      if (generation === 'v2') {
        const { quote } = (await call('trade/reverse-quote', 'trade/reverse-quote', { tradeId: traded })) as {
          quote: { id: string };
        };
        await call('trade/reverse', 'trade/reverse', { tradeId: traded, quoteId: quote.id });
        await call('trade/settle', 'trade/settle', { tradeId: await trade() });
      }
      expect((await h.send({ path: `/${generation}/openapi.json` })).status).toBe(200);
      answered.add(`GET /${generation}/openapi.json`);
      expect([...answered].sort()).toEqual(documentedOperations(documents[generation]).sort());
    },
  );

  it('registers every documented operation under /v1 and /v2, and no other route there than the fallbacks', () => {
    const routes = routesOf(h.gateway).filter((route) => route.method !== 'HEAD');
    for (const generation of LEGACY_GENERATIONS) {
      const prefix = `/${generation}`;
      const under = routes.filter((route) => route.url === prefix || route.url.startsWith(`${prefix}/`));
      // The generation's "not found" answers everything else under its prefix (every method of /vN and /vN/*).
      const fallbacks = under.filter((route) => route.url === prefix || route.url === `${prefix}/*`);
      expect(new Set(fallbacks.map((route) => route.url))).toEqual(new Set([prefix, `${prefix}/*`]));
      const served = under
        .filter((route) => !fallbacks.includes(route))
        .map((route) => `${route.method} ${openApiPath(route.url)}`);
      expect(served.sort()).toEqual(documentedOperations(documents[generation]).sort());
    }
  });
});
