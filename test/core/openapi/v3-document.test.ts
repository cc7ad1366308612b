/**
 * The v3 OpenAPI document: valid OpenAPI 3.1, clean under Redocly's recommended lint, built from
 * the operations' declarations and the error catalog, describing exactly the routes a live core
 * registers under /v3 (read from the app), and matched by a success of every operation on it.
 */
import { randomUUID } from 'node:crypto';

import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { oas31 } from 'zod-openapi';

import { operationErrorCodes } from '../../../src/core/http/pipeline-errors.js';
import { coreV3Document, declaredCoreOperations } from '../../../src/core/openapi/declared-operations.js';
import { buildV3Document } from '../../../src/core/openapi/v3-document.js';
import { DetachedContextError } from '../../../src/lib/errors/internal-errors.js';
import { ERROR_CATALOG, ERROR_CODES, retryStrategyFor } from '../../../src/lib/errors/v3-error-catalog.js';
import { routesOf } from '../../../src/lib/http/route-inventory.js';
import { type OpenApiDocument, openApiPath } from '../../../src/lib/openapi/document.js';
import { FEDWIRE_ACCOUNT } from '../../support/book-fixtures.js';
import { lintProblems, openApiSchemaErrors } from '../../support/openapi-checks.js';
import { type TestResponse, V3Harness } from '../../support/v3-harness.js';

const document: OpenApiDocument = coreV3Document();
const operations = declaredCoreOperations();

/** `METHOD /path` of every operation the document describes. */
function documentedOperations(doc: OpenApiDocument): string[] {
  return Object.entries(doc.paths ?? {}).flatMap(([path, item]) =>
    (['get', 'post', 'delete', 'put', 'patch'] as const)
      .filter((method) => item[method] !== undefined)
      .map((method) => `${method.toUpperCase()} ${path}`),
  );
}

function operationOf(method: string, path: string): oas31.OperationObject {
  const operation = document.paths?.[openApiPath(path)]?.[method.toLowerCase() as 'get'];
  if (operation === undefined) throw new Error(`${method} ${path} is not in the document`);
  return operation;
}

/** The `error.code` constants a response's schema admits. */
function documentedCodes(response: oas31.ResponseObject | oas31.ReferenceObject): string[] {
  const schema = (response as oas31.ResponseObject).content?.['application/json']?.schema as
    oas31.SchemaObject | oas31.ReferenceObject;
  const members = 'anyOf' in schema && schema.anyOf ? schema.anyOf : [schema];
  return members.map((member) => {
    const name = (member as oas31.ReferenceObject).$ref.split('/').at(-1)!;
    const component = document.components!.schemas![name] as oas31.SchemaObject;
    return ((component.properties!.error as oas31.SchemaObject).properties!.code as oas31.SchemaObject).const as string;
  });
}

describe('the v3 OpenAPI document', () => {
  it('is valid OpenAPI 3.1', async () => {
    expect(await openApiSchemaErrors(document)).toEqual([]);
  });

  it("passes Redocly's recommended lint without a problem", async () => {
    expect(await lintProblems(document, 'v3')).toEqual([]);
  });

  it('describes every declared operation with its scope, summary and success body, and the document itself', () => {
    const expected = [
      ...operations.map((operation) => `${operation.method} ${openApiPath(operation.path)}`),
      'GET /v3/openapi.json',
    ];
    expect(documentedOperations(document).sort()).toEqual(expected.sort());
    for (const operation of operations) {
      const described = operationOf(operation.method, operation.path);
      expect(described.summary).toBe(operation.summary);
      expect(described.security).toEqual([{ bearerToken: [operation.scope], requestSignature: [] }]);
      expect((described.responses!['200'] as oas31.ResponseObject).content?.['application/json']?.schema).toBeDefined();
    }
  });

  it('lists every code an operation may answer under its status, with the retry strategy of its method', () => {
    for (const operation of operations) {
      const described = operationOf(operation.method, operation.path);
      const codes = operationErrorCodes(operation);
      const statuses = [...new Set(codes.map((code) => String(ERROR_CATALOG[code].status)))].sort();
      expect(
        Object.keys(described.responses!)
          .filter((status) => status !== '200')
          .sort(),
        `${operation.method} ${operation.path}`,
      ).toEqual(statuses);
      for (const status of statuses) {
        const expectedCodes = codes.filter((code) => String(ERROR_CATALOG[code].status) === status);
        expect(documentedCodes(described.responses![status]!).sort()).toEqual([...expectedCodes].sort());
      }
    }
    const trade = operationOf('POST', '/v3/fx/trades');
    expect(documentedCodes(trade.responses!['409']!)).toEqual(
      expect.arrayContaining([
        'QUOTE_EXPIRED',
        'QUOTE_ALREADY_USED',
        'TRADE_CREDIT_LIMIT_EXCEEDED',
        'IDEMPOTENCY_IN_FLIGHT',
      ]),
    );
    expect(documentedCodes(trade.responses!['500']!)).toEqual(
      expect.arrayContaining(['TRADE_EXECUTION_FAILED', 'INTERNAL_ERROR']),
    );
  });

  it("gives each code's envelope its catalog type and details schema, and INTERNAL_ERROR the strategy of reads and of writes", () => {
    const schemas = document.components!.schemas!;
    for (const code of ERROR_CODES) {
      const names = Object.keys(schemas).filter(
        (name) => name === `Error_${code}` || name.startsWith(`Error_${code}_`),
      );
      for (const name of names) {
        const error = (schemas[name] as oas31.SchemaObject).properties!.error as oas31.SchemaObject;
        expect((error.properties!.type as oas31.SchemaObject).const).toBe(ERROR_CATALOG[code].type);
        expect(error.required).toEqual(['code', 'type', 'message', 'retryStrategy', 'details']);
      }
    }
    const read = (operationOf('GET', '/v3/fx/trades').responses!['500'] as oas31.ResponseObject).content![
      'application/json'
    ]!.schema as oas31.SchemaObject;
    const write = (operationOf('POST', '/v3/fx/trades').responses!['500'] as oas31.ResponseObject).content![
      'application/json'
    ]!.schema as oas31.SchemaObject;
    expect(JSON.stringify(read)).toContain(`Error_INTERNAL_ERROR_${retryStrategyFor('INTERNAL_ERROR', false)}`);
    expect(JSON.stringify(write)).toContain(`Error_INTERNAL_ERROR_${retryStrategyFor('INTERNAL_ERROR', true)}`);
    const details = (schemas.Error_QUOTE_EXPIRED as oas31.SchemaObject).properties!.error as oas31.SchemaObject;
    expect(details.properties!.details).toMatchObject({
      type: 'object',
      required: ['quoteId', 'expiredAt'],
      additionalProperties: false,
    });
  });

  it('requires Idempotency-Key on every POST and on nothing else', () => {
    for (const operation of operations) {
      const parameters = (operationOf(operation.method, operation.path).parameters ?? []) as oas31.ParameterObject[];
      const key = parameters.find((parameter) => parameter.name === 'Idempotency-Key');
      if (operation.method === 'POST') expect(key?.required, `${operation.method} ${operation.path}`).toBe(true);
      else expect(key).toBeUndefined();
    }
  });

  it('is built from the declarations alone: their handlers refuse to serve', async () => {
    const [pairs] = operations;
    await expect(pairs!.handle({} as never)).rejects.toBeInstanceOf(DetachedContextError);
  });

  it('is the same document however often it is built', () => {
    expect(buildV3Document(declaredCoreOperations())).toEqual(document);
  });
});

describe('the routes of a live core against the v3 document', () => {
  let harness: V3Harness;
  beforeAll(async () => {
    harness = await V3Harness.start();
  });
  afterAll(async () => harness?.close());

  it('answers every documented operation with a documented success (each answer held against the document)', async () => {
    const key = await harness.createKey({ mode: 'sandbox' });
    const answered = new Set<string>();
    /** Calls one operation, expects its success (the harness has held the answer against the document), returns `data`. */
    const call = async (
      method: string,
      template: string,
      path: string,
      body?: object,
    ): Promise<Record<string, string>> => {
      const response: TestResponse = await harness.signed({
        key,
        method,
        path,
        ...(body === undefined ? {} : { body: JSON.stringify(body), headers: { 'content-type': 'application/json' } }),
        ...(method === 'POST' ? { idempotencyKey: randomUUID() } : {}),
      });
      expect(response.status, `${method} ${path}: ${response.text}`).toBe(200);
      answered.add(`${method} ${template}`);
      return response.json<{ data: Record<string, string> }>().data;
    };
    await call('GET', '/v3/fx/pairs', '/v3/fx/pairs');
    const deposit = await call('POST', '/v3/fx/sandbox/deposits', '/v3/fx/sandbox/deposits', {
      currency: 'USD',
      amount: '5000.00',
    });
    await call('GET', '/v3/fx/deposits', '/v3/fx/deposits');
    await call('GET', '/v3/fx/deposits/{id}', `/v3/fx/deposits/${deposit.id}`);
    const trade = async () => {
      const quote = await call('POST', '/v3/fx/quotes', '/v3/fx/quotes', {
        buyCurrency: 'EUR',
        sellCurrency: 'USD',
        amount: '10.00',
        amountCurrency: 'EUR',
      });
      await call('GET', '/v3/fx/quotes/{id}', `/v3/fx/quotes/${quote.id}`);
      return call('POST', '/v3/fx/trades', '/v3/fx/trades', { quoteId: quote.id });
    };
    const reversed = await trade();
    const reverseQuote = await call(
      'POST',
      '/v3/fx/trades/{id}/reverse-quote',
      `/v3/fx/trades/${reversed.id}/reverse-quote`,
    );
    await call('POST', '/v3/fx/trades/{id}/reverse', `/v3/fx/trades/${reversed.id}/reverse`, {
      quoteId: reverseQuote.id,
    });
    const settled = await trade();
    await call('POST', '/v3/fx/trades/{id}/settle', `/v3/fx/trades/${settled.id}/settle`);
    await call('GET', '/v3/fx/trades', '/v3/fx/trades?limit=2');
    await call('GET', '/v3/fx/trades/{id}', `/v3/fx/trades/${settled.id}`);
    await call('GET', '/v3/fx/exposure', '/v3/fx/exposure');
    await call('GET', '/v3/fx/balances', '/v3/fx/balances');
    const account = await call('POST', '/v3/fx/withdrawal-accounts', '/v3/fx/withdrawal-accounts', FEDWIRE_ACCOUNT);
    await call(
      'POST',
      '/v3/fx/sandbox/withdrawal-accounts/{id}/verify',
      `/v3/fx/sandbox/withdrawal-accounts/${account.id}/verify`,
    );
    await call('POST', '/v3/fx/sandbox/withdrawal-accounts/{id}', `/v3/fx/sandbox/withdrawal-accounts/${account.id}`, {
      withdrawalsEnabled: true,
    });
    await call('GET', '/v3/fx/withdrawal-accounts', '/v3/fx/withdrawal-accounts?assetType=FIAT');
    await call('GET', '/v3/fx/withdrawal-accounts/{id}', `/v3/fx/withdrawal-accounts/${account.id}`);
    const withdraw = () =>
      call('POST', '/v3/fx/withdrawals', '/v3/fx/withdrawals', {
        withdrawalAccountId: account.id,
        withdrawalAmount: '10.00',
        currency: 'USD',
        metadata: { purpose: 'walk' },
      });
    const completed = await withdraw();
    await call(
      'POST',
      '/v3/fx/sandbox/withdrawals/{id}/complete',
      `/v3/fx/sandbox/withdrawals/${completed.id}/complete`,
    );
    const failed = await withdraw();
    await call('POST', '/v3/fx/sandbox/withdrawals/{id}/fail', `/v3/fx/sandbox/withdrawals/${failed.id}/fail`, {
      failureReason: 'walked',
    });
    await call('GET', '/v3/fx/withdrawals', '/v3/fx/withdrawals');
    await call('GET', '/v3/fx/withdrawals/{id}', `/v3/fx/withdrawals/${completed.id}`);
    const endpoint = await call('POST', '/v3/fx/webhook-endpoints', '/v3/fx/webhook-endpoints', {
      url: 'https://receiver.example/hooks',
      eventTypes: ['withdrawal.completed'],
    });
    await call('GET', '/v3/fx/webhook-endpoints', '/v3/fx/webhook-endpoints');
    await call('GET', '/v3/fx/webhook-endpoints/{id}', `/v3/fx/webhook-endpoints/${endpoint.id}`);
    await call('DELETE', '/v3/fx/webhook-endpoints/{id}', `/v3/fx/webhook-endpoints/${endpoint.id}`);
    const own = await harness.send({ path: '/v3/openapi.json' });
    expect(own.status).toBe(200);
    answered.add('GET /v3/openapi.json');
    expect([...answered].sort()).toEqual(documentedOperations(document).sort());
  });

  it('registers every documented operation under /v3 and nothing the document lacks', () => {
    const routes = routesOf(harness.app);
    // fastify adds HEAD to every GET; the 405 catch-alls answer only METHOD_NOT_ALLOWED.
    const served = routes.filter((route) => route.method !== 'HEAD' && route.config.methodNotAllowed === undefined);
    const v3 = served
      .filter((route) => route.url.startsWith('/v3/'))
      .map((route) => `${route.method} ${openApiPath(route.url)}`);
    expect(v3.sort()).toEqual(documentedOperations(document).sort());
    // Outside /v3 only the operational paths (docs/contract.md#generations-operational-paths) and the reference page.
    const others = served
      .filter((route) => !route.url.startsWith('/v3/'))
      .map((route) => `${route.method} ${route.url}`);
    expect(others.sort()).toEqual([
      'GET /docs',
      'GET /docs/init.js',
      'GET /docs/scalar.js',
      'GET /healthz',
      'GET /readyz',
    ]);
  });
});
